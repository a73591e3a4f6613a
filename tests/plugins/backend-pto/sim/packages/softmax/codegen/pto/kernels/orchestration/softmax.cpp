// Y = softmax(scale * X) by rows, 16 rows per AIV task; the scale is the entry's scalar.
#include <stddef.h>
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &x = args.tensor(0).ref();
  const ChipTensor &y = args.tensor(1).ref();
  const float scale = from_u64<float>(args.scalar(0));
  uint32_t block[2] = {16, x.shapes[1]};
  for (uint32_t r = 0; r < x.shapes[0]; r += 16) {
    uint32_t off[2] = {r, 0};
    ChipTensor vx = x.view(block, off);
    ChipTensor vy = y.view(block, off);
    CoreTaskArgs p;
    p.add_input(vx);
    p.add_output(vy);
    p.add_scalar(scale);
    rt_submit_aiv_task(0, p);
  }
}

}  // extern "C"
