#include "pto_test_support.hpp"

#include <gtest/gtest.h>

#include "support/golden.hpp"

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

Inputs load_fixture(const std::string &name, const std::string &target) {
  nlohmann::json doc = nlohmann::json::parse(read_text("fixtures/" + name + ".json"));
  return Inputs{doc.value("tile.kernels", nlohmann::json()), doc.value("wsp.task_graph", nlohmann::json()),
                doc.value("csp.graph", nlohmann::json()), ptobe::Origin{target, doc.value("file", std::string("prog.py"))}};
}

ptobe::PackageInputs package_inputs(const Inputs &in) {
  ptobe::PackageInputs out{std::nullopt, std::nullopt, std::nullopt, in.origin};
  if (!in.tile_kernels.is_null()) out.tile_kernels = htp::read_tile_kernels(in.tile_kernels);
  if (!in.task_graph.is_null()) out.task_graph = htp::read_wsp_task_graph(in.task_graph);
  if (!in.csp_graph.is_null()) out.csp_graph = htp::read_csp_graph(in.csp_graph);
  return out;
}

std::vector<ptobe::Problem> problems_of(const Inputs &in) {
  std::vector<ptobe::Problem> problems;
  (void)ptobe::build_package(package_inputs(in), ptobe::a2a3_profile(), problems);
  return problems;
}

std::vector<std::pair<std::string, std::string>> emit_files(const Inputs &in) {
  std::vector<ptobe::Problem> problems;
  ptobe::BuiltPackage pkg = ptobe::build_package(package_inputs(in), ptobe::a2a3_profile(), problems);
  for (const auto &p : problems) ADD_FAILURE() << p.code << ": " << p.message << " (line " << p.span.line << ")";
  if (!problems.empty()) return {};
  auto files = ptobe::package_files(pkg, in.origin);
  files.emplace_back("entrypoints.json", ptobe::entrypoints_json(pkg).dump(2) + "\n");
  return files;
}

void expect_golden(const std::string &name, const std::vector<std::pair<std::string, std::string>> &files) {
  EXPECT_TRUE(htp::test::matches_golden_dir(fs::path(HTP_PTO_TEST_DIR) / "golden" / name, files));
}

}  // namespace ptotest
