// C = A + B over a grid of 64x64 tiles: one AIV task per tile, dispatched by tile index.
#include <stddef.h>
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &c = args.tensor(2).ref();
  const uint32_t rows = a.shapes[0], cols = a.shapes[1];
  uint32_t tile[2] = {64, 64};
  for (uint32_t i = 0; i < rows / 64; ++i) {
    for (uint32_t j = 0; j < cols / 64; ++j) {
      uint32_t off[2] = {i * 64, j * 64};
      ChipTensor va = a.view(tile, off);
      ChipTensor vb = b.view(tile, off);
      ChipTensor vc = c.view(tile, off);
      CoreTaskArgs p;
      p.add_input(va, vb);
      p.add_output(vc);
#ifdef HTP_PTOSIM
      htp_ptosim_hint(p, static_cast<int64_t>(i * (cols / 64) + j));
#endif
      rt_submit_aiv_task(0, p);
    }
  }
  LOG_INFO("submitted %u tiles", (rows / 64) * (cols / 64));
}

}  // extern "C"
