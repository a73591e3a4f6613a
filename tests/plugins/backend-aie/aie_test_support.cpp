#include <gtest/gtest.h>

#include "aie_test_support.hpp"
#include "support/golden.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/kernel_library.hpp"

namespace aie_test {

namespace fs = std::filesystem;

fs::path test_dir() { return fs::path(HTP_AIE_TEST_DIR); }

static std::string read_text(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json fixture(const std::string &name) { return Json::parse(read_text(test_dir() / "fixtures" / name)); }

std::string Mapped::text() const {
  std::string s;
  for (const auto &p : problems) s += p.code + ": " + p.message + "\n";
  return s;
}

Mapped map(const Json &attrs, const std::string &device) {
  Mapped m;
  const auto *dev = htp::aie::device_named(device);
  if (!dev) throw std::runtime_error("no device " + device);
  auto get = [&](const char *k) { return attrs.contains(k) ? attrs[k] : Json(); };
  const Json kernels = get("tile.kernels"), tasks = get("wsp.task_graph"), csp = get("csp.graph"),
             layouts = get("layout.signatures");
  htp::aie::ProgramDocs docs{kernels.is_null() ? htp::TileKernels{} : htp::read_tile_kernels(kernels),
                             layouts.is_null() ? htp::LayoutSignatures{} : htp::read_layout_signatures(layouts),
                             tasks.is_null() ? htp::WspTaskGraph{} : htp::read_wsp_task_graph(tasks),
                             csp.is_null() ? htp::CspGraph{} : htp::read_csp_graph(csp)};
  for (const auto &plan : htp::aie::plan_entries(docs, *dev, m.problems))
    if (auto d = htp::aie::build_design(plan, *dev, m.problems)) m.designs.push_back(std::move(*d));
  return m;
}

htp::aie::sim::SimResult simulate(const Design &design, std::map<std::string, std::vector<float>> &buffers,
                                  double timeout_seconds) {
  const fs::path cache = fs::path(HTP_AIE_TEST_CACHE);
  fs::create_directories(cache);
  auto lib = htp::aie::sim::compile_kernels(design.sources, cache, cache / "build.log");
  std::map<std::string, htp::aie::sim::HostBuffer> host;
  for (auto &[name, v] : buffers) host[name] = {v.data(), v.size() * sizeof(float)};
  return htp::aie::sim::simulate(design, lib.entries, host, {timeout_seconds});
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto &x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

::testing::AssertionResult matches_golden(const std::string &name, const std::string &text) {
  return htp::test::matches_golden(test_dir() / "golden" / name, text);
}

}  // namespace aie_test
