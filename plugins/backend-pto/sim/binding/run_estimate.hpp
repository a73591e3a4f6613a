// htp_ptosim: the estimated device time of a run (docs/packages.md, "Estimated device time"): each task's
// kernel estimate from codegen/pto/kernel_costs.json laid out along the dependencies the runtime recorded.
#pragma once

#include <htp/device_estimate.hpp>

#include <vector>

#include "package_spec.hpp"
#include "runtime.hpp"

namespace htp_ptosim {

using htp::RunEstimate;  // summary {"available": false, "reason"} without kernel costs

/// The estimate of the tasks `records` (in submission order) of package `pkg`.
RunEstimate estimate_run(const PackageSpec &pkg, const std::vector<TaskRecord> &records);

} // namespace htp_ptosim
