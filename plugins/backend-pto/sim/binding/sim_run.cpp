#include "sim_run.hpp"

#include <htp/run.hpp>
#include <htp/run_time_limit.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include <htp/mem_placement.hpp>

#include "build_cache.hpp"
#include "isa_table.hpp"
#include "pto_runtime.hpp"
#include "ptort_run.hpp"
#include "run_estimate.hpp"
#include "run_support.hpp"

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// timing(batched(n)): {"<size>": batches of that size} (empty without batching).
json batches_json(const Runtime &rt) {
  json out = json::object();
  for (const auto &[size, count] : rt.batch_sizes()) out[std::to_string(size)] = count;
  return out;
}

int int_option(const json &obj, const char *key, int fallback, int lo, int hi, const std::string &where) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_number_integer() || obj[key].get<int64_t>() < lo || obj[key].get<int64_t>() > hi)
    throw RunFailure("pto.sim.option", where + " " + key + " must be an integer in [" + std::to_string(lo) +
                                           ", " + std::to_string(hi) + "]");
  return obj[key].get<int>();
}

/// Applies one layer of settings (registry runtime_config.sim or the run options).
void apply(RuntimeOptions &o, const json &obj, const std::string &where) {
  o.aiv_cores = int_option(obj, "aiv_cores", o.aiv_cores, 0, 64, where);
  o.aic_cores = int_option(obj, "aic_cores", o.aic_cores, 0, 64, where);
  o.task_window = int_option(obj, "task_window", o.task_window, 1, 1 << 24, where);
  o.batch = int_option(obj, "batch", o.batch, 1, 1 << 20, where);
  o.batch_wait_us = int_option(obj, "batch_wait_us", o.batch_wait_us, 0, 60000000, where);
  if (obj.contains("aicpu_thread_num"))
    o.schedulers = std::max(1, int_option(obj, "aicpu_thread_num", 2, 1, 16, where) - 1);
  if (obj.contains("dispatch")) {
    const auto p =
        obj["dispatch"].is_string() ? parse_policy(obj["dispatch"].get<std::string>()) : std::nullopt;
    if (!p)
      throw RunFailure("pto.sim.option",
                       where +
                           " dispatch must be one of \"round_robin\", \"affinity\", \"hash\", "
                           "\"work_steal\", not " +
                           obj["dispatch"].dump());
    o.dispatch = *p;
  }
  if (obj.contains("trace")) {
    if (!obj["trace"].is_boolean())
      throw RunFailure("pto.sim.option", where + " trace must be true or false");
    o.trace = obj["trace"].get<bool>();
  }
}

std::optional<DataType> data_type(const DLDataType &t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
  case kDLFloat:
    return t.bits == 32   ? std::optional(DataType::FLOAT32)
           : t.bits == 16 ? std::optional(DataType::FLOAT16)
                          : std::nullopt;
  case kDLBfloat: return t.bits == 16 ? std::optional(DataType::BFLOAT16) : std::nullopt;
  case kDLInt:
    switch (t.bits) {
    case 8: return DataType::INT8;
    case 16: return DataType::INT16;
    case 32: return DataType::INT32;
    case 64: return DataType::INT64;
    }
    return std::nullopt;
  case kDLUInt:
    switch (t.bits) {
    case 8: return DataType::UINT8;
    case 16: return DataType::UINT16;
    case 32: return DataType::UINT32;
    case 64: return DataType::UINT64;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

ChipTensor chip_tensor(const RunArgument &a) {
  const DLTensor &t = *a.tensor;
  const auto dtype = data_type(t.dtype);
  if (!dtype)
    throw RunFailure("pto.sim.args",
                     "argument '" + a.name + "': this element type has no pto-runtime DataType");
  if (t.ndim > MAX_TENSOR_DIMS)
    throw RunFailure("pto.sim.args", "argument '" + a.name + "' has " + std::to_string(t.ndim) +
                                         " dimensions; pto-runtime tensors have at most 5");
  uint32_t shapes[MAX_TENSOR_DIMS] = {1};
  for (int i = 0; i < t.ndim; ++i) {
    // (a symbolic dimension, bound by the array; a static one past this is refused at compile time)
    if (t.shape[i] > int64_t{UINT32_MAX})
      throw RunFailure("pto.sim.args", "argument '" + a.name + "' has " + std::to_string(t.shape[i]) +
                                           " elements in dimension " + std::to_string(i) +
                                           ", past the 4294967295 pto-runtime's tensors take per dimension: "
                                           "spread it over one more dimension");
    shapes[i] = static_cast<uint32_t>(t.shape[i]);
  }
  void *data = static_cast<char *>(t.data) + t.byte_offset;
  return make_tensor_external(data, shapes, t.ndim > 0 ? static_cast<uint32_t>(t.ndim) : 1u, *dtype);
}

json worker_report(const Runtime &rt) {
  json out = json::array();
  for (const WorkerStats &w : rt.worker_stats())
    out.push_back({{"name", w.name}, {"tasks", w.tasks}, {"steals", w.steals}});
  return out;
}

/// What every source of a package is compiled with (the orchestration at that; kernels add kernel_flags').
/// -O1: neither holds a loop worth more (the tile loops run out of line in the simulator, compiled at -O3:
/// pto/sim/isa_abi.hpp), and code generation is most of a first run: flash_decode's six sources take 2.1 s
/// of compiler time at -O2 and 1.7 s at -O1, with the same simulated numbers and no slower steps
/// (llm_decode 8 x 512: 93 us per task either way).
const std::vector<std::string> kCommonFlags = {"-std=c++17", "-O1", "-fPIC", "-shared", "-w"};

// The simulator headers every emitted kernel starts with (backend-pto's kernel prologue), precompiled once per
// cache and flags: a third of a kernel's compile is parsing them.
const char *const kKernelPrelude =
    "#include <cstdint>\n"
    // libstdc++ declares C++17's special math functions (std::assoc_laguerre, ...) in <cmath> as inline functions
    // whose templates every translation unit instantiates again, precompiled or not (a tenth of a kernel's
    // compile); kernels use none of them.
    "#if defined(__GLIBCXX__)\n#undef _GLIBCXX_USE_STD_SPEC_FUNCS\n#endif\n"
    "#include <pto/pto-inst.hpp>\n#include \"tensor.h\"\n#include \"pipe_sync.h\"\n";

// The headers every emitted orchestration starts with (backend-pto's orchestration prologue), precompiled the
// same way.
const char *const kOrchestrationPrelude = "#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n"
                                          "#include <stdio.h>\n#include <exception>\n#include <initializer_list>\n"
                                          "#include \"pto_orchestration_api.h\"\n";

std::vector<std::string> kernel_flags(CoreType core) {
  std::vector<std::string> flags = kCommonFlags;
  // No -O3 any more: a kernel is checks and calls into the simulator's float tile loops, and -O3 only made it
  // build longer (flash_decode's merge 1.2 s against 0.76 s at -O2, before the precompiled headers).
  flags.insert(flags.end(), {"-D__CPU_SIM", "-DHTP_PTOSIM=1", core == CoreType::AIC ? "-D__DAV_CUBE__" : "-D__DAV_VEC__"});
  return flags;
}

} // namespace

CompileJob orchestration_job(std::string source, std::string label) {
  CompileJob job{std::move(source), std::move(label), kCommonFlags, {}, false};
  job.prelude = kOrchestrationPrelude;
  return job;
}

CompileJob kernel_job(CoreType core, std::string source, std::string label) {
  CompileJob job{std::move(source), std::move(label), kernel_flags(core), {}, false};
  job.prelude = kKernelPrelude;
  return job;
}

std::string prebuilt_pch_root(const std::string &include_dir) {
  return fs::path(include_dir).parent_path().string();
}

RuntimeOptions resolve_runtime_options(const json &runtime_config, const json &options) {
  RuntimeOptions o;
  if (runtime_config.contains("aicpu_thread_num")) {
    json only = {{"aicpu_thread_num", runtime_config["aicpu_thread_num"]}};
    apply(o, only, "kernel_registry.json runtime_config:");
  }
  if (runtime_config.contains("sim") && runtime_config["sim"].is_object())
    apply(o, runtime_config["sim"], "kernel_registry.json runtime_config.sim:");
  apply(o, options, "option");
  return o;
}

namespace {

/// One job per source: jobs[0] is the orchestration, jobs[1 + i] kernel i.
std::vector<CompileJob> compile_jobs(const PackageSpec &pkg) {
  auto source = [&](const std::string &rel) {
    const fs::path p = pkg.codegen_dir / rel;
    if (!fs::exists(p)) throw RunFailure("pto.sim.package", "the package has no codegen/pto/" + rel);
    return p.string();
  };
  const std::string &orch = pkg.orchestration.source;
  std::vector<CompileJob> jobs = {orchestration_job(source(orch), "codegen/pto/" + orch)};
  for (const KernelSpec &k : pkg.kernels)
    jobs.push_back(kernel_job(k.core, source(k.source), "codegen/pto/" + k.source));
  return jobs;
}

BuildStats build_all(std::vector<CompileJob> &jobs, const SimRunRequest &req, const std::string &cxx) {
  const auto t = Clock::now();
  BuildStats stats;
  try {
    const std::string include = locate_sim_include(req.options);
    BuildCache cache((fs::path(req.cache_dir) / "pto-sim").string(), cxx, include);
    cache.use_prebuilt(prebuilt_pch_root(include));
    cache.build(jobs, stats);
  } catch (const BuildError &e) {
    throw RunFailure("pto.sim.build", e.what());
  }
  stats.seconds = seconds_since(t);
  return stats;
}

/// Binds a kernel's instructions to the simulator's float tile loops (pto/sim/isa_abi.hpp). A kernel built
/// against the simulator headers exports htp_ptosim_bind_isa; one that does not use them has nothing to bind.
void bind_tile_loops(const Library &lib, const std::string &label) {
  using Bind = bool (*)(const pto::sim::F32Isa *);
  if (auto bind = reinterpret_cast<Bind>(lib.find("htp_ptosim_bind_isa")); bind && !bind(&htp::ptosim::f32_isa()))
    throw RunFailure("pto.sim.build", label + " was built against another layout of the simulator's tile loops "
                                              "(clear the build cache and run again)");
}

/// The orchestration's exported functions.
struct Orchestration {
  void (*entry)(const ChipTaskArgs &) = nullptr;
  PTO2OrchestrationConfig (*config)(const ChipTaskArgs &) = nullptr; // optional
  void (*bind)(PTO2Runtime *) = nullptr;
};

Orchestration orchestration_of(const Library &lib, const OrchestrationSpec &spec, const std::string &label) {
  Orchestration o;
  o.entry = reinterpret_cast<decltype(o.entry)>(lib.symbol(spec.function_name, label));
  o.bind = reinterpret_cast<decltype(o.bind)>(lib.symbol("framework_bind_runtime", label));
  o.config = reinterpret_cast<decltype(o.config)>(lib.find(spec.config_name));
  return o;
}

/// A tensor argument global memory holds in a `mem` layout: the caller's row-major array copied into the
/// layout's order before the run (element e at offsets[e]) and, when the entry writes it, back after it.
struct StagedTensor {
  const RunArgument *arg = nullptr;
  std::vector<int64_t> offsets;
  std::vector<unsigned char> buffer;
  size_t bytes = 0;  ///< per element
  bool writes = false;

  unsigned char *caller() const { return static_cast<unsigned char *>(arg->tensor->data) + arg->tensor->byte_offset; }
  void copy_in() {
    for (size_t e = 0; e < offsets.size(); ++e)
      std::memcpy(buffer.data() + static_cast<size_t>(offsets[e]) * bytes, caller() + e * bytes, bytes);
  }
  void copy_out() const {
    if (!writes) return;
    for (size_t e = 0; e < offsets.size(); ++e)
      std::memcpy(caller() + e * bytes, buffer.data() + static_cast<size_t>(offsets[e]) * bytes, bytes);
  }
};

StagedTensor stage(const RunArgument &a, const json &layout, const PackageSpec &pkg) {
  StagedTensor s;
  s.arg = &a;
  const DLTensor &t = *a.tensor;
  s.bytes = static_cast<size_t>(t.dtype.bits / 8) * t.dtype.lanes;
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  const htp::MemPlacement placement{layout["extents"].get<std::vector<int64_t>>(),
                                    layout["strides"].get<std::vector<int64_t>>()};
  int64_t count = 1;
  for (int64_t e : placement.extents) count *= e;
  if (count != n)
    throw RunFailure("pto.sim.args", "argument '" + a.name + "' has " + std::to_string(n) + " elements, but its memory "
                                     "layout places " + std::to_string(count));
  auto offsets = htp::placement_offsets(placement);
  if (!offsets)
    throw RunFailure("pto.sim.package", "the memory layout of '" + a.name + "' does not place each element of the "
                                        "tensor once");
  s.offsets = std::move(*offsets);
  s.buffer.assign(static_cast<size_t>(n) * s.bytes, 0);
  for (const ParamSpec &p : pkg.params)
    if (p.name == a.name) s.writes = p.dir != "in";
  s.copy_in();
  return s;
}

/// The entry's ChipTaskArgs (tensors first, then scalars, each in parameter order); `tensors` backs them,
/// `staged` the arguments in a memory layout (their ChipTensors point into the staged buffers).
void make_arguments(const SimRunRequest &req, const PackageSpec &pkg, std::vector<ChipTensor> &tensors,
                    std::vector<StagedTensor> &staged, ChipTaskArgs &args) {
  tensors.reserve(req.args.size());
  staged.reserve(req.args.size());
  for (const RunArgument &a : req.args)
    if (a.tensor) {
      tensors.push_back(chip_tensor(a));
      if (pkg.orchestration.staging.contains(a.name)) {
        staged.push_back(stage(a, pkg.orchestration.staging[a.name], pkg));
        tensors.back().buffer.addr = reinterpret_cast<uint64_t>(staged.back().buffer.data());
      }
      args.add_input(tensors.back());
    }
  for (const RunArgument &a : req.args) {
    if (a.tensor) continue;
    args.add_scalar(scalar_bits(a, param_dtype(pkg, a.name)));
  }
  if (args.has_error)
    throw RunFailure("pto.sim.args", std::string("the entry's arguments: ") + args.error_msg);
}

void check_argument_count(const Orchestration &o, const ChipTaskArgs &args, const OrchestrationSpec &spec,
                          const std::string &label) {
  if (!o.config) return;
  const int given = args.tensor_count() + args.scalar_count();
  const int expected = o.config(args).expected_arg_count;
  if (expected != given)
    throw RunFailure("pto.sim.args", label + " expects " + std::to_string(expected) + " arguments (" +
                                         spec.config_name + "), the run passes " + std::to_string(given));
}

/// What a run measured, for the report.
struct Execution {
  double run_seconds = 0;
  double orchestration_seconds = 0;
};

Execution execute(Runtime &rt, const Orchestration &o, const ChipTaskArgs &args, const std::string &label) {
  Execution e;
  const auto t = Clock::now();
  o.bind(rt.api());
  rt.orchestration_begin();
  try {
    o.entry(args);
  } catch (const std::exception &ex) {
    // (a generated check's message names the program's construct, which says more than the generated file)
    rt.fail(htp::located_message(ex.what()).first.line ? std::string(ex.what()) : label + ": " + ex.what());
  }
  rt.orchestration_end();
  e.orchestration_seconds = seconds_since(t);
  rt.wait_all();
  e.run_seconds = seconds_since(t);
  o.bind(nullptr);
  return e;
}

json make_report(const SimRunRequest &req, const Runtime &rt, const BuildStats &stats, const std::string &cxx,
                 const Execution &e, const RunEstimate &est, Clock::time_point start) {
  const RuntimeOptions &o = rt.options();
  json report = {{"schema", "htp.run.v1"},
                 {"binding", "pto.a2a3sim"},
                 {"target", req.target},
                 {"entry", req.entry},
                 {"path", "htp-cpu-sim"},
                 {"ok", !rt.failed()},
                 {"build",
                  {{"cache", stats.misses == 0 ? "hit" : "miss"},
                   {"hits", stats.hits},
                   {"misses", stats.misses},
                   {"compiler_invocations", stats.compiler_invocations},
                   {"precompiled_headers_built", stats.pch_builds},
                   {"cxx", find_program(cxx)},
                   {"seconds", stats.seconds}}},
                 {"runtime",
                  {{"dispatch", policy_name(o.dispatch)},
                   {"aiv_cores", o.aiv_cores},
                   {"aic_cores", o.aic_cores},
                   {"schedulers", o.schedulers},
                   {"task_window", o.task_window},
                   {"batch", o.batch}}},
                 {"dispatch_batches", batches_json(rt)},
                 {"tasks", rt.task_count()},
                 {"run_seconds", e.run_seconds},
                 {"orchestration_seconds", e.orchestration_seconds},
                 {"wall_seconds", seconds_since(start)},
                 {"workers", worker_report(rt)}};
  report["estimate"] = est.summary;
  report["task_estimates"] = est.tasks;
  if (o.trace) report["trace"] = "trace.json";
  if (!rt.log_lines().empty()) report["log"] = "orchestration.log";
  if (rt.failed()) report["error"] = rt.error();
  return report;
}

/// trace.json (the estimate as a second track) and orchestration.log.
void write_outputs(const fs::path &run_dir, const Runtime &rt, const RunEstimate &est) {
  if (rt.options().trace) write_text(run_dir / "trace.json", rt.trace_json(est.trace_events));
  std::string log;
  for (const auto &line : rt.log_lines())
    log += line + "\n";
  if (!log.empty()) write_text(run_dir / "orchestration.log", log);
}

} // namespace

json run_package(const SimRunRequest &req) {
  const auto start = Clock::now();
  check_options(req.options);
  const std::string choice = runtime_choice(req.options);
  const PackageSpec pkg = read_package(req.package_dir, req.entry);
  if (const auto roots = find_pto_runtime(
          choice, PtoPlatform::A2A3Sim, {pkg.runtime_revision, pkg.isa_revision, revision_check(req.options)})) {
    if (!pkg.orchestration.staging.empty())
      throw RunFailure("pto.runtime.staging",
                       "entry '" + req.entry + "' passes " + pkg.orchestration.staging.begin().key() +
                           " in a memory layout (`mem` facet), which HTP's simulator stages; the pto-runtime "
                           "binding passes arrays as they are: run it with {\"runtime\": \"htp\"}");
    return run_on_pto_runtime(req, pkg, *roots);
  }
  const RuntimeOptions ropts = resolve_runtime_options(pkg.runtime_config, req.options);
  const std::string cxx = compiler_name(req.options);
  std::vector<CompileJob> jobs = compile_jobs(pkg);
  const BuildStats stats = build_all(jobs, req, cxx);

  std::vector<std::unique_ptr<Library>> libs;
  for (const CompileJob &j : jobs)
    libs.push_back(std::make_unique<Library>(j.output, j.label));
  for (size_t i = 1; i < libs.size(); ++i)
    bind_tile_loops(*libs[i], jobs[i].label);
  const std::string &label = jobs[0].label;
  const Orchestration orch = orchestration_of(*libs[0], pkg.orchestration, label);
  std::vector<ChipTensor> tensors;
  std::vector<StagedTensor> staged;
  ChipTaskArgs args;
  make_arguments(req, pkg, tensors, staged, args);
  check_argument_count(orch, args, pkg.orchestration, label);

  json report;
  {
    // (bound before the runtime's threads start; they end, and stop reading the flag, before it is released)
    const htp::RunTimeLimit limit(timeout_seconds(req.options));
    for (const auto &lib : libs) limit.bind(lib->find(htp::kBindStopSymbol));
    Runtime rt(ropts);
    for (size_t i = 0; i < pkg.kernels.size(); ++i)
      rt.set_kernel(pkg.kernels[i].func_id, pkg.kernels[i].core,
                    reinterpret_cast<KernelFn>(libs[i + 1]->symbol("kernel_entry", jobs[i + 1].label)),
                    pkg.kernels[i].name);
    const Execution e = execute(rt, orch, args, label);
    for (const StagedTensor &t : staged) t.copy_out();
    const RunEstimate est = estimate_run(pkg, rt.records());
    write_outputs(req.run_dir, rt, est);
    report = make_report(req, rt, stats, cxx, e, est, start);
    if (rt.failed() && limit.expired()) {  // "..., stopped in task 3 (kernel k on aiv0)"
      std::string where = rt.error();
      const std::string said = std::string(": ") + htp::kTimeLimitMessage;
      if (where.size() >= said.size() && where.compare(where.size() - said.size(), said.size(), said) == 0)
        where.resize(where.size() - said.size());
      report["error"] = limit.message() + ", stopped in " + where;
    }
  } // the runtime's threads end before the libraries are closed
  write_text(fs::path(req.run_dir) / "report.json", report.dump(2) + "\n");
  if (report.contains("error")) throw RunFailure("pto.sim.run", report["error"].get<std::string>());
  return report;
}

} // namespace htp_ptosim
