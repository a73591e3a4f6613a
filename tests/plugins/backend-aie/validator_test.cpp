// One test per validator rule: a valid design, broken by hand in one place, gives exactly that rule's
// diagnostic naming the op.
#include <gtest/gtest.h>

#include <functional>

#include "aie_test_support.hpp"
#include "validator.hpp"

using namespace htp::aie;

namespace {

Design design(const std::string &fixture) {
  auto m = aie_test::map(aie_test::fixture(fixture));
  if (!m.problems.empty() || m.designs.empty()) throw std::runtime_error(m.text());
  return m.designs[0];
}

ObjectFifo &fifo(Design &d, const std::string &name) {
  for (auto &f : d.fifos)
    if (f.name == name) return f;
  throw std::runtime_error("no FIFO " + name);
}

/// The violations of `d` after `breaker`; asserts that exactly `rule` fires, on an op containing `op`.
::testing::AssertionResult breaks(const std::string &fixture, const std::string &rule, const std::string &op,
                                  const std::function<void(Design &)> &breaker) {
  Design d = design(fixture);
  if (!validate(d, *device_named("npu1")).empty()) return ::testing::AssertionFailure() << "fixture not valid";
  breaker(d);
  auto v = validate(d, *device_named("npu1"));
  std::string all;
  for (const auto &x : v) all += x.code + " " + x.text() + "\n";
  for (const auto &x : v)
    if (x.code != rule) return ::testing::AssertionFailure() << "other rules fired:\n" << all;
  for (const auto &x : v)
    if (x.op.find(op) != std::string::npos) return ::testing::AssertionSuccess() << all;
  return ::testing::AssertionFailure() << "no " << rule << " naming '" << op << "':\n" << all;
}

}  // namespace

TEST(AieValidator, EveryRuleHasATest) { EXPECT_EQ(validator_rules().size(), 14u); }

TEST(AieValidator, CoreOnAMemTileRow) {
  EXPECT_TRUE(breaks("pipeline.json", "aie.validate.core-row", "aie.core(%tile_3_1)", [](Design &d) {
    // Move the storer (a leaf: its FIFO ends move with it) onto row 1.
    for (auto &f : d.fifos)
      for (auto &c : f.consumers)
        if (c == TileCoord{0, 4}) c = {3, 1};
    for (auto &f : d.fifos)
      if (f.producer == TileCoord{0, 4}) f.producer = {3, 1};
    d.cores[2].tile = {3, 1};
  }));
}

TEST(AieValidator, TileOutsideTheDevice) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.coords", "aie.tile(7, 0)", [](Design &d) {
    fifo(d, "in_B_L2").producer = {7, 0};
  }));
}

TEST(AieValidator, DepthListArity) {
  EXPECT_TRUE(breaks("gemm_2x1.json", "aie.validate.depth-arity", "aie.objectfifo @in_B", [](Design &d) {
    fifo(d, "in_B").depth = {2, 2};  // two consumers: 1 or 3 entries
  }));
}

TEST(AieValidator, ConsumeOnAFifoTheCoreDoesNotConsume) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.acquire-port", "aie.objectfifo.acquire @in_A_1(Consume, 1)", [](Design &d) {
    d.cores[0].body[0].body[0].fifo = "in_A_1";
    d.cores[0].body[0].body[4].fifo = "in_A_1";  // its release
    d.cores[0].body[0].body[3].args[0].fifo = "in_A_1";
  }));
}

TEST(AieValidator, ProduceOnAFifoTheCoreDoesNotProduce) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.acquire-port", "(Produce, 1)", [](Design &d) {
    d.cores[0].body[0].body[0].port = "Produce";
    d.cores[0].body[0].body[4].port = "Produce";
  }));
}

TEST(AieValidator, AcquireCountAboveDepth) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.acquire-count", "aie.objectfifo.acquire @in_A_0(Consume, 3)", [](Design &d) {
    d.cores[0].body[0].body[0].count = 3;
    d.cores[0].body[0].body[4].count = 3;
  }));
}

TEST(AieValidator, ReleaseCountBelowOne) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.acquire-count", "aie.objectfifo.release @in_A_0(Consume, 0)", [](Design &d) {
    d.cores[0].body[0].body[4].count = 0;
  }));
}

TEST(AieValidator, DmaInnermostStrideMustStepForward) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.dma-dims", "aiex.npu.dma_memcpy_nd #0", [](Design &d) {
    d.sequence[0].strides[3] = 0;
  }));
}

TEST(AieValidator, SubWordDmaInnermostStrideMustBeOne) {
  // f32 may be gathered with any innermost stride (whole words); an i16 only contiguously.
  Design d = design("vadd.json");
  d.sequence[0].strides[3] = 2;
  EXPECT_TRUE(validate(d, *device_named("npu1")).empty());
  for (auto &p : d.params) p.dtype = "i16";
  for (auto &f : d.fifos) f.dtype = "i16";
  for (auto &k : d.kernels)
    for (auto &a : k.args) a.dtype = "i16";
  auto v = validate(d, *device_named("npu1"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].code, "aie.validate.dma-dims");
  EXPECT_NE(v[0].text().find("aiex.npu.dma_memcpy_nd #0"), std::string::npos) << v[0].text();
}

TEST(AieValidator, StreamDimensionsOverTheMemTileLimit) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.dma-dims", "aie.objectfifo @in_A_0", [](Design &d) {
    auto &f = fifo(d, "in_A_0");
    f.producer_dims = {{1, 1}, {1, 1}, {1, 1}, {1, 1}, {f.elements(), 1}};  // 5 dims; a mem tile has 4
  }));
}

TEST(AieValidator, StreamWrapOverTheComputeTileLimit) {
  EXPECT_TRUE(breaks("gemm_2x2.json", "aie.validate.dma-dims", "aie.objectfifo @out_C_0", [](Design &d) {
    auto &f = fifo(d, "out_C_0");
    f.producer_dims = {{f.elements(), 1}};  // 1024 words in dim 0; a compute tile wraps at 255
  }));
}

TEST(AieValidator, StreamDimensionsMustVisitTheWholeObject) {
  EXPECT_TRUE(breaks("gemm_2x2.json", "aie.validate.dma-dims", "aie.objectfifo @out_C_0", [](Design &d) {
    fifo(d, "out_C_0").producer_dims = {{16, 1}};
  }));
  EXPECT_TRUE(breaks("gemm_2x2.json", "aie.validate.dma-dims", "aie.objectfifo @out_C_0", [](Design &d) {
    auto &f = fifo(d, "out_C_0");
    f.producer_dims = {{f.elements() / 4, 4}, {4, 1}};  // right count, but past the object's end
  }));
}

TEST(AieValidator, StreamDimensionsOnAShimProducer) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.dma-dims", "aie.objectfifo @in_A_L2", [](Design &d) {
    fifo(d, "in_A_L2").producer_dims = {{1, 1}};
  }));
}

TEST(AieValidator, TooManyStreamDimensionsFromAComputeTile) {
  EXPECT_TRUE(breaks("pipeline.json", "aie.validate.dma-dims", "aie.objectfifo @ch_c1", [](Design &d) {
    fifo(d, "ch_c1").producer_dims = {{1, 512}, {2, 256}, {16, 16}, {16, 1}};
  }));
}

TEST(AieValidator, DuplicateSymbol) {
  EXPECT_TRUE(breaks("gemm_2x1.json", "aie.validate.symbol", "func.func @gemm", [](Design &d) {
    d.kernels.push_back(d.kernels[0]);
  }));
}

TEST(AieValidator, ShimBdIdOutOfRange) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.shim-bd", "(id 16, @in_A_L2)", [](Design &d) { d.sequence[0].id = 16; }));
}

TEST(AieValidator, ShimBdIdReusedWhileInFlight) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.shim-bd", "(id 0, @in_B_L2)", [](Design &d) {
    d.sequence[1].id = 0;  // in_A_L2 still holds BD 0 of the same shim
  }));
}

TEST(AieValidator, TileMemoryOverflow) {
  EXPECT_TRUE(breaks("pipeline.json", "aie.validate.memory", "aie.tile(0, 3)", [](Design &d) {
    d.cores[1].stack_size = 80 * 1024;
  }));
}

TEST(AieValidator, MoreDmaChannelsThanTheTileHas) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.dma-channels", "aie.tile(0, 2)", [](Design &d) {
    ObjectFifo extra = fifo(d, "in_A_0");
    extra.name = "extra";
    extra.producer = {1, 1};
    d.fifos.push_back(extra);  // a third input channel into tile (0, 2)
  }));
}

TEST(AieValidator, DmaMetadataNeedsAShimEnd) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.metadata", "@in_A_0", [](Design &d) { d.sequence[0].fifo = "in_A_0"; }));
}

TEST(AieValidator, SubWordObject) {
  EXPECT_TRUE(breaks("pipeline.json", "aie.validate.transfer-size", "aie.objectfifo @ch_c2", [](Design &d) {
    auto &f = fifo(d, "ch_c2");
    f.dtype = "i8";
    f.shape = {3};
    for (auto &k : d.kernels) {  // keep the calls' argument check quiet: the kernels now take 3 x i8
      if (k.name == "proc_square") k.args[1] = {true, {3}, "i8"};
      if (k.name == "proc_storer") k.args[0] = {true, {3}, "i8"};
    }
  }));
}

TEST(AieValidator, LinkOffsetOutsideTheSource) {
  EXPECT_TRUE(breaks("vadd.json", "aie.validate.link", "aie.objectfifo.link [@in_A_L2]", [](Design &d) {
    d.links[0].dst_offsets[3] = 4000;
  }));
}

TEST(AieValidator, CallWithoutAcquire) {
  EXPECT_TRUE(breaks("gemm_2x1.json", "aie.validate.call", "func.call @gemm", [](Design &d) {
    auto &body = d.cores[0].body;  // acquire A, B, C; call; release A, B, C
    body.erase(body.begin());
    body.erase(body.begin() + 3);
  }));
}
