#include "pto_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ptotest {

namespace fs = std::filesystem;

std::string read_text(const std::string &relative) {
  std::ifstream in(fs::path(HTP_PTO_TEST_DIR) / relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ptobe::PackageInputs load_fixture(const std::string &name, const std::string &target) {
  nlohmann::json doc = nlohmann::json::parse(read_text("fixtures/" + name + ".json"));
  return ptobe::PackageInputs{doc.value("tile.kernels", nlohmann::json()), doc.value("wsp.task_graph", nlohmann::json()),
                              doc.value("csp.graph", nlohmann::json()),
                              ptobe::Origin{target, doc.value("file", std::string("prog.py"))}};
}

std::vector<ptobe::Problem> problems_of(const ptobe::PackageInputs &in) {
  std::vector<ptobe::Problem> problems;
  (void)ptobe::build_package(in, ptobe::a2a3_profile(), problems);
  return problems;
}

std::vector<std::pair<std::string, std::string>> emit_files(const ptobe::PackageInputs &in) {
  std::vector<ptobe::Problem> problems;
  ptobe::BuiltPackage pkg = ptobe::build_package(in, ptobe::a2a3_profile(), problems);
  for (const auto &p : problems) ADD_FAILURE() << p.code << ": " << p.message << " (line " << p.span.line << ")";
  if (!problems.empty()) return {};
  auto files = ptobe::package_files(pkg, in.origin);
  files.emplace_back("entrypoints.json", ptobe::entrypoints_json(pkg).dump(2) + "\n");
  return files;
}

void expect_golden(const std::string &name, const std::vector<std::pair<std::string, std::string>> &files) {
  const fs::path dir = fs::path(HTP_PTO_TEST_DIR) / "golden" / name;
  const char *update = std::getenv("HTP_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::remove_all(dir);
    for (const auto &[path, text] : files) {
      fs::create_directories((dir / path).parent_path());
      std::ofstream(dir / path, std::ios::binary) << text;
    }
    return;
  }
  std::set<std::string> expected;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) expected.insert(fs::relative(e.path(), dir).string());
  std::set<std::string> produced;
  for (const auto &[path, text] : files) {
    produced.insert(path);
    EXPECT_EQ(text, read_text("golden/" + name + "/" + path)) << "golden/" << name << "/" << path << " differs";
  }
  EXPECT_EQ(produced, expected) << "the package's file list differs from golden/" << name;
}

}  // namespace ptotest
