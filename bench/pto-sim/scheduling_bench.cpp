// Scheduling overhead of HTP's PTO CPU simulator (issue target: <= 5 us per task): 10,000 empty-kernel tasks,
// independent or in one chain, for each dispatch policy. Counters: seconds_per_task, tasks_per_second.
#include <benchmark/benchmark.h>

#include <memory>

#include "runtime.hpp"

using namespace htp_ptosim;

namespace {

constexpr int kTasks = 10000;

void empty_kernel(int64_t *) {}

/// Submits kTasks tasks and waits; `chain`: every task is an inout of one tensor (a serial chain).
void run_tasks(benchmark::State &state, bool chain) {
  const auto policy = static_cast<DispatchPolicy>(state.range(0));
  float cell = 0;
  uint32_t shape[1] = {1};
  ChipTensor t = make_tensor_external(&cell, shape, 1);
  for (auto _ : state) {
    state.PauseTiming();
    auto rt = std::make_unique<Runtime>(
        RuntimeOptions{.aiv_cores = 4, .aic_cores = 2, .dispatch = policy, .task_window = 1 << 16});
    rt->set_kernel(0, CoreType::AIV, empty_kernel, "empty");
    MixedKernels k;
    k.aiv0_kernel_id = 0;
    state.ResumeTiming();
    for (int i = 0; i < kTasks; ++i) {
      CoreTaskArgs a;
      if (chain) a.add_inout(t);
      rt->submit(k, a);
    }
    rt->wait_all();
    state.PauseTiming();
    if (rt->failed()) state.SkipWithError(rt->error().c_str());
    rt.reset();
    state.ResumeTiming();
  }
  state.counters["seconds_per_task"] =
      benchmark::Counter(static_cast<double>(kTasks) * state.iterations(),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["tasks_per_second"] =
      benchmark::Counter(static_cast<double>(kTasks) * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(policy_name(policy)) + ", " + std::to_string(kTasks) +
                 (chain ? " chained" : " independent") + " tasks, 4 AIV workers");
}

void BM_PtoSimIndependentTasks(benchmark::State &state) {
  run_tasks(state, false);
}
void BM_PtoSimChainTasks(benchmark::State &state) {
  run_tasks(state, true);
}

void policies(benchmark::internal::Benchmark *b) {
  b->ArgName("policy");
  for (DispatchPolicy p : {DispatchPolicy::RoundRobin, DispatchPolicy::Affinity, DispatchPolicy::Hash,
                           DispatchPolicy::WorkSteal})
    b->Arg(static_cast<int>(p));
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_PtoSimIndependentTasks)->Apply(policies);
BENCHMARK(BM_PtoSimChainTasks)->Apply(policies);

} // namespace

BENCHMARK_MAIN();
