#include "package_builder.hpp"

#include <cctype>
#include <cstdio>
#include <set>

#include <htp/kernel_entry.hpp>
#include <htp/mem_placement.hpp>

#include "csp_lowering.hpp"
#include "kernel_emitter.hpp"
#include "orchestration_emitter.hpp"
#include "runtime_api.hpp"
#include "split_core_types.hpp"

namespace ptobe {

namespace {

void add_problem(std::vector<Problem> &problems, const IrError &e) {
  problems.push_back({e.code(), e.what(), e.span()});
}

/// True when `l`'s mem facet states the layout backend-pto gives the tensor anyway: row-major strides of
/// the whole tensor in global memory or, sharded along its rows, of each core's part, which is then a
/// contiguous row-major block of the whole (`Layout.axe(shard=[(2, 1, "mesh.x"), (32, 32, "m"), (32, 1,
/// "m")])` on a [64, 32] tensor).
bool row_major_in_global_memory(const htp::Layout &l, const std::vector<int64_t> &global_shape) {
  const std::vector<int64_t> &local = l.local_shape ? *l.local_shape : global_shape;
  if (l.space != "GM" || local.size() != global_shape.size() || !l.mem.is_row_major(local)) return false;
  for (size_t d = 1; d < local.size(); ++d)
    if (local[d] != global_shape[d]) return false;
  return true;
}

/// The kernels to emit, legality-checked and planned, with func_ids in order.
/// The `mem` facets of the kernels' tensor parameters (layout.signatures) as Param::mem_extents/mem_strides:
/// element strides over the local shape (strides=, order=) or over a tiled layout's iters. backend-pto
/// lowers them for kernels compiled on their own, whose entry hands the caller's arrays to the binding to
/// stage; the rest is a problem at the layout's kernel (code pto.layout-mem).
void read_memory_layouts(std::vector<Kernel> &kernels, const htp::LayoutSignatures &layouts,
                         const std::set<std::string> &launched, std::vector<Problem> &problems) {
  for (Kernel &k : kernels) {
    const htp::LayoutFunction *f = layouts.function(k.name);
    if (!f) continue;
    for (Param &p : k.params) {
      const htp::Layout *l = p.is_tensor() ? f->param(p.name) : nullptr;
      if (!l || l->mem.is_default() || row_major_in_global_memory(*l, p.global_shape)) continue;
      const std::string what = "the memory layout of '" + p.name + "' of kernel '" + k.name + "' ";
      auto bad = [&](const std::string &why) { problems.push_back({"pto.layout-mem", what + why, k.span}); };
      if (!l->mem.swizzle.is_null() || !(l->mem.pack.is_null() || l->mem.pack == json(1)) || !l->mem.banks.empty()) {
        bad("swizzles, packs or banks it; backend-pto places elements by strides only");
        continue;
      }
      if (l->space != "GM" || !l->shard.empty()) {
        bad("is of a part of the tensor (space " + l->space + (l->shard.empty() ? "" : ", sharded") +
            "); backend-pto lays out whole tensors in global memory");
        continue;
      }
      if (launched.count(k.name)) {
        bad("is global memory's, but a workload launches the kernel with views of row-major tensors; compile the "
            "kernel on its own (its entry stages the arrays) or drop the layout");
        continue;
      }
      if (p.shape.size() != 2) {
        bad("is of a rank-" + std::to_string(p.shape.size()) + " tensor; backend-pto lays out matrices");
        continue;
      }
      std::optional<htp::MemPlacement> placement = htp::mem_placement(l->mem, p.shape);
      if (!placement) continue;
      // The layout must place every element once in [0, n): the staged buffer holds exactly the tensor.
      if (placement->strides.size() != placement->extents.size() || !htp::placement_offsets(*placement)) {
        bad("(strides " + json(placement->strides).dump() + " over " + json(placement->extents).dump() +
            ") does not place each element once; backend-pto stages dense layouts");
        continue;
      }
      p.mem_extents = std::move(placement->extents);
      p.mem_strides = std::move(placement->strides);
    }
  }
}

namespace {

/// The name of kernel `name` for pto-runtime, whose symbol names have at most 64 characters: the name itself,
/// or — longer, as generated names get (`<producer>__<consumer>` of a fused buffer, `<program>_<process>`,
/// `<kernel>__<i>_aic`) — its first 55 characters, '_' and 8 hex digits of an FNV-1a hash of the whole name;
/// another name of `taken` bumps the hash.
std::string runtime_kernel_name(const std::string &name, std::set<std::string> &taken) {
  std::string out = name;
  uint64_t h = rt::name_hash(name);
  while (out.size() > rt::kMaxSymbolLength || taken.count(out)) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
    out = name.substr(0, rt::kMaxSymbolLength - 9) + "_" + hex;
    ++h;
  }
  taken.insert(out);
  return out;
}

}  // namespace

std::vector<KernelUnit> plan_kernels(std::vector<Kernel> kernels, const HardwareProfile &hw,
                                     std::vector<Problem> &problems) {
  std::vector<KernelUnit> out;
  std::set<std::string> taken;  // runtime names
  for (const Kernel &k : kernels)
    if (k.kind == "kernel" && k.name.size() <= rt::kMaxSymbolLength) taken.insert(k.name);
  for (Kernel &k : kernels) {
    if (k.kind != "kernel") continue;
    std::vector<Problem> found = check_kernel(k, hw);
    if (!found.empty()) {
      problems.insert(problems.end(), found.begin(), found.end());
      continue;
    }
    KernelUnit u;
    u.plan = plan_memory(k, hw);
    u.func_id = static_cast<int>(out.size());
    u.runtime_name = k.name.size() <= rt::kMaxSymbolLength ? k.name : runtime_kernel_name(k.name, taken);
    u.path = rt::kernel_path(u.plan.core, u.runtime_name);
    u.kernel = std::move(k);
    out.push_back(std::move(u));
  }
  if (out.size() > static_cast<size_t>(rt::kMaxFuncId))
    problems.push_back({"pto.unsupported", "the package has " + std::to_string(out.size()) +
                                               " kernels; pto-runtime func_ids stop at 1024", {}});
  return out;
}

std::string upper(std::string s) {
  for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> signature(const Kernel &k) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < k.repeat; ++r)
    for (const Param *p : k.tensor_params()) out.push_back(p->dir);
  return out;
}

std::string py_string(const std::string &s) { return json(s).dump(); }

std::string py_list(const std::vector<std::string> &v, bool upper_case) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + py_string(upper_case ? upper(v[i]) : v[i]);
  return s + "]";
}

std::vector<std::string> entry_signature(const EntryUnit &e) {
  std::vector<std::string> out;
  for (const EntryParam &p : e.params)
    if (p.kind == "tensor") out.push_back(p.dir);
  return out;
}

json runtime_config(const BuiltPackage &p) {
  json sim = p.entries.empty() ? json::object() : p.entries.front().sim;
  json rc = {{"runtime", rt::kRuntimeVariant}, {"aicpu_thread_num", 2}};
  if (!sim.empty()) rc["sim"] = sim;
  return rc;
}

}  // namespace

BuiltPackage build_package(const PackageInputs &original, const HardwareProfile &hw, std::vector<Problem> &problems) {
  BuiltPackage pkg;
  std::vector<Kernel> kernels;
  std::map<std::string, std::vector<htp::TileParam>> process_carries;  // process function -> its carry tensors
  PackageInputs in = original;  // mixed cube/vector kernels are split into one-core-type parts first
  if (in.tile_kernels) {
    const size_t before = problems.size();
    if (in.csp_graph) {  // loads before a process loop move into it; straight-line code is one iteration
      std::vector<htp::TileKernel> around;  // statements before and after a process's loop: kernels of their own
      htp::for_each_process_function(*in.tile_kernels, *in.csp_graph, [&](htp::TileKernel &k) {
        k = htp::as_one_iteration(htp::sink_loads_into_loop(k));
        std::string why;
        if (auto cut = htp::cut_process(k, &why)) {
          k = std::move(cut->iteration);
          for (auto *x : {&cut->before, &cut->after})
            if (*x) around.push_back(std::move(**x));
          process_carries[k.name] = std::move(cut->carries);
        } else if (!why.empty()) {
          problems.push_back({"pto.csp", "process function '" + k.name + "': " + why, Span::from(k.span)});
        }
      });
      for (htp::TileKernel &k : around) in.tile_kernels->kernels.push_back(std::move(k));
    }
    if (in.task_graph) fuse_buffered(*in.tile_kernels, *in.task_graph, problems);
    if (problems.size() != before) return pkg;
    split_core_types(*in.tile_kernels, in.task_graph, in.layouts ? &*in.layouts : nullptr, problems);
    if (problems.size() != before) return pkg;
  }
  try {
    if (!in.tile_kernels) throw IrError("the module has no tile.kernels attribute: nothing to emit");
    kernels = pto_kernels(*in.tile_kernels);
    if (in.task_graph) {  // tile(axis, f): kernels whose tasks run f iterations
      // A tiling backend-pto cannot group is not applied: its iterations run one per task, as without it
      // (a schedule does not change what a program computes), with a warning saying why.
      for (htp::WspWorkload &w : in.task_graph->workloads)
        if (auto why = untileable(w)) {
          std::string directives;
          for (const htp::WspTileFactor &t : *w.schedule.tile)
            directives += (directives.empty() ? "" : ", ") + ("tile(\"" + t.axis + "\", " + std::to_string(t.factor) + ")");
          why->message = directives + " of workload '" + w.name + "' is not applied by backend-pto: " +
                         why->message.substr(why->message.find(": ") + 2) + "; its iterations run one per task";
          pkg.warnings.push_back(std::move(*why));
          w.schedule.tile.reset();
        }
      std::set<std::string> grouped, plain;  // kernels launched in tiled loops, and outside them
      for (const htp::WspWorkload &w : in.task_graph->workloads) {
        for (Kernel &r : repeated_kernels(w, kernels)) {
          grouped.insert(r.name.substr(0, r.name.rfind("__x")));
          kernels.push_back(std::move(r));
        }
        const std::set<std::string> p = untiled_launches(w);
        plain.insert(p.begin(), p.end());
      }
      if (in.csp_graph)  // (a process's kernel is launched by its program)
        for (const htp::CspProgram &prog : in.csp_graph->programs)
          for (const htp::CspProcess &proc : prog.processes) plain.insert(proc.function);
      std::erase_if(kernels, [&](const Kernel &k) { return grouped.count(k.name) && !plain.count(k.name); });
    }
  } catch (const IrError &e) {
    add_problem(problems, e);
    return pkg;
  }
  const size_t before = problems.size();
  if (in.layouts)
    read_memory_layouts(kernels, *in.layouts,
                        in.task_graph ? htp::launched_kernels(*in.task_graph) : std::set<std::string>{}, problems);
  std::vector<CspProgram> programs;
  std::vector<Kernel> derived;
  if (in.csp_graph)
    for (const htp::CspProgram &prog : in.csp_graph->programs) {
      try {
        programs.push_back(lower_csp_program(prog, kernels, process_carries, derived));
      } catch (const IrError &e) {
        add_problem(problems, e);
      }
    }
  kernels.insert(kernels.end(), derived.begin(), derived.end());
  pkg.kernels = plan_kernels(std::move(kernels), hw, problems);
  if (problems.size() != before) return BuiltPackage{};
  KernelIndex index;
  for (const KernelUnit &u : pkg.kernels) index[u.kernel.name] = &u;
  try {
    if (in.task_graph)
      for (const htp::WspWorkload &w : in.task_graph->workloads) pkg.entries.push_back(emit_workload_entry(w, index, in.origin, in.layouts ? &*in.layouts : nullptr));
    for (const CspProgram &prog : programs) pkg.entries.push_back(emit_csp_entry(prog, index, in.origin));
    // A kernel nothing launches is an entry of its own beside the workloads and programs, as on aie-npu1
    // (compile([kernel, workload]) kept only the workload).
    std::set<std::string> lone;
    if (!pkg.entries.empty() && original.tile_kernels) {
      std::set<std::string> taken = htp::launched_kernels(original.task_graph.value_or(htp::WspTaskGraph{}),
                                                          original.csp_graph.value_or(htp::CspGraph{}));
      for (const EntryUnit &e : pkg.entries) taken.insert(e.name);
      for (const htp::TileKernel &k : original.tile_kernels->kernels)
        if (k.kind == "kernel" && !taken.count(k.name) && index.count(k.name)) lone.insert(k.name);
    }
    if (pkg.entries.empty() || !lone.empty())
      for (const KernelUnit &u : pkg.kernels) {
        if (!lone.empty() && !lone.count(u.kernel.name)) continue;
        pkg.entries.push_back(emit_kernel_entry(u, in.origin, in.layouts ? in.layouts->function(u.kernel.name) : nullptr));
        for (const Param *p : u.kernel.tensor_params())
          if (!p->mem_strides.empty())
            pkg.entries.back().staging[p->name] = {{"extents", p->mem_extents}, {"strides", p->mem_strides}};
      }
  } catch (const IrError &e) {
    add_problem(problems, e);
  }
  if (problems.size() != before) return BuiltPackage{};
  return pkg;
}

std::vector<std::pair<std::string, std::string>> package_files(const BuiltPackage &p, const Origin &origin) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const KernelUnit &u : p.kernels)
    out.emplace_back(u.path, emit_kernel(u.kernel, u.plan, KernelOrigin{origin.target, origin.file}));
  for (const EntryUnit &e : p.entries) out.emplace_back(e.path, e.source);
  out.emplace_back("kernel_config.py", kernel_config_py(p, origin));
  out.emplace_back("kernel_registry.json", kernel_registry(p).dump(2) + "\n");
  return out;
}

json entrypoints_json(const BuiltPackage &p) {
  json out = json::array();
  for (const EntryUnit &e : p.entries) {
    json params = json::array();
    for (const EntryParam &prm : e.params) {
      json j = {{"name", prm.name}, {"kind", prm.kind}, {"dir", prm.dir}};
      if (prm.kind == "tensor") j["shape"] = prm.shape;
      j["dtype"] = prm.dtype;
      params.push_back(j);
    }
    out.push_back({{"name", e.name}, {"kind", e.kind}, {"params", params}});
  }
  return out;
}

std::string kernel_config_py(const BuiltPackage &p, const Origin &origin) {
  std::string s = "# pto-runtime kernel configuration: generated by HTP backend-pto for " + origin.target + " from " +
                  origin.file + ".\n# pto-runtime " + rt::kRuntimeRevision + ", PTO-ISA " + rt::kIsaRevision +
                  ". Paths are relative to this file.\n\n";
  auto orchestration = [&](const EntryUnit &e, const std::string &indent) {
    return "{\n" + indent + "    \"source\": " + py_string(e.path) + ",\n" + indent +
           "    \"function_name\": " + py_string(rt::kEntrySymbol) + ",\n" + indent +
           "    \"config_name\": " + py_string(rt::kConfigSymbol) + ",\n" + indent +
           "    \"signature\": " + py_list(entry_signature(e), true) + ",\n" + indent + "}";
  };
  if (!p.entries.empty()) s += "ORCHESTRATION = " + orchestration(p.entries.front(), "") + "\n\n";
  s += "KERNELS = [\n";
  for (const KernelUnit &u : p.kernels)
    s += "    {\"func_id\": " + std::to_string(u.func_id) + ", \"name\": " + py_string(u.runtime_name) +
         ", \"source\": " + py_string(u.path) + ", \"core_type\": " + py_string(std::string(core_type_name(u.plan.core))) +
         ", \"signature\": " + py_list(signature(u.kernel), true) + "},\n";
  s += "]\n\n";
  json rc = runtime_config(p);
  s += "RUNTIME_CONFIG = {\n    \"runtime\": " + py_string(rc["runtime"]) + ",\n    \"aicpu_thread_num\": " +
       rc["aicpu_thread_num"].dump() + ",\n}\n\n";
  s += "# HTP: every entry point of the package and its orchestration (ORCHESTRATION is the first).\nENTRIES = {\n";
  for (const EntryUnit &e : p.entries) s += "    " + py_string(e.name) + ": " + orchestration(e, "    ") + ",\n";
  s += "}\n";
  return s;
}

json kernel_registry(const BuiltPackage &p) {
  auto orchestration = [](const EntryUnit &e) {
    return json{{"source", e.path}, {"function_name", rt::kEntrySymbol}, {"config_name", rt::kConfigSymbol}};
  };
  json reg = {{"schema", "htp.pto.kernel_registry.v1"}, {"pto_runtime_revision", rt::kRuntimeRevision},
              {"pto_isa_revision", rt::kIsaRevision}};
  if (!p.entries.empty()) reg["orchestration"] = orchestration(p.entries.front());
  json entries = json::object();
  for (const EntryUnit &e : p.entries) {
    json j = orchestration(e);
    j["kind"] = e.kind;
    if (!e.staging.empty()) j["staging"] = e.staging;
    entries[e.name] = j;
  }
  reg["entries"] = entries;
  json kernels = json::array();
  for (const KernelUnit &u : p.kernels)
    kernels.push_back({{"func_id", u.func_id}, {"name", u.runtime_name}, {"source", u.path},
                       {"core_type", core_type_name(u.plan.core)}, {"signature", signature(u.kernel)}});
  reg["kernels"] = kernels;
  reg["runtime_config"] = runtime_config(p);
  return reg;
}

}  // namespace ptobe
