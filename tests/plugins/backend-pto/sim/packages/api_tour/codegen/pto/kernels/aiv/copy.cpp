// out[0:4] = in[0:4].
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t *args) {
  __gm__ ChipTensor *in = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
  __gm__ ChipTensor *out = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
  if (get_block_idx(args) != 0 || get_block_num(args) != 1) return;  // one logical block in the simulator
  using Global = GlobalTensor<float, Shape<1, 1, 1, 1, 4>, Stride<4, 4, 4, 4, 1>>;
  Global gi(reinterpret_cast<__gm__ float *>(in->buffer.addr) + in->start_offset);
  Global go(reinterpret_cast<__gm__ float *>(out->buffer.addr) + out->start_offset);
  Tile<TileType::Vec, float, 1, 8, BLayout::RowMajor, 1, 4> t;
  TASSIGN(t, 0x100);
  TLOAD(t, gi);
  TSTORE(go, t);
  pipe_sync();
}
