// The files around aie.mlir that make a design buildable and runnable on a real NPU: the XRT host
// program and the build script (Peano for the kernels, aiecc for the design, the host compiler for
// the host program).
#pragma once

#include <string>

#include "design.hpp"
#include "device.hpp"

namespace htp::aie {

/// host.cpp: loads final.xclbin and insts.bin with XRT, fills the inputs from <dir>/<param>.bin, runs
/// the design and writes the outputs to <dir>/<param>.bin.
std::string host_program(const Design &design);

/// build.sh: `build.sh [OUT]` compiles every kernel with Peano, the design with aiecc and host.cpp.
std::string build_script(const Design &design, const DeviceProfile &device);

}  // namespace htp::aie
