// What the pass manager dumps into a package's ir/ (htp-host compile --dump-ir).
#pragma once

#include <string>
#include <string_view>

namespace htp {

/// What to dump: nothing; after every pass (`all`); after every pass that changed the module (`after`);
/// or before and after one named pass (`PASS`).
struct DumpOptions {
  enum class Mode { None, All, Changed, Pass } mode = Mode::None;
  std::string pass;

  /// Parses `all`, `after`, `none` or a pass id.
  static DumpOptions parse(std::string_view text);
};

}  // namespace htp
