// A kernel entry seen as a workload: one launch of the kernel on its whole tensors, with its runtime
// scalars passed through. Backends whose task-graph machinery does more than their kernel-entry path
// (backend-pto splits a kernel mixing cube and vector work into parts; backend-aie multiplexes a core's
// objects through packed FIFOs) give a kernel entry that machinery by planning this workload instead.
#pragma once

#include <string>

#include <htp/csp_graph.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

namespace htp {

/// The workload named like `kernel` that launches it once (task "t0"): a parameter per tensor and scalar
/// parameter of the kernel (compile-time parameters stay the kernel's), each tensor bound whole.
inline WspWorkload single_launch_workload(const TileKernel &kernel) {
  WspWorkload w;
  w.name = kernel.name;
  w.span = kernel.span;
  WspNode task;
  task.kind = "task";
  task.id = "t0";
  task.kernel = kernel.name;
  task.span = kernel.span;
  for (const TileParam &p : kernel.params) {
    if (p.type.is_constexpr()) continue;
    WspType type{p.type.kind, {}, p.type.dtype};
    WspArg arg;
    arg.param = p.name;
    if (p.type.is_tensor()) {
      for (int64_t d : p.type.shape) type.shape.push_back(IrDim{d, {}});
      arg.tensor = p.name;
      arg.dir = p.dir;
      arg.offset.assign(p.type.shape.size(), nlohmann::json(0));
      arg.shape = p.type.shape;
      if (p.dir != "out") task.reads.push_back(p.name);
      if (p.dir != "in") task.writes.push_back(p.name);
    } else {
      arg.scalar = nlohmann::json{{"param", p.name}};
    }
    w.params.push_back(WspParam{p.name, p.dir, std::move(type)});
    task.args.push_back(std::move(arg));
  }
  w.body.push_back(std::move(task));
  return w;
}

/// Records view argument `a` among the reads and the writes of task `t` (an InOut view: both).
inline void record_view(WspNode &t, const WspArg &a) {
  if (a.dir != "out") t.reads.push_back(*a.tensor);
  if (a.dir != "in") t.writes.push_back(*a.tensor);
}

/// The launch of `part`, one of the kernels a kernel was cut into, in place of launch `n` of that kernel:
/// n's arguments for the part's parameters, the tensors they view among its reads and writes, id `id`.
/// The hand-off arguments between the parts are the caller's to add (with record_view).
inline WspNode part_launch(const WspNode &n, const TileKernel &part, std::string id) {
  WspNode t = n;
  t.id = std::move(id);
  t.kernel = part.name;
  t.args.clear();
  t.reads.clear();
  t.writes.clear();
  for (const WspArg &a : n.args)
    if (part.param(a.param)) {
      t.args.push_back(a);
      if (a.tensor) record_view(t, a);
    }
  return t;
}

/// Adds intermediate tensor `name` of `shape` to `w`, unless `w` has one of that name.
inline void add_intermediate(WspWorkload &w, const std::string &name, const std::string &dtype,
                             const std::vector<int64_t> &shape) {
  for (const WspIntermediate &i : w.intermediates)
    if (i.name == name) return;
  WspIntermediate im;
  im.name = name;
  im.type.kind = "tensor";
  im.type.dtype = dtype;
  for (int64_t d : shape) im.type.shape.push_back(IrDim{d, {}});
  w.intermediates.push_back(std::move(im));
}

/// Every process function of `csp` (not a pipe stage) in `kernels` with its loads before its loop moved into
/// it (sink_loads_into_loop): a process that reads a weight once before `for t in consume(ch):` becomes one
/// loop, the form both backends turn into tasks or a core loop.
inline void sink_process_loads(TileKernels &kernels, const CspGraph &csp) {
  for (const CspProgram &program : csp.programs)
    for (const CspProcess &proc : program.processes)
      if (!proc.stage)
        for (TileKernel &k : kernels.kernels)
          if (k.name == proc.function) k = sink_loads_into_loop(k);
}

}  // namespace htp
