#include "ptort_run.hpp"

#include <memory>

#include "ptort/htp_ptort_driver.h"
#include "run_support.hpp"

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kRuntimeLogLevel = 30; // the runtime's host log: warnings and errors only

std::string cache_dir(const SimRunRequest &req) { return (fs::path(req.cache_dir) / "pto-runtime").string(); }

BuildStats build(BuildCache &cache, std::vector<CompileJob> &jobs) {
  const auto t = Clock::now();
  BuildStats stats;
  try {
    cache.build(jobs, stats);
  } catch (const BuildError &e) {
    throw RunFailure("pto.runtime.build", e.what());
  }
  stats.seconds = seconds_since(t);
  return stats;
}

void add(BuildStats &into, const BuildStats &s) {
  into.hits += s.hits;
  into.misses += s.misses;
  into.compiler_invocations += s.compiler_invocations;
  into.seconds += s.seconds;
}

/// HTP's driver built against the runtime's host worker.
std::string build_driver(const SimRunRequest &req, const PtoRuntimeRoots &roots, const std::string &cxx,
                         BuildStats &stats) {
  const std::string dir = locate_driver_dir();
  const RuntimeBuildInputs in = driver_build_inputs(roots, dir);
  std::vector<std::string> sources = driver_sources(roots, dir);
  CompileJob job{sources[0], "htp_ptort_driver.cpp", driver_flags()};
  job.extra_sources.assign(sources.begin() + 1, sources.end());
  job.libs = driver_libs();
  std::vector<CompileJob> jobs = {job};
  try {
    BuildCache cache(cache_dir(req), cxx, in.include_dirs, in.hashed_trees);
    add(stats, build(cache, jobs));
  } catch (const BuildError &e) {
    throw RunFailure("pto.runtime.build", e.what());
  }
  return jobs[0].output;
}

int32_t direction_code(const std::string &dir) {
  return dir == "in" ? HTP_PTORT_IN : dir == "out" ? HTP_PTORT_OUT : HTP_PTORT_INOUT;
}

std::string param_dir(const PackageSpec &pkg, const std::string &name) {
  for (const ParamSpec &p : pkg.params)
    if (p.name == name) return p.dir;
  return "inout"; // unknown: staged in and copied back
}

/// A contiguous CPU tensor as the driver takes it.
HtpPtortTensor driver_tensor(const RunArgument &a, const PackageSpec &pkg) {
  const DLTensor &t = *a.tensor;
  const std::string where = "argument '" + a.name + "'";
  if (t.ndim < 1 || t.ndim > HTP_PTORT_MAX_DIMS)
    throw RunFailure("pto.sim.args", where + " has " + std::to_string(t.ndim) +
                                         " dimensions; pto-runtime tensors have 1 to 5");
  if (t.dtype.lanes != 1) throw RunFailure("pto.sim.args", where + " has vector lanes; pto-runtime has none");
  HtpPtortTensor out{};
  int64_t expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.strides && t.shape[d] > 1 && t.strides[d] != expect)
      throw RunFailure("pto.sim.args", where + " is not contiguous; pass a row-major array");
    expect *= t.shape[d];
  }
  out.data = static_cast<char *>(t.data) + t.byte_offset;
  for (int d = 0; d < t.ndim; ++d)
    out.shape[d] = t.shape[d];
  out.ndim = t.ndim;
  out.dl_code = t.dtype.code;
  out.dl_bits = t.dtype.bits;
  out.direction = direction_code(param_dir(pkg, a.name));
  return out;
}

/// Everything the driver request points at.
struct DriverArgs {
  std::vector<HtpPtortTensor> tensors;
  std::vector<uint64_t> scalars;
  std::vector<std::vector<int32_t>> signatures;
  std::vector<HtpPtortKernel> kernels;
};

DriverArgs driver_args(const SimRunRequest &req, const PackageSpec &pkg, const BuiltPackage &built) {
  DriverArgs d;
  for (const RunArgument &a : req.args)
    if (a.tensor) d.tensors.push_back(driver_tensor(a, pkg));
  for (const RunArgument &a : req.args)
    if (!a.tensor) d.scalars.push_back(scalar_bits(a, param_dtype(pkg, a.name)));
  d.signatures.reserve(pkg.kernels.size());
  for (size_t i = 0; i < pkg.kernels.size(); ++i) {
    const KernelSpec &k = pkg.kernels[i];
    if (k.signature.empty())
      throw RunFailure("pto.sim.package", "kernel_registry.json: kernel '" + k.name +
                                              "' has no \"signature\", which pto-runtime needs");
    std::vector<int32_t> sig;
    for (const std::string &s : k.signature)
      sig.push_back(direction_code(s));
    d.signatures.push_back(std::move(sig));
    d.kernels.push_back(HtpPtortKernel{k.func_id, built.kernels[i].c_str(), d.signatures.back().data(),
                                       static_cast<int32_t>(d.signatures.back().size())});
  }
  return d;
}

int device_id(const json &options) {
  const json v = options.value("device_id", json(0));
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1023)
    throw RunFailure("pto.sim.option", "option device_id must be an integer in [0, 1023]");
  return v.get<int>();
}

int aicpu_thread_num(const PackageSpec &pkg, const json &options) {
  const json &v = options.contains("aicpu_thread_num") ? options["aicpu_thread_num"]
                                                       : pkg.runtime_config.value("aicpu_thread_num", json(0));
  if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 16)
    throw RunFailure("pto.sim.option", "aicpu_thread_num must be an integer in [0, 16]");
  return v.get<int>();
}

json build_report(const BuildStats &stats, const std::string &cxx, const std::vector<std::string> &notes,
                  const std::string &recipe) {
  json b = {{"cache", stats.misses == 0 ? "hit" : "miss"},
            {"hits", stats.hits},
            {"misses", stats.misses},
            {"compiler_invocations", stats.compiler_invocations},
            {"cxx", find_program(cxx)},
            {"seconds", stats.seconds}};
  if (!notes.empty()) b["notes"] = notes;
  if (!recipe.empty()) b["recipe"] = recipe; // the package itself was built by it; the cache holds the driver
  return b;
}

} // namespace

json launch_on_pto_runtime(const SimRunRequest &req, const PackageSpec &pkg, const PtoRuntimeRoots &roots,
                           PtoPlatform platform, const BuiltPackage &built, Clock::time_point start) {
  const std::string cxx = compiler_name(req.options);
  BuildStats stats = built.stats;
  const std::string driver_path = build_driver(req, roots, cxx, stats);
  const Library driver(driver_path, "htp_ptort_driver.cpp", "pto.runtime.driver");
  const auto run = reinterpret_cast<HtpPtortRunFn>(driver.symbol("htp_ptort_run", "the pto-runtime driver"));

  const DriverArgs d = driver_args(req, pkg, built);
  const PlatformLibraries libs = platform_libraries(roots, platform);
  HtpPtortRequest rq{};
  rq.abi = HTP_PTORT_ABI;
  rq.host_library = libs.host.c_str();
  rq.aicpu_library = libs.aicpu.c_str();
  rq.aicore_library = libs.aicore.c_str();
  rq.dispatcher_library = libs.dispatcher.c_str();
  rq.sim_context_library = libs.sim_context.c_str();
  rq.device_id = device_id(req.options);
  rq.aicpu_thread_num = aicpu_thread_num(pkg, req.options);
  rq.log_level = kRuntimeLogLevel;
  rq.kernels_are_elf_objects = platform == PtoPlatform::A2A3 ? 1 : 0;
  rq.orchestration_path = built.orchestration.c_str();
  rq.function_name = pkg.orchestration.function_name.c_str();
  rq.config_name = pkg.orchestration.config_name.c_str();
  rq.kernels = d.kernels.data();
  rq.kernel_count = static_cast<int32_t>(d.kernels.size());
  rq.tensors = d.tensors.data();
  rq.tensor_count = static_cast<int32_t>(d.tensors.size());
  rq.scalars = d.scalars.data();
  rq.scalar_count = static_cast<int32_t>(d.scalars.size());
  auto result = std::make_unique<HtpPtortResult>();
  const int rc = run(&rq, result.get());

  std::vector<std::string> notes;
  if (platform == PtoPlatform::A2A3Sim && compiler_major_version(cxx) > 0 && compiler_major_version(cxx) < 13)
    notes.push_back("kernels built without PTO-ISA's cpu/TReduceIdx.hpp (GCC " +
                    std::to_string(compiler_major_version(cxx)) + " rejects its static_assert(false))");
  json runtime = runtime_report(roots, platform);
  runtime["aicpu_thread_num"] = rq.aicpu_thread_num;
  runtime["device_id"] = rq.device_id;
  json report = {{"schema", "htp.run.v1"},
                 {"binding", platform == PtoPlatform::A2A3 ? "pto.a2a3" : "pto.a2a3sim"},
                 {"target", req.target},
                 {"entry", req.entry},
                 {"path", "pto-runtime"},
                 {"ok", rc == 0},
                 {"build", build_report(stats, cxx, notes, built.recipe)},
                 {"runtime", runtime},
                 {"init_seconds", result->init_seconds},
                 {"register_seconds", result->register_seconds},
                 {"run_seconds", result->run_seconds},
                 {"wall_seconds", seconds_since(start)}};
  if (rc != 0) report["error"] = std::string(result->error);
  write_text(fs::path(req.run_dir) / "report.json", report.dump(2) + "\n");
  if (rc != 0)
    throw RunFailure("pto.runtime.run", std::string("pto-runtime (") + platform_name(platform) +
                                            "): " + result->error);
  return report;
}

json run_on_pto_runtime(const SimRunRequest &req, const PackageSpec &pkg, const PtoRuntimeRoots &roots) {
  const auto start = Clock::now();
  const std::string cxx = compiler_name(req.options);
  const RuntimeBuildInputs in = package_build_inputs(roots);
  auto job = [&](const std::string &rel, std::vector<std::string> flags) {
    const fs::path p = pkg.codegen_dir / rel;
    if (!fs::exists(p)) throw RunFailure("pto.sim.package", "the package has no codegen/pto/" + rel);
    return CompileJob{p.string(), "codegen/pto/" + rel, std::move(flags)};
  };
  std::vector<CompileJob> jobs = {job(pkg.orchestration.source, orchestration_flags())};
  jobs[0].extra_sources = orchestration_sources(roots);
  const int gcc = compiler_major_version(cxx);
  for (const KernelSpec &k : pkg.kernels)
    jobs.push_back(job(k.source, kernel_flags(k.core, gcc)));
  BuiltPackage built;
  try {
    BuildCache cache(cache_dir(req), cxx, in.include_dirs, in.hashed_trees);
    built.stats = build(cache, jobs);
  } catch (const BuildError &e) {
    throw RunFailure("pto.runtime.build", e.what());
  }
  built.orchestration = jobs[0].output;
  for (size_t i = 1; i < jobs.size(); ++i)
    built.kernels.push_back(jobs[i].output);
  return launch_on_pto_runtime(req, pkg, roots, PtoPlatform::A2A3Sim, built, start);
}

} // namespace htp_ptosim
