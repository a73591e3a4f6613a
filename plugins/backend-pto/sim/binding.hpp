// The a2a3sim binding of backend-pto: runs pto-a2a3sim packages on HTP's PTO CPU simulator
// (docs/backends/pto-sim.md). backend-pto's plugin.cpp calls register_bindings from its registration.
#pragma once

#include <htp/plugin.hpp>

namespace htp_ptosim {

/// Registers the binding `pto.a2a3sim` for target pto-a2a3sim.
void register_bindings(htp::Registrar &r);

} // namespace htp_ptosim
