// Scheduling overhead of HTP's PTO CPU simulator (issue target: <= 5 us per task): 10,000 empty-kernel tasks,
// independent or in one chain, for each dispatch policy (BM_PtoSimIndependentTasks/<policy>,
// BM_PtoSimChainTasks/<policy>). Counters: seconds_per_task, tasks_per_second, on_behalf (share of the tasks
// a core's thread ran on behalf of another core: the chain's hand-offs it avoided). The label repeats the
// policy and its tasks per second, so bench/report.py's table (seconds_per_task against bench/targets.json)
// shows both.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime.hpp"

using namespace htp_ptosim;

namespace {

constexpr int kTasks = 10000;
constexpr RuntimeOptions kCores{.aiv_cores = 4, .aic_cores = 2};

void empty_kernel(int64_t *) {}

/// Submits kTasks tasks and waits; `chain`: every task is an inout of one tensor (a serial chain).
void run_tasks(benchmark::State &state, DispatchPolicy policy, bool chain) {
  using clock = std::chrono::steady_clock;
  float cell = 0;
  uint32_t shape[1] = {1};
  ChipTensor t = make_tensor_external(&cell, shape, 1);
  RuntimeOptions options = kCores;
  options.dispatch = policy;
  options.task_window = 1 << 16;
  uint64_t on_behalf = 0;
  double seconds = 0;
  for (auto _ : state) {
    auto rt = std::make_unique<Runtime>(options);
    rt->set_kernel(0, CoreType::AIV, empty_kernel, "empty");
    MixedKernels k;
    k.aiv0_kernel_id = 0;
    const auto start = clock::now();
    for (int i = 0; i < kTasks; ++i) {
      CoreTaskArgs a;
      if (chain) a.add_inout(t);
      rt->submit(k, a);
    }
    rt->wait_all();
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    state.SetIterationTime(elapsed);
    seconds += elapsed;
    if (rt->failed()) state.SkipWithError(rt->error().c_str());
    for (const WorkerStats &w : rt->worker_stats())
      on_behalf += w.borrowed;
  }
  const double tasks = static_cast<double>(kTasks) * state.iterations();
  state.counters["seconds_per_task"] =
      benchmark::Counter(tasks, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["tasks_per_second"] = benchmark::Counter(tasks, benchmark::Counter::kIsRate);
  state.counters["on_behalf"] = static_cast<double>(on_behalf) / tasks;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.0fk tasks/s", seconds > 0 ? tasks / seconds / 1e3 : 0.0);
  state.SetLabel(std::string(policy_name(policy)) + ": " + rate + ", " + std::to_string(kTasks) +
                 (chain ? " chained" : " independent") + " tasks, " + std::to_string(kCores.aiv_cores) +
                 " AIV + " + std::to_string(kCores.aic_cores) + " AIC cores");
}

/// One benchmark per policy and shape, named after the policy (BM_PtoSimChainTasks/round_robin).
const bool kRegistered = [] {
  for (const bool chain : {false, true})
    for (DispatchPolicy p : {DispatchPolicy::RoundRobin, DispatchPolicy::Affinity, DispatchPolicy::Hash,
                             DispatchPolicy::WorkSteal}) {
      const std::string name = std::string(chain ? "BM_PtoSimChainTasks/" : "BM_PtoSimIndependentTasks/") +
                               std::string(policy_name(p));
      benchmark::RegisterBenchmark(name.c_str(), [p, chain](benchmark::State &s) { run_tasks(s, p, chain); })
          ->Unit(benchmark::kMillisecond)
          ->UseManualTime(); // submit + wait_all only (not the runtime's construction and teardown)
    }
  return true;
}();

} // namespace

BENCHMARK_MAIN();
