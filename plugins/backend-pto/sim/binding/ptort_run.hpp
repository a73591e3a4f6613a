// htp_ptosim: running a PTO package on the real pto-runtime (docs/backends/pto.md §8). On a2a3sim the
// package's orchestration and kernels are built, unchanged, with the flags of the runtime's own sim build
// into the content-hash cache; on the a2a3 device they come from the package's build recipe. Either way
// HTP's driver (ptort/htp_ptort_driver.cpp, built against the runtime's host worker) loads the runtime's
// platform libraries, stages the package as one ChipCallable, runs it with the DLPack tensors (the
// runtime copies inputs in and outputs back) and report.json says "path": "pto-runtime".
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "build_cache.hpp"
#include "pto_runtime.hpp"
#include "sim_run.hpp"

namespace htp_ptosim {

/// Builds `pkg` for the runtime's a2a3sim platform and runs it; returns the report it wrote. Throws RunFailure.
nlohmann::json run_on_pto_runtime(const SimRunRequest &req, const PackageSpec &pkg, const PtoRuntimeRoots &roots);

/// A package already built for `platform`: the orchestration object and one binary per kernel (in the
/// registry's order). `stats` describes that build when HTP's cache made it; `recipe` names the script that
/// made it otherwise (the device build).
struct BuiltPackage {
  std::string orchestration;
  std::vector<std::string> kernels;
  BuildStats stats;
  std::string recipe;
};

/// Runs a built package on the runtime's `platform`; returns the report it wrote (wall time from `start`).
/// Throws RunFailure.
nlohmann::json launch_on_pto_runtime(const SimRunRequest &req, const PackageSpec &pkg,
                                     const PtoRuntimeRoots &roots, PtoPlatform platform,
                                     const BuiltPackage &built, std::chrono::steady_clock::time_point start);

} // namespace htp_ptosim
