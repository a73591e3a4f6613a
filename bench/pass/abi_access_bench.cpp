// Cost of one AST accessor call through the plugin ABI's function table (target <= 5 ns).
#include <benchmark/benchmark.h>

#include "ast/node.hpp"
#include "loader/host_api.hpp"
#include "pass/invocation.hpp"

namespace {

using htp::ast::Kind;
using htp::ast::Node;

struct Setup {
  HtpHost host;
  HtpHostApi api{};
  htp::ast::NodePtr binop;
  Setup() {
    host.plugin_name = "bench";
    api = htp::make_host_api(&host);
    binop = Node::make(Kind::BinOp);
    auto left = Node::make(Kind::Name);
    (void)left->set("id", std::string("x"));
    (void)binop->set("left", std::move(left));
    (void)binop->set("op", Node::make(Kind::Add));
  }
};

Setup &setup() {
  static Setup s;
  return s;
}

// node_kind: the accessor a matcher calls first on every node.
void BM_AbiNodeKind(benchmark::State &state) {
  Setup &s = setup();
  const HtpNode *n = htp::to_handle(s.binop.get());
  for (auto _ : state) benchmark::DoNotOptimize(s.api.node_kind(s.api.host, n));
  state.counters["seconds_per_call"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AbiNodeKind);

// node_child by field name: a lookup in the grammar's field table.
void BM_AbiNodeChild(benchmark::State &state) {
  Setup &s = setup();
  const HtpNode *n = htp::to_handle(s.binop.get());
  HtpStr field{"left", 4};
  for (auto _ : state) benchmark::DoNotOptimize(s.api.node_child(s.api.host, n, field));
  state.counters["seconds_per_call"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AbiNodeChild);

// node_child_at with a field index looked up once: the hot-loop form.
void BM_AbiNodeChildAt(benchmark::State &state) {
  Setup &s = setup();
  const HtpNode *n = htp::to_handle(s.binop.get());
  int32_t left = s.api.ast_field_index(s.api.host, s.api.node_kind(s.api.host, n), HtpStr{"left", 4});
  for (auto _ : state) benchmark::DoNotOptimize(s.api.node_child_at(s.api.host, n, left));
  state.counters["seconds_per_call"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AbiNodeChildAt);

}  // namespace

BENCHMARK_MAIN();
