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

}  // namespace

TEST(AieAccessPattern, ContiguousRunIsOneDimension) {
  auto p = fit_pattern(range(64, 512), 4, DmaLimits{});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->base, 64);
  EXPECT_EQ(p->sizes, (std::array<int64_t, 4>{1, 1, 1, 512}));
  EXPECT_EQ(enumerate(*p), range(64, 512));
}

TEST(AieAccessPattern, ColumnShardsOfRSOneAreBlocksOfRows) {
  // B[32, 64] @ RS(1) over 2 cores: [1, 2, 32, 32] with strides [0, 32, 64, 1], as Allo derives it.
  auto addrs = column_blocks(32, 64, 2);
  auto p = fit_pattern(addrs, 4, DmaLimits{});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->sizes, (std::array<int64_t, 4>{1, 2, 32, 32}));
  EXPECT_EQ(p->strides, (std::array<int64_t, 4>{0, 32, 64, 1}));
  EXPECT_EQ(enumerate(*p), addrs);
}

TEST(AieAccessPattern, LongRunsAreSplitBelowTheWrapLimit) {
  auto p = fit_pattern(range(0, 4096), 4, DmaLimits{});
  ASSERT_TRUE(p);
  EXPECT_LE(p->sizes[3], 1023);
  EXPECT_EQ(p->elements(), 4096);
  EXPECT_EQ(enumerate(*p), range(0, 4096));
}

TEST(AieAccessPattern, NonUnitInnermostStrideHasNoPattern) {
  EXPECT_FALSE(fit_pattern({0, 2, 4, 6}, 4, DmaLimits{}));
}

TEST(AieAccessPattern, MoreThanFourLevelsHasNoPattern) {
  // 2 x 2 x 2 x 2 x 2 with a distinct stride per level cannot be written in 4 dimensions.
  std::vector<int64_t> v;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d)
          for (int e = 0; e < 2; ++e) v.push_back(a * 10000 + b * 1000 + c * 100 + d * 10 + e);
  EXPECT_FALSE(fit_pattern(v, 4, DmaLimits{}));
}

TEST(AieAccessPattern, OffsetsReproduceTheBase) {
  AccessPattern p;
  p.base = 2 * 64 + 32 + 5;
  p.sizes = {1, 2, 32, 16};
  p.strides = {0, 32, 64, 1};
  auto off = offsets_for(p);
  int64_t base = 0;
  for (size_t i = 0; i < 4; ++i) base += off[i] * p.strides[i];
  EXPECT_EQ(base, p.base);
}
