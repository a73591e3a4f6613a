// Splitting a kernel that mixes cube and vector work (docs/backends/pto.md, "Mixed kernels"): a kernel
// runs on one core type on Ascend, so a kernel whose statements do matmuls and vector work is cut, between
// statements, into parts that each run on one core type (`<kernel>__<i>_aic` / `_aiv`); the tiles one part
// computes and a later part reads are stored to hand-off tensors and loaded back. Every launch of the
// kernel in a workload becomes its parts, in order, as one ordered group; launch instance i uses slot i of
// one workload intermediate per handed-off register (`_<kernel>_<register>`, [launches, rows, cols]).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <htp/layout_signatures.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

#include "legality.hpp"

namespace ptobe {

/// `op` without its dialect prefix: "tile.for" and "pto.for" are "for".
inline std::string bare_op(const std::string &op) {
  for (const char *p : {"tile.", "pto."})
    if (op.rfind(p, 0) == 0) return op.substr(std::string(p).size());
  return op;
}

/// Splits the mixed kernels `task_graph` launches, in place: their parts replace them in `kernels` and
/// their launches in the task graph. A kernel entry that mixes them becomes a workload of that name
/// launching it once (the task graph is created when the module had none). The parts of a kernel mapped
/// over a mesh are mapped kernels too (their layouts added to `layouts`), each core handing its registers on
/// through its own tile of a hand-off tensor (htp::core_slots). A mix it cannot split (within one loop
/// statement, through a scalar, under a loop of runtime extent, mapped over more than two mesh axes) is a
/// problem at its span.
void split_core_types(htp::TileKernels &kernels, std::optional<htp::WspTaskGraph> &task_graph,
                      htp::LayoutSignatures *layouts, std::vector<Problem> &problems);

/// Honours the schedules' buffer(tensor, space) directives: "GM" keeps the tensor where it is; "UB", "L1"
/// or "local" keep an intermediate in the memory of the core that runs the two launches passing it, by
/// fusing them (htp/fuse.hpp). The fused kernel must run on one core type whose memory the space names
/// (UB: AIV, L1: AIC, local: either); anything else is a problem at the schedule.
void fuse_buffered(htp::TileKernels &kernels, htp::WspTaskGraph &tasks, std::vector<Problem> &problems);

}  // namespace ptobe
