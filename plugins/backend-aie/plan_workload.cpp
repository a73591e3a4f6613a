// Front-end for WSP workloads: the parallel grid of the outer `P(...)` loop is placed on compute tiles
// (one core per grid point, or per block of f points along an axis under the schedule's tile(axis, f));
// an inner `P.seq(n)` loop becomes the core loop (n iterations, one kernel call each, for each point of
// the core's block); every task argument's tensor view per (grid point, iteration) is what its FIFO
// moves, through FIFOs of the schedule's pipeline(n) depth.
#include <algorithm>
#include <functional>
#include <map>

#include "entry_plan.hpp"
#include "kernel_emitter.hpp"

namespace htp::aie {

namespace {

struct Shape {
  std::vector<std::string> grid_vars;
  std::vector<int64_t> grid;     ///< cores per grid axis
  std::vector<int64_t> block;    ///< tile(axis, f): consecutive grid points per core along each axis (1: none)
  std::string seq_var;
  int64_t seq = 1;               ///< P.seq iterations per grid point
  int64_t iterations = 1;        ///< kernel calls per core: the block's points times the P.seq iterations
  const htp::WspNode *task = nullptr;

  /// Binds the grid and P.seq variables of iteration t of the core at grid coordinate m (blocked points
  /// outer, the P.seq iteration fastest).
  void bind(ExprEnv &env, const std::vector<int64_t> &m, int64_t t) const {
    if (!seq_var.empty()) env.vars[seq_var] = t % seq;
    int64_t b = t / seq;
    for (size_t i = grid.size(); i-- > 0;) {
      if (i < grid_vars.size()) env.vars[grid_vars[i]] = m[i] * block[i] + b % block[i];
      b /= block[i];
    }
  }
};

/// A view of a workload tensor one task moves: the core's name, its iteration, the view and the kernel
/// parameter it is passed as.
struct TaskView {
  const std::string *core;
  int64_t iteration;
  const View *view;
  const std::string *param;
};

/// A task of `plan` reading elements of a tensor that another of its tasks writes (aie.read-after-write), or
/// that it writes itself after loading them (aie.alias): the spatial mapping streams each core's inputs ahead
/// of its outputs while all cores run at once, so such a read would see the tensor's old values. The problem's
/// code and message (no span).
std::optional<Problem> read_write_overlap(const EntryPlan &plan, const htp::TileKernel &kernel,
                                          const std::vector<std::string> &stream_params) {
  std::map<std::string, std::vector<TaskView>> reads, writes;
  for (const CorePlan &core : plan.cores)
    for (const PortPlan &port : core.ports) {
      if (port.kind != PortPlan::Kind::Stream) continue;
      const StreamPlan &sp = plan.streams[port.stream];
      auto &into = sp.in ? reads[sp.tensor] : writes[sp.tensor];
      for (size_t t = 0; t < sp.views.size(); ++t)
        into.push_back({&core.name, static_cast<int64_t>(t), &sp.views[t], &stream_params[port.stream]});
    }
  for (auto &[tensor, ws] : writes) {
    auto it = reads.find(tensor);
    if (it == reads.end() || ws.empty() || ws.front().view->offset.empty()) continue;
    // Writes by their first offset: a read meets only those starting less than the longest write before its end.
    std::sort(ws.begin(), ws.end(), [](const TaskView &a, const TaskView &b) { return a.view->offset[0] < b.view->offset[0]; });
    int64_t longest = 0;
    for (const TaskView &w : ws) longest = std::max(longest, w.view->shape.empty() ? int64_t{0} : w.view->shape[0]);
    for (const TaskView &r : it->second) {
      if (r.view->offset.empty() || r.view->shape.empty()) continue;
      auto from = std::lower_bound(ws.begin(), ws.end(), r.view->offset[0] - longest + 1,
                                   [](const TaskView &w, int64_t v) { return w.view->offset[0] < v; });
      for (auto w = from; w != ws.end() && w->view->offset[0] < r.view->offset[0] + r.view->shape[0]; ++w) {
        if (!overlap(*r.view, *w->view)) continue;
        if (w->core != r.core || w->iteration != r.iteration)
          return Problem{"aie.read-after-write",
                         "the task of core '" + *r.core + "' at iteration " + std::to_string(r.iteration) +
                             " reads elements of '" + tensor + "' that the task of core '" + *w->core +
                             "' at iteration " + std::to_string(w->iteration) +
                             " writes; the cores stream their inputs ahead of their outputs, so the read would see "
                             "the old values",
                         Json()};
        // One task passing overlapping views as an input and an output: its loads see the old values, which
        // is what the kernel means only when it loads the input before it stores the output.
        if (loads_after_storing(kernel, *r.param, *w->param))
          return Problem{"aie.alias", aliasing_views(kernel, tensor, *r.param, *w->param), Json()};
      }
    }
  }
  return std::nullopt;
}

bool fail(std::vector<Problem> &problems, const std::string &code, const std::string &message, const Json &span) {
  problems.push_back({code, message, span});
  return false;
}

/// Recognises `for i,... in P(...): [for s in P.seq(n):] task` and evaluates its extents.
bool read_shape(const htp::WspWorkload &w, const ExprEnv &env, Shape &s, std::vector<Problem> &problems) {
  const std::string &name = w.name;
  const std::vector<htp::WspNode> &body = w.body;
  const Json wspan = span_json(w.span);
  const std::string expected = "workload '" + name + "' must be `for ... in P(...):` around one kernel launch "
                               "(optionally inside one `P.seq(n)` loop) to map onto AIE cores";
  if (body.size() != 1 || !body[0].is_loop() || body[0].domain.type != "dense")
    return fail(problems, "aie.workload-shape", expected, wspan);
  const htp::WspNode &grid = body[0];
  s.grid_vars = grid.vars;
  for (const Json &e : grid.domain.extents) {
    std::string why;
    auto v = eval_int(e, env, &why);
    if (!v) return fail(problems, "aie.dynamic-grid", "the grid of workload '" + name + "' must be static on AIE: " + why, span_json(grid.span));
    s.grid.push_back(*v);
  }
  s.block.assign(s.grid.size(), 1);
  if (w.schedule.tile)  // tile(axis, f): f consecutive points of a grid axis run on one core, one after another
    for (const htp::WspTileFactor &t : *w.schedule.tile)
      for (size_t i = 0; i < s.grid_vars.size(); ++i) {
        if (s.grid_vars[i] != t.axis || t.factor == 1) continue;
        if (s.grid[i] % t.factor != 0)
          return fail(problems, "aie.schedule-tile",
                      "tile(\"" + t.axis + "\", " + std::to_string(t.factor) + ") of workload '" + name + "': axis '" +
                          t.axis + "' has extent " + std::to_string(s.grid[i]) + ", not a multiple of " +
                          std::to_string(t.factor),
                      w.schedule.span ? span_json(*w.schedule.span) : span_json(grid.span));
        s.grid[i] /= t.factor;
        s.block[i] = t.factor;
      }
  const std::vector<htp::WspNode> *inner = &grid.body;
  if (inner->size() == 1 && (*inner)[0].is_loop()) {
    const htp::WspNode &seq = (*inner)[0];
    if (seq.domain.type != "seq") return fail(problems, "aie.workload-shape", expected, span_json(seq.span));
    std::string why;
    auto n = eval_int(seq.domain.extent, env, &why);
    if (!n) return fail(problems, "aie.dynamic-grid", "the P.seq extent of workload '" + name + "' must be static on AIE: " + why, span_json(seq.span));
    s.seq_var = seq.vars[0];
    s.seq = *n;
    inner = &seq.body;
  }
  s.iterations = s.seq * checked_product(s.block).value_or(1);
  if (inner->size() != 1 || !(*inner)[0].is_task()) return fail(problems, "aie.workload-shape", expected, wspan);
  s.task = &(*inner)[0];
  return true;
}

std::vector<int64_t> grid_coord(int64_t l, const std::vector<int64_t> &grid) {
  std::vector<int64_t> m(grid.size());
  for (size_t i = grid.size(); i-- > 0;) {
    m[i] = l % grid[i];
    l /= grid[i];
  }
  return m;
}

}  // namespace

std::optional<EntryPlan> plan_workload_entry(const htp::WspWorkload &w, const htp::TileKernels &kernels,
                                             const DeviceProfile &device, std::vector<Problem> &problems) {
  const std::string &name = w.name;
  const Json wspan = span_json(w.span);
  EntryPlan plan{name, "workload", wspan};
  for (const htp::WspParam &p : w.params) {
    auto rp = runtime_param(p);
    if (!rp) {
      problems.push_back({"aie.runtime-scalar", "parameter '" + p.name + "' of workload '" + name +
                                                    "' is not a static tensor; AIE designs take static tensors", wspan});
      return std::nullopt;
    }
    plan.params.push_back(*rp);
  }
  Shape s;
  if (!read_shape(w, ExprEnv{}, s, problems)) return std::nullopt;
  plan.fifo_depth = w.schedule.pipeline_depth;
  const int64_t ncores = checked_product(s.grid).value_or(INT64_MAX);
  if (ncores > device.compute_tiles()) {
    problems.push_back({"aie.grid-too-large", "the parallel grid of workload '" + name + "' " + Json(s.grid).dump() +
                                                  " needs " + (ncores == INT64_MAX ? std::string("more than 2**63") : std::to_string(ncores)) + " cores, but device " +
                                                  device.describe() + " has " + std::to_string(device.compute_tiles()),
                        span_json(w.body[0].span)});
    return std::nullopt;
  }
  const htp::WspNode &task = *s.task;
  const Json tspan = span_json(task.span);
  const std::string &kname = task.kernel;
  const htp::TileKernel *kernel = kernels.find(kname);
  if (!kernel) {
    problems.push_back({"aie.kernel", "workload '" + name + "' launches '" + kname + "', which tile.kernels does not define", tspan});
    return std::nullopt;
  }
  if (kernel->mapping && checked_product(*kernel->mapping).value_or(INT64_MAX) > 1) {
    // Its own mesh is a design of its own (plan_kernel.cpp): the host runs it once per task.
    problems.push_back({"aie.workload-shape", "workload '" + name + "' launches '" + kname + "', which is mapped over a " +
                                                  Json(*kernel->mapping).dump() + " mesh of cores of its own",
                        tspan});
    return std::nullopt;
  }
  // The external kernel: the tile kernel with its tensor parameters as pointers to the task's views.
  KernelPlan kp;
  const std::string sym = kernel_symbol(kname);
  kp.function = sym;
  kp.constants = constexpr_env(*kernel);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const htp::TileParam &p : kernel->params) {
    const std::string &pn = p.name;
    if (p.type.is_tensor()) {
      shapes[pn] = p.body_shape();
      kp.params.push_back({"p_" + pn, KernelArg{true, shapes[pn], p.type.dtype}});
    } else if (p.type.is_scalar()) {
      kp.scalars[pn] = "p_" + pn;
      kp.params.push_back({"p_" + pn, KernelArg{false, {}, p.type.dtype}});
    }
  }
  kp.access = [&](const htp::TileOp &op, int) -> std::optional<TensorAccess> {
    const std::string t = (op.is("load") ? op.src : op.dst).value_or("");
    const htp::TileParam *p = kernel->param(t);
    if (!shapes.count(t) || !p) return std::nullopt;
    return object_access(*kernel, op, "p_" + t, shapes[t], p->dir);
  };
  kp.body = kernel->body;
  std::string error;
  auto emitted = emit_kernel(*kernel, kp, &error);
  if (!emitted) {
    problems.push_back({"aie.kernel", "kernel '" + kname + "': " + error, span_json(kernel->span)});
    return std::nullopt;
  }
  KernelFunc kf{sym, "kernels/" + sym + ".cc", sym + ".o", {}, emitted->locals_bytes, emitted->work};
  for (const auto &[n, a] : kp.params) kf.args.push_back(a);
  plan.kernels.push_back(kf);
  plan.sources[sym] = emitted->source;

  std::vector<std::string> stream_params;  // the kernel parameter of each stream
  for (int64_t l = 0; l < ncores; ++l) {
    auto m = grid_coord(l, s.grid);
    ExprEnv env;
    std::string label;
    for (size_t i = 0; i < m.size() && i < s.grid_vars.size(); ++i)
      label += (label.empty() ? "" : ", ") + (s.block[i] == 1 ? std::to_string(m[i])
                                                                : std::to_string(m[i] * s.block[i]) + ":" +
                                                                      std::to_string((m[i] + 1) * s.block[i]));
    s.bind(env, m, 0);
    CorePlan core{kname + "[" + label + "]", sym, s.iterations, {}, tspan};
    for (const htp::TileParam &kparam : kernel->params) {
      const std::string &pn = kparam.name;
      if (kparam.type.is_constexpr()) continue;
      const htp::WspArg *arg = nullptr;
      for (const htp::WspArg &a : task.args)
        if (a.param == pn) arg = &a;
      if (!arg) {
        problems.push_back({"aie.task", "the launch of '" + kname + "' passes nothing for parameter '" + pn + "'", tspan});
        return std::nullopt;
      }
      if (arg->is_scalar()) {
        // A scalar is a constant per core, or start + step * iteration along the core's loop.
        std::vector<int64_t> values;
        std::string why;
        for (int64_t t = 0; t < s.iterations; ++t) {
          s.bind(env, m, t);
          auto v = eval_int(*arg->scalar, env, &why);
          if (!v) {
            problems.push_back({"aie.runtime-scalar", "scalar argument '" + pn + "' of '" + kname + "' must be known at compile time on AIE: " + why, tspan});
            return std::nullopt;
          }
          values.push_back(*v);
        }
        const std::string dt = kparam.type.dtype;
        if (values.size() < 2 || values[1] == values[0]) {
          if (std::any_of(values.begin(), values.end(), [&](int64_t v) { return v != values[0]; })) {
            problems.push_back({"aie.runtime-scalar", "scalar argument '" + pn + "' of '" + kname + "' is not affine in the core's iteration", tspan});
            return std::nullopt;
          }
          core.ports.push_back({PortPlan::Kind::Const, 0, "", Json(values[0]), dt});
        } else {
          const int64_t step = values[1] - values[0];
          for (size_t t = 2; t < values.size(); ++t)
            if (values[t] - values[t - 1] != step) {
              problems.push_back({"aie.runtime-scalar", "scalar argument '" + pn + "' of '" + kname + "' is not affine in the core's iteration", tspan});
              return std::nullopt;
            }
          core.ports.push_back({PortPlan::Kind::Iteration, 0, "", Json(), dt, values[0], step});
        }
        continue;
      }
      if (arg->dir == "inout") {
        problems.push_back({"aie.inout", "InOut argument '" + pn + "' of '" + kname +
                                             "': AIE object FIFOs move data one way; split it into In and Out", tspan});
        return std::nullopt;
      }
      StreamPlan sp{arg->tensor.value_or(""), arg->dir == "in", {}, tspan};
      const RuntimeParam *rp = nullptr;
      for (const auto &p : plan.params)
        if (p.name == sp.tensor) rp = &p;
      if (!check_stream_size("the view of '" + sp.tensor + "' passed to '" + kname + "'",
                             arg->shape, rp ? rp->dtype : "f32", s.iterations, device,
                             tspan, problems))
        return std::nullopt;
      for (int64_t t = 0; t < s.iterations; ++t) {
        s.bind(env, m, t);
        View v;
        v.shape = arg->shape;
        for (const Json &e : arg->offset) {
          std::string why;
          auto o = eval_int(e, env, &why);
          if (!o) {
            problems.push_back({"aie.dynamic-view", "the view of '" + sp.tensor + "' passed to '" + kname + "' must be static on AIE: " + why, tspan});
            return std::nullopt;
          }
          v.offset.push_back(*o);
        }
        sp.views.push_back(std::move(v));
      }
      core.ports.push_back({PortPlan::Kind::Stream, plan.streams.size()});
      plan.streams.push_back(std::move(sp));
      stream_params.push_back(pn);
    }
    plan.cores.push_back(std::move(core));
  }
  // (aie.read-after-write runs host-orchestrated, in task order; aie.alias is an error there too)
  if (auto clash = read_write_overlap(plan, *kernel, stream_params)) {
    problems.push_back({clash->code, "workload '" + name + "': " + clash->message, tspan});
    return std::nullopt;
  }
  return plan;
}

}  // namespace htp::aie
