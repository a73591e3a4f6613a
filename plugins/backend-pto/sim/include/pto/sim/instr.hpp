// HTP PTO CPU simulator: PTO-ISA instructions over tiles (PTO-ISA cd4a3d3f names and signatures; independent
// implementation). Every instruction acts on the valid region of its destination, computes half and bfloat16
// in float, and completes before it returns. Trailing wait-event operands are accepted and ignored.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <pto/sim/cpu.hpp>
#include <pto/sim/isa_abi.hpp>
#include <pto/sim/tile.hpp>

namespace pto {
namespace sim {

template <typename T> struct compute_type { using type = T; };
template <> struct compute_type<_Float16> { using type = float; };
template <> struct compute_type<bfloat16_t> { using type = float; };
/// The type an element is computed in.
template <typename T> using compute_t = typename compute_type<std::remove_cv_t<T>>::type;

template <typename T> inline compute_t<T> load(T v) {
  return static_cast<compute_t<T>>(v);
}

template <typename Dst, typename... Srcs>
inline void require_covers(const char *op, Dst &dst, Srcs &...srcs) {
  auto covers = [&](auto &s) {
    return s.GetValidRow() >= dst.GetValidRow() && s.GetValidCol() >= dst.GetValidCol();
  };
  if (!(covers(srcs) && ...))
    fail("%s: a source's valid region is smaller than the destination's %dx%d", op, dst.GetValidRow(),
         dst.GetValidCol());
}

/// True when every operand holds float: its loops run out of line (pto/sim/isa_abi.hpp).
template <typename... T> constexpr bool all_f32 = (std::is_same_v<std::remove_cv_t<typename T::DType>, float> && ...);

/// The table this module's instructions call (set by htp_ptosim_bind_isa).
inline const F32Isa *&bound_f32_isa() {
  static const F32Isa *table = nullptr;
  return table;
}

/// The bound table of float tile loops.
inline const F32Isa &isa() {
  if (const F32Isa *t = bound_f32_isa()) return *t;
  fail("the simulated instructions of this module are not bound to the simulator's tile loops "
       "(htp_ptosim_bind_isa was not called for it)");
}

/// A float tile as the table sees it.
template <typename T> inline F32View view(T &t) {
  return {t.data(), T::RowStride, T::ColStride};
}

/// A float global tensor as the table sees it.
template <typename G> inline F32Global global_view(G &g) {
  F32Global v{g.data(), {}, {}};
  for (int d = 0; d < 5; ++d) {
    v.shape[d] = g.GetShape(d);
    v.stride[d] = g.GetStride(d);
  }
  return v;
}

/// A tile's storage resolved once (Tile::data() decides where the tile lives on every call): the loops below
/// index it directly, so the compiler sees plain strided arrays and vectorizes the contiguous ones.
template <typename T> struct Raw {
  typename T::DType *p;
  typename T::DType &at(int r, int c) const { return p[r * T::RowStride + c * T::ColStride]; }
};
template <typename T> inline Raw<T> raw(T &t) { return {t.data()}; }

/// dst(r, c) = f(r, c) over dst's valid region.
template <typename Dst, typename F> inline void for_each(Dst &dst, F &&f) {
  const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
  const Raw<Dst> d = raw(dst);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      d.at(r, c) = static_cast<typename Dst::DType>(f(r, c));
}

template <typename Dst, typename S0, typename S1, typename F>
inline void binary(const char *op, int code, Dst &dst, S0 &s0, S1 &s1, F &&f) {
  require_covers(op, dst, s0, s1);
  if constexpr (all_f32<Dst, S0, S1>) {
    isa().binary(code, dst.GetValidRow(), dst.GetValidCol(), view(dst), view(s0), view(s1));
  } else {
    const auto a = raw(s0);
    const auto b = raw(s1);
    for_each(dst, [&](int r, int c) { return f(load(a.at(r, c)), load(b.at(r, c))); });
  }
}
template <typename Dst, typename Src, typename F>
inline void unary(const char *op, int code, Dst &dst, Src &src, F &&f) {
  require_covers(op, dst, src);
  if constexpr (all_f32<Dst, Src>) {
    isa().unary(code, dst.GetValidRow(), dst.GetValidCol(), view(dst), view(src));
  } else {
    const auto a = raw(src);
    for_each(dst, [&](int r, int c) { return f(load(a.at(r, c))); });
  }
}
/// dst(r, c) = f(src(r, c), s) for the scalar s.
template <typename Dst, typename Src, typename S, typename F>
inline void scalar_op(const char *op, int code, Dst &dst, Src &src, S s, F &&f) {
  require_covers(op, dst, src);
  if constexpr (all_f32<Dst, Src>) {
    isa().scalar(code, dst.GetValidRow(), dst.GetValidCol(), view(dst), view(src), static_cast<float>(s));
  } else {
    const auto a = raw(src);
    for_each(dst, [&](int r, int c) { return f(load(a.at(r, c)), s); });
  }
}
/// dst(r, c) = f(src0(r, c), src1(r, 0)): src1 holds one value per row.
template <typename Dst, typename S0, typename S1, typename F>
inline void row_expand(const char *op, int code, Dst &dst, S0 &s0, S1 &s1, F &&f) {
  require_covers(op, dst, s0);
  if (s1.GetValidRow() < dst.GetValidRow())
    fail("%s: the row operand has too few rows", op);
  if constexpr (all_f32<Dst, S0, S1>) {
    isa().row_expand(code, dst.GetValidRow(), dst.GetValidCol(), view(dst), view(s0), view(s1));
  } else {
    const auto a = raw(s0);
    const auto b = raw(s1);
    for_each(dst, [&](int r, int c) { return f(load(a.at(r, c)), load(b.at(r, 0))); });
  }
}
/// dst(r, c) = f(src0(r, c), src1(0, c)): src1 holds one value per column.
template <typename Dst, typename S0, typename S1, typename F>
inline void col_expand(const char *op, int code, Dst &dst, S0 &s0, S1 &s1, F &&f) {
  require_covers(op, dst, s0);
  if (s1.GetValidCol() < dst.GetValidCol())
    fail("%s: the column operand has too few columns", op);
  if constexpr (all_f32<Dst, S0, S1>) {
    isa().col_expand(code, dst.GetValidRow(), dst.GetValidCol(), view(dst), view(s0), view(s1));
  } else {
    const auto a = raw(s0);
    const auto b = raw(s1);
    for_each(dst, [&](int r, int c) { return f(load(a.at(r, c)), load(b.at(0, c))); });
  }
}
/// dst(r, 0) = fold over src's row r.
template <typename Dst, typename Src, typename F> inline void row_reduce(int code, Dst &dst, Src &src, F &&f) {
  if constexpr (all_f32<Dst, Src>) {
    isa().row_reduce(code, src.GetValidRow(), src.GetValidCol(), view(dst), view(src));
  } else {
    using C = compute_t<typename Src::DType>;
    const auto s = raw(src);
    for (int r = 0; r < src.GetValidRow(); ++r) {
      C acc = load(s.at(r, 0));
      for (int c = 1; c < src.GetValidCol(); ++c)
        acc = f(acc, load(s.at(r, c)));
      dst.at(r, 0) = static_cast<typename Dst::DType>(acc);
    }
  }
}
/// dst(0, c) = fold over src's column c.
template <typename Dst, typename Src, typename F> inline void col_reduce(int code, Dst &dst, Src &src, F &&f) {
  if constexpr (all_f32<Dst, Src>) {
    isa().col_reduce(code, src.GetValidRow(), src.GetValidCol(), view(dst), view(src));
  } else {
    using C = compute_t<typename Src::DType>;
    const auto s = raw(src);
    for (int c = 0; c < src.GetValidCol(); ++c) {
      C acc = load(s.at(0, c));
      for (int r = 1; r < src.GetValidRow(); ++r)
        acc = f(acc, load(s.at(r, c)));
      dst.at(0, c) = static_cast<typename Dst::DType>(acc);
    }
  }
}

template <typename To, typename From> inline To round_to(From v, RoundMode mode) {
  if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    const double d = static_cast<double>(v);
    switch (mode) {
    case RoundMode::CAST_FLOOR: return static_cast<To>(std::floor(d));
    case RoundMode::CAST_CEIL: return static_cast<To>(std::ceil(d));
    case RoundMode::CAST_ROUND: return static_cast<To>(std::round(d));
    case RoundMode::CAST_TRUNC: return static_cast<To>(std::trunc(d));
    default: return static_cast<To>(std::nearbyint(d));
    }
  } else {
    return static_cast<To>(v);
  }
}

constexpr auto add = [](auto a, auto b) { return a + b; };
constexpr auto sub = [](auto a, auto b) { return a - b; };
constexpr auto mul = [](auto a, auto b) { return a * b; };
constexpr auto div = [](auto a, auto b) { return a / b; };
// max / min of floats as NumPy's maximum / minimum: a NaN in either operand is the result (`a != a` is false
// for integers, so they compare only).
constexpr auto max = [](auto a, auto b) { return (a > b || a != a) ? a : b; };
constexpr auto min = [](auto a, auto b) { return (a < b || a != a) ? a : b; };

} // namespace sim
} // namespace pto

/// Binds this module's instructions to the simulator's table of float tile loops (the loader calls it on
/// every kernel it opens; a process running instructions itself calls it with pto::sim::f32_isa_table()).
/// False, binding nothing, for a table of another layout version.
extern "C" __attribute__((visibility("default"), used)) inline bool htp_ptosim_bind_isa(const pto::sim::F32Isa *table) {
  if (!table || table->abi != pto::sim::kF32IsaAbi) return false;
  pto::sim::bound_f32_isa() = table;
  return true;
}

namespace pto {

// ---- memory ---------------------------------------------------------------------------------------

/// Loads the global tensor's 2-D view into the tile (rows = dims 0..3, columns = dim 4).
template <typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TLOAD(TileData &dst, GlobalData &src, WaitEvents &...) {
  const int64_t rows = src.rows(), cols = src.cols();
  if (rows > TileData::Rows || cols > TileData::Cols)
    sim::fail("TLOAD: global tensor %lldx%lld does not fit the tile %dx%d", static_cast<long long>(rows),
              static_cast<long long>(cols), TileData::Rows, TileData::Cols);
  if constexpr (sim::all_f32<TileData, GlobalData>) {
    const sim::F32Global g = sim::global_view(src);
    sim::isa().load(rows, cols, sim::view(dst), &g);
  } else {
    const int64_t col_stride = src.GetStride(4);
    for (int64_t r = 0; r < rows; ++r) {
      const auto *row = src.data() + src.offset(r, 0);
      for (int64_t c = 0; c < cols; ++c)
        dst.at(static_cast<int>(r), static_cast<int>(c)) =
            static_cast<typename TileData::DType>(sim::load(row[c * col_stride]));
    }
  }
  return {};
}

/// Stores the tile into the global tensor's 2-D view (converting the element type, e.g. Acc float → half).
template <typename GlobalData, typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData &dst, TileData &src, WaitEvents &...) {
  const int64_t rows = dst.rows(), cols = dst.cols();
  if (rows > src.GetValidRow() || cols > src.GetValidCol())
    sim::fail("TSTORE: global tensor %lldx%lld is larger than the tile's valid region %dx%d",
              static_cast<long long>(rows), static_cast<long long>(cols), src.GetValidRow(), src.GetValidCol());
  if constexpr (sim::all_f32<TileData, GlobalData>) {
    const sim::F32Global g = sim::global_view(dst);
    sim::isa().store(rows, cols, &g, sim::view(src));
  } else {
    using G = typename GlobalData::DType;
    const int64_t col_stride = dst.GetStride(4);
    for (int64_t r = 0; r < rows; ++r) {
      G *row = dst.data() + dst.offset(r, 0);
      for (int64_t c = 0; c < cols; ++c)
        row[c * col_stride] = static_cast<G>(sim::load(src.at(static_cast<int>(r), static_cast<int>(c))));
    }
  }
  return {};
}

/// Copies between tiles of any types (Mat → Left/Right, Acc → Vec, ...), converting the element type.
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData &dst, SrcTileData &src, WaitEvents &...) {
  sim::unary("TMOV", sim::kCopy, dst, src, [](auto v) { return v; });
  return {};
}

/// Fills the tile's valid region with a scalar.
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TEXPANDS(TileData &dst, typename TileData::DType scalar, WaitEvents &...) {
  if constexpr (sim::all_f32<TileData>)
    sim::isa().fill(dst.GetValidRow(), dst.GetValidCol(), sim::view(dst), scalar);
  else
    sim::for_each(dst, [&](int, int) { return scalar; });
  return {};
}

// ---- elementwise ----------------------------------------------------------------------------------

#define HTP_PTOSIM_BINARY(NAME, FN, CODE)                                                                    \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename... WaitEvents>      \
  PTO_INST RecordEvent NAME(TileDataDst &dst, TileDataSrc0 &src0, TileDataSrc1 &src1, WaitEvents &...) {     \
    sim::binary(#NAME, sim::CODE, dst, src0, src1, FN);                                                      \
    return {};                                                                                               \
  }
HTP_PTOSIM_BINARY(TADD, sim::add, kAdd)
HTP_PTOSIM_BINARY(TSUB, sim::sub, kSub)
HTP_PTOSIM_BINARY(TMUL, sim::mul, kMul)
HTP_PTOSIM_BINARY(TDIV, sim::div, kDiv)
HTP_PTOSIM_BINARY(TMAX, sim::max, kMax)
HTP_PTOSIM_BINARY(TMIN, sim::min, kMin)
#undef HTP_PTOSIM_BINARY

#define HTP_PTOSIM_SCALAR(NAME, FN, CODE)                                                                    \
  template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>                              \
  PTO_INST RecordEvent NAME(TileDataDst &dst, TileDataSrc &src, typename TileDataSrc::DType scalar,          \
                            WaitEvents &...) {                                                               \
    sim::scalar_op(#NAME, sim::CODE, dst, src, sim::load(scalar), [](auto v, auto s) { return FN(v, s); });  \
    return {};                                                                                               \
  }
HTP_PTOSIM_SCALAR(TADDS, sim::add, kAdd)
HTP_PTOSIM_SCALAR(TSUBS, sim::sub, kSub)
HTP_PTOSIM_SCALAR(TMULS, sim::mul, kMul)
HTP_PTOSIM_SCALAR(TDIVS, sim::div, kDiv)
HTP_PTOSIM_SCALAR(TMAXS, sim::max, kMax)
HTP_PTOSIM_SCALAR(TMINS, sim::min, kMin)
#undef HTP_PTOSIM_SCALAR

/// dst = scalar / src.
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TDIVS(TileDataDst &dst, typename TileDataDst::DType scalar, TileDataSrc &src,
                           WaitEvents &...) {
  sim::scalar_op("TDIVS", sim::kRDiv, dst, src, sim::load(scalar), [](auto v, auto s) { return s / v; });
  return {};
}

#define HTP_PTOSIM_UNARY(NAME, CODE, EXPR)                                                                   \
  template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>                              \
  PTO_INST RecordEvent NAME(TileDataDst &dst, TileDataSrc &src, WaitEvents &...) {                           \
    sim::unary(#NAME, sim::CODE, dst, src, [](auto v) -> decltype(v) { return EXPR; });                      \
    return {};                                                                                               \
  }
HTP_PTOSIM_UNARY(TEXP, kExp, std::exp(v))
HTP_PTOSIM_UNARY(TLOG, kLog, std::log(v))
HTP_PTOSIM_UNARY(TSQRT, kSqrt, std::sqrt(v))
HTP_PTOSIM_UNARY(TRSQRT, kRsqrt, decltype(v)(1) / std::sqrt(v))
HTP_PTOSIM_UNARY(TABS, kAbs, v < decltype(v)(0) ? -v : v)
HTP_PTOSIM_UNARY(TNEG, kNeg, -v)
HTP_PTOSIM_UNARY(TRELU, kRelu, (v > decltype(v)(0) || v != v) ? v : decltype(v)(0))
HTP_PTOSIM_UNARY(TRECIP, kRecip, decltype(v)(1) / v)
#undef HTP_PTOSIM_UNARY

/// Leaky ReLU: v > 0 ? v : v * slope.
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TLRELU(TileDataDst &dst, TileDataSrc &src, typename TileDataSrc::DType slope,
                            WaitEvents &...) {
  sim::scalar_op("TLRELU", sim::kLRelu, dst, src, sim::load(slope),
                 [](auto v, auto s) { return v > decltype(v)(0) ? v : v * s; });
  return {};
}

/// Converts element types with a rounding mode (float → integer honours the mode).
template <typename TileDataD, typename TileDataS, typename... WaitEvents>
PTO_INST RecordEvent TCVT(TileDataD &dst, TileDataS &src, RoundMode mode, WaitEvents &...) {
  sim::require_covers("TCVT", dst, src);
  sim::for_each(dst, [&](int r, int c) {
    return sim::round_to<typename TileDataD::DType>(sim::load(src.at(r, c)), mode);
  });
  return {};
}

// ---- reductions -----------------------------------------------------------------------------------

#define HTP_PTOSIM_ROW_REDUCE(NAME, FN, CODE)                                                                \
  template <typename TileDataOut, typename TileDataIn, typename TileDataTmp, typename... WaitEvents>         \
  PTO_INST RecordEvent NAME(TileDataOut &dst, TileDataIn &src, TileDataTmp &, WaitEvents &...) {             \
    sim::row_reduce(sim::CODE, dst, src, FN);                                                                \
    return {};                                                                                               \
  }
HTP_PTOSIM_ROW_REDUCE(TROWSUM, sim::add, kAdd)
HTP_PTOSIM_ROW_REDUCE(TROWMAX, sim::max, kMax)
HTP_PTOSIM_ROW_REDUCE(TROWMIN, sim::min, kMin)
#undef HTP_PTOSIM_ROW_REDUCE

#define HTP_PTOSIM_COL_REDUCE(NAME, FN, CODE)                                                                \
  template <typename TileDataOut, typename TileDataIn, typename... WaitEvents>                               \
  PTO_INST RecordEvent NAME(TileDataOut &dst, TileDataIn &src, WaitEvents &...) {                            \
    sim::col_reduce(sim::CODE, dst, src, FN);                                                                \
    return {};                                                                                               \
  }
HTP_PTOSIM_COL_REDUCE(TCOLSUM, sim::add, kAdd)
HTP_PTOSIM_COL_REDUCE(TCOLMAX, sim::max, kMax)
HTP_PTOSIM_COL_REDUCE(TCOLMIN, sim::min, kMin)
#undef HTP_PTOSIM_COL_REDUCE

// ---- layout -------------------------------------------------------------------------------------------

/// dst(r, c) = src(c, r) over dst's valid region (the transpose size is the source's valid region, as on
/// A2A3); the element size must match. `tmp` is the scratch tile the device implementation needs.
template <typename TileDataDst, typename TileDataSrc, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TTRANS(TileDataDst &dst, TileDataSrc &src, TileDataTmp &, WaitEvents &...) {
  static_assert(sizeof(typename TileDataDst::DType) == sizeof(typename TileDataSrc::DType),
                "TTRANS: source and destination element sizes differ");
  if (src.GetValidRow() < dst.GetValidCol() || src.GetValidCol() < dst.GetValidRow())
    sim::fail("TTRANS: the source's valid region %dx%d does not cover the transposed destination %dx%d",
              src.GetValidRow(), src.GetValidCol(), dst.GetValidRow(), dst.GetValidCol());
  sim::for_each(dst, [&](int r, int c) { return sim::load(src.at(c, r)); });
  return {};
}

// ---- broadcasts -----------------------------------------------------------------------------------

/// dst(r, c) = src(r, 0).
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TROWEXPAND(TileDataDst &dst, TileDataSrc &src, WaitEvents &...) {
  if (src.GetValidRow() < dst.GetValidRow()) sim::fail("TROWEXPAND: the source has too few rows");
  if constexpr (sim::all_f32<TileDataDst, TileDataSrc>)
    sim::isa().row_expand(sim::kSecond, dst.GetValidRow(), dst.GetValidCol(), sim::view(dst), sim::view(src),
                          sim::view(src));
  else
    sim::for_each(dst, [&](int r, int) { return sim::load(src.at(r, 0)); });
  return {};
}
/// dst(r, c) = src(0, c).
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TCOLEXPAND(TileDataDst &dst, TileDataSrc &src, WaitEvents &...) {
  if (src.GetValidCol() < dst.GetValidCol())
    sim::fail("TCOLEXPAND: the source has too few columns");
  if constexpr (sim::all_f32<TileDataDst, TileDataSrc>)
    sim::isa().col_expand(sim::kSecond, dst.GetValidRow(), dst.GetValidCol(), sim::view(dst), sim::view(src),
                          sim::view(src));
  else
    sim::for_each(dst, [&](int, int c) { return sim::load(src.at(0, c)); });
  return {};
}

#define HTP_PTOSIM_EXPAND(NAME, HOW, FN, CODE)                                                               \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename... WaitEvents>      \
  PTO_INST RecordEvent NAME(TileDataDst &dst, TileDataSrc0 &src0, TileDataSrc1 &src1, WaitEvents &...) {     \
    sim::HOW(#NAME, sim::CODE, dst, src0, src1, FN);                                                         \
    return {};                                                                                               \
  }                                                                                                          \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename TileDataTmp,        \
            typename... WaitEvents>                                                                          \
  PTO_INST std::enable_if_t<is_tile_data_v<TileDataTmp>, RecordEvent> NAME(                                  \
      TileDataDst &dst, TileDataSrc0 &src0, TileDataSrc1 &src1, TileDataTmp &, WaitEvents &...) {            \
    sim::HOW(#NAME, sim::CODE, dst, src0, src1, FN);                                                         \
    return {};                                                                                               \
  }
HTP_PTOSIM_EXPAND(TROWEXPANDADD, row_expand, sim::add, kAdd)
HTP_PTOSIM_EXPAND(TROWEXPANDSUB, row_expand, sim::sub, kSub)
HTP_PTOSIM_EXPAND(TROWEXPANDMUL, row_expand, sim::mul, kMul)
HTP_PTOSIM_EXPAND(TROWEXPANDDIV, row_expand, sim::div, kDiv)
HTP_PTOSIM_EXPAND(TROWEXPANDMAX, row_expand, sim::max, kMax)
HTP_PTOSIM_EXPAND(TROWEXPANDMIN, row_expand, sim::min, kMin)
HTP_PTOSIM_EXPAND(TROWEXPANDEXPDIF, row_expand, [](auto a, auto b) { return std::exp(a - b); }, kExpDif)
HTP_PTOSIM_EXPAND(TCOLEXPANDADD, col_expand, sim::add, kAdd)
HTP_PTOSIM_EXPAND(TCOLEXPANDSUB, col_expand, sim::sub, kSub)
HTP_PTOSIM_EXPAND(TCOLEXPANDMUL, col_expand, sim::mul, kMul)
HTP_PTOSIM_EXPAND(TCOLEXPANDDIV, col_expand, sim::div, kDiv)
HTP_PTOSIM_EXPAND(TCOLEXPANDMAX, col_expand, sim::max, kMax)
HTP_PTOSIM_EXPAND(TCOLEXPANDMIN, col_expand, sim::min, kMin)
HTP_PTOSIM_EXPAND(TCOLEXPANDEXPDIF, col_expand, [](auto a, auto b) { return std::exp(a - b); }, kExpDif)
#undef HTP_PTOSIM_EXPAND

// ---- cube -----------------------------------------------------------------------------------------

namespace sim {
constexpr auto no_bias = [](int) { return 0.0f; };
/// acc(m, n) = (accumulate ? in(m, n) : 0) + bias(n) + sum_k left(m, k) * right(k, n), over M x N of the
/// operands.
template <typename Acc, typename In, typename Left, typename Right, typename BiasF>
inline void matmul(Acc &acc, In *in, Left &left, Right &right, BiasF &&bias) {
  const int M = left.GetValidRow(), K = left.GetValidCol(), N = right.GetValidCol();
  if (right.GetValidRow() != K)
    fail("TMATMUL: left is %dx%d but right has %d rows", M, K, right.GetValidRow());
  if (M > Acc::Rows || N > Acc::Cols)
    fail("TMATMUL: the %dx%d result does not fit the accumulator", M, N);
  if constexpr (all_f32<Acc, In, Left, Right> &&
                std::is_same_v<std::decay_t<BiasF>, std::decay_t<decltype(no_bias)>>) {
    F32View in_view{};
    if (in) in_view = view(*in);
    isa().matmul(M, N, K, view(acc), in ? &in_view : nullptr, view(left), view(right));
  } else {
    using C = compute_t<typename Acc::DType>;
    // Row by row with k outside n: every acc(m, n) still starts from in(m, n) (or 0) plus bias(n) and adds
    // its products in ascending k, so the numbers are those of the textbook m-n-k loop bit for bit, while the
    // innermost loop walks a row of `right` (contiguous for row-major tiles) and the compiler vectorizes it.
    // `in` may be `acc` itself (TMATMUL_ACC): row m of it is read before row m is written.
    const auto *L = left.data();
    const auto *R = right.data();
    const auto *I = in ? in->data() : nullptr;
    auto *A = acc.data();
    C row[Acc::Cols];
    for (int m = 0; m < M; ++m) {
      for (int n = 0; n < N; ++n) {
        C sum = I ? load(I[m * In::RowStride + n * In::ColStride]) : C(0);
        sum += static_cast<C>(bias(n));
        row[n] = sum;
      }
      for (int k = 0; k < K; ++k) {
        const C a = static_cast<C>(load(L[m * Left::RowStride + k * Left::ColStride]));
        const auto *r = R + k * Right::RowStride;
        for (int n = 0; n < N; ++n) row[n] += a * static_cast<C>(load(r[n * Right::ColStride]));
      }
      for (int n = 0; n < N; ++n) A[m * Acc::RowStride + n * Acc::ColStride] = static_cast<typename Acc::DType>(row[n]);
    }
  }
}
} // namespace sim

/// acc = left · right.
template <typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>
PTO_INST RecordEvent TMATMUL(TileRes &cMatrix, TileLeft &aMatrix, TileRight &bMatrix, WaitEvents &...) {
  sim::matmul(cMatrix, static_cast<TileRes *>(nullptr), aMatrix, bMatrix, sim::no_bias);
  return {};
}
template <AccPhase Phase, typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>
PTO_INST RecordEvent TMATMUL(TileRes &cMatrix, TileLeft &aMatrix, TileRight &bMatrix, WaitEvents &...) {
  sim::matmul(cMatrix, static_cast<TileRes *>(nullptr), aMatrix, bMatrix, sim::no_bias);
  return {};
}
/// acc += left · right.
template <typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>
PTO_INST RecordEvent TMATMUL_ACC(TileRes &cMatrix, TileLeft &aMatrix, TileRight &bMatrix, WaitEvents &...) {
  sim::matmul(cMatrix, &cMatrix, aMatrix, bMatrix, sim::no_bias);
  return {};
}
/// accOut = accIn + left · right.
template <typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>
PTO_INST RecordEvent TMATMUL_ACC(TileRes &cOutMatrix, TileRes &cInMatrix, TileLeft &aMatrix,
                                 TileRight &bMatrix, WaitEvents &...) {
  sim::matmul(cOutMatrix, &cInMatrix, aMatrix, bMatrix, sim::no_bias);
  return {};
}
/// acc = left · right + bias (bias: a 1 x N tile).
template <typename TileRes, typename TileLeft, typename TileRight, typename TileBias, typename... WaitEvents>
PTO_INST std::enable_if_t<is_tile_data_v<TileBias>, RecordEvent>
TMATMUL_BIAS(TileRes &cMatrix, TileLeft &aMatrix, TileRight &bMatrix, TileBias &biasData, WaitEvents &...) {
  sim::matmul(cMatrix, static_cast<TileRes *>(nullptr), aMatrix, bMatrix,
              [&](int n) { return static_cast<float>(sim::load(biasData.at(0, n))); });
  return {};
}

} // namespace pto
