// Simulated PTO tile instructions (plugins/backend-pto/sim/include, HTP's CPU implementation of the PTO-ISA
// subset) per op class, on the shapes bench/pto-sim/numpy_tile_ops.py times NumPy on: bench/report.py prints
// the ratio of each pair. Compiled at -O3 like the simulator's float tile loops (binding/isa_table.cpp).
#include <pto/pto-inst.hpp>
#include <pto/sim/isa_f32.hpp>

#include <benchmark/benchmark.h>

#include <random>

// The float tile loops kernels are bound to when the simulator opens them (pto/sim/isa_abi.hpp), bound here
// once: this is what a kernel's instruction runs.
const bool kIsaBound = htp_ptosim_bind_isa(&pto::sim::f32_isa_table());

namespace {

using namespace pto;

constexpr int M = 32, K = 128, N = 32;  // the 32x32x128 f32 matmul; vector ops on 32x128
using Left = TileLeft<float, M, K>;
using Right = TileRight<float, K, N>;
using Acc = TileAcc<float, M, N>;
using Vec = Tile<TileType::Vec, float, M, K>;
using Col = Tile<TileType::Vec, float, M, 8, BLayout::RowMajor, M, 1>;  // one value per row (32-byte rows)

template <class T> void fill(T &t, int rows, int cols, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t.at(r, c) = u(g);
}

void set_flops(benchmark::State &st, double per_op) {
  st.counters["flop_per_s"] = benchmark::Counter(per_op, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_PtoSimTileOp_matmul(benchmark::State &st) {
  Left a;
  Right b;
  Acc c;
  fill(a, M, K, 1);
  fill(b, K, N, 2);
  for (auto _ : st) {
    TMATMUL(c, a, b);
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(st, 2.0 * M * N * K);
}
BENCHMARK(BM_PtoSimTileOp_matmul)->Name("BM_PtoSimTileOp/matmul_f32_32x128x32");

void BM_PtoSimTileOp_add(benchmark::State &st) {
  Vec x, y, z;
  fill(x, M, K, 1);
  fill(y, M, K, 2);
  for (auto _ : st) {
    TADD(z, x, y);
    benchmark::DoNotOptimize(z.data());
  }
}
BENCHMARK(BM_PtoSimTileOp_add)->Name("BM_PtoSimTileOp/add_f32_32x128");

void BM_PtoSimTileOp_exp(benchmark::State &st) {
  Vec x, z;
  fill(x, M, K, 1);
  for (auto _ : st) {
    TEXP(z, x);
    benchmark::DoNotOptimize(z.data());
  }
}
BENCHMARK(BM_PtoSimTileOp_exp)->Name("BM_PtoSimTileOp/exp_f32_32x128");

void BM_PtoSimTileOp_rowsum(benchmark::State &st) {
  Vec x, tmp;
  Col s;
  fill(x, M, K, 1);
  for (auto _ : st) {
    TROWSUM(s, x, tmp);
    benchmark::DoNotOptimize(s.data());
  }
}
BENCHMARK(BM_PtoSimTileOp_rowsum)->Name("BM_PtoSimTileOp/rowsum_f32_32x128");

void BM_PtoSimTileOp_rowexpand_sub(benchmark::State &st) {
  Vec x, z;
  Col s;
  fill(x, M, K, 1);
  fill(s, M, 1, 2);
  for (auto _ : st) {
    TROWEXPANDSUB(z, x, s);
    benchmark::DoNotOptimize(z.data());
  }
}
BENCHMARK(BM_PtoSimTileOp_rowexpand_sub)->Name("BM_PtoSimTileOp/rowexpand_sub_f32_32x128");

}  // namespace

BENCHMARK_MAIN();
