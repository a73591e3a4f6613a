// htp_ptosim: the estimated device time of a run (docs/packages.md, "Estimated device time"): each task's
// kernel estimate from codegen/pto/kernel_costs.json laid out along the dependencies the runtime recorded.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "package_spec.hpp"
#include "runtime.hpp"

namespace htp_ptosim {

/// What a run's report and trace get of the estimate.
struct RunEstimate {
  nlohmann::json summary;       ///< report "estimate" ({"available": false, "reason"} without kernel costs)
  nlohmann::json tasks;         ///< report "task_estimates": per task id, kernel, estimated_device_ns, start_ns
  nlohmann::json trace_events;  ///< the trace's second track (empty without kernel costs)
};

/// The estimate of the tasks `records` (in submission order) of package `pkg`.
RunEstimate estimate_run(const PackageSpec &pkg, const std::vector<TaskRecord> &records);

} // namespace htp_ptosim
