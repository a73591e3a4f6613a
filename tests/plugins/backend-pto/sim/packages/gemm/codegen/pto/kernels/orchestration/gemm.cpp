// C += A @ B in 32x32 tiles: per output tile and K step, a cube task computes the partial product into a
// runtime-created tensor and a vector task accumulates it into C (ordered through C's inout direction).
#include <stddef.h>
#include <stdint.h>

#include "pto_orchestration_api.h"

#define FUNC_GEMM_TILE 0
#define FUNC_TILE_ACCUMULATE 1

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args) {
  (void)args;
  return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs &args) {
  const ChipTensor &a = args.tensor(0).ref();
  const ChipTensor &b = args.tensor(1).ref();
  const ChipTensor &c = args.tensor(2).ref();
  const uint32_t m = a.shapes[0], k = a.shapes[1], n = b.shapes[1];
  uint32_t tile[2] = {32, 32};
  TensorCreateInfo partial(tile, 2, DataType::FLOAT32);
  for (uint32_t i = 0; i < m / 32; ++i) {
    for (uint32_t j = 0; j < n / 32; ++j) {
      PTO2_SCOPE() {
        uint32_t c_off[2] = {i * 32, j * 32};
        ChipTensor vc = c.view(tile, c_off);
        for (uint32_t kk = 0; kk < k / 32; ++kk) {
          uint32_t a_off[2] = {i * 32, kk * 32};
          uint32_t b_off[2] = {kk * 32, j * 32};
          ChipTensor va = a.view(tile, a_off);
          ChipTensor vb = b.view(tile, b_off);
          CoreTaskArgs mm;
          mm.add_input(va, vb);
          mm.add_output(partial);
          TaskOutputTensors outs = rt_submit_aic_task(FUNC_GEMM_TILE, mm);
          CoreTaskArgs acc;
          acc.add_inout(vc);
          acc.add_input(outs.get_ref(0));
          rt_submit_aiv_task(FUNC_TILE_ACCUMULATE, acc);
        }
      }
    }
  }
}

}  // extern "C"
