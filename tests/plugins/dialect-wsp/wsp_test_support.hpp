// Compiling wsp programs through htp-host with the plugins the tests use.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace wsp_test {

/// htp-host compile of `program` to `out` for `target` with the wsp plugin, the tile plugin
/// and the check backend.
htp::test::CommandResult compile(const std::filesystem::path &program, const std::filesystem::path &out,
                                 const std::string &target = "check",
                                 const std::vector<std::string> &extra = {});

/// The content of a file ("" when it cannot be read).
std::string read_file(const std::filesystem::path &path);

/// programs/<name> in the source tree.
std::filesystem::path program(const std::string &name);

} // namespace wsp_test
