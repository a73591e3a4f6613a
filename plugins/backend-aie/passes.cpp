#include "passes.hpp"

#include <htp/kernel_entry.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

#include <htp/csp_graph.hpp>
#include <htp/fuse.hpp>
#include <htp/layout_signatures.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>
#include <nlohmann/json.hpp>

#include "build_files.hpp"
#include "dialect_spelling.hpp"
#include "entry_plan.hpp"
#include "mlir_printer.hpp"
#include "validator.hpp"

namespace htp::aie {

namespace {

constexpr const char *kDesigns = "aie.designs";
constexpr const char *kOrchestrations = "aie.orchestrations";

Json param_json(const RuntimeParam &p) {
  return p.scalar ? Json{{"name", p.name}, {"kind", "scalar"}, {"dir", "in"}, {"dtype", p.dtype}}
                  : Json{{"name", p.name}, {"kind", "tensor"}, {"dir", p.entry_out ? "out" : p.dir}, {"shape", p.shape},
                         {"dtype", p.dtype}};
}

Json attr(htp::PassContext &ctx, const char *key) {
  auto text = ctx.module().attr(key);
  if (!text) return Json();
  auto j = Json::parse(*text, nullptr, false);
  return j.is_discarded() ? Json() : j;
}

htp::SourceSpan source_span(const Json &span, const std::string &file) {
  htp::SourceSpan s;
  if (!span.is_object()) return s;
  s.file = span.value("file", file);
  // A design names the source by its file name (a package holds no build machine path): a diagnostic names the
  // module's file as every other does.
  if (s.file.find('/') == std::string::npos && !file.empty() &&
      std::filesystem::path(file).filename().string() == s.file)
    s.file = file;
  s.line = span.value("line", 0u);
  s.col = span.value("col", 0u);
  s.end_line = span.value("end_line", s.line);
  s.end_col = span.value("end_col", s.col);
  return s;
}

void report(htp::PassContext &ctx, const std::string &code, const std::string &message, const Json &span) {
  htp::Host(ctx.api()).error(ctx.diag(), code, message, source_span(span, ctx.module().file()));
}

const DeviceProfile &device(htp::PassContext &ctx) {
  std::string target;
  if (auto t = ctx.option("target")) {
    auto j = Json::parse(*t, nullptr, false);
    target = j.is_string() ? j.get<std::string>() : *t;
  }
  const DeviceProfile *d = device_for_target(target);
  if (!d) throw htp::PassError("target '" + target + "' is not an AIE target (known: aie-npu1, aie-npu2, aie-npu1_1col, ...)");
  return *d;
}

std::vector<Design> designs(htp::PassContext &ctx) {
  std::vector<Design> out;
  for (const auto &j : attr(ctx, kDesigns)) out.push_back(design_from_combined_json(j));
  return out;
}

/// A document of the module read by its SDK reader `read` (htp::tile_kernels, htp::wsp_task_graph, ...): an
/// empty one when absent; nullopt, reported, when it is malformed or of another major version.
template <class Doc> std::optional<Doc> read_document(htp::PassContext &ctx, std::optional<Doc> (*read)(const htp::ModuleRef &)) {
  try {
    return read(ctx.module()).value_or(Doc{});
  } catch (const htp::IrDocumentError &e) {
    report(ctx, e.kind() == htp::IrDocumentError::Kind::Version ? "aie.schema" : "aie.ir", e.what(),
           e.span() ? Json(*e.span()) : Json());
    return std::nullopt;
  }
}

/// Whether the launch of fused kernel `kernel` in `w` reads a view that it stored before, as "reads 'Y'
/// (parameter 'y__cons') after it stores it as 'y'": a consumer reading (In or InOut) what its producer stored,
/// at the same offsets or at constant ones that overlap. (A producer reading what the consumer stores later
/// reads the old values, as unfused.)
std::optional<std::string> reads_its_own_output(const htp::WspWorkload &w, const htp::TileKernel &kernel) {
  auto a = aliased_launch(w, [&](const std::string &k) { return k == kernel.name ? &kernel : nullptr; });
  if (!a) return std::nullopt;
  return "reads '" + *a->in->tensor + "' (parameter '" + a->in->param + "') after it stores it as '" + a->out->param +
         "'";
}

}  // namespace

void map_pass(htp::PassContext &ctx) {
  const DeviceProfile &dev = device(ctx);
  auto kernels = read_document(ctx, &htp::tile_kernels);
  auto tasks = read_document(ctx, &htp::wsp_task_graph);
  auto csp = read_document(ctx, &htp::csp_graph);
  auto layouts = read_document(ctx, &htp::layout_signatures);
  if (!kernels || !tasks || !csp || !layouts) return;
  ProgramDocs docs{std::move(*kernels), std::move(*layouts), std::move(*tasks), std::move(*csp)};
  // Offsets read through scalar registers (`r = 2 * i + 1`) read their expressions: AIE evaluates offsets at
  // compile time, from the loop variables.
  for (htp::TileKernel &k : docs.kernels.kernels) htp::inline_scalar_offsets(k);
  htp::sink_process_loads(docs.kernels, docs.csp);  // a process reading a weight before its loop: one loop
  // A process reading back the view it stored in the same iteration reads the stored register (its core's
  // loads stream from the start of the run; other reads after writes are aie.csp-order), and one loading a
  // view twice moves it once.
  htp::for_each_process_function(docs.kernels, docs.csp,
                                 [](htp::TileKernel &k) { htp::forward_views_to_loads(k.body, k); });
  std::vector<Problem> problems = partial_reloads(docs.kernels, docs.csp);
  // A kernel entry whose whole tensors do not fit its one core but whose body is one loop over tiles runs
  // as the workload streaming them (plan_streamed.cpp); the workload's mapping (spatial, or host-orchestrated)
  // follows as for any workload.
  for (const auto &[kernel, trips] : stream_oversized_kernel_entries(docs, dev))
    htp::Host(ctx.api()).report(ctx.diag(), HTP_SEV_NOTE, "aie.streamed",
                                "kernel entry '" + kernel.name + "' holds more than a core's " +
                                    std::to_string(dev.resources(TileKind::Compute).memory_bytes) +
                                    " bytes in whole tensors; its loops stream their tiles (" +
                                    (trips ? std::to_string(trips) + " launches" : std::string("launches its scalars count")) +
                                    "): it runs as a workload of the same name and parameters",
                                kernel.span.source_span(ctx.module().file()));
  // buffer(T, "L1" | "local"): the two launches passing intermediate T run fused on one core, T in its memory.
  htp::fuse_buffers(
      docs.kernels, docs.tasks, [](const std::string &) { return true; },  // (the resolver admits L1 and local only)
      [&](const htp::WspWorkload &w, const htp::WspBuffer &b, const std::variant<std::string, htp::FuseError> &r) {
        if (auto *e = std::get_if<htp::FuseError>(&r)) {
          problems.push_back({"aie.schedule-buffer", e->message, Json(e->span)});
          return;
        }
        const htp::TileKernel *fused = docs.kernels.find(std::get<std::string>(r));
        if (auto clash = fused ? reads_its_own_output(w, *fused) : std::nullopt)
          problems.push_back({"aie.schedule-buffer", "buffer(\"" + b.tensor + "\", \"" + b.space + "\") of workload '" +
                                                         w.name + "': the fused kernel '" + std::get<std::string>(r) +
                                                         "' " + *clash + "; an AIE task moves its inputs in before its "
                                                         "outputs out, so the read would see the old values (drop the "
                                                         "directive)",
                              Json(htp::directive_span(w, b))});
      });
  std::vector<OrchestrationPlan> orchestrated;
  Json out = Json::array();
  std::map<std::string, size_t> spatial_cores;  // workload -> cores its spatial design runs at once
  // The first violation of a design among `codes` ("more DMA channels than a tile has": a third input, say), or "".
  auto first_violation = [&](const Design &d, std::initializer_list<std::string_view> codes) {
    for (const auto &v : validate(d, dev))
      if (std::find(codes.begin(), codes.end(), v.code) != codes.end()) return v.text();
    return std::string();
  };
  // (or whose objects are not whole 32-bit words, which a DMA cannot move: packed, each starts at a word)
  auto dma_channels = [&](const Design &d) {
    return first_violation(d, {"aie.validate.dma-channels", "aie.validate.transfer-size"});
  };

  // An entry multiplexed instead of mapped spatially: its kernels' single-core task designs, its plan kept.
  auto orchestrate = [&](OrchestrationPlan o, std::string reason, std::string noun) {
    o.reason = std::move(reason);
    o.noun = std::move(noun);
    for (const EntryPlan &t : o.tasks)
      if (auto td = build_design(t, dev, problems)) out.push_back(design_to_json(*td));
    o.tasks.clear();
    orchestrated.push_back(std::move(o));
  };
  for (const auto &plan : plan_entries(docs, dev, problems, &orchestrated)) {
    if (plan.kind == "workload") spatial_cores[plan.name] = plan.cores.size();
    std::vector<Problem> routing;  // a workload's or kernel's: kept unless the host-orchestrated mapping takes it
    const bool multiplexable = plan.kind == "workload" || plan.kind == "kernel";
    const bool csp = plan.kind == "csp-program";
    auto d = build_design(plan, dev, multiplexable || csp ? routing : problems);
    std::string reason;
    // (a view the spatial DMA cannot walk, e.g. tiles in reverse order, the host gathers instead)
    for (const auto &p : routing)
      if ((p.code == "aie.route" || (multiplexable && p.code == "aie.dma-pattern")) && reason.empty())
        reason = p.message;
    if (plan.kind == "workload") {
      // A spatial design that cannot be routed (more core groups than a mem tile has channels) or whose
      // cores need more DMA channels than a tile has is multiplexed instead: host-orchestrated, each
      // task's objects packed into one FIFO each way.
      if (d && reason.empty()) reason = dma_channels(*d);
      const htp::WspWorkload *w = nullptr;
      for (const auto &x : docs.tasks.workloads)
        if (x.name == plan.name) w = &x;
      if (reason.empty() || !w) problems.insert(problems.end(), routing.begin(), routing.end());
      if (!reason.empty() && w) {
        if (auto o = plan_orchestrated_workload(*w, docs, dev, problems)) orchestrate(std::move(*o), reason, "workload");
        continue;
      }
    }
    if (csp) {
      // A program whose cores' FIFO buffers exceed their memory or whose channels exceed their DMA channels
      // (a generator feeding four workers), or whose processes store to the same elements (ordered by their
      // channels), runs host-orchestrated when it can: each replica a stage of tasks, in producer order.
      std::string reason = d ? first_violation(*d, {"aie.validate.memory", "aie.validate.dma-channels"}) : "";
      // (or that reads one tensor through views no DMA pattern walks in one stream — a tile loaded before the
      // loop beside the loop's tiles, two processes loading different tiles: the host gathers each task's)
      for (const auto &p : routing)
        if ((p.code == "aie.replicated-output" || p.code == "aie.dma-pattern") && reason.empty()) reason = p.message;
      const htp::CspProgram *program = nullptr;
      for (const htp::CspProgram &p : docs.csp.programs)
        if (p.name == plan.name) program = &p;
      if (!reason.empty() && program) {
        std::string why;
        if (auto o = plan_orchestrated_program(*program, docs, dev, why)) {
          orchestrate(std::move(*o), reason, "CSP program");
          continue;
        }
        htp::Host(ctx.api()).report(ctx.diag(), HTP_SEV_NOTE, "aie.orchestrated",
                                    "CSP program '" + plan.name + "' does not fit " + dev.name +
                                        " spatially (below), nor can the host orchestrate it: " + why,
                                    source_span(plan.span, ctx.module().file()));
      }
      problems.insert(problems.end(), routing.begin(), routing.end());  // (not orchestrated)
    }
    if (plan.kind == "kernel") {
      // A kernel entry whose cores need more DMA channels than a tile has, or whose tensors need more shim
      // channels than the device has (nine outputs): the same packing, one task (a mapped kernel's cores each
      // their own slice of the packed FIFOs).
      const std::string channels = !reason.empty() ? reason : d ? dma_channels(*d) : std::string();
      const htp::TileKernel *k = docs.kernels.find(plan.name);
      std::optional<OrchestrationPlan> o;
      if (!channels.empty() && k) o = plan_orchestrated_kernel(*k, docs, dev, problems);
      if (o) {
        orchestrate(std::move(*o), channels, "kernel entry");
        continue;
      }
      problems.insert(problems.end(), routing.begin(), routing.end());
    }
    if (d) out.push_back(design_to_json(*d));
  }
  Json orchestrations = Json::array();
  for (const auto &o : orchestrated) {
    const Json &params = o.params;
    Json doc = o.doc;
    // task-graph spans carry no file; the package names it (not the build machine's path: determinism)
    doc["file"] = std::filesystem::path(ctx.module().file()).filename().string();
    htp::Host(ctx.api()).report(ctx.diag(), HTP_SEV_NOTE, "aie.orchestrated",
                                o.noun + " '" + o.entry + "' runs host-orchestrated on " + dev.name +
                                    ": one task at a time, each kernel a design of its own (spatially: " + o.reason + ")",
                                source_span(o.span, ctx.module().file()));
    orchestrations.push_back({{"entry", o.entry}, {"params", params}, {"orchestration", doc}});
  }
  for (const auto &p : problems) report(ctx, p.code, p.message, p.span);
  for (const htp::WspWorkload &w : docs.tasks.workloads) {  // directives for Ascend's AICPU schedulers
    std::vector<std::pair<std::string, std::string>> idle;  // directive, why it does nothing here
    const std::string schedulers = "AIE has no task schedulers to choose between (cores are placed in grid order; "
                                   "orchestrated tasks run in program order)";
    const std::string one_task = "a host-orchestrated workload runs one single-core task at a time, each on its own "
                                 "objects";
    const bool host = std::any_of(orchestrated.begin(), orchestrated.end(), [&](const auto &o) { return o.entry == w.name; });
    if (host && w.schedule.tile) idle.push_back({"tile(...)", one_task});
    if (host && w.schedule.pipeline_depth)
      idle.push_back({"pipeline(" + std::to_string(*w.schedule.pipeline_depth) + ")", one_task});
    if (w.schedule.dispatch && w.schedule.dispatch->policy != "round_robin")
      idle.push_back({"dispatch(" + w.schedule.dispatch->policy + ")", schedulers});
    if (w.schedule.timing && w.schedule.timing->mode == "batched")
      idle.push_back({"timing(batched(" + std::to_string(w.schedule.timing->n.value_or(1)) + "))", schedulers});
    const std::string issue = "AIE has no issue streams (a core runs its tasks in order; orchestrated tasks run in "
                              "program order)";
    if (w.schedule.streams) idle.push_back({"streams(" + std::to_string(*w.schedule.streams) + ")", issue});
    if (w.schedule.stream_by) idle.push_back({"stream_by(...)", issue});
    if (const auto window = w.schedule.task_window) {
      const auto cores = spatial_cores.find(w.name);
      const size_t at_once = host || cores == spatial_cores.end() ? 1 : cores->second;
      const std::string what = "task_window(" + std::to_string(*window) + ")";
      if (static_cast<int64_t>(at_once) <= *window)
        idle.push_back({what, host ? "a host-orchestrated workload has one task in flight at a time"
                                   : "its spatial mapping runs " + std::to_string(at_once) + " tasks at once, one per "
                                     "core, within the window"});
      else
        report(ctx, "aie.schedule", what + " of workload '" + w.name + "' allows fewer tasks in flight than the " +
                                        std::to_string(at_once) + " cores its spatial mapping runs at once; put "
                                        "several grid points on a core with tile(axis, f) or widen the window",
               w.schedule.span ? Json(*w.schedule.span) : Json(w.span));
    }
    for (const auto &[what, why] : idle)
      htp::Host(ctx.api()).report(ctx.diag(), HTP_SEV_NOTE, "aie.schedule",
                                  what + " of workload '" + w.name + "' has no effect on " + dev.name + ": " + why,
                                  source_span(w.schedule.span ? Json(*w.schedule.span) : Json(w.span), ctx.module().file()));
  }
  if (problems.empty() && out.empty()) {
    const std::string message = "the program has no kernel, workload or CSP program to map onto " + dev.name;
    if (auto f = htp::first_decorated_function(ctx.module()))
      htp::Host(ctx.api()).error(ctx.diag(), "aie.no-entry", message + ": " + f->sentence, f->span);
    else
      report(ctx, "aie.no-entry", message, Json());
  }
  ctx.module().set_attr(kDesigns, out.dump());
  ctx.module().set_attr(kOrchestrations, orchestrations.dump());
}

void validate_pass(htp::PassContext &ctx) {
  const DeviceProfile &dev = device(ctx);
  for (const auto &d : designs(ctx))
    for (const auto &v : validate(d, dev)) report(ctx, v.code, "entry '" + d.entry + "': " + v.text(), v.span);
}

void emit_pass(htp::PassContext &ctx) {
  const DeviceProfile &dev = device(ctx);
  const DialectSpelling *sp = &default_spelling();
  if (auto opt = ctx.option("aie.release")) {
    auto j = Json::parse(*opt, nullptr, false);
    std::string id = j.is_string() ? j.get<std::string>() : *opt;
    sp = spelling_named(id);
    if (!sp) {
      std::string known;
      for (const auto &s : spelling_ids()) known += (known.empty() ? "" : ", ") + s;
      throw htp::PassError("option aie.release='" + id + "' is not a known MLIR-AIE spelling (known: " + known + ")");
    }
  }
  Json entries = Json::array();
  for (const auto &d : designs(ctx)) {
    const std::string dir = "codegen/aie/" + d.entry + "/";
    ctx.write_file(dir + "aie.mlir", print_mlir(d, *sp), "aie-design");
    ctx.write_file(dir + "mapping.json", mapping_to_json(d).dump(2) + "\n", "aie-mapping");
    ctx.write_file(dir + "fifos.json", fifos_to_json(d).dump(2) + "\n", "aie-fifos");
    for (const auto &k : d.kernels) ctx.write_file(dir + k.source, d.sources.count(k.name) ? d.sources.at(k.name) : "", "kernel");
    ctx.write_file(dir + "host.cpp", host_program(d), "host-program");
    ctx.write_file(dir + "build.sh", build_script(d, dev), "build-script");
    if (d.kind == "task") continue;  // a kernel's design of an orchestrated workload, not an entrypoint
    Json params = Json::array();
    for (const auto &p : d.params) params.push_back(param_json(p));
    entries.push_back({{"name", d.entry}, {"kind", d.kind}, {"params", params}});
  }
  for (const auto &o : attr(ctx, kOrchestrations)) {
    const std::string entry = o["entry"].get<std::string>();
    ctx.write_file("codegen/aie/" + entry + "/orchestration.json", o["orchestration"].dump(1) + "\n", "aie-orchestration");
    entries.push_back({{"name", entry}, {"kind", "workload"}, {"params", o["params"]}, {"orchestrated", true}});
  }
  ctx.module().set_attr("htp.entrypoints", entries.dump());
}

}  // namespace htp::aie
