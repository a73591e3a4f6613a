// Y rows = softmax(scale * X rows) for a 16x64 float block; args: X, Y, scale (float bits).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *x = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *y = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  const float scale = from_u64<float>(static_cast<uint64_t>(args[2]));
  constexpr int R = 16;
  constexpr int C = 64;
  using GShape = Shape<1, 1, 1, R, C>;
  using GStride = Stride<1, 1, 1, C, 1>;
  using Global = GlobalTensor<float, GShape, GStride>;
  Global gx(reinterpret_cast<__gm__ float *>(x->buffer.addr) + x->start_offset);
  Global gy(reinterpret_cast<__gm__ float *>(y->buffer.addr) + y->start_offset);
  using Block = Tile<TileType::Vec, float, R, C>;
  using RowVec = Tile<TileType::Vec, float, R, 8, BLayout::RowMajor, R, 1>;
  Block t;
  Block tmp;
  RowVec stat;
  TASSIGN(t, 0x0);
  TASSIGN(tmp, 0x1000);
  TASSIGN(stat, 0x2000);
  TLOAD(t, gx);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  TMULS(t, t, scale);
  TROWMAX(stat, t, tmp);
  TROWEXPANDSUB(t, t, stat);
  TEXP(t, t);
  TROWSUM(stat, t, tmp);
  TROWEXPANDDIV(t, t, stat);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  TSTORE(gy, t);
  pipe_sync();
}
