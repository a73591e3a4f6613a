// The simulated runtime: dependencies from argument directions, dispatch policies, task windows, streams,
// errors and the trace (docs/backends/pto-sim.md §2, §4).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "runtime.hpp"
#include "test_kernels.hpp"

using namespace htp_ptosim;
using namespace ptosim_test;

namespace {

enum Kernel : int32_t { kLog = 0, kCopy = 1, kSet = 2, kSleep = 3, kNoop = 4, kThrow = 5, kSleepAic = 6 };

std::unique_ptr<Runtime> make_runtime(RuntimeOptions o = {}) {
  auto rt = std::make_unique<Runtime>(o);
  rt->set_kernel(kLog, CoreType::AIV, k_log, "log");
  rt->set_kernel(kCopy, CoreType::AIV, k_copy, "copy");
  rt->set_kernel(kSet, CoreType::AIV, k_set, "set");
  rt->set_kernel(kSleep, CoreType::AIV, k_sleep, "sleep");
  rt->set_kernel(kNoop, CoreType::AIV, k_noop, "noop");
  rt->set_kernel(kThrow, CoreType::AIV, k_throw, "boom");
  rt->set_kernel(kSleepAic, CoreType::AIC, k_sleep, "sleep_aic");
  return rt;
}

TaskOutputTensors aiv(Runtime &rt, int32_t func, CoreTaskArgs &a) {
  MixedKernels k;
  k.aiv0_kernel_id = func;
  return rt.submit(k, a);
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

TEST(PtoSimRuntime, WriterWaitsForEarlierReader) {
  float x = 5, y = 0;
  ChipTensor tx = scalar_tensor(&x), ty = scalar_tensor(&y);
  auto rt = make_runtime();
  CoreTaskArgs r;
  r.add_input(tx);
  r.add_output(ty);
  r.add_scalar(int64_t(20000));
  aiv(*rt, kCopy, r);
  CoreTaskArgs w;
  w.add_output(tx);
  w.add_scalar(to_u64(7.0f), int64_t(0));
  aiv(*rt, kSet, w);
  rt->wait_all();
  EXPECT_EQ(y, 5.0f);
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
    w.add_output(*t);
    w.add_scalar(to_u64(1.0f), int64_t(30000));
    aiv(*rt, kSet, w);
  }
  rt->wait_all();
  const auto rec = rt->records();
  EXPECT_TRUE(overlap(rec[0], rec[1])) << "a and b are disjoint";
  EXPECT_TRUE(ordered(rec[0], rec[2]) && ordered(rec[1], rec[2])) << "c overlaps both";
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
  int stolen = 0;
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

} // namespace
