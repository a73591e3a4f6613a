// Assembles the pto-runtime package from the module attributes: kernels (tile.kernels plus the
// per-iteration kernels of CSP processes) with func_ids, entries (workloads, CSP programs, or each
// kernel when there are neither), their sources, kernel_config.py, kernel_registry.json and the
// htp.entrypoints document.
#pragma once

#include <optional>

#include <htp/layout_signatures.hpp>
#include <string>
#include <utility>
#include <vector>

#include <htp/csp_graph.hpp>
#include <htp/wsp_task_graph.hpp>

#include "hardware_profile.hpp"
#include "package_model.hpp"

namespace ptobe {

/// The module attributes the backend reads, as the SDK reads them (htp/tile_kernels.hpp,
/// htp/wsp_task_graph.hpp, htp/csp_graph.hpp); none when absent.
struct PackageInputs {
  std::optional<htp::TileKernels> tile_kernels;
  std::optional<htp::WspTaskGraph> task_graph;
  std::optional<htp::CspGraph> csp_graph;
  Origin origin;
  /// layout.signatures: a kernel entry with a mapping and dist layouts becomes one task per core coordinate.
  std::optional<htp::LayoutSignatures> layouts;
};

/// The emitted package as data.
struct BuiltPackage {
  std::vector<KernelUnit> kernels;
  std::vector<EntryUnit> entries;
  std::vector<Problem> warnings;  ///< Directives not applied (the program still runs), reported by pto.legalize.
};

/// Builds the package; problems (with spans) are appended to `problems` and an empty package returned.
BuiltPackage build_package(const PackageInputs &in, const HardwareProfile &hw, std::vector<Problem> &problems);

/// Every file of the package, relative to codegen/pto/, in a stable order.
std::vector<std::pair<std::string, std::string>> package_files(const BuiltPackage &p, const Origin &origin);

/// The htp.entrypoints document (docs/ir-contracts.md §8).
json entrypoints_json(const BuiltPackage &p);

/// kernel_config.py for the pto-runtime tools.
std::string kernel_config_py(const BuiltPackage &p, const Origin &origin);

/// kernel_registry.json (htp.pto.kernel_registry.v1, docs/backends/pto-sim.md §1).
json kernel_registry(const BuiltPackage &p);

}  // namespace ptobe
