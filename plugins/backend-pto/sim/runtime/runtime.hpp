// htp_ptosim: the simulated pto-runtime. An orchestrator (the thread that calls run_orchestration) submits
// tasks through the pto-runtime orchestration API; dependencies come from the tensor argument directions
// (tensormap semantics: RAW, WAW and WAR on overlapping byte ranges), explicit dependencies and streams;
// AICPU scheduler threads dispatch ready tasks to simulated AIV / AIC cores under a dispatch policy; a task
// window bounds the tasks in flight. Each core has a queue and its own thread, and one thread at a time may
// execute on its behalf (docs/backends/pto-sim.md §4). Every task's core and times are recorded for the
// Chrome trace.
#pragma once

#define HTP_PTOSIM_RUNTIME_IMPL 1
#include "pto_orchestration_api.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "options.hpp"

namespace htp_ptosim {

/// A kernel's entry: `kernel_entry(__gm__ int64_t *args)`.
using KernelFn = void (*)(int64_t *args);

enum class CoreType : int8_t { AIV = 0, AIC = 1, None = 2 };

/// What the trace and the tests see of one finished task.
struct TaskRecord {
  uint64_t id = 0;
  int32_t func_id = -1;
  CoreType core = CoreType::None;
  int worker = -1;   ///< core that ran it: global index (AIV cores first, then AIC), -1 for dummy tasks
  int64_t key = -1;  ///< dispatch key (hint, else the task index)
  int assigned = -1; ///< core the policy chose; differs from `worker` when stolen
  int thread = -1;   ///< core whose OS thread executed it; differs from `worker` when run on its behalf
  double start_us = 0, end_us = 0;
  /// Tasks this one depends on (ids), finished ones included: the dependency graph of the estimate.
  std::vector<uint64_t> preds;
};

struct WorkerStats {
  std::string name; ///< "AIV0", "AIC1", ...
  uint64_t tasks = 0;
  uint64_t steals = 0;
  uint64_t borrowed = 0; ///< tasks of this core that another core's thread executed on its behalf
  uint64_t queued = 0;   ///< tasks waiting in its queue when the stats were taken
};

struct Task;
struct Core;
class Runtime;

/// What the orchestration's PTO2Runtime* points at: the ops table, then the runtime.
struct RuntimeHandle {
  PTO2Runtime base;
  Runtime *self;
};

class Runtime {
public:
  explicit Runtime(const RuntimeOptions &options);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  /// Registers kernel `func_id` (before tasks use it).
  void set_kernel(int32_t func_id, CoreType core, KernelFn fn, std::string name);

  /// The PTO2Runtime the orchestration code calls (bind it with framework_bind_runtime).
  PTO2Runtime *api();

  /// Submits one task as rt_submit_task does (also used directly by tests and benchmarks).
  TaskOutputTensors submit(const MixedKernels &kernels, const CoreTaskArgs &args);
  TaskOutputTensors submit_dummy(const CoreTaskArgs &args);
  TaskOutputTensors alloc(const CoreTaskArgs &args);
  void scope_begin();
  void scope_end();

  /// Waits until every submitted task finished.
  void wait_all();

  /// Reports a fatal error: later submits are ignored, later kernels skipped.
  void fail(const std::string &message);
  bool failed() const { return fatal_.load(std::memory_order_acquire); }
  std::string error() const;

  uint64_t task_count() const { return submitted_.load(); }
  /// The sizes of the dispatch batches the schedulers issued: size -> how many (timing(batched(n))).
  std::map<int, int64_t> batch_sizes() const;
  std::vector<TaskRecord> records() const;
  std::vector<WorkerStats> worker_stats() const;
  std::vector<std::string> log_lines() const;
  void log(const std::string &line);
  const RuntimeOptions &options() const { return options_; }
  /// Name of worker `index` ("AIV0", "AIC0").
  std::string worker_name(int index) const;
  /// Marks the orchestration's run on the orchestrator's timeline (call around the entry).
  void orchestration_begin();
  void orchestration_end();
  /// Chrome trace-event JSON of the recorded timeline, followed by `extra_events` (an array).
  std::string trace_json(const nlohmann::json &extra_events = nlohmann::json::array()) const;

  uint64_t read_element(const ChipTensor &t, uint32_t ndims, const uint32_t idx[]);
  void write_element(const ChipTensor &t, uint32_t ndims, const uint32_t idx[], uint64_t value);

private:
  friend struct Core;
  struct Access {
    uint64_t lo, hi;
    Task *task;
    bool write;
  };
  struct Scope {
    std::vector<std::unique_ptr<unsigned char[]>> buffers;
  };

  Task *new_task(const MixedKernels &kernels, const CoreTaskArgs &args, TaskOutputTensors &outs);
  void wire_dependencies(Task *task, const CoreTaskArgs &args);
  void depend(Task *task, Task *producer);
  void track(Task *task, const ChipTensor &t, bool waits, bool writes);
  void prune(std::vector<Access> &accesses);
  /// A task and the core whose claim the calling thread holds to run it.
  struct Claim {
    Task *task = nullptr;
    Core *core = nullptr;
  };
  void make_ready(Task *task);
  void scheduler_loop(int index);
  void dispatch(Task *task);
  /// The core the policy picks for `task`, recorded as its `assigned` core.
  int assign_core(Task *task);
  int choose_core(Task *task);
  /// Queues `task` on `core` (work stealing: wakes an idle peer when a backlog forms).
  void place(Task *task, int core);
  /// Claims the task's core for the calling thread when it is idle (the caller then runs the task on the
  /// core's behalf); else queues the task there and returns no claim.
  Claim claim_or_place(Task *task);
  /// Runs the kernel of `task` on `core` (whose claim the caller holds) on `thread`'s OS thread.
  void execute(Task *task, Core &core, Core &thread);
  void run_claimed(Claim claim, Core &thread);
  /// Marks `task` (run on `core`, -1 for a dummy) done and dispatches the successors it made ready; with
  /// `thread` (the calling core thread), may return the last one claimed for that thread to run.
  Claim complete(Task *task, int core, Core *thread);
  void count_completion();
  void wait_completed(uint64_t target);
  void wait_window();
  void wait_range(const ChipTensor &t, bool for_write);
  unsigned char *allocate(uint64_t bytes);

  RuntimeOptions options_;
  RuntimeHandle handle_;
  std::chrono::steady_clock::time_point epoch_;

  struct KernelInfo {
    CoreType core = CoreType::None;
    KernelFn fn = nullptr;
    std::string name;
  };
  std::vector<KernelInfo> kernels_;

  mutable std::mutex graph_mu_; // tasks_, accesses_, fanout, done flags, scopes_, streams_
  std::deque<std::unique_ptr<Task>> tasks_;
  std::vector<std::unique_ptr<Task>> allocations_; // holders of alloc_tensors results
  std::unordered_map<uint64_t, std::vector<Access>> accesses_;
  std::unordered_map<int32_t, Task *> streams_;
  std::vector<Scope> scopes_;
  std::vector<Scope> retired_;

  mutable std::mutex ready_mu_;
  std::condition_variable ready_cv_;
  std::deque<Task *> ready_;
  bool stopping_ = false;
  std::map<int, int64_t> batches_;  // guarded by ready_mu_

  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<std::thread> schedulers_;
  std::atomic<uint64_t> rr_[2] = {0, 0};

  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> wake_at_{UINT64_MAX}; // smallest completed_ a waiter sleeps for
  // The waiter sleeps on a condition variable, not on completed_.wait(): libstdc++ 12's atomic wait on a
  // 64-bit value (a proxy futex) can miss a notify, which hung a run of 100,000 chained tasks.
  std::mutex completed_mu_;
  std::condition_variable completed_cv_;
  std::atomic<bool> fatal_{false};
  mutable std::mutex error_mu_;
  std::string error_;
  std::vector<std::string> log_;
  double orchestration_start_us_ = -1, orchestration_end_us_ = -1;
  double now_us() const;
};

} // namespace htp_ptosim
