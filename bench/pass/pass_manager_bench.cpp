// Pass-manager overhead per pass over a 100,000-node module without dumps (target <= 10 us), and the
// cost of dumps (after every pass) reported separately.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>

#include "ast/walk.hpp"
#include "loader/plugin_host.hpp"
#include "package/package_writer.hpp"
#include "pass/pass_manager.hpp"

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
    for (const auto &c : host.registry().components()) plan.passes.push_back(htp::PlannedPass{c.get(), {}, {}, {}});
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

}  // namespace

BENCHMARK_MAIN();
