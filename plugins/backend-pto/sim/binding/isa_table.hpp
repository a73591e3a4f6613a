// The simulator's table of float tile loops (include/pto/sim/isa_f32.hpp), compiled once at -O3 into the
// backend; the loader binds every kernel it opens to it.
#pragma once

#include <pto/sim/isa_abi.hpp>

namespace htp::ptosim {

/// The table kernels are bound to.
const pto::sim::F32Isa &f32_isa();

} // namespace htp::ptosim
