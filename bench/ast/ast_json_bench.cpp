// Host AST throughput: htp.ast.v1 load and dump, printing and cloning, in nodes per second, over the
// JSON of a large standard-library module (_pydecimal, generated at build time by make_bench_input.py).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ast/json_reader.hpp"
#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "ast/walk.hpp"

namespace {

const std::string &input_text() {
  static const std::string text = [] {
    std::ifstream in(HTP_AST_BENCH_INPUT, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " HTP_AST_BENCH_INPUT);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  return text;
}

const htp::ast::Module &input_module() {
  static const htp::ast::Module module = [] {
    auto m = htp::ast::load_json(input_text());
    if (!m) throw std::runtime_error(m.error().render());
    return std::move(*m);
  }();
  return module;
}

void count(benchmark::State &state, size_t bytes) {
  size_t nodes = htp::ast::node_count(*input_module().root);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * nodes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["nodes"] = static_cast<double>(nodes);
}

void BM_AstJsonLoad(benchmark::State &state) {
  const std::string &text = input_text();
  for (auto _ : state) {
    auto m = htp::ast::load_json(text);
    benchmark::DoNotOptimize(m);
  }
  count(state, text.size());
}
BENCHMARK(BM_AstJsonLoad)->Unit(benchmark::kMillisecond);

void BM_AstJsonDump(benchmark::State &state) {
  const auto &module = input_module();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = htp::ast::dump_json(module);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  count(state, bytes);
}
BENCHMARK(BM_AstJsonDump)->Unit(benchmark::kMillisecond);

void BM_AstPrintSource(benchmark::State &state) {
  const auto &module = input_module();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string source = htp::ast::to_source(module);
    bytes = source.size();
    benchmark::DoNotOptimize(source);
  }
  count(state, bytes);
}
BENCHMARK(BM_AstPrintSource)->Unit(benchmark::kMillisecond);

void BM_AstClone(benchmark::State &state) {
  const auto &module = input_module();
  for (auto _ : state) {
    auto copy = module.root->clone();
    benchmark::DoNotOptimize(copy);
  }
  count(state, 0);
}
BENCHMARK(BM_AstClone)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
