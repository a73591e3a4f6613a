// The bindings: aie-sim runs a package's design on the functional simulator; aie-xrt builds it with
// Peano + aiecc and runs it on an NPU through XRT, or says exactly which of the three is missing.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "design.hpp"
#include "entry_plan.hpp"
#include "passes.hpp"
#include "run_estimate.hpp"
#include "sim/kernel_library.hpp"
#include "sim/orchestrator.hpp"
#include "sim/simulator.hpp"
#include "xrt_toolchain.hpp"

namespace htp::aie {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw htp::RunError("cannot read " + p.string(), "aie.package");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json read_json(const fs::path &p) {
  auto j = Json::parse(read_text(p), nullptr, false);
  if (j.is_discarded()) throw htp::RunError(p.string() + " is not valid JSON", "aie.package");
  return j;
}

fs::path design_dir(const htp::RunContext &ctx) { return fs::path(ctx.package_dir()) / "codegen" / "aie" / ctx.entry(); }

/// The design in `dir` (mapping.json, fifos.json); `what` names it in the error of a malformed one.
Design load_design(const fs::path &dir, const std::string &what) {
  try {
    return design_from_json(read_json(dir / "mapping.json"), read_json(dir / "fifos.json"));
  } catch (const htp::RunError &) {
    throw;
  } catch (const std::exception &e) {
    throw htp::RunError(what + " is malformed: " + e.what(), "aie.package");
  }
}

Design load_design(const htp::RunContext &ctx) {
  return load_design(design_dir(ctx), "the design of entry '" + ctx.entry() + "' in " + design_dir(ctx).string());
}

/// The bytes of a runtime scalar as the design's one-element buffer holds it.
std::vector<char> scalar_bytes(const htp::RunContext &ctx, const RuntimeParam &p) {
  const HtpRunArg &a = ctx.arg(p.name);
  if (a.tensor) throw htp::RunError("argument '" + p.name + "' is a tensor; the design expects a scalar", "aie.argument");
  return scalar_object(p.dtype, a.scalar_float, a.scalar_int);
}

/// Host buffers by parameter: the tensors in place, runtime scalars in `scalars` (one element each).
std::map<std::string, sim::HostBuffer> host_buffers(const htp::RunContext &ctx, const Design &d,
                                                    std::map<std::string, std::vector<char>> &scalars) {
  std::map<std::string, sim::HostBuffer> out;
  for (const auto &p : d.params) {
    if (p.scalar) {
      auto &b = scalars[p.name] = scalar_bytes(ctx, p);
      out[p.name] = {b.data(), b.size()};
      continue;
    }
    htp::RunTensor t = ctx.tensor(p.name);
    if (static_cast<int64_t>(t.element_bytes()) != dtype_bytes(p.dtype))
      throw htp::RunError("argument '" + p.name + "' has " + std::to_string(t.element_bytes()) + "-byte elements; the design expects " + p.dtype, "aie.argument");
    out[p.name] = {t.bytes(), static_cast<size_t>(t.elements()) * t.element_bytes()};
  }
  return out;
}

double option_number(const htp::RunContext &ctx, const char *key, double fallback) {
  auto j = Json::parse(ctx.options_json(), nullptr, false);
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return fallback;
}

/// Option `timeout_s`: the run's time limit in seconds, 60 when absent; 0 runs without one.
double timeout_seconds(const htp::RunContext &ctx) { return option_number(ctx, "timeout_s", 60.0); }

/// The simulator's options are checked as pto-sim checks its own: an unknown key or a malformed value is an
/// error naming it (a misspelt `timout_s` was ignored, the run then taking the default).
void check_sim_options(const htp::RunContext &ctx) {
  const Json j = Json::parse(ctx.options_json(), nullptr, false);
  if (!j.is_object()) throw htp::RunError("the binding options must be a JSON object", "aie.option");
  for (const auto &[key, value] : j.items()) {
    if (key != "timeout_s")
      throw htp::RunError("unknown option '" + key + "' of aie-sim (known: timeout_s)", "aie.option");
    if (!value.is_number() || value.get<double>() < 0)
      throw htp::RunError("option timeout_s must be a number of seconds >= 0 (0: no limit), not " + value.dump(),
                          "aie.option");
  }
}

/// What every aie-sim report holds: who ran what, the simulator's kernel library and its build section (the
/// same keys pto-sim writes: whether the kernels came from the cache), how long the run took, the trace.
Json sim_report(const htp::RunContext &ctx, const std::string &description, const sim::CompiledKernels &lib,
                double run_seconds) {
  return {{"schema", "htp.run.v1"},
          {"binding", "aie.sim"},
          {"target", ctx.target()},
          {"entry", ctx.entry()},
          {"path", "simulator"},
          {"ok", true}, // as pto's bindings say it; a run that fails reports an error instead
          {"description", description},
          {"build", {{"cache", lib.cache_hit ? "hit" : "miss"}, {"compiler_invocations", lib.cache_hit ? 0 : 1},
                     {"hits", lib.cache_hit ? 1 : 0}, {"misses", lib.cache_hit ? 0 : 1}, {"cxx", lib.compiler}}},
          {"run_seconds", run_seconds},
          {"kernels", {{"library", lib.library.string()}, {"cache_hit", lib.cache_hit}, {"compiler", lib.compiler}}},
          {"trace", "trace.json"}};
}

void read_orchestrated_arguments(htp::RunContext &ctx, const Json &doc, std::map<std::string, sim::OrchTensor> &tensors,
                                 std::map<std::string, Json> &scalars) {
  for (const Json &p : doc.at("workload").at("params")) {
    const std::string name = p.at("name").get<std::string>();
    const Json &type = p.at("type");
    const std::string dtype = type.value("dtype", "");
    if (type.value("kind", "") == "scalar") {
      const HtpRunArg &a = ctx.arg(name);
      if (a.tensor) throw htp::RunError("argument '" + name + "' is a tensor; the workload expects a scalar", "aie.argument");
      scalars[name] = floating_dtype(dtype) ? Json(a.scalar_float) : Json(a.scalar_int);
      continue;
    }
    htp::RunTensor t = ctx.tensor(name);
    if (static_cast<int64_t>(t.element_bytes()) != dtype_bytes(dtype))
      throw htp::RunError("argument '" + name + "' has " + std::to_string(t.element_bytes()) + "-byte elements; the workload expects " + dtype, "aie.argument");
    // A symbolic dim ("B") takes the argument's extent (the host checked that every use of a symbol agrees)
    // and is a parameter of the workload's expressions.
    const Json &dims = type.at("shape");
    const std::vector<int64_t> given = t.shape();
    std::vector<int64_t> shape;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d].is_string()) {
        shape.push_back(dims[d].get<int64_t>());
        continue;
      }
      if (given.size() != dims.size())
        throw htp::RunError("argument '" + name + "' has " + std::to_string(given.size()) + " dimensions; the workload "
                            "expects " + std::to_string(dims.size()), "aie.argument");
      shape.push_back(given[d]);
      scalars[dims[d].get<std::string>()] = Json(given[d]);
    }
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (n != static_cast<int64_t>(t.elements()))
      throw htp::RunError("argument '" + name + "' has " + std::to_string(t.elements()) + " elements; the workload expects " +
                              std::to_string(n), "aie.argument");
    tensors[name] = {t.bytes(), std::move(shape), dtype};
  }
}

void run_orchestration(htp::RunContext &ctx, const Json &doc, const std::map<std::string, Design> &designs,
                       const std::map<std::string, std::string> &sources, const std::map<std::string, sim::OrchTensor> &tensors,
                       const std::map<std::string, Json> &scalars) {
  const fs::path run_dir = ctx.run_dir();
  sim::CompiledKernels lib;
  sim::OrchestrationResult result;
  try {
    lib = sim::compile_kernels(sources, ctx.cache_dir(), run_dir / "aie-sim-build.log");
    const htp::RunTimeLimit limit(timeout_seconds(ctx));
    limit.bind(lib.bind_stop);
    result = sim::orchestrate(doc, designs, lib.entries, tensors, scalars, {limit.seconds(), &limit});
  } catch (const sim::SimError &e) {
    throw htp::RunError(std::string("aie-sim: ") + e.what(), e.code());
  } catch (const Json::exception &e) {
    throw htp::RunError(std::string("aie-sim: orchestration.json is malformed: ") + e.what(), "aie.package");
  }
  // The estimate: tasks run one after another, each its kernel's design once.
  std::map<std::string, double> per_kernel;
  for (const auto &[kernel, d] : designs) {
    const htp::RunEstimate e = estimate_design(d);
    per_kernel[kernel] = e.summary.value("available", false) ? e.summary.value("makespan_lower_bound_ns", 0.0) : 0.0;
  }
  Json task_estimates = Json::array();
  double start_ns = 0;
  for (const Json &t : result.tasks) {
    const double ns = per_kernel[t.at("kernel").get<std::string>()];
    task_estimates.push_back({{"task", t.at("task")}, {"kernel", t.at("kernel")}, {"core", "one task at a time"},
                              {"estimated_device_ns", ns}, {"start_ns", start_ns}});
    start_ns += ns;
  }
  Json trace = {{"traceEvents", Json::array({
                     {{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", "aie-sim (host-orchestrated)"}}}},
                     {{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", 1}, {"args", {{"name", "tasks (one at a time)"}}}}})}};
  for (const Json &e : result.trace_events) trace["traceEvents"].push_back(e);
  std::ofstream(run_dir / "trace.json", std::ios::binary) << trace.dump() << "\n";
  Json report = sim_report(ctx,
                           "aie-sim: host orchestration of codegen/aie/" + ctx.entry() +
                               "/orchestration.json, each task its kernel's single-core design on the simulator",
                           lib, result.seconds);
  report["orchestrated"] = true;
  report["tasks"] = result.tasks.size();
  report["estimate"] = {{"kind", "estimate"}, {"available", true},
                        {"model", "host-orchestrated: tasks run one after another, each its kernel's single-core "
                                  "design (that design's estimate)"},
                        {"makespan_lower_bound_ns", start_ns}, {"critical_path_ns", start_ns}};
  report["task_estimates"] = task_estimates;
  ctx.write_report(report.dump(2) + "\n");
}

/// A host-orchestrated workload (orchestration.json): the task graph walked on the host, each task its
/// kernel's single-core design on the simulator (sim/orchestrator.hpp).
void run_orchestrated(htp::RunContext &ctx) {
  const fs::path dir = design_dir(ctx);
  const Json doc = read_json(dir / "orchestration.json");
  if (doc.value("schema", "") != kOrchestrationSchema)
    throw htp::RunError(dir.string() + "/orchestration.json is not " + std::string(kOrchestrationSchema), "aie.package");
  std::map<std::string, Design> designs;
  std::map<std::string, std::string> sources;
  if (!doc.contains("kernels") || !doc["kernels"].is_object() || !doc.contains("workload") || !doc["workload"].is_object())
    throw htp::RunError(dir.string() + "/orchestration.json has no 'kernels' object or no 'workload'", "aie.package");
  for (const auto &[kernel, entry] : doc["kernels"].items()) {
    const std::string rel = entry.is_object() && entry.contains("design") && entry["design"].is_string()
                                ? entry["design"].get<std::string>() : std::string();
    // A design directory of this entry: tasks/<name>, nothing absolute, nothing that climbs out.
    if (rel.rfind("tasks/", 0) != 0 || rel.find("..") != std::string::npos || rel.find('\\') != std::string::npos ||
        rel.find('/', 6) != std::string::npos)
      throw htp::RunError(dir.string() + "/orchestration.json: kernel '" + kernel + "' names design '" + rel +
                              "', which is not a tasks/<name> directory of the entry", "aie.package");
    const fs::path tdir = dir / rel;
    Design &d = designs[kernel] = load_design(tdir, "the task design " + tdir.string() + " of entry '" + ctx.entry() + "'");
    for (const auto &k : d.kernels) sources[k.name] = read_text(tdir / k.source);
  }
  std::map<std::string, sim::OrchTensor> tensors;
  std::map<std::string, Json> scalars;
  try {
    read_orchestrated_arguments(ctx, doc, tensors, scalars);
  } catch (const Json::exception &e) {
    throw htp::RunError(dir.string() + "/orchestration.json: the workload's parameters are malformed: " + e.what(), "aie.package");
  }
  run_orchestration(ctx, doc, designs, sources, tensors, scalars);
}

}  // namespace

void run_sim(htp::RunContext &ctx) {
  check_sim_options(ctx);
  if (fs::exists(design_dir(ctx) / "orchestration.json")) return run_orchestrated(ctx);
  const Design d = load_design(ctx);
  std::map<std::string, std::string> sources;
  for (const auto &k : d.kernels) sources[k.name] = read_text(design_dir(ctx) / k.source);
  const fs::path run_dir = ctx.run_dir();
  const auto started = std::chrono::steady_clock::now();
  sim::CompiledKernels lib;
  sim::SimResult result;
  try {
    lib = sim::compile_kernels(sources, ctx.cache_dir(), run_dir / "aie-sim-build.log");
    std::map<std::string, std::vector<char>> scalars;
    const htp::RunTimeLimit limit(timeout_seconds(ctx));
    limit.bind(lib.bind_stop);
    result = sim::simulate(d, lib.entries, host_buffers(ctx, d, scalars), {limit.seconds(), &limit});
  } catch (const sim::SimError &e) {
    throw htp::RunError(std::string("aie-sim: ") + e.what(), e.code());
  }
  const htp::RunEstimate est = estimate_design(d);
  for (const auto &e : est.trace_events) result.trace["traceEvents"].push_back(e);
  std::ofstream(run_dir / "trace.json", std::ios::binary) << result.trace.dump() << "\n";
  Json report = sim_report(ctx,
                           "aie-sim: functional simulation of codegen/aie/" + ctx.entry() +
                               " (object FIFOs with depths, every core, link and DMA channel a resumable actor on one thread, DMA patterns)",
                           lib, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  report["device"] = d.device;
  report["cores"] = result.summary["cores"];
  report["fifo_objects"] = result.summary["fifo_objects"];
  report["estimate"] = est.summary;
  report["task_estimates"] = est.tasks;
  ctx.write_report(report.dump(2) + "\n");
}

void run_xrt(htp::RunContext &ctx) {
  if (fs::exists(design_dir(ctx) / "orchestration.json"))
    throw htp::RunError("aie-xrt: entry '" + ctx.entry() + "' is host-orchestrated (codegen/aie/" + ctx.entry() +
                            "/orchestration.json): its kernels' designs are emitted and validated, with a build.sh "
                            "each under tasks/, but this version emits no XRT host program that walks the task "
                            "graph; run it with aie.sim", "aie.xrt.orchestrated");
  const XrtToolchain tc = find_xrt_toolchain();
  if (!tc.missing.empty()) throw htp::RunError(missing_toolchain_message(ctx.entry(), tc), "aie.xrt.missing");
  const Design d = load_design(ctx);
  const fs::path run_dir = ctx.run_dir();
  const fs::path build = run_dir / "xrt-build";
  const std::string env = "PEANO_INSTALL_DIR='" + tc.peano + "' XILINX_XRT='" + tc.xrt + "' PATH='" + tc.aiecc_dir + ":'\"$PATH\" ";
  const std::string cmd = env + "sh '" + (design_dir(ctx) / "build.sh").string() + "' '" + build.string() + "' > '" +
                          (run_dir / "xrt-build.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0)
    throw htp::RunError("aie-xrt: building entry '" + ctx.entry() + "' failed; see " + (run_dir / "xrt-build.log").string(), "aie.xrt.build");
  for (const auto &p : d.params) {
    if (p.dir == "out") continue;
    if (p.scalar) {
      const auto b = scalar_bytes(ctx, p);
      std::ofstream(run_dir / (p.name + ".bin"), std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
      continue;
    }
    htp::RunTensor t = ctx.tensor(p.name);
    std::ofstream(run_dir / (p.name + ".bin"), std::ios::binary)
        .write(static_cast<const char *>(t.bytes()), static_cast<std::streamsize>(t.elements() * t.element_bytes()));
  }
  const std::string run = "'" + (build / "host").string() + "' '" + (build / "final.xclbin").string() + "' '" +
                          (build / "insts.bin").string() + "' '" + run_dir.string() + "' > '" + (run_dir / "xrt-run.log").string() + "' 2>&1";
  if (std::system(run.c_str()) != 0)
    throw htp::RunError("aie-xrt: running entry '" + ctx.entry() + "' on the NPU failed; see " + (run_dir / "xrt-run.log").string(), "aie.xrt.run");
  for (const auto &p : d.params) {
    if (p.dir == "in") continue;
    htp::RunTensor t = ctx.tensor(p.name);
    std::ifstream(run_dir / (p.name + ".bin"), std::ios::binary)
        .read(static_cast<char *>(t.bytes()), static_cast<std::streamsize>(t.elements() * t.element_bytes()));
  }
  ctx.write_report(Json({{"schema", "htp.run.v1"}, {"binding", "aie.xrt"}, {"target", ctx.target()}, {"entry", ctx.entry()},
                         {"path", "device"}, {"ok", true}, {"device", d.device}, {"build_log", "xrt-build.log"}, {"run_log", "xrt-run.log"}})
                       .dump(2) + "\n");
}

}  // namespace htp::aie
