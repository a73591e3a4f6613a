// Pass-manager overhead per pass over a 100,000-node module without dumps (target <= 10 us), and the
// cost of dumps (after every pass) reported separately.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "ast/walk.hpp"
#include "loader/plugin_host.hpp"
#include "package/package_writer.hpp"
#include "pass/pass_manager.hpp"
#include "pass/pass_runner.hpp"

namespace {

using htp::ast::Kind;
using htp::ast::Node;

/// A module of `statements` assignments `x = a + b * c` (8 nodes each) under one Module node.
htp::ast::Module make_module(size_t statements) {
  htp::ast::Module m;
  m.file = "bench.py";
  m.root = Node::make(Kind::Module);
  for (size_t i = 0; i < statements; ++i) {
    auto name = [](const char *id, Kind ctx) {
      auto n = Node::make(Kind::Name);
      (void)n->set("id", std::string(id));
      (void)n->set("ctx", Node::make(ctx));
      return n;
    };
    auto mul = Node::make(Kind::BinOp);
    (void)mul->set("left", name("b", Kind::Load));
    (void)mul->set("op", Node::make(Kind::Mult));
    (void)mul->set("right", name("c", Kind::Load));
    auto add = Node::make(Kind::BinOp);
    (void)add->set("left", name("a", Kind::Load));
    (void)add->set("op", Node::make(Kind::Add));
    (void)add->set("right", std::move(mul));
    auto assign = Node::make(Kind::Assign);
    htp::ast::NodeList targets;
    targets.push_back(name("x", Kind::Store));
    (void)assign->set("targets", std::move(targets));
    (void)assign->set("value", std::move(add));
    (void)m.root->insert("body", m.root->children("body").size(), std::move(assign));
  }
  return m;
}

struct Fixture {
  htp::PluginHost host;
  htp::Plan plan;
  htp::ast::Module module;
  Fixture() : module(make_module(100000 / 13)) {
    htp::DiagnosticList d;
    if (!host.load(HTP_BENCH_NOOP_PLUGIN, d)) std::abort();
    for (const auto &c : host.registry().components())
      if (c->id.rfind("noop.", 0) == 0) plan.passes.push_back(htp::PlannedPass{c.get(), {}, {}, {}});
  }
};

Fixture &fixture() {
  static Fixture f;
  return f;
}

void run_pipeline(benchmark::State &state, htp::DumpOptions dump, size_t passes) {
  Fixture &f = fixture();
  htp::Plan plan;
  plan.passes.assign(f.plan.passes.begin(), f.plan.passes.begin() + static_cast<std::ptrdiff_t>(passes));
  htp::PassManager pm([&](std::string_view p) { return f.host.api_for(p); });
  htp::PassManagerOptions o;
  o.dump = dump;
  auto dir = std::filesystem::temp_directory_path() / ("htp-bench-pm-" + std::to_string(::getpid()));
  size_t nodes = htp::ast::node_count(*f.module.root);
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    auto w = htp::PackageWriter::begin(dir);
    state.ResumeTiming();
    auto r = pm.run(plan, f.module, **w, o);
    if (!r.ok) state.SkipWithError("pipeline failed");
    state.PauseTiming();
    (*w)->abandon({});
    state.ResumeTiming();
  }
  // Seconds per pass: elapsed time divided by the passes run.
  state.counters["seconds_per_pass"] =
      benchmark::Counter(static_cast<double>(passes) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.SetLabel(std::to_string(passes) + " no-op passes over " + std::to_string(nodes) + " nodes");
}

void BM_PassManagerOverhead(benchmark::State &state) { run_pipeline(state, {}, 100); }
BENCHMARK(BM_PassManagerOverhead)->Unit(benchmark::kMillisecond);

void BM_PassManagerWithDumps(benchmark::State &state) {
  htp::DumpOptions d;
  d.mode = htp::DumpOptions::Mode::All;
  run_pipeline(state, d, 10);
}
BENCHMARK(BM_PassManagerWithDumps)->Unit(benchmark::kMillisecond)->Iterations(1);

/// `statements` assignments `x = a + b * c`, of which `foldable` (spread evenly) are `x = 1 + 2 + 3`.
htp::ast::Module make_foldable_module(size_t statements, size_t foldable) {
  htp::ast::Module m = make_module(statements);
  auto &body = m.root->children("body");
  const size_t stride = statements / foldable;
  for (size_t k = 0; k < foldable; ++k) {
    auto constant = [](int64_t v) {
      auto c = Node::make(Kind::Constant);
      (void)c->set("value", htp::ast::Constant{v});
      return c;
    };
    auto inner = Node::make(Kind::BinOp);
    (void)inner->set("left", constant(1));
    (void)inner->set("op", Node::make(Kind::Add));
    (void)inner->set("right", constant(2));
    auto outer = Node::make(Kind::BinOp);
    (void)outer->set("left", std::move(inner));
    (void)outer->set("op", Node::make(Kind::Add));
    (void)outer->set("right", constant(3));
    (void)body[k * stride]->set("value", std::move(outer));
  }
  return m;
}

/// One pattern pass over a fresh copy of `module` per iteration; reports nodes, rewrites and visits.
void run_patterns(benchmark::State &state, const char *pass_id, const htp::ast::Module &module) {
  Fixture &f = fixture();
  const htp::Component *pass = f.host.registry().find(pass_id);
  const HtpHostApi *api = f.host.api_for("bench-noop");
  htp::RewriteResult last;
  for (auto _ : state) {
    state.PauseTiming();
    htp::ast::Module m = module.clone();
    state.ResumeTiming();
    auto r = htp::run_pass(*pass, api, m, {{"target", "bench"}});
    if (!r.ok) state.SkipWithError("pattern pass failed");
    last = std::move(r.rewrite);
    state.PauseTiming();
    m = {};  // freed outside the timing
    state.ResumeTiming();
  }
  const double rewrites = static_cast<double>(last.rewrites.size());
  state.counters["nodes"] = static_cast<double>(htp::ast::node_count(*module.root));
  state.counters["rewrites"] = rewrites;
  state.counters["visits"] = static_cast<double>(last.visits);
  state.counters["visits_per_rewrite"] = rewrites > 0 ? static_cast<double>(last.visits) / rewrites : 0.0;
  state.counters["generations"] = static_cast<double>(last.iterations);
}

// A pattern that roots at every node and never applies, over a 100k-node module resident in memory as a
// compile holds it between passes (target <= 2 ms): the pass leaves it unchanged, so every iteration runs
// over the same module.
void BM_RewriteNoOpPattern100k(benchmark::State &state) {
  static htp::ast::Module m = make_module(100000 / 8);
  Fixture &f = fixture();
  const htp::Component *pass = f.host.registry().find("bench.never-applies");
  const HtpHostApi *api = f.host.api_for("bench-noop");
  htp::RewriteResult last;
  for (auto _ : state) {
    auto r = htp::run_pass(*pass, api, m, {{"target", "bench"}});
    if (!r.ok || !r.rewrite.rewrites.empty()) state.SkipWithError("the never-applying pattern applied");
    last = std::move(r.rewrite);
  }
  state.counters["nodes"] = static_cast<double>(htp::ast::node_count(*m.root));
  state.counters["visits"] = static_cast<double>(last.visits);
  state.counters["seconds_per_visit"] =
      benchmark::Counter(static_cast<double>(last.visits), benchmark::Counter::kIsIterationInvariantRate |
                                                               benchmark::Counter::kInvert);
}
BENCHMARK(BM_RewriteNoOpPattern100k)->Unit(benchmark::kMillisecond);

// The same pass over a fresh clone per iteration (a cold module, the heap churned by the clone and free
// between iterations): reported beside the figure above, no target.
void BM_RewriteNoOpPatternFreshClone100k(benchmark::State &state) {
  static const htp::ast::Module m = make_module(100000 / 8);
  run_patterns(state, "bench.never-applies", m);
}
BENCHMARK(BM_RewriteNoOpPatternFreshClone100k)->Unit(benchmark::kMillisecond);

// The floor under the fresh-clone no-op pattern pass: one pre-order walk reading each node's kind.
void BM_AstWalkFreshClone100k(benchmark::State &state) {
  static const htp::ast::Module module = make_module(100000 / 8);
  for (auto _ : state) {
    state.PauseTiming();
    htp::ast::Module m = module.clone();
    state.ResumeTiming();
    size_t kinds = 0;
    htp::ast::walk(*m.root, [&](htp::ast::Node &n) { kinds += static_cast<size_t>(n.kind()); });
    benchmark::DoNotOptimize(kinds);
    state.PauseTiming();
    m = {};
    state.ResumeTiming();
  }
}
BENCHMARK(BM_AstWalkFreshClone100k)->Unit(benchmark::kMillisecond);

// The floor under the no-op pattern pass: the same walk over a resident module.
void BM_AstWalk100k(benchmark::State &state) {
  static const htp::ast::Module module = make_module(100000 / 8);
  for (auto _ : state) {
    size_t kinds = 0;
    htp::ast::walk(*module.root, [&](htp::ast::Node &n) { kinds += static_cast<size_t>(n.kind()); });
    benchmark::DoNotOptimize(kinds);
  }
}
BENCHMARK(BM_AstWalk100k)->Unit(benchmark::kMillisecond);

// 1,000 rewrites (500 nested sums folded in two steps) in a 100k-node module: the cost follows the
// rewrites (visits per rewrite), not generations x nodes.
void BM_Rewrite1000In100k(benchmark::State &state) {
  static const htp::ast::Module m = make_foldable_module(100000 / 8, 500);
  run_patterns(state, "bench.fold", m);
}
BENCHMARK(BM_Rewrite1000In100k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
