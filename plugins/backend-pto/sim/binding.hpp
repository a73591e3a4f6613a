// The a2a3sim binding of backend-pto: runs pto-a2a3sim packages on HTP's PTO CPU simulator
// (docs/backends/pto-sim.md), or on a user's built pto-runtime (docs/backends/pto.md §8). backend-pto's
// plugin.cpp calls register_bindings from its registration; its a2a3 binding launches device builds
// through launch_on_device.
#pragma once

#include <htp/plugin.hpp>
#include <htp/run.hpp>

#include <string>
#include <vector>

namespace htp_ptosim {

/// Registers the binding `pto.a2a3sim` for target pto-a2a3sim.
void register_bindings(htp::Registrar &r);

/// The a2a3 binding's launch: checks PTO_RUNTIME_ROOT / PTO_ISA_ROOT (built for the device), then runs
/// the package built by `recipe` (`orchestration` and `kernels`, absolute paths in registry order) on
/// pto-runtime's a2a3 platform and writes report.json. Throws htp::RunError.
void launch_on_device(htp::RunContext &ctx, const std::string &orchestration, const std::vector<std::string> &kernels,
                      const std::string &recipe);

/// The runtime checks alone (what launch_on_device checks first); throws htp::RunError.
void check_device_runtime(const std::string &package_dir);

} // namespace htp_ptosim
