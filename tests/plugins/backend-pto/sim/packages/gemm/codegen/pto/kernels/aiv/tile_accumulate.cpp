// C_tile += P (32x32 float).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *c = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *p = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  constexpr int T = 32;
  using GShape = Shape<1, 1, 1, T, T>;
  using GStride = Stride<1, 1, 1, DYNAMIC, 1>;
  using Global = GlobalTensor<float, GShape, GStride>;
  Global gc(reinterpret_cast<__gm__ float *>(c->buffer.addr) + c->start_offset, GShape(), GStride(c->strides[0]));
  Global gp(reinterpret_cast<__gm__ float *>(p->buffer.addr) + p->start_offset, GShape(), GStride(p->strides[0]));
  using TileT = Tile<TileType::Vec, float, T, T>;
  TileT tc;
  TileT tp;
  TASSIGN(tc, 0x0);
  TASSIGN(tp, 0x1000);
  TLOAD(tc, gc);
  TLOAD(tp, gp);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  TADD(tc, tc, tp);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  TSTORE(gc, tc);
  pipe_sync();
}
