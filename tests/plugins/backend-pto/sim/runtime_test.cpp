// The simulated runtime: dependencies from argument directions, dispatch policies (which core ran which
// task, also when a completing thread runs a successor on behalf of its core), task windows, streams, errors
// and the trace (docs/backends/pto-sim.md §2, §4).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

#include "intrinsic.h"
#include "runtime.hpp"
#include "test_kernels.hpp"

using namespace htp_ptosim;
using namespace ptosim_test;

namespace {

enum Kernel : int32_t {
  kLog = 0,
  kCopy = 1,
  kSet = 2,
  kSleep = 3,
  kNoop = 4,
  kThrow = 5,
  kSleepAic = 6,
  kNoopAic = 7,
  kGate = 8,
  kExclusive = 9,
  kExclusiveAic = 10,
};

/// Gates the test opens to let a kGate task finish: which task holds a core, and when, is then decided by
/// the test rather than by timing.
struct Gates {
  std::atomic<bool> open[4];
  std::atomic<bool> started[4];
  void reset() {
    for (int i = 0; i < 4; ++i) {
      open[i] = false;
      started[i] = false;
    }
  }
};
Gates g_gates;

/// Closes the gates for a test and opens them all when it ends, failed assertions included, so the runtime
/// (declared before the guard, destroyed after it) can drain instead of hanging.
struct GateScope {
  GateScope() { g_gates.reset(); }
  ~GateScope() {
    for (auto &g : g_gates.open)
      g = true;
  }
};

/// args: scalar 0 = gate index (no tensors). Marks the gate's task started, then waits for the gate.
void k_gate(int64_t *args) {
  const int64_t g = args[0];
  g_gates.started[g] = true;
  while (!g_gates.open[g])
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

bool wait_started(int gate) {
  for (int i = 0; i < 100000 && !g_gates.started[gate]; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  return g_gates.started[gate];
}

/// Waits until `n` tasks wait in the queue of core `core`.
bool wait_queued(Runtime &rt, int core, uint64_t n) {
  for (int i = 0; i < 100000 && rt.worker_stats()[core].queued != n; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  return rt.worker_stats()[core].queued == n;
}

/// Detects two tasks running on one simulated core at once, by the core's GlobalContext (one per core,
/// whichever thread executes on its behalf). args: scalar 0 = sleep µs (no tensors).
struct CoreOccupancy {
  std::mutex mu;
  std::set<int64_t> busy;
  std::atomic<int> clashes{0};
};
CoreOccupancy g_occupancy;
void k_exclusive(int64_t *args) {
  const int64_t core = args[SPMD_GLOBAL_CONTEXT_INDEX];
  {
    std::lock_guard<std::mutex> lk(g_occupancy.mu);
    if (!g_occupancy.busy.insert(core).second) ++g_occupancy.clashes;
  }
  if (args[0] > 0) std::this_thread::sleep_for(std::chrono::microseconds(args[0]));
  std::lock_guard<std::mutex> lk(g_occupancy.mu);
  g_occupancy.busy.erase(core);
}

std::unique_ptr<Runtime> make_runtime(RuntimeOptions o = {}) {
  auto rt = std::make_unique<Runtime>(o);
  rt->set_kernel(kLog, CoreType::AIV, k_log, "log");
  rt->set_kernel(kCopy, CoreType::AIV, k_copy, "copy");
  rt->set_kernel(kSet, CoreType::AIV, k_set, "set");
  rt->set_kernel(kSleep, CoreType::AIV, k_sleep, "sleep");
  rt->set_kernel(kNoop, CoreType::AIV, k_noop, "noop");
  rt->set_kernel(kThrow, CoreType::AIV, k_throw, "boom");
  rt->set_kernel(kSleepAic, CoreType::AIC, k_sleep, "sleep_aic");
  rt->set_kernel(kNoopAic, CoreType::AIC, k_noop, "noop_aic");
  rt->set_kernel(kGate, CoreType::AIV, k_gate, "gate");
  rt->set_kernel(kExclusive, CoreType::AIV, k_exclusive, "exclusive");
  rt->set_kernel(kExclusiveAic, CoreType::AIC, k_exclusive, "exclusive_aic");
  return rt;
}

TaskOutputTensors aiv(Runtime &rt, int32_t func, CoreTaskArgs &a) {
  MixedKernels k;
  k.aiv0_kernel_id = func;
  return rt.submit(k, a);
}

TaskOutputTensors aic(Runtime &rt, int32_t func, CoreTaskArgs &a) {
  MixedKernels k;
  k.aic_kernel_id = func;
  return rt.submit(k, a);
}

/// Submits a kGate task holding gate `gate`, with dispatch key `key` and an optional dependency.
PTO2TaskId gate_task(Runtime &rt, int gate, int64_t key, PTO2TaskId after = PTO2TaskId::invalid()) {
  CoreTaskArgs a;
  a.add_scalar(int64_t(gate));
  if (after.is_valid()) a.set_dependencies(&after, 1);
  htp_ptosim_hint(a, key);
  return aiv(rt, kGate, a).task_id();
}

/// An AIV kNoop task with key `key` after `after` (if valid).
PTO2TaskId noop_task(Runtime &rt, int64_t key, PTO2TaskId after = PTO2TaskId::invalid()) {
  CoreTaskArgs a;
  if (after.is_valid()) a.set_dependencies(&after, 1);
  htp_ptosim_hint(a, key);
  return aiv(rt, kNoop, a).task_id();
}

ChipTensor scalar_tensor(float *p) {
  uint32_t shape[1] = {1};
  return make_tensor_external(p, shape, 1);
}

bool ordered(const TaskRecord &a, const TaskRecord &b) {
  return a.end_us <= b.start_us;
}
bool overlap(const TaskRecord &a, const TaskRecord &b) {
  return a.start_us < b.end_us && b.start_us < a.end_us;
}

TEST(PtoSimRuntime, InoutChainRunsInSubmitOrder) {
  g_log.order.clear();
  float x = 0;
  ChipTensor t = scalar_tensor(&x);
  auto rt = make_runtime();
  for (int i = 0; i < 64; ++i) {
    CoreTaskArgs a;
    a.add_inout(t);
    a.add_scalar(int64_t(i), int64_t(i % 3 == 0 ? 200 : 0));
    aiv(*rt, kLog, a);
  }
  rt->wait_all();
  ASSERT_FALSE(rt->failed()) << rt->error();
  EXPECT_EQ(x, 64.0f);
  std::vector<int64_t> expected(64);
  for (int i = 0; i < 64; ++i)
    expected[i] = i;
  EXPECT_EQ(g_log.order, expected);
}

TEST(PtoSimRuntime, ReaderWaitsForWriter) {
  float x = 0, y = 0;
  ChipTensor tx = scalar_tensor(&x), ty = scalar_tensor(&y);
  auto rt = make_runtime();
  CoreTaskArgs w;
  w.add_output(tx);
  w.add_scalar(to_u64(42.0f), int64_t(20000));
  aiv(*rt, kSet, w);
  CoreTaskArgs r;
  r.add_input(tx);
  r.add_output(ty);
  r.add_scalar(int64_t(0));
  aiv(*rt, kCopy, r);
  rt->wait_all();
  EXPECT_EQ(y, 42.0f);
  const auto rec = rt->records();
  EXPECT_TRUE(ordered(rec[0], rec[1]));
}

// pto-runtime 6ebaf7715 does not order a write after earlier readers (no write-after-read tracking), and
// neither does the simulator, so a package that relies on it fails here too; set_dependencies orders it.
TEST(PtoSimRuntime, WriteAfterReadIsOrderedOnlyByAnExplicitDependency) {
  float x = 5, y = 0;
  ChipTensor tx = scalar_tensor(&x), ty = scalar_tensor(&y);
  auto rt = make_runtime();
  for (bool explicit_dep : {false, true}) {
    CoreTaskArgs r;
    r.add_input(tx);
    r.add_output(ty);
    r.add_scalar(int64_t(100000));  // the reader holds its core for 100 ms
    const PTO2TaskId reader = aiv(*rt, kCopy, r).task_id();
    CoreTaskArgs w;
    w.add_inout(tx);  // an inout waits for earlier writers only
    w.add_scalar(to_u64(7.0f), int64_t(0));
    if (explicit_dep) w.set_dependencies(&reader, 1);
    aiv(*rt, kSet, w);
    rt->wait_all();
  }
  const auto rec = rt->records();
  ASSERT_EQ(rec.size(), 4u);
  EXPECT_FALSE(ordered(rec[0], rec[1])) << "nothing orders the write after its reader (it may even run first)";
  EXPECT_TRUE(ordered(rec[2], rec[3])) << "set_dependencies orders the write after the reader";
  EXPECT_EQ(x, 7.0f);
}

TEST(PtoSimRuntime, DisjointViewsRunConcurrentlyOverlappingViewsDoNot) {
  std::vector<float> buf(64, 0);
  uint32_t shape[1] = {64}, half_shape[1] = {32}, off0[1] = {0}, off1[1] = {32}, off2[1] = {16};
  ChipTensor whole = make_tensor_external(buf.data(), shape, 1);
  ChipTensor a = whole.view(half_shape, off0), b = whole.view(half_shape, off1),
             c = whole.view(half_shape, off2);
  auto rt = make_runtime();
  for (ChipTensor *t : {&a, &b, &c}) {
    CoreTaskArgs w;
    w.add_inout(*t);  // waits for the earlier writers it overlaps
    w.add_scalar(to_u64(1.0f), int64_t(30000));
    aiv(*rt, kSet, w);
  }
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_TRUE(overlap(rec[0], rec[1])) << "a and b are disjoint";
  EXPECT_TRUE(ordered(rec[0], rec[2]) && ordered(rec[1], rec[2])) << "c overlaps both";
}

// An existing tensor written with add_output waits for nothing, as in pto-runtime.
TEST(PtoSimRuntime, AnOutputOfAnExistingTensorWaitsForNothing) {
  std::vector<float> buf(32, 0);
  uint32_t shape[1] = {32};
  ChipTensor t = make_tensor_external(buf.data(), shape, 1);
  auto rt = make_runtime();
  for (int i = 0; i < 2; ++i) {
    CoreTaskArgs w;
    w.add_output(t);
    w.add_scalar(to_u64(1.0f), int64_t(100000));
    aiv(*rt, kSet, w);
  }
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_FALSE(ordered(rec[0], rec[1])) << "the second write does not wait for the first";
}

TEST(PtoSimRuntime, RoundRobinCyclesThroughThePool) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .aic_cores = 2});
  for (int i = 0; i < 12; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(0));
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  for (const TaskRecord &r : rt->records())
    EXPECT_EQ(r.worker, static_cast<int>(r.id % 4)) << "task " << r.id;
}

TEST(PtoSimRuntime, AffinityPlacesByKey) {
  auto rt =
      make_runtime(RuntimeOptions{.aiv_cores = 4, .aic_cores = 3, .dispatch = DispatchPolicy::Affinity});
  for (int i = 0; i < 12; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(100));
    htp_ptosim_hint(a, 7 * i);
    if (i % 2) {
      MixedKernels k;
      k.aic_kernel_id = kSleepAic;
      rt->submit(k, a);
    } else {
      aiv(*rt, kSleep, a);
    }
  }
  rt->wait_all();
  for (const TaskRecord &r : rt->records()) {
    if (r.core == CoreType::AIC)
      EXPECT_EQ(r.worker, 4 + static_cast<int>((7 * r.id) % 3)) << "task " << r.id;
    else
      EXPECT_EQ(r.worker, static_cast<int>((7 * r.id) % 4)) << "task " << r.id;
    EXPECT_EQ(rt->worker_name(r.worker).substr(0, 3), r.core == CoreType::AIC ? "AIC" : "AIV");
  }
}

TEST(PtoSimRuntime, HashPlacesByMixedKey) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = DispatchPolicy::Hash});
  std::set<int> used;
  for (int i = 0; i < 32; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(0));
    htp_ptosim_hint(a, i);
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  for (const TaskRecord &r : rt->records()) {
    EXPECT_EQ(r.worker, static_cast<int>(dispatch_hash(r.key) % 4)) << "task " << r.id;
    used.insert(r.worker);
  }
  EXPECT_GT(used.size(), 1u);
}

TEST(PtoSimRuntime, WorkStealingSpreadsAProducersConsumers) {
  float x = 0;
  ChipTensor t = scalar_tensor(&x);
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = DispatchPolicy::WorkSteal});
  CoreTaskArgs root;
  root.add_output(t);
  root.add_scalar(to_u64(1.0f), int64_t(1000));
  aiv(*rt, kSet, root);
  std::vector<float> outs(16);
  std::vector<ChipTensor> out_t;
  for (float &o : outs)
    out_t.push_back(scalar_tensor(&o));
  for (int i = 0; i < 16; ++i) {
    CoreTaskArgs a;
    a.add_input(t);
    a.add_output(out_t[i]);
    a.add_scalar(int64_t(5000));
    aiv(*rt, kCopy, a);
  }
  rt->wait_all();
  const auto rec = rt->records();
  std::set<int> ran_on;
  int stolen = rec[0].worker != rec[0].assigned;  // an idle core may steal the producer itself
  for (size_t i = 1; i < rec.size(); ++i) {
    EXPECT_EQ(rec[i].assigned, rec[0].worker) << "consumers go to the producer's worker first";
    ran_on.insert(rec[i].worker);
    stolen += rec[i].worker != rec[i].assigned;
  }
  uint64_t steals = 0;
  for (const auto &w : rt->worker_stats())
    steals += w.steals;
  EXPECT_GT(ran_on.size(), 1u);
  EXPECT_GT(stolen, 0);
  EXPECT_EQ(steals, static_cast<uint64_t>(stolen));
  for (float o : outs)
    EXPECT_EQ(o, 1.0f);
}

TEST(PtoSimRuntime, TaskWindowOfOneSerialisesIndependentTasks) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .task_window = 1});
  for (int i = 0; i < 6; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(3000));
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  const auto rec = rt->records();
  for (size_t i = 1; i < rec.size(); ++i)
    EXPECT_TRUE(ordered(rec[i - 1], rec[i])) << i;
}

TEST(PtoSimRuntime, WideWindowRunsIndependentTasksConcurrently) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .task_window = 64});
  for (int i = 0; i < 4; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(30000));
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_TRUE(overlap(rec[0], rec[3]));
}

TEST(PtoSimRuntime, StreamOrdersTasksWithoutDataDependencies) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4});
  for (int i = 0; i < 6; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(20000));
    htp_ptosim_hint(a, -1, /*stream=*/i % 2);
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  const auto rec = rt->records();
  for (size_t i = 2; i < rec.size(); ++i)
    EXPECT_TRUE(ordered(rec[i - 2], rec[i])) << i;
  EXPECT_TRUE(overlap(rec[0], rec[1])) << "two streams run side by side";
}

TEST(PtoSimRuntime, ExplicitDependenciesOrderTasks) {
  auto rt = make_runtime();
  CoreTaskArgs first;
  first.add_scalar(int64_t(20000));
  TaskOutputTensors f = aiv(*rt, kSleep, first);
  PTO2TaskId deps[1] = {f.task_id()};
  CoreTaskArgs second;
  second.add_scalar(int64_t(0));
  second.set_dependencies(deps, 1);
  aiv(*rt, kSleep, second);
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_TRUE(ordered(rec[0], rec[1]));
}

TEST(PtoSimRuntime, RuntimeCreatedOutputsFeedConsumers) {
  float out = 0;
  ChipTensor to = scalar_tensor(&out);
  auto rt = make_runtime();
  uint32_t shape[1] = {1};
  TensorCreateInfo ci(shape, 1);
  CoreTaskArgs p;
  p.add_output(ci);
  p.add_scalar(to_u64(3.5f), int64_t(10000));
  TaskOutputTensors made = aiv(*rt, kSet, p);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made.get_ref(0).owner_task_id.raw, 0u);
  CoreTaskArgs c;
  c.add_input(made.get_ref(0));
  c.add_output(to);
  c.add_scalar(int64_t(0));
  aiv(*rt, kCopy, c);
  rt->wait_all();
  EXPECT_EQ(out, 3.5f);
}

TEST(PtoSimRuntime, KernelExceptionFailsTheRunNamingTheTask) {
  auto rt = make_runtime();
  CoreTaskArgs a;
  aiv(*rt, kThrow, a);
  rt->wait_all();
  ASSERT_TRUE(rt->failed());
  EXPECT_EQ(rt->error(), "task 0 (kernel boom on AIV0): boom");
}

TEST(PtoSimRuntime, SubmitWithWrongCoreTypeFails) {
  auto rt = make_runtime();
  CoreTaskArgs a;
  MixedKernels k;
  k.aic_kernel_id = kNoop;
  rt->submit(k, a);
  EXPECT_TRUE(rt->failed());
  EXPECT_EQ(rt->error(),
            "submit: kernel noop (func_id 4) is an AIV kernel but was submitted with rt_submit_aic_task");
}

TEST(PtoSimRuntime, MixTaskIsRefused) {
  auto rt = make_runtime();
  CoreTaskArgs a;
  MixedKernels k;
  k.aic_kernel_id = kSleepAic;
  k.aiv0_kernel_id = kSleep;
  rt->submit(k, a);
  EXPECT_EQ(rt->error(), "submit: MIX tasks (an AIC and AIV kernels in one task) are not simulated; submit "
                         "them as separate tasks");
}

TEST(PtoSimRuntime, SubmitOfUnknownKernelFails) {
  auto rt = make_runtime();
  CoreTaskArgs a;
  aiv(*rt, 99, a);
  EXPECT_EQ(rt->error(), "submit: no kernel with func_id 99");
}

TEST(PtoSimRuntime, TraceHasOneEventPerTaskOnItsWorker) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 2, .aic_cores = 1});
  for (int i = 0; i < 5; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t(0));
    aiv(*rt, kSleep, a);
  }
  rt->wait_all();
  const auto trace = nlohmann::json::parse(rt->trace_json());
  int tasks = 0, names = 0;
  for (const auto &e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++tasks;
      EXPECT_EQ(e["name"], "sleep");
      EXPECT_EQ(e["tid"].get<int>(), e["args"]["task"].get<int>() % 2 + 1);
    } else if (e["ph"] == "M") {
      ++names;
    }
  }
  EXPECT_EQ(tasks, 5);
  EXPECT_EQ(names, 4); // orchestrator + 3 workers
}

// --- Which core runs which task, whichever thread executes it (docs/backends/pto-sim.md §4) ---------------

/// The documented dispatch table, as a reference: the core each task gets, in dispatch order.
struct PolicyModel {
  DispatchPolicy policy;
  int aiv_cores, aic_cores;
  uint64_t rr[2] = {0, 0};
  int producer_core = -1; // work_steal: the core that ran the task's producer (set by the caller)

  int pick(CoreType type, int64_t key) {
    const bool is_aic = type == CoreType::AIC;
    const int base = is_aic ? aiv_cores : 0, n = is_aic ? aic_cores : aiv_cores;
    const auto k = static_cast<uint64_t>(key);
    int core = base + static_cast<int>(rr[is_aic] % n);
    switch (policy) {
    case DispatchPolicy::Affinity: core = base + static_cast<int>(k % n); break;
    case DispatchPolicy::Hash: core = base + static_cast<int>(dispatch_hash(k) % n); break;
    case DispatchPolicy::WorkSteal:
      if (producer_core >= base && producer_core < base + n) {
        core = producer_core;
        break;
      }
      ++rr[is_aic];
      break;
    case DispatchPolicy::RoundRobin: ++rr[is_aic]; break;
    }
    return core;
  }
};

class PtoSimPolicy : public ::testing::TestWithParam<DispatchPolicy> {};

std::string policy_param_name(const ::testing::TestParamInfo<DispatchPolicy> &info) {
  return std::string(policy_name(info.param));
}

// A chain (each task after the previous one) of AIV and AIC tasks whose head waits at a gate until the whole
// chain is submitted, so every later task is released by its producer's completion: the completing thread
// runs it on behalf of the core the policy picks, and the cores must still be exactly the policy's.
TEST_P(PtoSimPolicy, ChainRunsOnThePolicysCoresOnTheCompletingThread) {
  const DispatchPolicy policy = GetParam();
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .aic_cores = 2, .dispatch = policy});
  GateScope gates;
  constexpr int kChain = 48;
  PTO2TaskId prev = gate_task(*rt, 0, 0);
  for (int i = 1; i < kChain; ++i) {
    CoreTaskArgs a;
    a.set_dependencies(&prev, 1);
    prev = (i % 3 == 2 ? aic(*rt, kNoopAic, a) : aiv(*rt, kNoop, a)).task_id();
  }
  g_gates.open[0] = true;
  rt->wait_all();
  ASSERT_FALSE(rt->failed()) << rt->error();
  const auto rec = rt->records();
  ASSERT_EQ(rec.size(), static_cast<size_t>(kChain));
  PolicyModel model{policy, 4, 2};
  int on_behalf = 0;
  for (const TaskRecord &r : rec) {
    EXPECT_EQ(r.assigned, model.pick(r.core, r.key)) << "task " << r.id;
    if (r.id > 0 || policy != DispatchPolicy::WorkSteal) // an idle core may steal the queued head
      EXPECT_EQ(r.worker, r.assigned) << "task " << r.id;
    model.producer_core = r.worker;
    // The chain's thread runs it on the core's behalf, unless the core was busy at that moment (its own
    // thread briefly holding the claim, on a loaded machine): then the core's own thread runs it (pto-sim.md
    // §4, "Released by a completion"). No third thread.
    EXPECT_TRUE(r.thread == rec[0].thread || r.thread == r.worker)
        << "task " << r.id << " ran on thread " << r.thread << ", neither the chain's (" << rec[0].thread
        << ") nor its core's (" << r.worker << ")";
    on_behalf += r.thread != r.worker;
  }
  uint64_t borrowed = 0;
  for (const WorkerStats &w : rt->worker_stats())
    borrowed += w.borrowed;
  EXPECT_EQ(borrowed, static_cast<uint64_t>(on_behalf));
  if (policy == DispatchPolicy::WorkSteal)
    EXPECT_GT(on_behalf, 0) << "AIC tasks run on AIC cores, on the AIV thread of the chain";
  else
    EXPECT_GT(on_behalf, kChain / 2) << "the chain moves from core to core";
  // The trace shows each task on its core and names the thread that executed it on the core's behalf.
  const auto trace = nlohmann::json::parse(rt->trace_json());
  for (const auto &e : trace["traceEvents"]) {
    if (e["ph"] != "X" || !e["args"].contains("task")) continue;
    const TaskRecord &r = rec.at(e["args"]["task"].get<size_t>());
    EXPECT_EQ(e["tid"].get<int>(), r.worker + 1);
    if (r.thread != r.worker)
      EXPECT_EQ(e["args"].value("thread", ""), rt->worker_name(r.thread));
    else
      EXPECT_FALSE(e["args"].contains("thread"));
  }
}

// Streams keyed to one core stay on it under affinity and hash, however their tasks are released.
TEST(PtoSimRuntime, KeyedStreamsStayOnTheirCoresUnderAffinityAndHash) {
  for (DispatchPolicy policy : {DispatchPolicy::Affinity, DispatchPolicy::Hash}) {
    SCOPED_TRACE(policy_name(policy));
    auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = policy});
    for (int i = 0; i < 40; ++i) {
      CoreTaskArgs a;
      a.add_scalar(int64_t(i % 5 == 0 ? 300 : 0));
      htp_ptosim_hint(a, /*key=*/100 + i % 2, /*stream=*/i % 2);
      aiv(*rt, kSleep, a);
    }
    rt->wait_all();
    const auto rec = rt->records();
    for (const TaskRecord &r : rec) {
      const auto key = static_cast<uint64_t>(100 + r.id % 2);
      EXPECT_EQ(r.worker, static_cast<int>(policy == DispatchPolicy::Hash ? dispatch_hash(key) % 4 : key % 4))
          << "task " << r.id;
      if (r.id >= 2) EXPECT_TRUE(ordered(rec[r.id - 2], r)) << "stream order, task " << r.id;
    }
  }
}

// Streams, independent tasks and keys that collide: however tasks are released and whichever thread runs
// them, a core never runs two tasks at once, and the placement is the policy's.
TEST_P(PtoSimPolicy, ACoreRunsOneTaskAtATime) {
  const DispatchPolicy policy = GetParam();
  g_occupancy.clashes = 0;
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .aic_cores = 2, .dispatch = policy});
  constexpr int kTasks = 240;
  for (int i = 0; i < kTasks; ++i) {
    CoreTaskArgs a;
    a.add_scalar(int64_t((i * 37) % 7 == 0 ? 200 : (i * 13) % 40));
    htp_ptosim_hint(a, /*key=*/(i * 7) % 13, /*stream=*/i % 3 == 0 ? -1 : i % 4);
    if (i % 5 == 4)
      aic(*rt, kExclusiveAic, a);
    else
      aiv(*rt, kExclusive, a);
  }
  rt->wait_all();
  ASSERT_FALSE(rt->failed()) << rt->error();
  EXPECT_EQ(g_occupancy.clashes.load(), 0) << "two tasks ran on one core at the same time";
  auto rec = rt->records();
  std::map<int, int> assigned;
  int stolen = 0;
  for (const TaskRecord &r : rec) {
    const bool is_aic = r.core == CoreType::AIC;
    const int base = is_aic ? 4 : 0, n = is_aic ? 2 : 4;
    ASSERT_GE(r.worker, base);
    ASSERT_LT(r.worker, base + n);
    const auto key = static_cast<uint64_t>(r.key);
    if (policy == DispatchPolicy::Affinity) EXPECT_EQ(r.worker, base + static_cast<int>(key % n));
    if (policy == DispatchPolicy::Hash) EXPECT_EQ(r.worker, base + static_cast<int>(dispatch_hash(key) % n));
    if (policy != DispatchPolicy::WorkSteal) EXPECT_EQ(r.worker, r.assigned) << "task " << r.id;
    ++assigned[r.assigned];
    stolen += r.worker != r.assigned;
  }
  if (policy == DispatchPolicy::RoundRobin) // the rotation gives every core of a pool its share
    for (const auto &[core, count] : assigned)
      EXPECT_NEAR(count, core < 4 ? kTasks * 4 / 5 / 4 : kTasks / 5 / 2, 1) << rt->worker_name(core);
  uint64_t steals = 0;
  for (const WorkerStats &w : rt->worker_stats())
    steals += w.steals;
  EXPECT_EQ(steals, static_cast<uint64_t>(stolen));
  std::sort(rec.begin(), rec.end(), [](const TaskRecord &a, const TaskRecord &b) {
    return a.worker != b.worker ? a.worker < b.worker : a.start_us < b.start_us;
  });
  for (size_t i = 1; i < rec.size(); ++i)
    if (rec[i].worker == rec[i - 1].worker)
      EXPECT_LE(rec[i - 1].end_us, rec[i].start_us) << "tasks " << rec[i - 1].id << " and " << rec[i].id;
}

INSTANTIATE_TEST_SUITE_P(Policies, PtoSimPolicy,
                         ::testing::Values(DispatchPolicy::RoundRobin, DispatchPolicy::Affinity,
                                           DispatchPolicy::Hash, DispatchPolicy::WorkSteal),
                         policy_param_name);

// Thread 0 runs a released successor on behalf of idle core 1; a task the scheduler queues on core 1 in the
// meantime waits for it, then runs on core 1's own thread.
TEST(PtoSimRuntime, ABorrowedCoreRunsNothingElseUntilItsTaskEnds) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = DispatchPolicy::Affinity});
  GateScope gates;
  const PTO2TaskId head = gate_task(*rt, 0, /*key=*/0);
  gate_task(*rt, 1, /*key=*/1, head);
  g_gates.open[0] = true;
  ASSERT_TRUE(wait_started(1));
  noop_task(*rt, /*key=*/1);
  ASSERT_TRUE(wait_queued(*rt, 1, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(10)); // core 1's thread was woken by the push
  EXPECT_EQ(rt->worker_stats()[1].tasks, 0u) << "core 1 ran a task while its claim was held";
  EXPECT_EQ(rt->worker_stats()[1].queued, 1u);
  g_gates.open[1] = true;
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_EQ(rec[1].worker, 1);
  EXPECT_EQ(rec[1].thread, 0) << "the completing thread ran the successor";
  EXPECT_EQ(rec[2].worker, 1);
  EXPECT_EQ(rec[2].thread, 1);
  EXPECT_TRUE(ordered(rec[1], rec[2]));
}

// A successor released for a core whose own thread is running a task is queued there, not run beside it.
TEST(PtoSimRuntime, ASuccessorForABusyCoreWaitsInItsQueue) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = DispatchPolicy::Affinity});
  GateScope gates;
  const PTO2TaskId head = gate_task(*rt, 0, /*key=*/0);
  gate_task(*rt, 1, /*key=*/1);
  noop_task(*rt, /*key=*/1, head);
  ASSERT_TRUE(wait_started(1));
  g_gates.open[0] = true;
  ASSERT_TRUE(wait_queued(*rt, 1, 1)) << "the successor is queued on busy core 1";
  EXPECT_EQ(rt->worker_stats()[1].tasks, 0u) << "the successor ran beside core 1's task";
  g_gates.open[1] = true;
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_EQ(rec[2].worker, 1);
  EXPECT_EQ(rec[2].thread, 1);
  EXPECT_TRUE(ordered(rec[1], rec[2]));
}

// A thread whose own core has queued work serves it rather than running a successor for another core.
TEST(PtoSimRuntime, AThreadServesItsOwnQueueBeforeAnotherCore) {
  auto rt = make_runtime(RuntimeOptions{.aiv_cores = 4, .dispatch = DispatchPolicy::Affinity});
  GateScope gates;
  const PTO2TaskId head = gate_task(*rt, 0, /*key=*/0);
  noop_task(*rt, /*key=*/1, head);
  ASSERT_TRUE(wait_started(0));
  noop_task(*rt, /*key=*/0);
  ASSERT_TRUE(wait_queued(*rt, 0, 1)) << "queued behind the head on core 0";
  g_gates.open[0] = true;
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_EQ(rec[1].worker, 1);
  EXPECT_EQ(rec[1].thread, 1) << "handed to core 1's thread";
  EXPECT_EQ(rec[2].worker, 0);
  EXPECT_EQ(rec[2].thread, 0);
}

} // namespace
