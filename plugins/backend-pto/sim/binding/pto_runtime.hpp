// htp_ptosim: the real pto-runtime (hw-native-sys/simpler) as the PTO bindings use it. Finding and checking
// the user's checkouts (PTO_RUNTIME_ROOT, PTO_ISA_ROOT: a checkout, at the revision the package was emitted
// for, built for the platform), and the runtime's file layout: the include directories, the extra sources
// and flags of its orchestration, kernel and host-worker builds, and its built platform libraries. Every
// path and flag of the runtime's tree lives in pto_runtime.cpp; every call of its C++ API lives in
// ptort/htp_ptort_driver.cpp (docs/backends/pto.md §8).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "package_spec.hpp"

namespace htp_ptosim {

/// The runtime's platforms HTP runs on.
enum class PtoPlatform { A2A3Sim, A2A3 };

const char *platform_name(PtoPlatform p); ///< "a2a3sim" | "a2a3"

/// Two checked checkouts.
struct PtoRuntimeRoots {
  std::filesystem::path runtime;
  std::filesystem::path isa;
  std::string runtime_revision; ///< the checkout's commit (empty: not a git checkout, not checked)
  std::string isa_revision;
  bool revision_checked = true;
};

/// What the roots must match.
struct RevisionPins {
  std::string runtime; ///< the package's pto_runtime_revision (a prefix of the commit); may be empty
  std::string isa;     ///< the package's pto_isa_revision, else the runtime's pto_isa.pin
  bool check = true;   ///< option check_revision
};

/// Reads PTO_RUNTIME_ROOT and PTO_ISA_ROOT. `choice` is the option `runtime` ("auto" | "sim" |
/// "pto-runtime"). Returns nothing when HTP's simulator is to run; otherwise the checked roots, or throws
/// RunFailure naming exactly what is missing or wrong (pto.runtime.missing, pto.runtime.revision,
/// pto.runtime.not_built).
std::optional<PtoRuntimeRoots> find_pto_runtime(const std::string &choice, PtoPlatform platform,
                                                const RevisionPins &pins);

/// The commit a git checkout is at (a .git directory, or a .git file of a worktree); nothing if unknown.
std::optional<std::string> git_head(const std::filesystem::path &root);

/// The runtime's built platform libraries.
struct PlatformLibraries {
  std::string host, aicpu, aicore, dispatcher, sim_context; ///< empty when the platform has none
};
PlatformLibraries platform_libraries(const PtoRuntimeRoots &roots, PtoPlatform platform);

/// The cache's view of one build against the runtime: -I directories (in order) and the trees whose files
/// make up the key.
struct RuntimeBuildInputs {
  std::vector<std::string> include_dirs;
  std::vector<std::string> hashed_trees;
};
/// Orchestration and kernels of a package (a2a3sim: the host compiler).
RuntimeBuildInputs package_build_inputs(const PtoRuntimeRoots &roots);
/// The driver (ptort/htp_ptort_driver.cpp in `driver_dir`) with the runtime's host worker.
RuntimeBuildInputs driver_build_inputs(const PtoRuntimeRoots &roots, const std::string &driver_dir);

/// Flags and extra sources of the orchestration shared object on the simulator.
std::vector<std::string> orchestration_flags();
std::vector<std::string> orchestration_sources(const PtoRuntimeRoots &roots);
/// Flags of a simulator kernel for its core type; `gcc_major` selects the workaround of docs §8.
std::vector<std::string> kernel_flags(CoreType core, int gcc_major);
/// The driver's flags, host worker sources and libraries.
std::vector<std::string> driver_flags();
std::vector<std::string> driver_sources(const PtoRuntimeRoots &roots, const std::string &driver_dir);
std::vector<std::string> driver_libs();

/// The directory holding ptort/htp_ptort_driver.{h,cpp}: $HTP_PTORT_DRIVER_DIR, else
/// htp-backend-pto.data/ptort next to the object holding this code; throws RunFailure.
std::string locate_driver_dir();

/// The part of report.json that names the runtime.
nlohmann::json runtime_report(const PtoRuntimeRoots &roots, PtoPlatform platform);

} // namespace htp_ptosim
