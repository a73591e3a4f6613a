// A tour of the orchestration API: runtime-created outputs with an initial value, a data-dependent branch on
// a value a task produced (get_tensor_data waits for it), a dummy barrier task, alloc_tensors and
// set_tensor_data, scopes and logging.
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
  const int64_t n = static_cast<int64_t>(args.scalar(0));
  uint32_t shape[1] = {4};
  uint32_t first[1] = {0};
  TensorCreateInfo scaled(shape, 1, DataType::FLOAT32);
  scaled.set_initial_value(1.0f);
  PTO2_SCOPE() {
    CoreTaskArgs s;
    s.add_input(x);
    s.add_output(scaled);
    s.add_scalar(static_cast<float>(n));
    TaskOutputTensors outs = rt_submit_aiv_task(0, s);
    const ChipTensor &tmp = outs.get_ref(0);
    if (get_tensor_data<float>(tmp, 1, first) > 0.0f) {
      CoreTaskArgs c;
      c.add_input(tmp);
      c.add_output(y);
      rt_submit_aiv_task(1, c);
    }
    CoreTaskArgs barrier;
    barrier.add_inout(y);
    rt_submit_dummy_task(barrier);
  }
  TensorCreateInfo extra_ci(shape, 1, DataType::FLOAT32);
  TaskOutputTensors extra = alloc_tensors(extra_ci);
  set_tensor_data(extra.get_ref(0), 1, first, 5.0f);
  LOG_INFO("extra %.1f, clusters %d", get_tensor_data<float>(extra.get_ref(0), 1, first), rt_available_cluster_count());
}

}  // extern "C"
