// 4-D DMA access patterns: fitted to address sequences, split to the hardware limits, enumerated back.
#include <gtest/gtest.h>

#include "access_pattern.hpp"

using namespace htp::aie;

namespace {

std::vector<int64_t> range(int64_t base, int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(base + i);
  return v;
}

/// Column blocks of a [rows, cols] row-major tensor, `parts` blocks of cols/parts columns, block-major.
std::vector<int64_t> column_blocks(int64_t rows, int64_t cols, int64_t parts) {
  std::vector<int64_t> v;
  for (int64_t p = 0; p < parts; ++p)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols / parts; ++c) v.push_back(r * cols + p * (cols / parts) + c);
  return v;
}

const PatternLimits kShim = shim_transfer_limits(DmaLimits{});

/// Addresses of a [rows, cols] row-major block read column by column (its transpose, row-major).
std::vector<int64_t> columns_of(int64_t rows, int64_t cols) {
  std::vector<int64_t> v;
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) v.push_back(r * cols + c);
  return v;
}

}  // namespace

TEST(AieAccessPattern, ContiguousRunIsOneDimension) {
  auto p = fit_pattern(range(64, 512), 4, kShim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->base, 64);
  EXPECT_EQ(p->sizes, (std::array<int64_t, 4>{1, 1, 1, 512}));
  EXPECT_EQ(enumerate(*p), range(64, 512));
}

TEST(AieAccessPattern, ColumnShardsOfRSOneAreBlocksOfRows) {
  // B[32, 64] @ RS(1) over 2 cores: [1, 2, 32, 32] with strides [0, 32, 64, 1], as Allo derives it.
  auto addrs = column_blocks(32, 64, 2);
  auto p = fit_pattern(addrs, 4, kShim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->sizes, (std::array<int64_t, 4>{1, 2, 32, 32}));
  EXPECT_EQ(p->strides, (std::array<int64_t, 4>{0, 32, 64, 1}));
  EXPECT_EQ(enumerate(*p), addrs);
}

TEST(AieAccessPattern, LongRunsAreSplitBelowTheWrapLimit) {
  auto p = fit_pattern(range(0, 4096), 4, kShim);
  ASSERT_TRUE(p);
  EXPECT_LE(p->sizes[3], 1023);
  EXPECT_EQ(p->elements(), 4096);
  EXPECT_EQ(enumerate(*p), range(0, 4096));
}

TEST(AieAccessPattern, LongHalfWordRunsSplitAtWholeWords) {
  // 2310 f16 (an f16 [33, 70] tensor, the bytes of f32 [33, 35]): the split 1155 x 2 steps 2310 bytes, not
  // whole 32-bit words, so the fitter failed although f32 [33, 35] fitted; 770 x 3 steps 1540 bytes.
  for (auto [n, bytes] : {std::pair<int64_t, int64_t>{2310, 2}, {4620, 1}, {2050, 2}}) {
    auto p = fit_pattern(range(0, n), bytes, kShim);
    ASSERT_TRUE(p) << n << " elements of " << bytes << " bytes";
    EXPECT_EQ(p->elements(), n);
    EXPECT_EQ(enumerate(*p), range(0, n));
    for (int d = 0; d < 3; ++d)
      if (p->sizes[d] > 1) EXPECT_EQ(p->strides[d] * bytes % 4, 0) << "dim " << d;
  }
}

TEST(AieAccessPattern, NonUnitInnermostStrideNeedsWholeWordElements) {
  // The DMA moves 32-bit words: an f32 may be gathered with any stride, a bf16 or i8 only contiguously.
  auto p = fit_pattern({0, 2, 4, 6}, 4, kShim);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->strides[3], 2);
  EXPECT_FALSE(fit_pattern({0, 2, 4, 6}, 2, kShim));
  EXPECT_FALSE(fit_pattern({0, 4, 8, 12}, 1, kShim));
}

TEST(AieAccessPattern, ColumnMajorReadOfABlockIsATransposePattern) {
  // A [32, 64] f32 block read column-major: 64 columns of 32 rows, stepping 64 elements within a column.
  auto addrs = columns_of(32, 64);
  auto p = fit_pattern(addrs, 4, stream_limits(DmaLimits{}, TileKind::Mem));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->sizes, (std::array<int64_t, 4>{1, 1, 64, 32}));
  EXPECT_EQ(p->strides, (std::array<int64_t, 4>{0, 0, 1, 64}));
  EXPECT_EQ(enumerate(*p), addrs);
  auto dims = stream_dims(*p);
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0].size, 64);
  EXPECT_EQ(dims[0].stride, 1);
  EXPECT_EQ(dims[1].size, 32);
  EXPECT_EQ(dims[1].stride, 64);
  EXPECT_EQ(enumerate(dims), addrs);
}

TEST(AieAccessPattern, ComputeTilesHaveThreeDimsAndSmallerWraps) {
  // 2 x 2 x 2 x 2 distinct strides: 4 dims fit a mem tile's dimensionsToStream, not a compute tile's.
  std::vector<int64_t> v;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) v.push_back(a * 1000 + b * 100 + c * 10 + d);
  EXPECT_TRUE(fit_pattern(v, 4, stream_limits(DmaLimits{}, TileKind::Mem)));
  EXPECT_FALSE(fit_pattern(v, 4, stream_limits(DmaLimits{}, TileKind::Compute)));
  // A 300-element column (8-bit wraps on a compute tile) splits into two dims there.
  auto col = columns_of(300, 2);
  auto p = fit_pattern(col, 4, stream_limits(DmaLimits{}, TileKind::Compute));
  ASSERT_TRUE(p);
  EXPECT_LE(p->sizes[3], 255);
  EXPECT_EQ(enumerate(*p), col);
}

TEST(AieAccessPattern, MoreThanFourLevelsHasNoPattern) {
  // 2 x 2 x 2 x 2 x 2 with a distinct stride per level cannot be written in 4 dimensions.
  std::vector<int64_t> v;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d)
          for (int e = 0; e < 2; ++e) v.push_back(a * 10000 + b * 1000 + c * 100 + d * 10 + e);
  EXPECT_FALSE(fit_pattern(v, 4, kShim));
}

TEST(AieAccessPattern, OffsetsReproduceTheBase) {
  AccessPattern p;
  p.base = 2 * 64 + 32 + 5;
  p.sizes = {1, 2, 32, 16};
  p.strides = {0, 32, 64, 1};
  auto off = offsets_for(p);
  ASSERT_TRUE(off);
  int64_t base = 0;
  for (size_t i = 0; i < 4; ++i) base += (*off)[i] * p.strides[i];
  EXPECT_EQ(base, p.base);
}
