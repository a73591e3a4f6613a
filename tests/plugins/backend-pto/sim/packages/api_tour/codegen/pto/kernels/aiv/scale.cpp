// out[0:4] = in[0:4] * s (s: float scalar).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *in = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *out = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  const float s = from_u64<float>(static_cast<uint64_t>(args[2]));
  using Global = GlobalTensor<float, Shape<1, 1, 1, 1, 4>, Stride<4, 4, 4, 4, 1>>;
  Global gi(reinterpret_cast<__gm__ float *>(in->buffer.addr) + in->start_offset);
  Global go(reinterpret_cast<__gm__ float *>(out->buffer.addr) + out->start_offset);
  Tile<TileType::Vec, float, 1, 8, BLayout::RowMajor, 1, 4> t;
  TASSIGN(t, 0x0);
  TLOAD(t, gi);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  TMULS(t, t, s);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
  TSTORE(go, t);
  pipe_sync();
}
