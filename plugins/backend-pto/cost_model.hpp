// The estimated device time of each kernel (docs/packages.md, "Estimated device time"): its work counted
// from the kernel IR (htp/device_estimate.hpp) and a roofline at the a2a3 profile's peak rates, written
// into the package as codegen/pto/kernel_costs.json (htp.pto.kernel_costs.v1) for the a2a3sim binding.
#pragma once

#include <nlohmann/json.hpp>

#include <htp/device_estimate.hpp>

#include "hardware_profile.hpp"
#include "kernel_ir.hpp"
#include "package_builder.hpp"

namespace ptobe {

/// The work of one call of `k`.
htp::KernelWork kernel_work(const Kernel &k);

/// codegen/pto/kernel_costs.json: the profile's numbers with their sources, and per kernel (by name) its
/// func_id, core type, work and estimate.
nlohmann::json kernel_costs_json(const BuiltPackage &p, const HardwareProfile &hw);

}  // namespace ptobe
