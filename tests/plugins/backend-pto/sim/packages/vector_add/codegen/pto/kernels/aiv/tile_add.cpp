// C tile = A tile + B tile, 64x64 float views of row-major matrices (row pitch from the tensor's stride).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *a = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *b = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  __gm__ ChipTensor *c = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  constexpr int kRows = 64;
  constexpr int kCols = 64;
  using GShape = Shape<1, 1, 1, kRows, kCols>;
  using GStride = Stride<1, 1, 1, DYNAMIC, 1>;
  using Global = GlobalTensor<float, GShape, GStride>;
  using TileT = Tile<TileType::Vec, float, kRows, kCols, BLayout::RowMajor, -1, -1>;

  Global ga(reinterpret_cast<__gm__ float *>(a->buffer.addr) + a->start_offset, GShape(), GStride(a->strides[0]));
  Global gb(reinterpret_cast<__gm__ float *>(b->buffer.addr) + b->start_offset, GShape(), GStride(b->strides[0]));
  Global gc(reinterpret_cast<__gm__ float *>(c->buffer.addr) + c->start_offset, GShape(), GStride(c->strides[0]));

  TileT ta(kRows, kCols);
  TileT tb(kRows, kCols);
  TileT tc(kRows, kCols);
  TASSIGN(ta, 0x0);
  TASSIGN(tb, 0x4000);
  TASSIGN(tc, 0x8000);
  TLOAD(ta, ga);
  TLOAD(tb, gb);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  TADD(tc, ta, tb);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  TSTORE(gc, tc);
  pipe_sync();
}
