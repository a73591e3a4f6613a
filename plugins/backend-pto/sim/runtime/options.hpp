// htp_ptosim: options of the simulated runtime (cores, dispatch policy, task window).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace htp_ptosim {

/// How a ready task is mapped to a worker of its core pool (docs/backends/pto-sim.md §4).
enum class DispatchPolicy { RoundRobin, Affinity, Hash, WorkSteal };

/// The mixing function of the `hash` policy (worker = dispatch_hash(key) % cores).
uint64_t dispatch_hash(uint64_t key);

/// "round_robin", "affinity", "hash", "work_steal".
std::string_view policy_name(DispatchPolicy p);
/// The policy named `name`, or nothing.
std::optional<DispatchPolicy> parse_policy(std::string_view name);

struct RuntimeOptions {
  int aiv_cores = 4;  ///< AIV worker threads
  int aic_cores = 2;  ///< AIC worker threads
  int schedulers = 1; ///< AICPU scheduler threads (besides the orchestrator)
  DispatchPolicy dispatch = DispatchPolicy::RoundRobin;
  int task_window = 1024; ///< submitted but unfinished tasks before a submit waits
  /// timing(batched(n)): a scheduler issues ready tasks n at a time (what is ready after batch_wait_us when
  /// fewer become ready: a batch never waits for work that cannot come); 1: each as it becomes ready.
  int batch = 1;
  int batch_wait_us = 1000;
  bool trace = true;      ///< record a timeline event per task
};

} // namespace htp_ptosim
