// htp/device_estimate.hpp: work counted from tile IR, the roofline, and the critical path of a task graph.
#include <htp/device_estimate.hpp>

#include <gtest/gtest.h>

#include <set>

namespace {

using nlohmann::json;

htp::TileOp op(json j) {
  htp::TileOp o;
  o.op = j["op"].get<std::string>();
  if (j.contains("dst")) o.dst = j["dst"].get<std::string>();
  if (j.contains("args")) o.args = j["args"].get<std::vector<json>>();
  if (j.contains("value")) o.value = j["value"];
  if (j.contains("var")) o.var = j["var"].get<std::string>();
  if (j.contains("start")) o.start = j["start"];
  if (j.contains("stop")) o.stop = j["stop"];
  if (j.contains("step")) o.step = j["step"];
  return o;
}

/// A GEMM tile: for k in range(K / 64): a = load(64x64), b = load(64x64), acc += a @ b; store(acc).
htp::KernelWork gemm_work(int64_t k_chunks, const json &stop) {
  htp::TileOp loop = op({{"op", "for"}, {"var", "k"}, {"start", 0}, {"stop", stop}, {"step", 1}});
  loop.body = {op({{"op", "load"}, {"dst", "a"}}), op({{"op", "load"}, {"dst", "b"}}),
               op({{"op", "matmul"}, {"dst", "acc"}, {"args", {"a", "b"}}})};
  std::vector<htp::TileOp> body = {loop, op({{"op", "store"}, {"dst", "c"}, {"value", "acc"}})};
  return htp::count_kernel_work(body, [](const std::string &n) -> std::optional<htp::TileShape> {
    return htp::TileShape{64, 64, n == "acc" ? "f32" : "f16"};
  }, json{{"KC", k_chunks}});
}

TEST(DeviceEstimate, CountsMatmulFlopsAndBytesThroughConstantLoops) {
  const htp::KernelWork w = gemm_work(4, json{{"param", "KC"}});
  EXPECT_DOUBLE_EQ(w.matmul_flops, 4 * 2.0 * 64 * 64 * 64);
  EXPECT_EQ(w.matmul_dtype, "f16");
  EXPECT_DOUBLE_EQ(w.bytes_loaded, 4 * 2 * 64 * 64 * 2.0);
  EXPECT_DOUBLE_EQ(w.bytes_stored, 64 * 64 * 4.0);
  EXPECT_FALSE(w.dynamic_trip_counts);
}

TEST(DeviceEstimate, UnknownTripCountCountsOnceAndSaysSo) {
  const htp::KernelWork w = gemm_work(4, json{{"param", "n"}});
  EXPECT_DOUBLE_EQ(w.matmul_flops, 2.0 * 64 * 64 * 64);
  EXPECT_TRUE(w.dynamic_trip_counts);
}

TEST(DeviceEstimate, RooflineIsLaunchPlusTheSlowerOfComputeAndMemory) {
  htp::RooflineRates r;
  r.matmul_flops_per_ns["f16"] = 1000;
  r.load_bytes_per_ns = 10;
  r.store_bytes_per_ns = 10;
  r.launch_ns = 100;
  const htp::WorkEstimate one = htp::estimate_work(gemm_work(4, 4), r);
  const htp::WorkEstimate two = htp::estimate_work(gemm_work(8, 8), r);
  EXPECT_EQ(one.bound, "memory");
  EXPECT_DOUBLE_EQ(one.memory_ns, 4 * 2 * 64 * 64 * 2.0 / 10);
  EXPECT_DOUBLE_EQ(one.total_ns, 100 + one.memory_ns);
  EXPECT_DOUBLE_EQ(two.total_ns - two.launch_ns, 2 * (one.total_ns - one.launch_ns));
}

TEST(DeviceEstimate, CriticalPathIsTheLongestDependencyChain) {
  // 0 -> 1 -> 3 and 0 -> 2 -> 3; 2 is longer, so the path is 0, 2, 3.
  std::vector<htp::EstimatedTask> t(4);
  t[0].ns = 10;
  t[1].ns = 5;
  t[1].preds = {0};
  t[2].ns = 20;
  t[2].preds = {0};
  t[3].ns = 1;
  t[3].preds = {1, 2};
  for (auto &x : t) x.track = "AIV";
  const htp::EstimatedSchedule s = htp::schedule_estimate(t);
  EXPECT_DOUBLE_EQ(s.total_ns, 36);
  EXPECT_DOUBLE_EQ(s.critical_path_ns, 31);
  EXPECT_EQ(s.critical_path, (std::vector<size_t>{0, 2, 3}));
  EXPECT_DOUBLE_EQ(s.start_ns[3], 30);
  const json summary = htp::estimate_summary_json(t, s, "p", {{"AIV", 2}});
  EXPECT_EQ(summary["kind"], "estimate");
  EXPECT_DOUBLE_EQ(summary["makespan_lower_bound_ns"].get<double>(), 31);
  // Tasks 1 and 2 overlap: the trace puts them on two lanes of the estimate's process.
  const json ev = htp::estimate_trace_events(t, s, 7);
  std::set<int> tids;
  for (const auto &e : ev)
    if (e["ph"] == "X") tids.insert(e["tid"].get<int>());
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_EQ(ev[0]["args"]["name"], htp::kEstimateTrackName);
}

TEST(DeviceEstimate, CycleIsAnError) {
  std::vector<htp::EstimatedTask> t(2);
  t[0].preds = {1};
  t[1].preds = {0};
  EXPECT_THROW(htp::schedule_estimate(t), std::runtime_error);
}

}  // namespace
