// Memory-space capacities per target: the data the hardware-facet footprint check compares against.
// The table is data (docs/dialects/layout-axe.md lists it); a pass option can replace it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "layout_result.hpp"

namespace htp::axe {

/// Capacities in bytes per memory space; a space absent from the map is unbounded (e.g. GM).
struct HardwareProfile {
  std::string name;
  std::map<std::string, int64_t> capacity;
  /// Spaces that exist on the target but have no capacity limit.
  std::map<std::string, bool> unbounded;
  /// Whether the target has a space of this name (bounded or not).
  bool has_space(const std::string &space) const { return capacity.count(space) || unbounded.count(space); }
};

/// The built-in profile of a target ("pto-a2a3sim" -> pto, "aie-npu1" -> aie), or nullopt.
std::optional<HardwareProfile> profile_for_target(std::string_view target);
/// A profile from the pass option `axe.profile`: a profile name ("pto", "aie") or an object
/// {"name": ..., "spaces": {"UB": 196608, "GM": null}} (null = unbounded).
Result<HardwareProfile> profile_from_option(const nlohmann::json &option);

} // namespace htp::axe
