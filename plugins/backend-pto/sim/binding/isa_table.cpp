// Compiled at -O3 (CMakeLists.txt): the loops vectorize as they did when every kernel compiled them itself.
#include "isa_table.hpp"

#include <pto/sim/isa_f32.hpp>

namespace htp::ptosim {

const pto::sim::F32Isa &f32_isa() {
  return pto::sim::f32_isa_table();
}

} // namespace htp::ptosim
