// The short distribution text of a layout: one element per tensor dim, `R` (replicate) or `S(i)` (shard
// on mesh axis i), e.g. "S(0)R". Parse errors carry the 0-based column where parsing stopped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layout_result.hpp"

namespace htp::axe {

/// One element of the short form: nullopt = R, i = S(i); `column` is where it starts in the text.
struct DistElement {
  std::optional<size_t> axis;
  int column = 0;
};
using DistSpec = std::vector<DistElement>;

/// Parses "S(0)R"; fails with the column of the first error (also for a mesh axis sharded twice).
Result<DistSpec> parse_dist(std::string_view text);
/// Prints a DistSpec back in the canonical spelling ("S(0)R").
std::string print_dist(const DistSpec &spec);

} // namespace htp::axe
