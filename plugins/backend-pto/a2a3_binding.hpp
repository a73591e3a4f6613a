// The `a2a3` binding (target pto-a2a3): builds and runs a package on an Ascend device through CANN and
// pto-runtime; without the toolchain it writes the build recipe into the package and fails naming
// exactly what is missing.
#pragma once

#include <htp/run.hpp>

namespace ptobe {

void run_a2a3(htp::RunContext &ctx);

}  // namespace ptobe
