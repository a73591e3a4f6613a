// Shared pieces of the front-ends and the choice of entrypoints.
#include <algorithm>
#include <functional>
#include <set>

#include "entry_plan.hpp"

namespace htp::aie {

std::optional<int64_t> checked_product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (s < 0 || __builtin_mul_overflow(n, s, &n)) return std::nullopt;
  return n;
}

bool check_stream_size(const std::string &what, const std::vector<int64_t> &shape, const std::string &dtype,
                       int64_t iterations, const DeviceProfile &device, const Json &span,
                       std::vector<Problem> &problems) {
  const int64_t cap = device.compute.memory_bytes;
  auto n = checked_product(shape);
  int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, dtype_bytes(dtype), &bytes) || bytes > cap) {
    problems.push_back({"aie.validate.memory",
                        what + " is a " + Json(shape).dump() + " " + dtype + " object of " +
                            (n && bytes > 0 ? std::to_string(bytes) + " bytes" : std::string("more than 2**63 bytes")) +
                            ", but a compute tile of " + device.name + " has " + std::to_string(cap) +
                            " bytes of data memory",
                        span});
    return false;
  }
  int64_t total = 0;
  if (iterations < 0 || __builtin_mul_overflow(*n, iterations, &total) || total > kMaxStreamElements) {
    problems.push_back({"aie.limit.stream",
                        what + " moves " + std::to_string(iterations) + " objects of " + std::to_string(*n) +
                            " elements; the AIE mapper lays out at most " + std::to_string(kMaxStreamElements) +
                            " elements per stream",
                        span});
    return false;
  }
  return true;
}

namespace {

/// A tensor parameter of static shape as a runtime parameter; nullopt for anything else.
template <class Param> std::optional<RuntimeParam> static_tensor(const Param &param) {
  if (!param.type.is_tensor()) return std::nullopt;
  RuntimeParam p{param.name, {}, param.type.dtype, param.dir};
  for (const htp::IrDim &d : param.type.shape) {
    if (d.is_symbol()) return std::nullopt;
    p.shape.push_back(d.size);
  }
  return p;
}

}  // namespace

std::optional<RuntimeParam> runtime_param(const htp::WspParam &param) { return static_tensor(param); }

std::optional<RuntimeParam> runtime_param(const htp::CspParam &param) { return static_tensor(param); }

std::optional<RuntimeParam> runtime_param(const htp::TileParam &param) {
  if (!param.type.is_tensor()) return std::nullopt;
  return RuntimeParam{param.name, param.type.shape, param.type.dtype, param.dir};
}

ExprEnv constexpr_env(const htp::TileKernel &kernel) {
  ExprEnv env;
  for (const htp::TileParam &p : kernel.params)
    if (p.type.is_constexpr()) env.params[p.name] = p.type.value;
  return env;
}

bool loads_after_storing(const htp::TileKernel &kernel, const std::string &in, const std::string &out) {
  struct Access {
    bool store;
    std::vector<const htp::TileOp *> loops;  // enclosing loops, outermost first
    const htp::TileOp *op;
  };
  std::vector<Access> accesses;  // in program order
  std::vector<const htp::TileOp *> loops;
  std::function<void(const std::vector<htp::TileOp> &)> walk = [&](const std::vector<htp::TileOp> &ops) {
    for (const htp::TileOp &o : ops) {
      if (o.is("load") && o.src == in) accesses.push_back({false, loops, &o});
      if (o.is("store") && o.dst == out) accesses.push_back({true, loops, &o});
      if (o.is("for")) loops.push_back(&o);
      walk(o.body);
      if (o.is("for")) loops.pop_back();
      walk(o.then_body);
      walk(o.else_body);
    }
  };
  walk(kernel.body);
  for (size_t i = 0; i < accesses.size(); ++i)
    for (size_t j = 0; j < accesses.size(); ++j) {
      const Access &st = accesses[i], &ld = accesses[j];
      if (!st.store || ld.store) continue;
      if (i < j) return true;
      const bool shared_loop = std::any_of(st.loops.begin(), st.loops.end(), [&](const htp::TileOp *l) {
        return std::find(ld.loops.begin(), ld.loops.end(), l) != ld.loops.end();
      });
      if (shared_loop && st.op->offset != ld.op->offset) return true;
    }
  return false;
}

std::string aliasing_views(const htp::TileKernel &kernel, const std::string &tensor, const std::string &in,
                           const std::string &out) {
  auto dir = [&](const std::string &param, const char *otherwise) {
    const htp::TileParam *p = kernel.param(param);
    return std::string(p && p->dir == "inout" ? "InOut" : otherwise);
  };
  return aliasing_reason(kernel.name, tensor, in, dir(in, "In"), out, dir(out, "Out"));
}

std::vector<std::pair<std::string, std::string>> load_after_store_pairs(const htp::TileKernel &kernel) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const htp::TileParam &r : kernel.params)
    for (const htp::TileParam &w : kernel.params)
      if (&r != &w && r.type.is_tensor() && w.type.is_tensor() && r.dir != "out" && w.dir != "in" &&
          loads_after_storing(kernel, r.name, w.name))
        out.emplace_back(r.name, w.name);
  return out;
}

std::optional<AliasedLaunch> aliased_launch(const htp::WspWorkload &w,
                                            const std::function<const htp::TileKernel *(const std::string &)> &kernel_of) {
  std::optional<AliasedLaunch> found;
  htp::for_each_node(w.body, [&](const htp::WspNode &n) {
    const htp::TileKernel *k = found || n.kernel.empty() ? nullptr : kernel_of(n.kernel);
    if (!k) return;
    for (const htp::WspArg &in : n.args)
      for (const htp::WspArg &out : n.args)
        if (!found && surely_overlapping(in, out) && loads_after_storing(*k, in.param, out.param))
          found = AliasedLaunch{&n, k, &in, &out};
  });
  return found;
}

std::vector<EntryPlan> plan_entries(const ProgramDocs &docs, const DeviceProfile &device, std::vector<Problem> &problems,
                                    std::vector<OrchestrationPlan> *orchestrated) {
  std::vector<EntryPlan> out;
  auto add = [&](std::optional<EntryPlan> p) {
    if (p) out.push_back(std::move(*p));
  };
  // An orchestrated entry: its kernels' task designs are planned with the rest, its plan kept aside.
  auto adopt = [&](std::optional<OrchestrationPlan> o, std::string reason) {
    if (!o) return;
    o->reason = std::move(reason);
    for (EntryPlan &t : o->tasks) out.push_back(std::move(t));
    o->tasks.clear();
    orchestrated->push_back(std::move(*o));
  };
  for (const htp::CspProgram &program : docs.csp.programs) {
    if (program.origin == std::optional<std::string>("wsp.pipe") && orchestrated) {  // a workload's P.pipe
      adopt(plan_orchestrated_pipe(program, docs, device, problems),
            "a workload's P.pipe over channels is host-orchestrated");
      continue;
    }
    // The spatial mapping first (a core per process replica); a program with more replicas than cores is
    // orchestrated by the host when it can be (map_pass does the same for designs that do not fit a core).
    std::vector<Problem> spatial;
    auto p = plan_csp_entry(program, docs.kernels, device, spatial);
    // (or whose loops run to bounds known only at run time: aie.csp-shape; or that reads back what it stored:
    // aie.csp-order; or that moves a view at an offset known only at run time, a KV-cache append at `pos`:
    // aie.dynamic-view)
    const bool too_many = std::any_of(spatial.begin(), spatial.end(), [](const Problem &x) {
      return x.code == "aie.grid-too-large" || x.code == "aie.csp-shape" || x.code == "aie.csp-order" ||
             x.code == "aie.dynamic-view";
    });
    if (!p && too_many && orchestrated) {
      std::string why;
      if (auto o = plan_orchestrated_program(program, docs, device, why)) {
        o->noun = "CSP program";
        adopt(std::move(o), spatial.front().message);
        continue;
      }
      spatial.front().message += " (nor can the host orchestrate it: " + why + ")";
    }
    problems.insert(problems.end(), spatial.begin(), spatial.end());
    add(std::move(p));
  }
  for (const htp::WspWorkload &w : docs.tasks.workloads) {
    // The spatial mapping first (one core per grid point, FIFOs between the host and the cores); a
    // workload it does not take for its shape or its runtime data is orchestrated by the host.
    std::vector<Problem> spatial;
    auto p = plan_workload_entry(w, docs.kernels, device, spatial);
    const bool reshape = std::any_of(spatial.begin(), spatial.end(), [](const Problem &x) {
      return x.code == "aie.workload-shape" || x.code == "aie.dynamic-grid" || x.code == "aie.dynamic-view" ||
             x.code == "aie.runtime-scalar" || x.code == "aie.grid-too-large" || x.code == "aie.inout" ||
             x.code == "aie.read-after-write" ||  // (the host runs the tasks in order)
             x.code == "aie.schedule-tile";  // (a core per block of f points: the last block would be short)
    });
    if (!p && reshape && orchestrated) {
      adopt(plan_orchestrated_workload(w, docs, device, problems), spatial.front().message);
      continue;
    }
    problems.insert(problems.end(), spatial.begin(), spatial.end());
    add(std::move(p));
  }
  const auto launched = htp::launched_kernels(docs.tasks, docs.csp);  // (not entry points of their own)
  for (const htp::TileKernel &k : docs.kernels.kernels)
    if (k.kind == "kernel" && !launched.count(k.name)) add(plan_kernel_entry(k, docs.layouts, device, problems));
  return out;
}

}  // namespace htp::aie
