// aie-sim for host-orchestrated workloads (docs/backends/aie.md §2, "Host-orchestrated workloads"): walks
// the workload's task graph (orchestration.json) with the run's tensors and scalars — loops, ragged rows,
// CSR selections, conditions, views whose offsets read tensors — and runs each task as its kernel's
// single-core design on the functional simulator: the task's views gathered into the design's buffers,
// the design simulated, the views it writes scattered back. Runtime data outside a tensor stops the run
// with a message naming the launch, the tensor and the values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "simulator.hpp"

namespace htp::aie::sim {

/// A tensor of the run (a parameter or an intermediate): row-major host memory.
struct OrchTensor {
  void *data = nullptr;
  std::vector<int64_t> shape;
  std::string dtype;
};

struct OrchestrationResult {
  Json trace_events = Json::array();  ///< one complete event per task (thread 1), on the host clock
  Json tasks = Json::array();         ///< per task: {task, id, kernel}
  double seconds = 0;                 ///< wall time of the walk
};

/// Runs the orchestration document `doc` (schema htp.aie.orchestration.v1): `designs` by kernel name,
/// `tensors` the workload's tensor parameters, `scalars` its scalar parameters (JSON numbers).
/// Intermediates are allocated zeroed. Throws SimError naming the construct on a failure.
OrchestrationResult orchestrate(const Json &doc, const std::map<std::string, Design> &designs,
                                const std::map<std::string, KernelEntry> &kernels,
                                const std::map<std::string, OrchTensor> &tensors,
                                const std::map<std::string, Json> &scalars, const SimOptions &options = {});

}  // namespace htp::aie::sim
