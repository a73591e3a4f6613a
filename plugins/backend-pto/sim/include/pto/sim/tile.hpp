// HTP PTO CPU simulator: Shape, Stride, GlobalTensor, Tile, the on-chip memories of a simulated core and
// TASSIGN (PTO-ISA cd4a3d3f names and template parameters; independent implementation).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <type_traits>
#include <vector>

#include <pto/sim/cpu.hpp>
#include <pto/sim/isa_abi.hpp>

namespace pto {

constexpr int DYNAMIC = -1;

enum class TileType { Vec, Mat, Left, Right, Acc, Bias, Scaling, ScaleLeft, ScaleRight };
enum class BLayout { RowMajor = 0, ColMajor = 1 };
enum class SLayout { NoneBox = 0, RowMajor = 1, ColMajor = 2 };
enum class Layout { ND, DN, NZ };
enum class PadValue : uint64_t { Null = 0, Zero = 1, Max = 2, Min = 3 };
enum class CompactMode { Null, Normal, RowPlusOne };
enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_ROUND,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_TRUNC,
  CAST_ODD
};
enum class AccPhase : uint8_t { Unspecified = 0x0, Partial = 0x2, Final = 0x3 };

struct TileConfig {
  static constexpr int fractalABSize = 512;
  static constexpr int fractalCSize = 1024;
  static constexpr int fractalMxSize = 32;
};

/// Completion token of an instruction; the simulator completes every instruction synchronously.
struct RecordEvent {};

namespace sim {

/// Holds five extents (or strides) with the static ones fixed by template arguments.
template <int64_t D1, int64_t D2, int64_t D3, int64_t D4, int64_t D5> struct Dims5 {
  static constexpr int64_t fixed[5] = {D1, D2, D3, D4, D5};
  static constexpr int dynamic_count =
      (D1 == DYNAMIC) + (D2 == DYNAMIC) + (D3 == DYNAMIC) + (D4 == DYNAMIC) + (D5 == DYNAMIC);
  int64_t v[5] = {D1 == DYNAMIC ? 1 : D1, D2 == DYNAMIC ? 1 : D2, D3 == DYNAMIC ? 1 : D3,
                  D4 == DYNAMIC ? 1 : D4, D5 == DYNAMIC ? 1 : D5};

  Dims5() = default;
  /// Five values set the dynamic dims from their positions; fewer values fill the dynamic dims in order.
  template <typename... I, typename = std::enable_if_t<(sizeof...(I) > 0) && (std::is_integral_v<I> && ...)>>
  explicit Dims5(I... values) {
    const int64_t vals[] = {static_cast<int64_t>(values)...};
    if constexpr (sizeof...(I) == 5) {
      for (int d = 0; d < 5; ++d)
        if (fixed[d] == DYNAMIC) v[d] = vals[d];
    } else {
      static_assert(sizeof...(I) == dynamic_count, "one value per dynamic dimension");
      int next = 0;
      for (int d = 0; d < 5; ++d)
        if (fixed[d] == DYNAMIC) v[d] = vals[next++];
    }
  }
};

} // namespace sim

template <int64_t N1 = DYNAMIC, int64_t N2 = DYNAMIC, int64_t N3 = DYNAMIC, int64_t N4 = DYNAMIC,
          int64_t N5 = DYNAMIC>
struct Shape : sim::Dims5<N1, N2, N3, N4, N5> {
  using sim::Dims5<N1, N2, N3, N4, N5>::Dims5;
  static constexpr int64_t staticShape[5] = {N1, N2, N3, N4, N5};
};

template <int64_t S1 = DYNAMIC, int64_t S2 = DYNAMIC, int64_t S3 = DYNAMIC, int64_t S4 = DYNAMIC,
          int64_t S5 = DYNAMIC>
struct Stride : sim::Dims5<S1, S2, S3, S4, S5> {
  using sim::Dims5<S1, S2, S3, S4, S5>::Dims5;
  static constexpr int64_t staticStride[5] = {S1, S2, S3, S4, S5};
};

/// A global-memory tensor of up to five dims; a tile sees dims 0..3 flattened as rows and dim 4 as columns.
template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
  using Shape = Shape_;
  using Stride = Stride_;
  using RawDType = std::remove_cv_t<Element_>;
  using DType = RawDType;
  static constexpr Layout layout = Layout_;
  static_assert(Layout_ != Layout::NZ, "the PTO CPU simulator supports ND and DN global tensors only");

  GlobalTensor() = default;
  explicit GlobalTensor(DType *data, const Shape &shape = Shape(), const Stride &stride = Stride())
      : data_(data), shape_(shape), stride_(stride) {}

  DType *data() const { return data_; }
  int64_t GetShape(int dim) const { return shape_.v[dim]; }
  int64_t GetStride(int dim) const { return stride_.v[dim]; }
  /// Rows of the 2-D view: the product of dims 0..3.
  int64_t rows() const { return shape_.v[0] * shape_.v[1] * shape_.v[2] * shape_.v[3]; }
  int64_t cols() const { return shape_.v[4]; }
  /// Element offset of 2-D element (r, c).
  int64_t offset(int64_t r, int64_t c) const {
    return sim::global_row_offset(shape_.v, stride_.v, r) + c * stride_.v[4];
  }

private:
  DType *data_ = nullptr;
  Shape shape_{};
  Stride stride_{};
};

namespace sim {

/// Capacity in bytes of the memory that holds tiles of a type (Ascend a2a3 AI core).
constexpr size_t memory_capacity(TileType t) {
  switch (t) {
  case TileType::Vec: return 192 * 1024;  // UB
  case TileType::Mat: return 512 * 1024;  // L1
  case TileType::Left: return 64 * 1024;  // L0A
  case TileType::Right: return 64 * 1024; // L0B
  case TileType::Acc: return 128 * 1024;  // L0C
  case TileType::Bias: return 1024;       // BT
  default: return 4 * 1024;               // FB and scale buffers
  }
}

constexpr const char *memory_name(TileType t) {
  switch (t) {
  case TileType::Vec: return "UB";
  case TileType::Mat: return "L1";
  case TileType::Left: return "L0A";
  case TileType::Right: return "L0B";
  case TileType::Acc: return "L0C";
  case TileType::Bias: return "BT";
  default: return "FB";
  }
}

/// The on-chip memories of the simulated core running on this thread (allocated on first use).
inline unsigned char *core_memory(TileType t) {
  struct Spaces {
    unsigned char *space[9] = {};
    ~Spaces() {
      for (unsigned char *p : space)
        delete[] p;
    }
  };
  static thread_local Spaces spaces;
  unsigned char *&space = spaces.space[static_cast<int>(t)];
  if (!space) space = new unsigned char[memory_capacity(t)]();
  return space;
}

/// Thrown for an instruction the simulated core cannot execute (the runtime reports it with the task).
/// Its text is held inline: kernels include this header, and <stdexcept> would bring <string> into each of
/// their compiles.
struct IsaError : std::exception {
  char text[512] = {};
  const char *what() const noexcept override { return text; }
};
/// Throws IsaError with the printf-formatted message. Out of line and cold, so that an instruction's checks
/// compile to a compare and a call: kernels are mostly checks and calls.
[[noreturn]] __attribute__((noinline, cold, format(printf, 1, 2))) inline void fail(const char *format, ...) {
  IsaError error;
  va_list args;
  va_start(args, format);
  std::vsnprintf(error.text, sizeof error.text, format, args);
  va_end(args);
  throw error;
}

} // namespace sim

template <TileType Loc_, typename Element_, const int Rows_, const int Cols_,
          const BLayout BFractal_ = BLayout::RowMajor, const int RowValid_ = Rows_,
          const int ColValid_ = Cols_, const SLayout SFractal_ = SLayout::NoneBox,
          const int SFractalSize_ = TileConfig::fractalABSize, auto PadVal_ = PadValue::Null,
          const CompactMode Compact_ = CompactMode::Null>
struct Tile {
  using DType = Element_;
  static constexpr TileType Loc = Loc_;
  static constexpr int Rows = Rows_;
  static constexpr int Cols = Cols_;
  static constexpr int ValidRow = RowValid_;
  static constexpr int ValidCol = ColValid_;
  static constexpr BLayout BFractal = BFractal_;
  static constexpr SLayout SFractal = SFractal_;
  static constexpr int SFractalSize = SFractalSize_;
  static constexpr auto PadVal = PadVal_;
  static constexpr bool isRowMajor = BFractal_ == BLayout::RowMajor;
  static constexpr int RowStride = isRowMajor ? Cols : 1;
  static constexpr int ColStride = isRowMajor ? 1 : Rows;
  static constexpr int Numel = Rows * Cols;
  static constexpr size_t Bytes = sizeof(DType) * static_cast<size_t>(Numel);
  static_assert(Rows > 0 && Cols > 0 && (ValidRow == DYNAMIC || (ValidRow >= 0 && ValidRow <= Rows)) &&
                    (ValidCol == DYNAMIC || (ValidCol >= 0 && ValidCol <= Cols)),
                "Invalid Tile Layout.");

  Tile() = default;
  /// Both valid dims at run time.
  template <int RM = ValidRow, int CM = ValidCol>
  Tile(std::enable_if_t<RM == DYNAMIC && CM == DYNAMIC, unsigned> vr, unsigned vc)
      : valid_row_(vr), valid_col_(vc) {
    check_valid();
  }
  /// The one dynamic valid dim at run time.
  template <int RM = ValidRow, int CM = ValidCol>
  explicit Tile(std::enable_if_t<(RM == DYNAMIC) != (CM == DYNAMIC), unsigned> v)
      : valid_row_(RM == DYNAMIC ? static_cast<int>(v) : RM),
        valid_col_(CM == DYNAMIC ? static_cast<int>(v) : CM) {
    check_valid();
  }
  Tile(const Tile &o) : addr_(o.addr_), valid_row_(o.valid_row_), valid_col_(o.valid_col_) {
    if (o.addr_ == kOwned) own_ = o.own_;
  }
  Tile &operator=(const Tile &o) {
    addr_ = o.addr_;
    valid_row_ = o.valid_row_;
    valid_col_ = o.valid_col_;
    if (o.addr_ == kOwned) own_ = o.own_;
    return *this;
  }

  int GetValidRow() const { return valid_row_; }
  int GetValidCol() const { return valid_col_; }
  void SetValidRow(int v) { valid_row_ = v; }
  void SetValidCol(int v) { valid_col_ = v; }

  /// Storage: the core memory at the TASSIGNed address, or storage owned by the tile.
  DType *data() {
    if (addr_ == kOwned) return own_.data();
    if (addr_ == kUnassigned) return own_storage();
    return reinterpret_cast<DType *>(sim::core_memory(Loc) + addr_);
  }
  /// Element (r, c) of the 2-D tile, placed by the block layout.
  DType &at(int r, int c) { return data()[r * RowStride + c * ColStride]; }
  DType GetValue(uint32_t offset) { return data()[offset]; }
  void SetValue(uint32_t offset, DType v) { data()[offset] = v; }

  /// TASSIGN: binds the tile to byte address `addr` of its memory.
  void assign(uint64_t addr) {
    if (addr + Bytes > sim::memory_capacity(Loc))
      sim::fail("TASSIGN: a tile of %zu bytes at address %llu exceeds %s (%zu bytes)", Bytes,
                static_cast<unsigned long long>(addr), sim::memory_name(Loc), sim::memory_capacity(Loc));
    addr_ = static_cast<int64_t>(addr);
    own_.clear();
  }

private:
  static constexpr int64_t kUnassigned = -1;
  static constexpr int64_t kOwned = -2;
  void check_valid() const {
    if (valid_row_ < 0 || valid_row_ > Rows || valid_col_ < 0 || valid_col_ > Cols)
      sim::fail("Tile: valid region %dx%d exceeds the tile %dx%d", valid_row_, valid_col_, Rows, Cols);
  }
  /// Storage of a tile never TASSIGNed (out of line: kernels assign every tile).
  __attribute__((noinline)) DType *own_storage() {
    own_.assign(static_cast<size_t>(Numel), DType{});
    addr_ = kOwned;
    return own_.data();
  }
  int64_t addr_ = kUnassigned;
  int valid_row_ = ValidRow == DYNAMIC ? Rows : ValidRow;
  int valid_col_ = ValidCol == DYNAMIC ? Cols : ValidCol;
  std::vector<DType> own_;
};

template <typename Element_, const int Rows_, const int Cols_, const int RowValid_ = Rows_,
          const int ColValid_ = Cols_>
using TileLeft = Tile<TileType::Left, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_,
                      SLayout::RowMajor, TileConfig::fractalABSize>;
template <typename Element_, const int Rows_, const int Cols_, const int RowValid_ = Rows_,
          const int ColValid_ = Cols_>
using TileRight = Tile<TileType::Right, Element_, Rows_, Cols_, BLayout::RowMajor, RowValid_, ColValid_,
                       SLayout::ColMajor, TileConfig::fractalABSize>;
template <typename Element_, const int Rows_, const int Cols_, const int RowValid_ = Rows_,
          const int ColValid_ = Cols_>
using TileAcc = Tile<TileType::Acc, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_,
                     SLayout::RowMajor, TileConfig::fractalCSize>;

template <typename T> struct is_tile : std::false_type {};
template <TileType L, typename E, int R, int C, BLayout B, int RV, int CV, SLayout S, int F, auto P,
          CompactMode M>
struct is_tile<Tile<L, E, R, C, B, RV, CV, S, F, P, M>> : std::true_type {};
template <typename T> inline constexpr bool is_tile_data_v = is_tile<std::remove_cv_t<T>>::value;

template <typename T> struct is_global : std::false_type {};
template <typename E, typename Sh, typename St, Layout L>
struct is_global<GlobalTensor<E, Sh, St, L>> : std::true_type {};

/// Binds `tile` to byte address `addr` of the memory of its tile type.
template <typename T, typename AddrType> PTO_INST void TASSIGN(T &tile, AddrType addr) {
  static_assert(is_tile_data_v<T>, "TASSIGN: the first operand must be a Tile");
  tile.assign(static_cast<uint64_t>(addr));
}
template <std::size_t Addr, typename T> PTO_INST void TASSIGN(T &tile) {
  tile.assign(Addr);
}

} // namespace pto
