// Front-end for workloads the spatial mapping (plan_workload.cpp) does not take: several launches in
// sequence, extents, views or scalars known only at run time (ragged rows, CSR selections, block tables),
// conditions. Such a workload is host-orchestrated: every kernel it launches becomes a single-core design
// of its own (the design a kernel entry gets, docs/backends/aie.md §2), and the host walks the task graph
// at run time, one task at a time — each view moved into the kernel's design, the design run, the views
// it writes moved back. The task graph travels in codegen/aie/<entry>/orchestration.json.
#include <algorithm>
#include <set>

#include <htp/kernel_entry.hpp>

#include "entry_plan.hpp"
#include "kernel_emitter.hpp"

namespace htp::aie {

namespace {

int64_t words(int64_t bytes) { return (bytes + 3) / 4; }

/// A packed buffer's length in words, padded so that one DMA transfer of it has a pattern: a length above a
/// dimension's 1023 must be a product of two sizes within it (8193 words, a tensor of 4096 each way and a
/// scalar, is not: 8200 = 10 x 820 is); a multiple of 64 always is, up to far more than a core holds.
int64_t packed_words(int64_t n) {
  constexpr int64_t kWrap = 1023;  // DmaAddressing::max_wrap of every tile kind (device.hpp)
  if (n <= kWrap) return n;
  for (int64_t m = n; m < n + 64; ++m)
    for (int64_t f = std::min(m, kWrap); f * kWrap >= m; --f)
      if (m % f == 0) return m;
  return (n + 63) / 64 * 64;
}

/// Rewrites `plan` (one kernel, every core calling it) to move its objects packed: the external kernel
/// `<kernel>_packed` takes a core's slice of `packed_in` and of `packed_out` (i32 words; `in_words` /
/// `out_words` per core, core c at c times that) and calls the kernel with `call`, a pointer per object.
void use_packed_fifos(EntryPlan &plan, const std::vector<std::string> &call, int64_t in_words, int64_t out_words) {
  const KernelFunc kernel = plan.kernels[0];
  const std::string name = kernel.name + "_packed";
  const int64_t n = static_cast<int64_t>(plan.cores.size());
  KernelFunc packed{name, "kernels/" + name + ".cc", name + ".o", {}, kernel.locals_bytes, kernel.work};
  std::vector<RuntimeParam> params;
  std::vector<StreamPlan> streams;
  for (CorePlan &c : plan.cores) {
    c.kernel = name;
    c.ports.clear();
  }
  std::string sig, wrap;
  for (bool reads : {true, false}) {
    const int64_t w = reads ? in_words : out_words;
    if (w == 0) continue;
    const std::string pname = reads ? "packed_in" : "packed_out";
    params.push_back(RuntimeParam{pname, {n * w}, "i32", reads ? "in" : "out"});
    for (int64_t c = 0; c < n; ++c) {
      plan.cores[static_cast<size_t>(c)].ports.push_back({PortPlan::Kind::Stream, streams.size()});
      streams.push_back({pname, reads, {View{{c * w}, {w}}}, plan.span, {}, ""});
    }
    packed.args.push_back(KernelArg{true, {w}, "i32"});
    sig += std::string(sig.empty() ? "" : ", ") + "int32_t *" + (reads ? "in" : "out");
    wrap += std::string(wrap.empty() ? "" : ", ") + "static_cast<int32_t *>(args[" + std::to_string(packed.args.size() - 1) + "])";
  }
  std::string args;
  for (const std::string &c : call) args += (args.empty() ? "" : ", ") + c;
  const std::string text = plan.sources.at(kernel.name) +
                           "\n// The host packs every object a core of this kernel reads into its slice of one buffer and\n"
                           "// unpacks the objects it writes from its slice of another (one input and one output FIFO).\n"
                           "extern \"C\" void " + name + "(" + sig + ") {\n  " + kernel.name + "(" + args + ");\n}\n\n"
                           "#ifdef HTP_AIE_SIM\nextern \"C\" void htp_aie_call_" + name + "(void **args) {\n  " + name + "(" +
                           wrap + ");\n}\n#endif\n";
  plan.params = std::move(params);
  plan.streams = std::move(streams);
  plan.kernels = {packed};
  plan.sources = {{name, text}};
}

/// Rewrites the single-core design plan of kernel `name` so that its objects travel packed: every object
/// the kernel reads in one input FIFO (`packed_in`, 32-bit words, each object at a word offset) and every
/// object it writes in one output FIFO (`packed_out`) — a core has two input and two output DMA channels,
/// and the host, which gathers each task's views anyway, packs them. The external kernel `<name>_packed`
/// takes the two buffers and calls `<name>` with a pointer per object. Returns the packing for the host
/// ({"in": [{param, offset, bytes, dtype, shape, scalar}], "out": [...], "in_bytes", "out_bytes"}), or null when the plan
/// cannot be packed (several cores, or a memory layout whose DMA reorders an object).
Json pack_task(EntryPlan &plan) {
  if (plan.cores.size() != 1 || plan.kernels.size() != 1) return Json();
  for (const StreamPlan &st : plan.streams)
    if (!st.order.empty()) return Json();
  Json in = Json::array(), out = Json::array();
  int64_t in_words = 0, out_words = 0;
  std::vector<std::string> call;
  for (const RuntimeParam &p : plan.params) {
    const int64_t bytes = product(p.shape) * dtype_bytes(p.dtype);
    const std::string ct = c_type(p.dtype);
    if (p.scalar || p.dir != "out") {  // the object read (In, InOut's first object, a scalar)
      in.push_back({{"param", p.name}, {"offset", in_words * 4}, {"bytes", bytes}, {"dtype", p.dtype}, {"shape", p.shape},
                    {"scalar", p.scalar}});
      call.push_back("reinterpret_cast<" + ct + " *>(in + " + std::to_string(in_words) + ")");
      in_words += words(bytes);
    }
    if (!p.scalar && p.dir != "in") {  // the object written
      out.push_back({{"param", p.name}, {"offset", out_words * 4}, {"bytes", bytes}, {"dtype", p.dtype}, {"shape", p.shape},
                     {"scalar", false}});
      call.push_back("reinterpret_cast<" + ct + " *>(out + " + std::to_string(out_words) + ")");
      out_words += words(bytes);
    }
  }
  in_words = packed_words(in_words);
  out_words = packed_words(out_words);
  use_packed_fifos(plan, call, in_words, out_words);
  return {{"in", in}, {"out", out}, {"in_bytes", in_words * 4}, {"out_bytes", out_words * 4}};
}

/// Packs the objects of a design of several cores (a kernel mapped over a mesh) whose cores need more DMA
/// channels than a compute tile has (`dma_in` / `dma_out`): each core's objects — its views of the task's
/// tensors, its scalars — in its own slice of one input FIFO (`packed_in`, [cores x words] i32, distributed
/// through a mem tile like any sharded tensor) and those it writes in its slice of `packed_out`, as pack_task
/// does for one core. Every core runs the same kernel on objects of the same shapes, so the slices have one
/// layout. The packing's entries name their core and their view of the parameter ({"view": {offset, shape}},
/// "shape" the whole parameter's), which the host gathers and scatters. Null when the cores fit, or when a
/// memory layout reorders an object.
Json pack_cores(EntryPlan &plan, int dma_in, int dma_out) {
  if (plan.cores.size() < 2 || plan.kernels.size() != 1) return Json();
  bool over = false;
  for (const CorePlan &c : plan.cores) {
    int in = 0, out = 0;
    for (const PortPlan &p : c.ports) {
      if (p.kind != PortPlan::Kind::Stream) return Json();
      (plan.streams[p.stream].in ? in : out) += 1;
    }
    over = over || in > dma_in || out > dma_out;
    if (c.ports.size() != plan.cores[0].ports.size() || !c.steps.empty()) return Json();
  }
  if (!over) return Json();
  for (const StreamPlan &st : plan.streams)
    if (!st.order.empty() || st.views.size() != 1) return Json();
  auto param = [&](const std::string &name) -> const RuntimeParam * {
    for (const RuntimeParam &p : plan.params)
      if (p.name == name) return &p;
    return nullptr;
  };
  // One core's slice: the objects in port order (the kernel's arguments), at word offsets.
  std::vector<int64_t> at;
  std::vector<std::string> call;
  int64_t in_words = 0, out_words = 0;
  for (const PortPlan &p : plan.cores[0].ports) {
    const StreamPlan &s = plan.streams[p.stream];
    const RuntimeParam *rp = param(s.tensor);
    if (!rp) return Json();
    const int64_t bytes = product(s.views[0].shape) * dtype_bytes(rp->dtype);
    int64_t &words_so_far = s.in ? in_words : out_words;
    at.push_back(words_so_far);
    call.push_back("reinterpret_cast<" + c_type(rp->dtype) + " *>(" + (s.in ? "in" : "out") + " + " +
                   std::to_string(words_so_far) + ")");
    words_so_far += words(bytes);
  }
  in_words = packed_words(in_words);
  out_words = packed_words(out_words);
  const int64_t n = static_cast<int64_t>(plan.cores.size());
  Json in = Json::array(), out = Json::array();
  for (int64_t c = 0; c < n; ++c) {
    const CorePlan &core = plan.cores[static_cast<size_t>(c)];
    for (size_t k = 0; k < core.ports.size(); ++k) {
      const StreamPlan &s = plan.streams[core.ports[k].stream];
      const RuntimeParam *rp = param(s.tensor);
      if (!rp || s.in != plan.streams[plan.cores[0].ports[k].stream].in) return Json();
      const int64_t bytes = product(s.views[0].shape) * dtype_bytes(rp->dtype);
      const int64_t base = c * (s.in ? in_words : out_words);
      (s.in ? in : out).push_back({{"param", rp->name}, {"core", c}, {"offset", (base + at[k]) * 4}, {"bytes", bytes},
                                   {"dtype", rp->dtype}, {"shape", rp->shape}, {"scalar", rp->scalar},
                                   {"view", {{"offset", s.views[0].offset}, {"shape", s.views[0].shape}}}});
    }
  }
  use_packed_fifos(plan, call, in_words, out_words);
  return {{"in", in}, {"out", out}, {"in_bytes", n * in_words * 4}, {"out_bytes", n * out_words * 4}, {"cores", n}};
}

}  // namespace

/// The plan of `w` (a workload, or the stages of a pipe as one): `channels` are the pipe's channels.
std::optional<OrchestrationPlan> plan_orchestration(const htp::WspWorkload &w, const Json &channels, const ProgramDocs &docs,
                                                   const DeviceProfile &device, std::vector<Problem> &problems) {
  const Json wspan = span_json(w.span);
  const size_t before = problems.size();
  OrchestrationPlan plan{w.name, wspan, Json::array(), {}, {}};
  // The host gathers every task's views, whose shapes are static, so a parameter's dims may be symbols:
  // the run binds them from the arguments (and the workload's expressions read them as parameters).
  for (const htp::WspParam &p : w.params)
    plan.params.push_back(p.type.is_scalar()
                              ? Json{{"name", p.name}, {"kind", "scalar"}, {"dir", "in"}, {"dtype", p.type.dtype}}
                              : Json{{"name", p.name}, {"kind", "tensor"}, {"dir", p.dir}, {"shape", Json(p.type.shape)},
                                     {"dtype", p.type.dtype}});
  // An intermediate's dimension may be a symbol a parameter's shape binds: the host allocates it at run time.
  std::set<std::string> bound;
  for (const htp::WspParam &p : w.params)
    for (const htp::IrDim &d : p.type.shape)
      if (d.is_symbol()) bound.insert(d.symbol);
  for (const htp::WspIntermediate &i : w.intermediates)
    for (const htp::IrDim &d : i.type.shape)
      if (d.is_symbol() && !bound.count(d.symbol))
        problems.push_back({"aie.orchestration", "intermediate '" + i.name + "' of workload '" + w.name +
                                                     "' has the dimension \"" + d.symbol + "\", which no parameter's "
                                                     "shape binds: name it in a parameter's shape, or give a number",
                            wspan});
  std::set<std::string> kernels;
  std::map<std::string, Json> packing, alias_checks;
  htp::for_each_node(w.body, [&](const htp::WspNode &n) {
    if (!n.is_task()) return;
    for (const htp::WspArg &a : n.args)
      if (a.is_channel() && !channels.contains(*a.channel))
        problems.push_back({"aie.orchestration", "task " + n.id + " of workload '" + w.name + "' binds channel '" +
                                                     *a.channel + "', which its pipe does not declare", span_json(n.span)});
    if (!kernels.insert(n.kernel).second) return;
    const htp::TileKernel *k = docs.kernels.find(n.kernel);
    if (!k) {
      problems.push_back({"aie.kernel", "task " + n.id + " launches kernel '" + n.kernel +
                                            "', which tile.kernels does not define", span_json(n.span)});
      return;
    }
    auto task = plan_kernel_entry(*k, docs.layouts, device, problems);
    if (!task) return;
    task->name = w.name + "/tasks/" + k->name;
    task->kind = "task";
    const TileResources &compute = device.resources(TileKind::Compute);
    packing[k->name] = task->cores.size() > 1 ? pack_cores(*task, compute.dma_in, compute.dma_out) : pack_task(*task);
    for (const auto &[in, out] : load_after_store_pairs(*k)) alias_checks[k->name].push_back(Json::array({in, out}));
    plan.tasks.push_back(std::move(*task));
  });
  if (problems.size() != before) return std::nullopt;
  Json kernel_dirs = Json::object();
  for (const std::string &k : kernels) {
    kernel_dirs[k] = {{"design", "tasks/" + k}, {"packed", packing[k]}};
    if (alias_checks.count(k)) kernel_dirs[k]["alias_checks"] = alias_checks[k];
  }
  plan.doc = {{"schema", kOrchestrationSchema}, {"entry", w.name}, {"workload", Json(w)}, {"kernels", kernel_dirs},
              {"channels", channels}};
  return plan;
}


std::optional<OrchestrationPlan> plan_orchestrated_workload(const htp::WspWorkload &w, const ProgramDocs &docs,
                                                           const DeviceProfile &device,
                                                           std::vector<Problem> &problems) {
  // A launch passing overlapping views of one tensor as an input (In or InOut) and an output, which the kernel
  // loads after storing: the host gathers a task's inputs before it runs, so the load would see the old
  // values. Checked where the views are the same or their offsets constants.
  if (auto a = aliased_launch(w, [&](const std::string &k) { return docs.kernels.find(k); })) {
    const std::string why = aliasing_views(*a->kernel, *a->in->tensor, a->in->param, a->out->param);
    problems.push_back({"aie.alias", "workload '" + w.name + "': " + why, span_json(a->launch->span)});
    return std::nullopt;
  }
  return plan_orchestration(w, Json::object(), docs, device, problems);
}

std::optional<OrchestrationPlan> plan_orchestrated_kernel(const htp::TileKernel &k, const ProgramDocs &docs,
                                                         const DeviceProfile &device, std::vector<Problem> &problems) {
  // The kernel entry as a workload that launches it once on its whole tensors: its single-core design is
  // then a task design whose objects travel packed, one FIFO each way.
  const htp::WspWorkload w = htp::single_launch_workload(k);
  return plan_orchestration(w, Json::object(), docs, device, problems);
}

htp::WspWorkload program_workload(const htp::CspProgram &program) {
  htp::WspWorkload w;
  w.name = program.name;
  w.span = program.span;
  for (const htp::CspParam &p : program.params)
    if (p.type.kind != "constexpr")
      w.params.push_back(htp::WspParam{p.name, p.dir, htp::WspType{p.type.kind, p.type.shape, p.type.dtype}});
  return w;
}

Json channel_items(const htp::CspProgram &program, bool tensors_only, const htp::CspChannel *&bad) {
  Json channels = Json::object();
  bad = nullptr;
  for (const htp::CspChannel &c : program.channels) {
    if (c.is_event() || !c.elem || (tensors_only && !c.elem->is_tensor())) {
      bad = &c;
      return Json();
    }
    std::vector<int64_t> shape;
    for (const htp::IrDim &d : c.elem->shape) shape.push_back(d.size);
    channels[c.name] = {{"shape", shape}, {"dtype", c.elem->dtype}};
  }
  return channels;
}

std::optional<OrchestrationPlan> plan_orchestrated_pipe(const htp::CspProgram &program, const ProgramDocs &docs,
                                                       const DeviceProfile &device, std::vector<Problem> &problems) {
  // The pipe's stages run one after another in producer-to-consumer order, each to its end, the items of
  // a channel queued between them: a pipe of loops is a Kahn network, so this order computes what any
  // interleaving within the channels' depths computes.
  htp::WspWorkload w = program_workload(program);
  const htp::CspChannel *bad = nullptr;
  const Json channels = channel_items(program, true, bad);
  if (bad) {
    problems.push_back({"aie.orchestration", "channel '" + bad->name + "' of pipe '" + program.name +
                                                 "' is not a channel of tensors", span_json(bad->span)});
    return std::nullopt;
  }
  for (const htp::CspProcess &proc : program.processes)
    if (!proc.stage || proc.replicas != 1) {
      problems.push_back({"aie.orchestration", "process '" + proc.name + "' of pipe '" + program.name +
                                                   "' is not a single pipe stage", span_json(proc.span)});
      return std::nullopt;
    }
  std::string why;
  auto order = producer_order(program, why);
  if (!order) {
    problems.push_back({"aie.orchestration", "the stages of pipe '" + program.name + "' form a cycle through their "
                                                 "channels; a host-orchestrated pipe runs its stages in order",
                        span_json(program.span)});
    return std::nullopt;
  }
  for (const htp::CspProcess *proc : *order) w.body.push_back(*proc->stage);
  return plan_orchestration(w, channels, docs, device, problems);
}

}  // namespace htp::aie
