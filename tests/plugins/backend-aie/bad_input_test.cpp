// Bad input: each is a diagnostic with a code and a location, never a crash or a silent design.
#include <gtest/gtest.h>

#include "aie_test_support.hpp"
#include "support/test_support.hpp"
#include "validator.hpp"

using namespace htp::aie;

namespace {

bool has(const aie_test::Mapped &m, const std::string &code, const std::string &text) {
  for (const auto &p : m.problems)
    if (p.code == code && p.message.find(text) != std::string::npos && !p.span.is_null()) return true;
  return false;
}

std::string violations(const Design &d) {
  std::string s;
  for (const auto &v : validate(d, *device_named(d.device))) s += v.code + " " + v.text() + "\n";
  return s;
}

}  // namespace

TEST(AieBadInput, KernelGridLargerThanTheDevice) {
  Json f = aie_test::fixture("gemm_2x2.json");
  f["tile.kernels"]["kernels"][0]["mapping"] = {4, 4};
  auto m = aie_test::map(f, "npu1_2col");
  EXPECT_TRUE(has(m, "aie.grid-too-large", "16 cores, but device npu1_2col (2 columns x 4 compute rows = 8 compute tiles)"))
      << m.text();
}

TEST(AieBadInput, WorkloadGridLargerThanTheDevice) {
  auto m = aie_test::map(aie_test::fixture("vadd.json"), "npu1_2col");
  EXPECT_TRUE(m.designs.size() == 1) << m.text();  // 4 cores fit two columns
  Json f = aie_test::fixture("vadd.json");
  f["wsp.task_graph"]["workloads"][0]["body"][0]["domain"]["extents"] = {32};
  auto big = aie_test::map(f, "npu1");
  EXPECT_TRUE(has(big, "aie.grid-too-large", "needs 32 cores")) << big.text();
}

TEST(AieBadInput, DistributionsThatExceedTheMemTileChannelsCannotBeRouted) {
  // One column: A and B each distribute to 4 cores, 8 mem-tile output channels of 6.
  auto m = aie_test::map(aie_test::fixture("vadd.json"), "npu1_1col");
  EXPECT_TRUE(has(m, "aie.route", "no mem tile has 5 free DMA channels to distribute 'B' over 4 core groups")) << m.text();
}

TEST(AieBadInput, TileFootprintOverTileMemory) {
  auto m = aie_test::map(aie_test::fixture("gemm_big_2x1.json"));
  ASSERT_EQ(m.designs.size(), 1u) << m.text();
  std::string v = violations(m.designs[0]);
  EXPECT_NE(v.find("aie.validate.memory aie.tile(0, 2): compute tile needs"), std::string::npos) << v;
  EXPECT_NE(v.find("but has 65536"), std::string::npos) << v;
}

TEST(AieBadInput, MoreDmaChannelsThanATileHas) {
  auto m = aie_test::map(aie_test::fixture("three_inputs.json"));
  ASSERT_EQ(m.designs.size(), 1u) << m.text();
  EXPECT_EQ(violations(m.designs[0]),
            "aie.validate.dma-channels aie.tile(0, 2): compute tile needs 3 input and 1 output DMA channels but has 2 and 2\n");
}

TEST(AieBadInput, CspChannelWithTwoProducersCannotBeRouted) {
  Json f = aie_test::fixture("pipeline.json");
  f["tile.kernels"]["kernels"][1]["body"][0]["body"][3]["attrs"]["channel"] = "c1";  // square sends back into c1
  auto m = aie_test::map(f);
  EXPECT_TRUE(has(m, "aie.csp-route", "channel 'c1' has 2 producers ('loader', 'square')")) << m.text();
}

TEST(AieBadInput, CspEventThatCarriesAValue) {
  // An Event becomes a FIFO of one token (test_aie_orchestrated runs a handshake); tiles sent on it are refused.
  Json f = aie_test::fixture("pipeline.json");
  Json &channel = f["csp.graph"]["programs"][0]["channels"][0];
  channel["kind"] = "event";  // Event(): no element, depth 0
  channel["elem"] = nullptr;
  channel["depth"] = 0;
  auto m = aie_test::map(f);
  EXPECT_TRUE(has(m, "aie.csp-route", "sends a value on event 'c1', which carries none")) << m.text();
}

TEST(AieBadInput, CspUnbalancedChannel) {
  Json f = aie_test::fixture("pipeline.json");
  f["tile.kernels"]["kernels"][2]["body"][0]["stop"] = 3;  // the storer receives 3 of 4 tiles
  auto m = aie_test::map(f);
  EXPECT_TRUE(has(m, "aie.csp-balance", "'square' sends 4 times but 'storer' receives 3 times")) << m.text();
}

TEST(AieBadInput, TwoGridPointsWritingOneViewHaveNoSingleWriter) {
  Json f = aie_test::fixture("vadd.json");
  auto &task = f["wsp.task_graph"]["workloads"][0]["body"][0]["body"][0]["body"][0];
  task["args"][2]["offset"] = {Json{{"op", "mul"}, {"args", {Json{{"var", "s"}}, 16}}}, 0};  // C's view ignores i
  auto m = aie_test::map(f);
  EXPECT_TRUE(has(m, "aie.replicated-output", "output 'C' is written at the same elements")) << m.text();
}

TEST(AieBadInput, AMappedKernelsReplicatedOutputIsSentByOneCoreOfEachGroup) {
  // C replicated over the whole 2 x 2 mesh (layout-axe guarantees the replicas' values are the same): one
  // core sends it, the other three write their copy into a buffer of their own tile.
  Json f = aie_test::fixture("gemm_2x2.json");
  f["layout.signatures"]["functions"]["gemm"]["params"]["C"]["shard"] = Json::array();
  f["tile.kernels"]["kernels"][0]["params"][2]["local_shape"] = {64, 64};
  f["layout.signatures"]["functions"]["gemm"]["params"]["C"]["local_shape"] = {64, 64};
  // (the body stores the whole replica, its tile four times: an Out it covered only in part would be moved in
  // first, as an InOut, to keep the elements it does not store)
  Json &body = f["tile.kernels"]["kernels"][0]["body"];
  const Json store = body.back();
  body.erase(body.size() - 1);
  for (int r : {0, 32})
    for (int c : {0, 32}) {
      Json s = store;
      s["offset"] = {r, c};
      body.push_back(s);
    }
  auto m = aie_test::map(f);
  ASSERT_EQ(m.designs.size(), 1u) << m.text();
  const Design &d = m.designs[0];
  ASSERT_EQ(d.buffers.size(), 3u);
  for (const TileBuffer &b : d.buffers) {
    EXPECT_EQ(b.shape, (std::vector<int64_t>{64, 64}));
    EXPECT_NE(b.tile, d.cores[0].tile) << "the first core sends C";
  }
  int out_fifos = 0;
  for (const ObjectFifo &fifo : d.fifos) out_fifos += fifo.name.rfind("out_C", 0) == 0;
  EXPECT_EQ(out_fifos, 1);
  EXPECT_EQ(violations(d), "");
  Design wrong = d;  // a buffer handed to another tile's core is a validation error
  wrong.buffers[0].tile = d.cores[0].tile;
  EXPECT_NE(violations(wrong).find("is in the memory of"), std::string::npos) << violations(wrong);
}

TEST(AieBadInput, PtoIntrinsicIsAResolverErrorOnAnAieTarget) {
  auto r = htp::test::run_host({"--plugins", HTP_AIE_PLUGIN, "resolve", "--target", "aie-npu1", "--uses",
                                "Uses.Intrinsic(set=pto,op=add)"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not accepted by target aie-npu1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Uses.Intrinsic(op=add,set=pto)"), std::string::npos) << r.err;
}
