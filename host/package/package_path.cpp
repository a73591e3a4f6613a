#include "package/package_path.hpp"

namespace htp {

std::optional<std::string> package_path_problem(std::string_view path) {
  if (path.empty()) return "the path is empty";
  if (path.size() > 1024) return "the path is longer than 1024 bytes";
  if (path.front() == '/') return "absolute paths are not allowed";
  if (path.back() == '/') return "the path names a directory";
  for (char c : path) {
    if (c == '\0') return "the path contains a NUL byte";
    if (c == '\\') return "the path contains a backslash";
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty()) return "the path has an empty component ('//')";
    if (part == "..") return "'..' would leave the package";
    if (part == ".") return "the path is not normalised ('.')";
    if (part.size() > 255) return "a path component is longer than 255 bytes";
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace htp
