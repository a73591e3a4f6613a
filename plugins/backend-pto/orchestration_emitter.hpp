// Emits orchestration sources (kernels/orchestration/<entry>.cpp) for pto-runtime: WSP task graphs
// (loops and branches over runtime tensors, views per task, dependencies from argument directions, and
// explicit ones from a write to the earlier reads it overwrites, which pto-runtime does not track),
// CSP programs (channels as bounded rings of runtime-owned slots) and standalone kernels.
#pragma once

#include <set>

#include <htp/layout_signatures.hpp>

#include <htp/wsp_task_graph.hpp>

#include "csp_lowering.hpp"
#include "package_model.hpp"

namespace ptobe {

/// The entry of workload `w` (of wsp.task_graph, read by the SDK: htp/wsp_task_graph.hpp); throws IrError.
EntryUnit emit_workload_entry(const htp::WspWorkload &w, const KernelIndex &kernels, const Origin &origin,
                              const htp::LayoutSignatures *layouts = nullptr);

/// The kernels the tasks of `w` run `repeat` times under its schedule's tile(axis, f) directives:
/// copies of the launched kernels of `kernels` named `<kernel>__x<runs>`; throws IrError (code
/// pto.schedule-tile) for a tiled loop backend-pto cannot group.
std::vector<Kernel> repeated_kernels(const htp::WspWorkload &w, const std::vector<Kernel> &kernels);
/// The kernels `w` launches outside every tiled loop (once per task).
std::set<std::string> untiled_launches(const htp::WspWorkload &w);

/// Why backend-pto cannot group `w`'s iterations as its tile(...) directives ask (a remainder on a variable
/// that is not a loop's last, a loop holding more than launches, ...), at the loop; nullopt when it can.
std::optional<Problem> untileable(const htp::WspWorkload &w);

/// The entry of CSP program `p` lowered by lower_csp_program; throws IrError.
EntryUnit emit_csp_entry(const CspProgram &p, const KernelIndex &kernels, const Origin &origin);

/// The entry of a kernel compiled on its own: one task with the whole tensors, or, for a kernel mapped over a
/// mesh with dist layouts (`layouts` is its layout.signatures function), one task per core coordinate on
/// its shards.
EntryUnit emit_kernel_entry(const KernelUnit &k, const Origin &origin, const htp::LayoutFunction *layouts = nullptr);

}  // namespace ptobe
