// P = A_tile @ B_tile on the cube unit: 32x32 float tiles through L1 (Mat), L0A/L0B and L0C.
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/constants.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *a = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *b = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  __gm__ ChipTensor *p = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
  constexpr int T = 32;
  using GShape = Shape<1, 1, 1, T, T>;
  using GStride = Stride<1, 1, 1, DYNAMIC, 1>;
  using Global = GlobalTensor<float, GShape, GStride>;
  Global ga(reinterpret_cast<__gm__ float *>(a->buffer.addr) + a->start_offset, GShape(), GStride(a->strides[0]));
  Global gb(reinterpret_cast<__gm__ float *>(b->buffer.addr) + b->start_offset, GShape(), GStride(b->strides[0]));
  Global gp(reinterpret_cast<__gm__ float *>(p->buffer.addr) + p->start_offset, GShape(), GStride(p->strides[0]));

  using MatTile = Tile<TileType::Mat, float, T, T, BLayout::ColMajor, T, T, SLayout::RowMajor, 512>;
  MatTile am;
  MatTile bm;
  TASSIGN(am, 0x0);
  TASSIGN(bm, 0x10000);
  TileLeft<float, T, T> al;
  TileRight<float, T, T> br;
  TileAcc<float, T, T> acc;
  TASSIGN(al, 0x0);
  TASSIGN(br, 0x0);
  TASSIGN(acc, 0x0);

  TLOAD(am, ga);
  TLOAD(bm, gb);
  set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  TMOV(al, am);
  TMOV(br, bm);
  set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
  TMATMUL(acc, al, br);
  set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
  TSTORE(gp, acc);
  pipe_sync();
}
