// The SDK's typed readers (htp/tile_kernels.hpp and siblings) against nlohmann's parse of the same text:
// issue 18 asks that reading tile.kernels of the largest example cost no more than parsing its JSON.
// Usage (typed_readers.py does this): htp_irbench_typed_readers DIR [google-benchmark flags], where DIR holds
// <attribute>.json, the largest document of each attribute over the examples.
#include <htp/csp_graph.hpp>
#include <htp/layout_signatures.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Registers BM_JsonParse/<attr> (text -> nlohmann::json) and BM_TypedRead/<attr> (nlohmann::json -> the
/// SDK's types, validating every key) for the document in `file`.
template <class Doc, Doc (*Read)(const nlohmann::json &)> void add(const std::string &attr, const fs::path &file) {
  if (!fs::exists(file)) return;
  auto text = std::make_shared<std::string>(slurp(file));
  auto doc = std::make_shared<nlohmann::json>(nlohmann::json::parse(*text));
  const std::string size = std::to_string(text->size() / 1024) + " KiB";
  benchmark::RegisterBenchmark(("BM_JsonParse/" + attr).c_str(), [text, size](benchmark::State &st) {
    for (auto _ : st) benchmark::DoNotOptimize(nlohmann::json::parse(*text));
    st.SetLabel(size);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * text->size()));
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(("BM_TypedRead/" + attr).c_str(), [doc, size](benchmark::State &st) {
    for (auto _ : st) benchmark::DoNotOptimize(Read(*doc));
    st.SetLabel(size + ", from the parsed JSON");
  })->Unit(benchmark::kMicrosecond);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !fs::is_directory(argv[1])) {
    std::cerr << "usage: htp_irbench_typed_readers DIR [benchmark flags]: DIR holds <attribute>.json\n";
    return 2;
  }
  const fs::path dir = argv[1];
  add<htp::TileKernels, &htp::read_tile_kernels<nlohmann::json>>("tile.kernels", dir / "tile.kernels.json");
  add<htp::WspTaskGraph, &htp::read_wsp_task_graph<nlohmann::json>>("wsp.task_graph", dir / "wsp.task_graph.json");
  add<htp::CspGraph, &htp::read_csp_graph<nlohmann::json>>("csp.graph", dir / "csp.graph.json");
  add<htp::LayoutSignatures, &htp::read_layout_signatures<nlohmann::json>>("layout.signatures",
                                                                         dir / "layout.signatures.json");
  argv[1] = argv[0];
  --argc;
  ++argv;
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
