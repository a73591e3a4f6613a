// htp_ptosim: running a pto-a2a3sim package on the CPU simulator (docs/backends/pto-sim.md): read the
// registry, build the orchestration and kernels into the cache, load them, pass the tensors and scalars as
// the orchestration's ChipTaskArgs, run it on the simulated runtime, write report.json and trace.json.
#pragma once

#include <dlpack/dlpack.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "build_cache.hpp"
#include "package_spec.hpp"

namespace htp_ptosim {

/// One argument, in the entry's parameter order (tensor != nullptr for tensors).
struct RunArgument {
  std::string name;
  DLTensor *tensor = nullptr;
  int64_t scalar_int = 0;
  double scalar_float = 0;
};

struct SimRunRequest {
  std::string package_dir;
  std::string entry;
  std::string target = "pto-a2a3sim";
  std::string cache_dir;
  std::string run_dir;
  nlohmann::json options = nlohmann::json::object(); ///< binding options (docs §4, §5)
  std::vector<RunArgument> args;
};

/// Runs the entry; returns the htp.run.v1 report it also wrote to run_dir/report.json. Throws RunFailure.
nlohmann::json run_package(const SimRunRequest &request);

/// The directory holding the simulator headers: option `sim_include`, else $HTP_PTOSIM_INCLUDE, else
/// htp-backend-pto.data/ptosim/include next to the object holding this code (the plugin).
std::string locate_sim_include(const nlohmann::json &options);

/// A job compiling `source` (shown as `label`) as a package's orchestration: its flags and the prelude the
/// build cache precompiles. `source` may be empty for a job that only precompiles the prelude.
CompileJob orchestration_job(std::string source, std::string label);
/// The same for a kernel of core type `core`.
CompileJob kernel_job(CoreType core, std::string source, std::string label);
/// The directory of the prebuilt precompiled headers next to the simulator headers (`<include>/..`, whose
/// pch/<key>/ the build tree fills: htp_ptosim_pch), read before the user's cache.
std::string prebuilt_pch_root(const std::string &include_dir);

/// RuntimeOptions from the registry's runtime_config and the run options; throws RunFailure on bad values.
RuntimeOptions resolve_runtime_options(const nlohmann::json &runtime_config, const nlohmann::json &options);

} // namespace htp_ptosim
