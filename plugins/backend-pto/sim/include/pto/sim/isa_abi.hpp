// HTP PTO CPU simulator: the out-of-line tile loops. The instructions of instr.hpp do their checks inline and
// hand the loops over all-float tiles (every op class kernels use: elementwise, scalar, broadcast, reductions,
// fills, copies, TLOAD / TSTORE and TMATMUL) to a table of functions the simulator compiled once, at -O3, into
// the backend (pto/sim/isa_f32.hpp). A kernel then compiles as checks and calls instead of one vectorized loop
// nest per instruction and tile shape: most of a kernel's build was generating those (flash_decode's `merge`:
// 1.0 s with them, 0.3 s without).
//
// The loader binds each kernel it opens: it looks up `htp_ptosim_bind_isa` (instr.hpp) and passes the table. A
// process that runs the instructions itself (the ISA tests, a benchmark) binds pto::sim::f32_isa_table() once. Numbers
// are those of the inline loops bit for bit: the same operations in the same order, in float, without
// -ffast-math.
#pragma once

#include <cstdint>

namespace pto {
namespace sim {

/// Version of the table layout; a table of another version is refused at binding.
constexpr uint32_t kF32IsaAbi = 1;

/// A 2-D float view: element (r, c) at p[r * rs + c * cs].
struct F32View {
  float *p;
  int64_t rs;
  int64_t cs;
};

/// Element functions: f(a, b) for binary, scalar and broadcast ops, f(v) for unary ones (`s` the scalar).
enum F32Op : int {
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  kRDiv,   ///< s / v
  kLRelu,  ///< v > 0 ? v : v * s
  kExpDif, ///< exp(a - b)
  kSecond, ///< b (a broadcast of the second operand)
  kExp, kLog, kSqrt, kRsqrt, kAbs, kNeg, kRelu, kRecip, kCopy,
};

/// Element offset of row r, column 0 of a global tensor's 2-D view: dims 0..3 (extents `shape`, strides
/// `stride`) are the rows. GlobalTensor::offset and the table's TLOAD / TSTORE loops both place rows by it.
inline int64_t global_row_offset(const int64_t shape[5], const int64_t stride[5], int64_t r) {
  int64_t off = 0;
  for (int d = 3; d >= 0; --d) {
    off += (r % shape[d]) * stride[d];
    r /= shape[d];
  }
  return off;
}

/// A global tensor's five extents and strides (a tile sees dims 0..3 as rows, dim 4 as columns).
struct F32Global {
  float *p;
  int64_t shape[5];
  int64_t stride[5];
};

struct F32Isa {
  uint32_t abi;
  /// d(r, c) = f(a(r, c), b(r, c)) over rows x cols.
  void (*binary)(int op, int rows, int cols, F32View d, F32View a, F32View b);
  /// d(r, c) = f(a(r, c), s).
  void (*scalar)(int op, int rows, int cols, F32View d, F32View a, float s);
  /// d(r, c) = f(a(r, c)).
  void (*unary)(int op, int rows, int cols, F32View d, F32View a);
  /// d(r, c) = f(a(r, c), b(r, 0)).
  void (*row_expand)(int op, int rows, int cols, F32View d, F32View a, F32View b);
  /// d(r, c) = f(a(r, c), b(0, c)).
  void (*col_expand)(int op, int rows, int cols, F32View d, F32View a, F32View b);
  /// d(r, 0) = fold of f over row r of s (from s(r, 0), ascending c); op is kAdd, kMax or kMin.
  void (*row_reduce)(int op, int rows, int cols, F32View d, F32View s);
  /// d(0, c) = fold of f over column c of s (from s(0, c), ascending r).
  void (*col_reduce)(int op, int rows, int cols, F32View d, F32View s);
  /// d(r, c) = v.
  void (*fill)(int rows, int cols, F32View d, float v);
  /// Tile d = the global tensor's 2-D view (rows x cols of it).
  void (*load)(int64_t rows, int64_t cols, F32View d, const F32Global *g);
  /// The global tensor's 2-D view = tile s.
  void (*store)(int64_t rows, int64_t cols, const F32Global *g, F32View s);
  /// acc(m, n) = (in ? in(m, n) : 0) + 0 + sum over ascending k of left(m, k) * right(k, n), M x N x K; `in`
  /// may be `acc` itself.
  void (*matmul)(int m, int n, int k, F32View acc, const F32View *in, F32View left, F32View right);
};

} // namespace sim
} // namespace pto
