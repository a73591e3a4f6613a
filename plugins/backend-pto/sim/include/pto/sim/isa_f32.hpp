// HTP PTO CPU simulator: the float tile loops behind pto/sim/isa_abi.hpp, compiled once at -O3 into the
// backend (binding/isa_table.cpp), and by a process that runs the instructions itself. Every loop performs
// the operations of the inline definition in instr.hpp in the same order, in float: the numbers are the same
// bit for bit. Rows whose columns are contiguous take a unit-stride loop the compiler vectorizes (it checks
// for overlapping operands at run time and then keeps the element order).
#pragma once

#include <cmath>
#include <vector>

#include <pto/sim/isa_abi.hpp>

namespace pto {
namespace sim {
namespace f32 {

inline float *at(const F32View &v, int64_t r, int64_t c) { return v.p + r * v.rs + c * v.cs; }

/// True when the rows x cols of v are one contiguous run (a whole row-major tile).
inline bool dense(const F32View &v, int cols) { return v.cs == 1 && v.rs == cols; }

template <class F> inline void binary_loop(int rows, int cols, F32View d, F32View a, F32View b, F f) {
  if (dense(d, cols) && dense(a, cols) && dense(b, cols)) {
    const int64_t n = static_cast<int64_t>(rows) * cols;
    for (int64_t i = 0; i < n; ++i) d.p[i] = f(a.p[i], b.p[i]);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    float *dr = at(d, r, 0);
    const float *ar = at(a, r, 0), *br = at(b, r, 0);
    if (d.cs == 1 && a.cs == 1 && b.cs == 1) {
      for (int c = 0; c < cols; ++c) dr[c] = f(ar[c], br[c]);
    } else {
      for (int c = 0; c < cols; ++c) dr[c * d.cs] = f(ar[c * a.cs], br[c * b.cs]);
    }
  }
}

template <class F> inline void unary_loop(int rows, int cols, F32View d, F32View a, F f) {
  if (dense(d, cols) && dense(a, cols)) {
    const int64_t n = static_cast<int64_t>(rows) * cols;
    for (int64_t i = 0; i < n; ++i) d.p[i] = f(a.p[i]);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    float *dr = at(d, r, 0);
    const float *ar = at(a, r, 0);
    if (d.cs == 1 && a.cs == 1) {
      for (int c = 0; c < cols; ++c) dr[c] = f(ar[c]);
    } else {
      for (int c = 0; c < cols; ++c) dr[c * d.cs] = f(ar[c * a.cs]);
    }
  }
}

/// b as a view that repeats b(0, c) down the columns (col_expand).
inline F32View col_operand(F32View b) { return {b.p, 0, b.cs}; }

/// Calls g with the element function of a two-operand op.
template <class G> inline void with_op2(int op, G g) {
  switch (op) {
  case kAdd: return g([](float a, float b) { return a + b; });
  case kSub: return g([](float a, float b) { return a - b; });
  case kMul: return g([](float a, float b) { return a * b; });
  case kDiv: return g([](float a, float b) { return a / b; });
  case kMax: return g([](float a, float b) { return (a > b || a != a) ? a : b; });  // NaN propagates
  case kMin: return g([](float a, float b) { return (a < b || a != a) ? a : b; });
  case kRDiv: return g([](float v, float s) { return s / v; });
  case kLRelu: return g([](float v, float s) { return v > 0.0f ? v : v * s; });
  case kExpDif: return g([](float a, float b) { return std::exp(a - b); });
  case kSecond: return g([](float, float b) { return b; });
  default: return;
  }
}

inline void binary(int op, int rows, int cols, F32View d, F32View a, F32View b) {
  with_op2(op, [&](auto f) { binary_loop(rows, cols, d, a, b, f); });
}

inline void scalar(int op, int rows, int cols, F32View d, F32View a, float s) {
  with_op2(op, [&](auto f) { unary_loop(rows, cols, d, a, [&](float v) { return f(v, s); }); });
}

inline void unary(int op, int rows, int cols, F32View d, F32View a) {
  auto run = [&](auto f) { unary_loop(rows, cols, d, a, f); };
  switch (op) {
  case kExp: return run([](float v) { return std::exp(v); });
  case kLog: return run([](float v) { return std::log(v); });
  case kSqrt: return run([](float v) { return std::sqrt(v); });
  case kRsqrt: return run([](float v) { return 1.0f / std::sqrt(v); });
  case kAbs: return run([](float v) { return v < 0.0f ? -v : v; });
  case kNeg: return run([](float v) { return -v; });
  case kRelu: return run([](float v) { return (v > 0.0f || v != v) ? v : 0.0f; });
  case kRecip: return run([](float v) { return 1.0f / v; });
  case kCopy: return run([](float v) { return v; });
  default: return;
  }
}

inline void row_expand(int op, int rows, int cols, F32View d, F32View a, F32View b) {
  with_op2(op, [&](auto f) {
    for (int r = 0; r < rows; ++r) {
      float *dr = at(d, r, 0);
      const float *ar = at(a, r, 0), *br = at(b, r, 0);
      // b(r, 0) is read once for the row unless writing the row could change it (then per element, as the
      // definition reads it).
      const bool b_in_row = br >= dr && br <= dr + static_cast<int64_t>(cols > 0 ? cols - 1 : 0) * d.cs;
      if (d.cs == 1 && a.cs == 1 && !b_in_row) {
        const float bv = *br;
        for (int c = 0; c < cols; ++c) dr[c] = f(ar[c], bv);
      } else {
        for (int c = 0; c < cols; ++c) dr[c * d.cs] = f(ar[c * a.cs], *br);
      }
    }
  });
}

inline void col_expand(int op, int rows, int cols, F32View d, F32View a, F32View b) {
  binary(op, rows, cols, d, a, col_operand(b));
}

template <class F> inline void row_reduce_loop(int rows, int cols, F32View d, F32View s, F f) {
  for (int r = 0; r < rows; ++r) {
    float acc = *at(s, r, 0);
    for (int c = 1; c < cols; ++c) acc = f(acc, *at(s, r, c));
    *at(d, r, 0) = acc;
  }
}

template <class F> inline void col_reduce_loop(int rows, int cols, F32View d, F32View s, F f) {
  for (int c = 0; c < cols; ++c) {
    float acc = *at(s, 0, c);
    for (int r = 1; r < rows; ++r) acc = f(acc, *at(s, r, c));
    *at(d, 0, c) = acc;
  }
}

inline void row_reduce(int op, int rows, int cols, F32View d, F32View s) {
  with_op2(op, [&](auto f) { row_reduce_loop(rows, cols, d, s, f); });
}

inline void col_reduce(int op, int rows, int cols, F32View d, F32View s) {
  with_op2(op, [&](auto f) { col_reduce_loop(rows, cols, d, s, f); });
}

inline void fill(int rows, int cols, F32View d, float v) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) *at(d, r, c) = v;
}

inline void load(int64_t rows, int64_t cols, F32View d, const F32Global *g) {
  const int64_t cs = g->stride[4];
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = g->p + global_row_offset(g->shape, g->stride, r);
    float *dr = at(d, r, 0);
    if (cs == 1 && d.cs == 1) {
      for (int64_t c = 0; c < cols; ++c) dr[c] = row[c];
    } else {
      for (int64_t c = 0; c < cols; ++c) dr[c * d.cs] = row[c * cs];
    }
  }
}

inline void store(int64_t rows, int64_t cols, const F32Global *g, F32View s) {
  const int64_t cs = g->stride[4];
  for (int64_t r = 0; r < rows; ++r) {
    float *row = g->p + global_row_offset(g->shape, g->stride, r);
    const float *sr = at(s, r, 0);
    if (cs == 1 && s.cs == 1) {
      for (int64_t c = 0; c < cols; ++c) row[c] = sr[c];
    } else {
      for (int64_t c = 0; c < cols; ++c) row[c * cs] = sr[c * s.cs];
    }
  }
}

/// Row by row with k outside n (every sum still starts from in(m, n) or 0, adds the zero bias and then its
/// products in ascending k): the innermost loop walks a row of `right`.
inline void matmul(int m_count, int n_count, int k_count, F32View acc, const F32View *in, F32View left,
                   F32View right) {
  thread_local std::vector<float> row;
  if (row.size() < static_cast<size_t>(n_count)) row.resize(static_cast<size_t>(n_count));
  float *rw = row.data();
  for (int m = 0; m < m_count; ++m) {
    for (int n = 0; n < n_count; ++n) {
      float sum = in ? *at(*in, m, n) : 0.0f;
      sum += 0.0f;
      rw[n] = sum;
    }
    int n0 = 0;
    if (right.cs == 1) {
      // Blocks of 16 columns held in registers across the whole k loop.
      constexpr int kBlock = 16;
      for (; n0 + kBlock <= n_count; n0 += kBlock) {
        float block[kBlock];
        for (int j = 0; j < kBlock; ++j) block[j] = rw[n0 + j];
        for (int k = 0; k < k_count; ++k) {
          const float a = *at(left, m, k);
          const float *r = at(right, k, n0);
          for (int j = 0; j < kBlock; ++j) block[j] += a * r[j];
        }
        for (int j = 0; j < kBlock; ++j) rw[n0 + j] = block[j];
      }
    }
    for (int k = 0; k < k_count; ++k) {
      const float a = *at(left, m, k);
      const float *r = at(right, k, 0);
      for (int n = n0; n < n_count; ++n) rw[n] += a * r[n * right.cs];
    }
    for (int n = 0; n < n_count; ++n) *at(acc, m, n) = rw[n];
  }
}

} // namespace f32

/// The table of the loops above.
inline const F32Isa &f32_isa_table() {
  static const F32Isa table = {kF32IsaAbi, f32::binary, f32::scalar, f32::unary, f32::row_expand, f32::col_expand,
                               f32::row_reduce, f32::col_reduce, f32::fill, f32::load, f32::store, f32::matmul};
  return table;
}

} // namespace sim
} // namespace pto
