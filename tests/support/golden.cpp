#include "support/golden.hpp"

#include <cstdlib>
#include <fstream>
#include <set>

#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace htp::test {

bool updating_goldens() {
  const char *v = std::getenv("HTP_UPDATE_GOLDENS");
  return v && std::string(v) == "1";
}

::testing::AssertionResult matches_golden(const fs::path &golden, const std::string &actual) {
  if (updating_goldens()) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    return ::testing::AssertionSuccess() << "rewrote " << golden;
  }
  if (!fs::exists(golden))
    return ::testing::AssertionFailure() << "golden " << golden << " is missing (HTP_UPDATE_GOLDENS=1 writes it)";
  if (read(golden) == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "golden " << golden
                                       << " differs (HTP_UPDATE_GOLDENS=1 rewrites it; review the diff); got:\n"
                                       << actual;
}

::testing::AssertionResult matches_golden_dir(const fs::path &dir,
                                              const std::vector<std::pair<std::string, std::string>> &files) {
  if (updating_goldens()) {
    fs::remove_all(dir);
    for (const auto &[path, text] : files) {
      fs::create_directories((dir / path).parent_path());
      std::ofstream(dir / path, std::ios::binary) << text;
    }
    return ::testing::AssertionSuccess() << "rewrote " << dir;
  }
  std::set<std::string> expected, produced;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file()) expected.insert(fs::relative(it->path(), dir).generic_string());
  std::string problems;
  for (const auto &[path, text] : files) {
    produced.insert(path);
    if (!expected.count(path)) problems += "\n  " + path + ": no golden";
    else if (read(dir / path) != text) problems += "\n  " + path + " differs; got:\n" + text;
  }
  for (const auto &path : expected)
    if (!produced.count(path)) problems += "\n  " + path + ": golden, but not produced";
  if (problems.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "goldens under " << dir
                                       << " differ (HTP_UPDATE_GOLDENS=1 rewrites them; review the diff):" << problems;
}

}  // namespace htp::test
