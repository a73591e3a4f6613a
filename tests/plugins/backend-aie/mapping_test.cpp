// Mapping IR fixtures onto NPU designs, the aie.mlir goldens, and the simulator against reference
// results (vector add over 4 cores, tiled GEMM over 2 and 4 cores, a CSP three-stage pipeline).
#include <gtest/gtest.h>

#include <cmath>

#include "aie_test_support.hpp"
#include "dialect_spelling.hpp"
#include "mlir_printer.hpp"
#include "validator.hpp"

using namespace htp::aie;
using aie_test::fixture;

namespace {

Design only_design(const std::string &name, const std::string &device = "npu1") {
  auto m = aie_test::map(fixture(name), device);
  if (!m.problems.empty() || m.designs.size() != 1)
    throw std::runtime_error(name + ": " + m.text() + std::to_string(m.designs.size()) + " designs");
  return m.designs[0];
}

const ObjectFifo &fifo(const Design &d, const std::string &name) {
  const ObjectFifo *f = d.fifo(name);
  if (!f) throw std::runtime_error("no FIFO @" + name);
  return *f;
}

std::vector<float> matmul(const std::vector<float> &a, const std::vector<float> &b, int m, int k, int n) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int x = 0; x < k; ++x) acc += a[i * k + x] * b[x * n + j];
      c[i * n + j] = acc;
    }
  return c;
}

void expect_near(const std::vector<float> &got, const std::vector<float> &want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > tol && bad++ < 5) ADD_FAILURE() << "element " << i << ": " << got[i] << " != " << want[i];
}

void run_gemm(const std::string &name, size_t cores) {
  Design d = only_design(name);
  EXPECT_EQ(d.cores.size(), cores);
  EXPECT_TRUE(validate(d, *device_named("npu1")).empty());
  std::map<std::string, std::vector<float>> buf{{"A", aie_test::random_floats(64 * 32, 1)},
                                                {"B", aie_test::random_floats(32 * 64, 2)},
                                                {"C", std::vector<float>(64 * 64, -7.0f)}};
  aie_test::simulate(d, buf);
  expect_near(buf["C"], matmul(buf["A"], buf["B"], 64, 32, 64), 1e-4f);
}

}  // namespace

TEST(AieMapping, VectorAddUsesFourCoresAndDistributesThroughTheMemTile) {
  Design d = only_design("vadd.json");
  ASSERT_EQ(d.cores.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(d.cores[i].tile, (TileCoord{static_cast<int>(i), 2}));
  const ObjectFifo &l2 = fifo(d, "in_A_L2");
  EXPECT_EQ(l2.producer, (TileCoord{0, 0}));
  EXPECT_EQ(l2.consumers, (std::vector<TileCoord>{{0, 1}}));
  EXPECT_EQ(l2.shape, (std::vector<int64_t>{4096}));
  ASSERT_EQ(d.links.size(), 3u);
  EXPECT_EQ(d.links[0].dst_offsets, (std::vector<int64_t>{0, 1024, 2048, 3072}));
  EXPECT_EQ(d.links[2].srcs.size(), 4u);  // the join of C
  EXPECT_EQ(d.cores[0].body[0].kind, CoreOp::Kind::Loop);
  EXPECT_EQ(d.cores[0].body[0].trip, 2);
  EXPECT_TRUE(validate(d, *device_named("npu1")).empty());
}

TEST(AieMapping, VectorAddMlirGolden) {
  EXPECT_TRUE(aie_test::matches_golden("vadd.aie.mlir", print_mlir(only_design("vadd.json"), default_spelling())));
}

TEST(AieMapping, GemmMlirGolden) {
  EXPECT_TRUE(aie_test::matches_golden("gemm_2x2.aie.mlir", print_mlir(only_design("gemm_2x2.json"), default_spelling())));
}

TEST(AieMapping, GemmOnTwoCoresBroadcastsTheReplicatedOperand) {
  Design d = only_design("gemm_2x1.json");
  const ObjectFifo &b = fifo(d, "in_B");
  EXPECT_EQ(b.consumers.size(), 2u);  // RS(1) over mesh.y of extent 1: both cores read all of B
  EXPECT_EQ(fifo(d, "in_A_0").consumers.size(), 1u);
}

TEST(AieMapping, GemmOnFourCoresDistributesShardsToBroadcastGroups) {
  Design d = only_design("gemm_2x2.json");
  EXPECT_EQ(fifo(d, "in_A_0").consumers.size(), 2u);  // S(0)R: row shard 0 to the cores of mesh row 0
  EXPECT_EQ(fifo(d, "in_B_1").consumers.size(), 2u);  // RS(1): column shard 1 to the cores of mesh column 1
  const DmaOp &b = d.sequence[1];
  ASSERT_EQ(b.fifo, "in_B_L2");
  EXPECT_EQ(b.sizes, (std::array<int64_t, 4>{1, 2, 32, 32}));
  EXPECT_EQ(b.strides, (std::array<int64_t, 4>{0, 32, 64, 1}));
}

TEST(AieMapping, SpellingIsSwitchable) {
  Design d = only_design("vadd.json");
  std::string v10 = print_mlir(d, *spelling_named("v1.0"));
  EXPECT_NE(v10.find("aiex.runtime_sequence("), std::string::npos);
  EXPECT_NE(v10.find("link_with = \"add_tile.o\", stack_size"), std::string::npos);
  std::string newest = print_mlir(d, *spelling_named("2026"));
  EXPECT_EQ(newest.find("subview.access"), std::string::npos);
  std::string old = print_mlir(d, *spelling_named("2024.06"));
  EXPECT_NE(old.find("func.func @sequence("), std::string::npos);
  EXPECT_NE(old.find("aie.device(npu1_4col)"), std::string::npos);
  EXPECT_NE(old.find("dma_memcpy_nd(0, 0, %arg0"), std::string::npos);
}

TEST(AieSimulation, VectorAddOverFourCoresMatchesTheReference) {
  Design d = only_design("vadd.json");
  std::map<std::string, std::vector<float>> buf{{"A", aie_test::random_floats(128 * 64, 3)},
                                                {"B", aie_test::random_floats(128 * 64, 4)},
                                                {"C", std::vector<float>(128 * 64, 0.0f)}};
  auto r = aie_test::simulate(d, buf);
  std::vector<float> want(128 * 64);
  for (size_t i = 0; i < want.size(); ++i) want[i] = buf["A"][i] + buf["B"][i];
  expect_near(buf["C"], want, 0.0f);
  EXPECT_EQ(r.summary["cores"].size(), 4u);
  for (const auto &c : r.summary["cores"]) EXPECT_EQ(c["calls"], 2);
}

TEST(AieSimulation, GemmOnTwoCoresMatchesTheReference) { run_gemm("gemm_2x1.json", 2); }
TEST(AieSimulation, GemmOnFourCoresMatchesTheReference) { run_gemm("gemm_2x2.json", 4); }
TEST(AieSimulation, GemmOnFourCoresInOneColumnOfShardsMatchesTheReference) { run_gemm("gemm_4x1.json", 4); }

TEST(AieSimulation, CspThreeStagePipelineMatchesTheReference) {
  Design d = only_design("pipeline.json");
  ASSERT_EQ(d.cores.size(), 3u);
  const ObjectFifo &c1 = fifo(d, "ch_c1");
  EXPECT_EQ(c1.producer, (TileCoord{0, 2}));
  EXPECT_EQ(c1.consumers, (std::vector<TileCoord>{{0, 3}}));
  EXPECT_EQ(c1.depth, (std::vector<int64_t>{2}));
  EXPECT_TRUE(shares_memory(c1, *device_named("npu1")));
  EXPECT_TRUE(validate(d, *device_named("npu1")).empty());
  std::map<std::string, std::vector<float>> buf{{"X", aie_test::random_floats(64 * 32, 5)},
                                                {"Y", std::vector<float>(64 * 32, 0.0f)}};
  aie_test::simulate(d, buf);
  std::vector<float> want(64 * 32);
  for (size_t i = 0; i < want.size(); ++i) want[i] = (buf["X"][i] + 1.0f) * (buf["X"][i] + 1.0f);
  expect_near(buf["Y"], want, 1e-5f);
}

TEST(AieSimulation, TraceHasOneThreadPerCore) {
  Design d = only_design("pipeline.json");
  std::map<std::string, std::vector<float>> buf{{"X", aie_test::random_floats(64 * 32, 6)},
                                                {"Y", std::vector<float>(64 * 32, 0.0f)}};
  auto r = aie_test::simulate(d, buf);
  int names = 0, calls = 0;
  for (const auto &e : r.trace["traceEvents"]) {
    if (e["name"] == "thread_name") ++names;
    if (e.value("cat", "") == "kernel") ++calls;
  }
  EXPECT_EQ(names, 3);
  EXPECT_EQ(calls, 12);
}

TEST(AieSimulation, AFifoNobodyFeedsIsADeadlockNamingAFifo) {
  Design d = only_design("pipeline.json");
  d.cores.erase(d.cores.begin());  // no loader: the square stage waits on @ch_c1 forever
  std::map<std::string, std::vector<float>> buf{{"X", std::vector<float>(64 * 32, 0.0f)},
                                                {"Y", std::vector<float>(64 * 32, 0.0f)}};
  try {
    aie_test::simulate(d, buf, 1.0);
    FAIL() << "the simulation did not stop";
  } catch (const htp::aie::sim::SimError &e) {
    // Several waiters stall (the square stage on @ch_c1, the storer on @ch_c2, the shim on @in_X): a round in
    // which nothing moves is the deadlock, reported at once with every waiter (not after the time limit).
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock: nothing in the design can move"), std::string::npos) << what;
    EXPECT_NE(what.find("waits to acquire 1 object(s) to consume of @ch_c1"), std::string::npos) << what;
    EXPECT_NE(what.find(" @"), std::string::npos) << what;
  }
}

namespace {

/// gemm_2x1.json with B's layout given a memory facet.
/// gemm_2x1 with the keys of `mem` set in B's mem facet (the others stay as layout-axe writes them: null).
Json gemm_with_b_mem(const Json &mem) {
  Json attrs = fixture("gemm_2x1.json");
  Json &b = attrs["layout.signatures"]["functions"]["gemm"]["params"]["B"]["mem"];
  b = Json{{"strides", nullptr}, {"order", nullptr}, {"swizzle", nullptr}, {"pack", nullptr}};
  b.update(mem);
  return attrs;
}

}  // namespace

TEST(AieMemoryLayout, OrderMakesTheShimTransposeAReplicatedOperand) {
  // B [32, 64] replicated, column-major on the cores (order [1, 0]): the shim feeds both cores directly,
  // reading B column by column; the kernel reads the object with strides [1, 32].
  auto m = aie_test::map(gemm_with_b_mem({{"strides", nullptr}, {"order", {1, 0}}, {"swizzle", nullptr}, {"pack", nullptr}}));
  ASSERT_TRUE(m.problems.empty()) << m.text();
  const Design &d = m.designs[0];
  EXPECT_TRUE(validate(d, *device_named("npu1")).empty());
  bool found = false;
  for (const auto &op : d.sequence)
    if (op.kind == DmaOp::Kind::Memcpy && op.param == "B") {
      found = true;
      EXPECT_EQ(op.sizes, (std::array<int64_t, 4>{1, 1, 64, 32}));
      EXPECT_EQ(op.strides, (std::array<int64_t, 4>{0, 0, 1, 64}));
    }
  EXPECT_TRUE(found);
  EXPECT_NE(d.sources.at("gemm").find("s_B[] = {1, 32}"), std::string::npos);
  std::map<std::string, std::vector<float>> buf{{"A", aie_test::random_floats(64 * 32, 5)},
                                                {"B", aie_test::random_floats(32 * 64, 6)},
                                                {"C", std::vector<float>(64 * 64, -7.0f)}};
  aie_test::simulate(d, buf);
  expect_near(buf["C"], matmul(buf["A"], buf["B"], 64, 32, 64), 1e-4f);
}

TEST(AieMemoryLayout, RowMajorStridesChangeNothing) {
  auto m = aie_test::map(gemm_with_b_mem({{"strides", {64, 1}}, {"order", nullptr}}));
  ASSERT_TRUE(m.problems.empty()) << m.text();
  EXPECT_EQ(print_mlir(m.designs[0], default_spelling()), print_mlir(only_design("gemm_2x1.json"), default_spelling()));
}

TEST(AieMemoryLayout, WhatADmaCannotProduceIsADiagnostic) {
  struct Case {
    Json mem;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"swizzle", "xor(3)"}}, "swizzles addresses (\"xor(3)\"); AIE DMAs move affine 4-D patterns only"},
      {{{"pack", 2}}, "packs 2 elements per word"},
      {{{"strides", {128, 1}}}, "(strides [128,1] of the local shape [32,64]) is not a permutation of the local elements"},
      {{{"banks", {{{"extent", 2}, {"stride", 1}, {"axis", "l1.bank"}, {"dim", 0}}}}}, "places it in memory banks"},
  };
  for (const auto &c : cases) {
    auto m = aie_test::map(gemm_with_b_mem(c.mem));
    ASSERT_EQ(m.problems.size(), 1u) << c.mem.dump() << "\n" << m.text();
    EXPECT_EQ(m.problems[0].code, "aie.layout-mem");
    EXPECT_EQ(m.problems[0].message.rfind("the memory layout of 'B' of kernel 'gemm' ", 0), 0u) << m.problems[0].message;
    EXPECT_NE(m.problems[0].message.find(c.message), std::string::npos) << m.problems[0].message;
    EXPECT_FALSE(m.problems[0].span.is_null());
  }
}
