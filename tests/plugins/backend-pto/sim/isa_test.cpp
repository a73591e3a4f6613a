// PTO CPU simulator instructions against reference loops (docs/backends/pto-sim.md §3).
#include <gtest/gtest.h>

#include <pto/pto-inst.hpp>
#include <pto/sim/isa_f32.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace pto;

// This process runs the instructions itself: their float loops are bound to the table once, as the loader
// binds every kernel it opens.
const bool kIsaBound = htp_ptosim_bind_isa(&pto::sim::f32_isa_table());

namespace {

constexpr int R = 16, C = 32;
using VecF = Tile<TileType::Vec, float, R, C>;
using GlobalF = GlobalTensor<float, Shape<1, 1, 1, R, C>, Stride<R * C, R * C, R * C, C, 1>>;

std::vector<float> random_data(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Loads `data` (R x C row-major) into a fresh tile at `addr`.
VecF load_tile(std::vector<float> &data, uint64_t addr) {
  VecF t;
  TASSIGN(t, addr);
  GlobalF g(data.data());
  TLOAD(t, g);
  return t;
}

std::vector<float> store_tile(VecF &t) {
  std::vector<float> out(R * C, -1.0f);
  GlobalF g(out.data());
  TSTORE(g, t);
  return out;
}

template <typename F> void expect_elementwise(const std::vector<float> &got, F ref, float tol = 1e-5f) {
  for (int i = 0; i < R * C; ++i)
    ASSERT_NEAR(got[i], ref(i), tol * (1 + std::fabs(ref(i)))) << "element " << i;
}

TEST(PtoSimIsa, LoadStoreRoundTripsThroughStridedGlobal) {
  // A 16x32 window of a 20x40 matrix, stored into another window.
  std::vector<float> src(20 * 40), dst(20 * 40, 0.0f);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<float>(i);
  using G = GlobalTensor<float, Shape<1, 1, 1, R, C>, Stride<800, 800, 800, 40, 1>>;
  G gs(src.data() + 2 * 40 + 3), gd(dst.data() + 1 * 40 + 5);
  VecF t;
  TASSIGN(t, 0x0);
  TLOAD(t, gs);
  TSTORE(gd, t);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      ASSERT_EQ(dst[(r + 1) * 40 + c + 5], src[(r + 2) * 40 + c + 3]);
  EXPECT_EQ(dst[0], 0.0f);
}

TEST(PtoSimIsa, DynamicShapeGlobalTensor) {
  std::vector<float> src = random_data(8 * 8, -1, 1, 1), dst(8 * 8, 0.0f);
  using G = GlobalTensor<float, Shape<1, 1, 1, -1, -1>, Stride<1, 1, 1, -1, 1>>;
  G gs(src.data(), Shape<1, 1, 1, -1, -1>(8, 8), Stride<1, 1, 1, -1, 1>(8));
  G gd(dst.data(), Shape<1, 1, 1, -1, -1>(8, 8), Stride<1, 1, 1, -1, 1>(8));
  Tile<TileType::Vec, float, 8, 8, BLayout::RowMajor, -1, -1> t(8, 8);
  TASSIGN(t, 0x100);
  TLOAD(t, gs);
  TSTORE(gd, t);
  EXPECT_EQ(dst, src);
}

TEST(PtoSimIsa, BinaryOpsMatchReference) {
  auto a = random_data(R * C, 0.5f, 2.0f, 2), b = random_data(R * C, 0.5f, 2.0f, 3);
  VecF ta = load_tile(a, 0x0), tb = load_tile(b, 0x1000), td;
  TASSIGN(td, 0x2000);
  TADD(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] + b[i]; });
  TSUB(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] - b[i]; });
  TMUL(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] * b[i]; });
  TDIV(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] / b[i]; });
  TMAX(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return std::max(a[i], b[i]); });
  TMIN(td, ta, tb);
  expect_elementwise(store_tile(td), [&](int i) { return std::min(a[i], b[i]); });
}

TEST(PtoSimIsa, ScalarOpsMatchReference) {
  auto a = random_data(R * C, 0.5f, 2.0f, 4);
  VecF ta = load_tile(a, 0x0), td;
  TASSIGN(td, 0x2000);
  TADDS(td, ta, 1.5f);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] + 1.5f; });
  TSUBS(td, ta, 1.5f);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] - 1.5f; });
  TMULS(td, ta, -3.0f);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] * -3.0f; });
  TDIVS(td, ta, 4.0f);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] / 4.0f; });
  TDIVS(td, 4.0f, ta);
  expect_elementwise(store_tile(td), [&](int i) { return 4.0f / a[i]; });
  TMAXS(td, ta, 1.0f);
  expect_elementwise(store_tile(td), [&](int i) { return std::max(a[i], 1.0f); });
  TMINS(td, ta, 1.0f);
  expect_elementwise(store_tile(td), [&](int i) { return std::min(a[i], 1.0f); });
  TEXPANDS(td, 7.0f);
  expect_elementwise(store_tile(td), [&](int) { return 7.0f; });
}

TEST(PtoSimIsa, UnaryOpsMatchReference) {
  auto a = random_data(R * C, 0.1f, 3.0f, 5), s = random_data(R * C, -3.0f, 3.0f, 6);
  VecF ta = load_tile(a, 0x0), ts = load_tile(s, 0x1000), td;
  TASSIGN(td, 0x2000);
  TEXP(td, ts);
  expect_elementwise(store_tile(td), [&](int i) { return std::exp(s[i]); });
  TLOG(td, ta);
  expect_elementwise(store_tile(td), [&](int i) { return std::log(a[i]); });
  TSQRT(td, ta);
  expect_elementwise(store_tile(td), [&](int i) { return std::sqrt(a[i]); });
  TRSQRT(td, ta);
  expect_elementwise(store_tile(td), [&](int i) { return 1.0f / std::sqrt(a[i]); });
  TABS(td, ts);
  expect_elementwise(store_tile(td), [&](int i) { return std::fabs(s[i]); });
  TNEG(td, ts);
  expect_elementwise(store_tile(td), [&](int i) { return -s[i]; });
  TRELU(td, ts);
  expect_elementwise(store_tile(td), [&](int i) { return s[i] > 0 ? s[i] : 0.0f; });
  TRECIP(td, ta);
  expect_elementwise(store_tile(td), [&](int i) { return 1.0f / a[i]; });
  TLRELU(td, ts, 0.1f);
  expect_elementwise(store_tile(td), [&](int i) { return s[i] > 0 ? s[i] : 0.1f * s[i]; });
}

TEST(PtoSimIsa, SigmoidComposition) {
  auto s = random_data(R * C, -4.0f, 4.0f, 7);
  VecF ts = load_tile(s, 0x0), td;
  TASSIGN(td, 0x2000);
  TNEG(td, ts);
  TEXP(td, td);
  TADDS(td, td, 1.0f);
  TRECIP(td, td);
  expect_elementwise(store_tile(td), [&](int i) { return 1.0f / (1.0f + std::exp(-s[i])); });
}

TEST(PtoSimIsa, RowAndColumnReductions) {
  auto a = random_data(R * C, -2.0f, 2.0f, 8);
  VecF ta = load_tile(a, 0x0), tmp;
  TASSIGN(tmp, 0x4000);
  Tile<TileType::Vec, float, R, 8, BLayout::RowMajor, R, 1> row; // one value per row, 32-byte aligned rows
  Tile<TileType::Vec, float, 1, C> col;
  TASSIGN(row, 0x8000);
  TASSIGN(col, 0x9000);
  auto row_ref = [&](auto op, float init) {
    std::vector<float> out(R, init);
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c)
        out[r] = op(out[r], a[r * C + c]);
    return out;
  };
  auto col_ref = [&](auto op, float init) {
    std::vector<float> out(C, init);
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r)
        out[c] = op(out[c], a[r * C + c]);
    return out;
  };
  auto add = [](float x, float y) { return x + y; };
  auto mx = [](float x, float y) { return std::max(x, y); };
  auto mn = [](float x, float y) { return std::min(x, y); };
  TROWSUM(row, ta, tmp);
  auto ref = row_ref(add, 0.0f);
  for (int r = 0; r < R; ++r)
    EXPECT_NEAR(row.at(r, 0), ref[r], 1e-4f);
  TROWMAX(row, ta, tmp);
  ref = row_ref(mx, -1e30f);
  for (int r = 0; r < R; ++r)
    EXPECT_EQ(row.at(r, 0), ref[r]);
  TROWMIN(row, ta, tmp);
  ref = row_ref(mn, 1e30f);
  for (int r = 0; r < R; ++r)
    EXPECT_EQ(row.at(r, 0), ref[r]);
  TCOLSUM(col, ta);
  ref = col_ref(add, 0.0f);
  for (int c = 0; c < C; ++c)
    EXPECT_NEAR(col.at(0, c), ref[c], 1e-4f);
  TCOLMAX(col, ta);
  ref = col_ref(mx, -1e30f);
  for (int c = 0; c < C; ++c)
    EXPECT_EQ(col.at(0, c), ref[c]);
  TCOLMIN(col, ta);
  ref = col_ref(mn, 1e30f);
  for (int c = 0; c < C; ++c)
    EXPECT_EQ(col.at(0, c), ref[c]);
}

TEST(PtoSimIsa, BroadcastsAndFusedExpands) {
  auto a = random_data(R * C, 0.5f, 2.0f, 9);
  VecF ta = load_tile(a, 0x0), td;
  TASSIGN(td, 0x2000);
  Tile<TileType::Vec, float, R, 8, BLayout::RowMajor, R, 1> row;
  Tile<TileType::Vec, float, 1, C> col;
  for (int r = 0; r < R; ++r)
    row.at(r, 0) = 1.0f + r;
  for (int c = 0; c < C; ++c)
    col.at(0, c) = 2.0f + c;
  TROWEXPAND(td, row);
  expect_elementwise(store_tile(td), [&](int i) { return 1.0f + i / C; });
  TCOLEXPAND(td, col);
  expect_elementwise(store_tile(td), [&](int i) { return 2.0f + i % C; });
  TROWEXPANDSUB(td, ta, row);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] - (1.0f + i / C); });
  TROWEXPANDDIV(td, ta, row, td);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] / (1.0f + i / C); });
  TROWEXPANDMUL(td, ta, row);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] * (1.0f + i / C); });
  TROWEXPANDEXPDIF(td, ta, row);
  expect_elementwise(store_tile(td), [&](int i) { return std::exp(a[i] - (1.0f + i / C)); });
  TCOLEXPANDADD(td, ta, col);
  expect_elementwise(store_tile(td), [&](int i) { return a[i] + (2.0f + i % C); });
  TCOLEXPANDMAX(td, ta, col);
  expect_elementwise(store_tile(td), [&](int i) { return std::max(a[i], 2.0f + i % C); });
}

TEST(PtoSimIsa, MatmulOnCubeTilesMatchesReference) {
  constexpr int M = 16, K = 32, N = 16;
  auto a = random_data(M * K, -1, 1, 10), b = random_data(K * N, -1, 1, 11);
  using GA = GlobalTensor<float, Shape<1, 1, 1, M, K>, Stride<1, 1, 1, K, 1>>;
  using GB = GlobalTensor<float, Shape<1, 1, 1, K, N>, Stride<1, 1, 1, N, 1>>;
  using GC = GlobalTensor<float, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, N, 1>>;
  Tile<TileType::Mat, float, M, K, BLayout::ColMajor, M, K, SLayout::RowMajor, 512> am;
  Tile<TileType::Mat, float, K, N, BLayout::ColMajor, K, N, SLayout::RowMajor, 512> bm;
  TileLeft<float, M, K> al;
  TileRight<float, K, N> br;
  TileAcc<float, M, N> acc;
  TASSIGN(am, 0x0);
  TASSIGN(bm, 0x10000);
  TASSIGN(al, 0x0);
  TASSIGN(br, 0x0);
  TASSIGN(acc, 0x0);
  GA ga(a.data());
  GB gb(b.data());
  TLOAD(am, ga);
  TLOAD(bm, gb);
  TMOV(al, am);
  TMOV(br, bm);
  TMATMUL(acc, al, br);
  TMATMUL_ACC(acc, al, br); // acc = 2 * a.b
  std::vector<float> c(M * N);
  GC gc(c.data());
  TSTORE(gc, acc);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float ref = 0;
      for (int k = 0; k < K; ++k)
        ref += a[m * K + k] * b[k * N + n];
      ASSERT_NEAR(c[m * N + n], 2 * ref, 1e-4f);
    }
}

TEST(PtoSimIsa, HalfMatmulAccumulatesInFloat) {
  constexpr int M = 16, K = 16, N = 16;
  TileLeft<half, M, K> al;
  TileRight<half, K, N> br;
  TileAcc<float, M, N> acc;
  Tile<TileType::Bias, float, 1, N> bias;
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k)
      al.at(m, k) = static_cast<half>(0.5f * (m == k));
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n)
      br.at(k, n) = static_cast<half>(static_cast<float>(k + n));
  for (int n = 0; n < N; ++n)
    bias.at(0, n) = 100.0f;
  TMATMUL_BIAS(acc, al, br, bias);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      ASSERT_EQ(acc.at(m, n), 0.5f * (m + n) + 100.0f);
}

TEST(PtoSimIsa, ConvertHonoursRoundingMode) {
  Tile<TileType::Vec, float, 1, 8> f;
  Tile<TileType::Vec, int32_t, 1, 8> i;
  const float in[8] = {1.5f, 2.5f, -1.5f, -2.5f, 1.2f, -1.2f, 0.5f, 2.7f};
  for (int c = 0; c < 8; ++c)
    f.at(0, c) = in[c];
  TCVT(i, f, RoundMode::CAST_RINT);
  const int rint[8] = {2, 2, -2, -2, 1, -1, 0, 3};
  for (int c = 0; c < 8; ++c)
    EXPECT_EQ(i.at(0, c), rint[c]) << c;
  TCVT(i, f, RoundMode::CAST_FLOOR);
  for (int c = 0; c < 8; ++c)
    EXPECT_EQ(i.at(0, c), static_cast<int>(std::floor(in[c]))) << c;
  TCVT(i, f, RoundMode::CAST_TRUNC);
  for (int c = 0; c < 8; ++c)
    EXPECT_EQ(i.at(0, c), static_cast<int>(std::trunc(in[c]))) << c;
  Tile<TileType::Vec, half, 1, 8> h;
  TCVT(h, f, RoundMode::CAST_NONE);
  EXPECT_EQ(static_cast<float>(h.at(0, 0)), 1.5f);
}

TEST(PtoSimIsa, ValidRegionLimitsTheDestination) {
  std::vector<float> a(R * C, 1.0f);
  VecF ta = load_tile(a, 0x0);
  Tile<TileType::Vec, float, R, C, BLayout::RowMajor, -1, -1> td(4, 8);
  TASSIGN(td, 0x2000);
  TEXPANDS(td, 0.0f);
  TADDS(td, ta, 2.0f);
  EXPECT_EQ(td.at(3, 7), 3.0f);
  VecF whole;
  TASSIGN(whole, 0x2000); // the same UB bytes: elements outside the valid region are untouched
  whole.at(10, 10) = -5.0f;
  TADDS(td, ta, 2.0f);
  EXPECT_EQ(whole.at(10, 10), -5.0f);
}

TEST(PtoSimIsa, TilesAtTheSameAddressAlias) {
  VecF x, y;
  TASSIGN(x, 0x400);
  TASSIGN(y, 0x400);
  TEXPANDS(x, 3.0f);
  EXPECT_EQ(y.at(5, 5), 3.0f);
}

TEST(PtoSimIsa, TassignBeyondUbIsAnError) {
  Tile<TileType::Vec, float, 128, 128> t; // 64 KiB
  EXPECT_NO_THROW(TASSIGN(t, 128 * 1024));
  try {
    TASSIGN(t, 160 * 1024);
    FAIL() << "no error";
  } catch (const pto::sim::IsaError &e) {
    EXPECT_NE(std::string(e.what()).find("exceeds UB (196608 bytes)"), std::string::npos) << e.what();
  }
}

TEST(PtoSimIsa, MismatchedOperandsAreAnError) {
  Tile<TileType::Vec, float, 8, 8> big;
  Tile<TileType::Vec, float, 8, 8, BLayout::RowMajor, -1, -1> small(4, 4);
  EXPECT_THROW(TADD(big, small, small), pto::sim::IsaError);
  TileLeft<float, 16, 16> l;
  TileRight<float, 8, 16> r;
  TileAcc<float, 16, 16> acc;
  EXPECT_THROW(TMATMUL(acc, l, r), pto::sim::IsaError);
}

} // namespace

namespace {

/// Same bits (a NaN equals a NaN of the same payload).
void expect_bits(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(0, std::memcmp(&got[i], &want[i], sizeof(float)))
        << what << ": element " << i << " is " << got[i] << ", the definition gives " << want[i];
}

TEST(PtoSimIsa, FloatLoopsAreBoundOnce) {
  EXPECT_TRUE(kIsaBound);
  pto::sim::F32Isa other = pto::sim::f32_isa_table();
  other.abi = pto::sim::kF32IsaAbi + 1;
  EXPECT_FALSE(htp_ptosim_bind_isa(&other)) << "a table of another layout version binds nothing";
  EXPECT_EQ(pto::sim::bound_f32_isa(), &pto::sim::f32_isa_table());
}

TEST(PtoSimIsa, UnboundModuleSaysSo) {
  const pto::sim::F32Isa *saved = pto::sim::bound_f32_isa();
  pto::sim::bound_f32_isa() = nullptr;
  VecF a, d;
  TASSIGN(a, 0x0);
  TASSIGN(d, 0x1000);
  try {
    TADD(d, a, a);
    ADD_FAILURE() << "an unbound module ran an instruction";
  } catch (const pto::sim::IsaError &e) {
    EXPECT_NE(std::string(e.what()).find("htp_ptosim_bind_isa"), std::string::npos) << e.what();
  }
  pto::sim::bound_f32_isa() = saved;
}

// The out-of-line float loops give the bits of the instructions' definitions: the same float operations in
// the same order (sequential reductions, matmul sums in ascending k starting from 0 + 0).
TEST(PtoSimIsa, FloatLoopsGiveTheDefinitionsBits) {
  auto a = random_data(R * C, -3.0f, 3.0f, 21), b = random_data(R * C, 0.25f, 3.0f, 22);
  VecF ta = load_tile(a, 0x0), tb = load_tile(b, 0x1000), td;
  TASSIGN(td, 0x2000);
  auto each = [&](auto f) {
    std::vector<float> out(R * C);
    for (int i = 0; i < R * C; ++i) out[i] = f(i);
    return out;
  };
  TDIV(td, ta, tb);
  expect_bits(store_tile(td), each([&](int i) { return a[i] / b[i]; }), "TDIV");
  TEXP(td, ta);
  expect_bits(store_tile(td), each([&](int i) { return std::exp(a[i]); }), "TEXP");
  TRSQRT(td, tb);
  expect_bits(store_tile(td), each([&](int i) { return 1.0f / std::sqrt(b[i]); }), "TRSQRT");
  TDIVS(td, 1.5f, tb);
  expect_bits(store_tile(td), each([&](int i) { return 1.5f / b[i]; }), "TDIVS (scalar / tile)");
  TLRELU(td, ta, 0.125f);
  expect_bits(store_tile(td), each([&](int i) { return a[i] > 0 ? a[i] : a[i] * 0.125f; }), "TLRELU");

  Tile<TileType::Vec, float, R, 8, BLayout::RowMajor, R, 1> row;
  TASSIGN(row, 0x8000);
  TROWSUM(row, ta, td);
  std::vector<float> sums(R), got(R);
  for (int r = 0; r < R; ++r) {
    float acc = a[r * C];
    for (int c = 1; c < C; ++c) acc = acc + a[r * C + c];
    sums[r] = acc;
    got[r] = row.at(r, 0);
  }
  expect_bits(got, sums, "TROWSUM");
  TROWEXPANDEXPDIF(td, ta, row);
  expect_bits(store_tile(td), each([&](int i) { return std::exp(a[i] - sums[i / C]); }), "TROWEXPANDEXPDIF");

  constexpr int M = 8, K = 24, N = 16;
  auto l = random_data(M * K, -1, 1, 23), rr = random_data(K * N, -1, 1, 24), init = random_data(M * N, -1, 1, 25);
  TileLeft<float, M, K> al;
  TileRight<float, K, N> br;
  TileAcc<float, M, N> acc;
  TASSIGN(al, 0x0);
  TASSIGN(br, 0x0);
  TASSIGN(acc, 0x0);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) al.at(m, k) = l[m * K + k];
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) br.at(k, n) = rr[k * N + n];
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) acc.at(m, n) = init[m * N + n];
  TMATMUL_ACC(acc, al, br);
  std::vector<float> want(M * N), have(M * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float sum = init[m * N + n];
      sum += 0.0f;
      for (int k = 0; k < K; ++k) sum += l[m * K + k] * rr[k * N + n];
      want[m * N + n] = sum;
      have[m * N + n] = acc.at(m, n);
    }
  expect_bits(have, want, "TMATMUL_ACC");
}

} // namespace
