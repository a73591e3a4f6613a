// The estimated device time of an AIE design (docs/packages.md, "Estimated device time"): every kernel
// call of every core is a task costed by the roofline of its kernel's work (mapping.json "work") at the
// device's compute-tile rates; a call waits for the previous call of its core and for the calls that
// filled the objects it acquired from another core's FIFO.
#pragma once

#include "design.hpp"
#include "device.hpp"

namespace htp::aie {

/// What the run's report and trace get of the estimate.
struct DesignEstimate {
  Json summary;       ///< report "estimate" ({"available": false, "reason"} when it cannot be made)
  Json tasks;         ///< report "task_estimates": per call task, kernel, core, estimated_device_ns, start_ns
  Json trace_events;  ///< the trace's second track
};

/// The estimate of running `d` once on device `dev`.
DesignEstimate estimate_design(const Design &d, const DeviceProfile &dev);

}  // namespace htp::aie
