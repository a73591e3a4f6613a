// The estimated device time of an AIE design (docs/packages.md, "Estimated device time"): every kernel
// call of every core is a task costed by the roofline of its kernel's work (mapping.json "work") at the
// device's compute-tile rates; a call waits for the previous call of its core and for the calls that
// filled the objects it acquired from another core's FIFO.
#pragma once

#include "design.hpp"
#include "device.hpp"

namespace htp::aie {

/// The estimate of running `d` once on its device (htp::estimate_unavailable when no profile or work is
/// known for it).
htp::RunEstimate estimate_design(const Design &d);

}  // namespace htp::aie
