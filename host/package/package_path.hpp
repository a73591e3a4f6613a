// Validation of paths inside an artifact package: relative, normalised, never escaping the package.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace htp {

/// Why `path` is not acceptable as a file path inside a package (absolute, `..`, `.`, empty component,
/// backslash, NUL, too long), or nullopt when it is. Accepted paths are already in normal form.
std::optional<std::string> package_path_problem(std::string_view path);

}  // namespace htp
