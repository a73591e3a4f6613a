// The layout of pto-runtime (hw-native-sys/simpler 6ebaf7715) and PTO-ISA (cd4a3d3f) checkouts as the PTO
// bindings build against them: the one file holding the runtime's paths and build flags. The flags follow
// the runtime's own build of a2a3sim packages (simpler_setup/kernel_compiler.py, toolchain.py).
#include "pto_runtime.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char *kVariant = "tensormap_and_ringbuffer";
/// Files a pto-runtime checkout has (relative to PTO_RUNTIME_ROOT).
const char *const kRuntimeMarkers[] = {
    "src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h",
    "src/common/worker/chip_worker.h",
};
constexpr const char *kIsaMarker = "include/pto/pto-inst.hpp";
constexpr const char *kIsaPin = "pto_isa.pin";

std::string read_text(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' '))
    t.pop_back();
  return t;
}

fs::path runtime_dir(const PtoRuntimeRoots &r) { return r.runtime / "src/a2a3/runtime" / kVariant; }

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : "";
}

/// A checkout root holding its marker files, or the exact reason it is not one.
void check_checkout(const std::string &var, const fs::path &root, const std::vector<std::string> &markers,
                    const std::string &what) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw RunFailure("pto.runtime.missing", var + "=" + root.string() + " is not a directory (" + what + ")");
  for (const auto &m : markers)
    if (!fs::exists(root / m, ec))
      throw RunFailure("pto.runtime.missing",
                       var + "=" + root.string() + ": missing " + (root / m).string() + " (not " + what + ")");
}

/// The checkout's commit, checked against `pin` (a prefix); returns the commit ("" when unknown and unchecked).
std::string checked_revision(const std::string &var, const fs::path &root, const std::string &what,
                             const std::string &pin, bool check) {
  const std::optional<std::string> head = git_head(root);
  if (!check || pin.empty()) return head.value_or("");
  const std::string bypass = " (check out " + pin + ", or pass --option check_revision=false to run anyway)";
  if (!head)
    throw RunFailure("pto.runtime.revision", var + "=" + root.string() +
                                                 ": cannot tell which revision it is (no .git); the package "
                                                 "was emitted for " + what + " " + pin + bypass);
  if (head->rfind(pin, 0) != 0)
    throw RunFailure("pto.runtime.revision", var + "=" + root.string() + " is " + what + " " +
                                                 head->substr(0, 12) + ", but the package was emitted for " +
                                                 pin + bypass);
  return *head;
}

} // namespace

const char *platform_name(PtoPlatform p) { return p == PtoPlatform::A2A3 ? "a2a3" : "a2a3sim"; }

std::optional<std::string> git_head(const fs::path &root) {
  std::error_code ec;
  fs::path git = root / ".git";
  if (fs::is_regular_file(git, ec)) { // a worktree: "gitdir: <path>"
    const std::string line = read_text(git);
    if (line.rfind("gitdir: ", 0) != 0) return std::nullopt;
    git = fs::path(line.substr(8));
    if (git.is_relative()) git = root / git;
  }
  if (!fs::is_directory(git, ec)) return std::nullopt;
  const fs::path common = fs::exists(git / "commondir", ec) ? git / read_text(git / "commondir") : git;
  const std::string head = read_text(git / "HEAD");
  if (head.rfind("ref: ", 0) != 0) return head.size() == 40 ? std::optional(head) : std::nullopt;
  const std::string ref = head.substr(5);
  for (const fs::path &dir : {git, common})
    if (fs::is_regular_file(dir / ref, ec)) return read_text(dir / ref);
  std::ifstream packed(common / "packed-refs");
  for (std::string line; std::getline(packed, line);)
    if (line.size() > 41 && line[40] == ' ' && line.substr(41) == ref) return line.substr(0, 40);
  return std::nullopt;
}

std::optional<PtoRuntimeRoots> find_pto_runtime(const std::string &choice, PtoPlatform platform,
                                                const RevisionPins &pins) {
  if (choice == "sim") return std::nullopt;
  const std::string rt = env("PTO_RUNTIME_ROOT"), isa = env("PTO_ISA_ROOT");
  if (rt.empty() && isa.empty()) {
    if (choice == "pto-runtime")
      throw RunFailure("pto.runtime.missing",
                       "option runtime=\"pto-runtime\" needs PTO_RUNTIME_ROOT (a built "
                       "pto-runtime, hw-native-sys/simpler) and PTO_ISA_ROOT (PTO-ISA) to be set");
    return std::nullopt;
  }
  if (rt.empty() != isa.empty())
    throw RunFailure("pto.runtime.missing",
                     std::string(rt.empty() ? "PTO_ISA_ROOT" : "PTO_RUNTIME_ROOT") + " is set but " +
                         (rt.empty() ? "PTO_RUNTIME_ROOT" : "PTO_ISA_ROOT") +
                         " is not: set both to run on the real pto-runtime, or neither to use "
                         "HTP's CPU simulator");
  PtoRuntimeRoots roots{fs::absolute(rt), fs::absolute(isa)};
  check_checkout("PTO_RUNTIME_ROOT", roots.runtime, {std::begin(kRuntimeMarkers), std::end(kRuntimeMarkers)},
                 "a pto-runtime checkout, hw-native-sys/simpler");
  check_checkout("PTO_ISA_ROOT", roots.isa, {kIsaMarker}, "a PTO-ISA checkout, hw-native-sys/pto-isa");
  roots.revision_checked = pins.check;
  roots.runtime_revision =
      checked_revision("PTO_RUNTIME_ROOT", roots.runtime, "pto-runtime", pins.runtime, pins.check);
  std::error_code ec;
  const std::string isa_pin =
      !pins.isa.empty() ? pins.isa
                        : (fs::exists(roots.runtime / kIsaPin, ec) ? read_text(roots.runtime / kIsaPin) : "");
  roots.isa_revision = checked_revision("PTO_ISA_ROOT", roots.isa, "PTO-ISA", isa_pin, pins.check);

  const PlatformLibraries libs = platform_libraries(roots, platform);
  std::string missing;
  for (const std::string &lib : {libs.host, libs.aicpu, libs.aicore, libs.dispatcher, libs.sim_context})
    if (!lib.empty() && !fs::exists(lib, ec)) missing += (missing.empty() ? "" : ", ") + lib;
  if (!missing.empty())
    throw RunFailure("pto.runtime.not_built",
                     "PTO_RUNTIME_ROOT=" + roots.runtime.string() + " is not built for " + platform_name(platform) +
                         ": missing " + missing + " (build it in the checkout with `python3 "
                         "simpler_setup/build_runtimes.py --platforms " + platform_name(platform) + "`)");
  return roots;
}

PlatformLibraries platform_libraries(const PtoRuntimeRoots &roots, PtoPlatform platform) {
  const fs::path lib = roots.runtime / "build/lib";
  const fs::path dir = lib / "a2a3" / (platform == PtoPlatform::A2A3 ? "onboard" : "sim") / kVariant;
  PlatformLibraries l{(dir / "libhost_runtime.so").string(), (dir / "libaicpu_kernel.so").string(),
                      (dir / "libaicore_kernel.so").string(), "", ""};
  if (platform == PtoPlatform::A2A3)
    l.dispatcher = (lib / "a2a3/dispatcher/libsimpler_aicpu_dispatcher.so").string();
  else
    l.sim_context = (lib / "libcpu_sim_context.so").string();
  return l;
}

RuntimeBuildInputs package_build_inputs(const PtoRuntimeRoots &r) {
  const fs::path rt = runtime_dir(r), src = r.runtime / "src";
  return {{(r.isa / "include").string(), (r.isa / "include/pto").string(),
           (r.runtime / "simpler_setup/incore").string(), (rt / "runtime").string(), (rt / "common").string(),
           (rt / "orchestration").string(), rt.string(), (src / "common/task_interface").string(),
           (src / "common").string(), (src / "a2a3/platform/include").string(),
           (src / "common/platform/include").string(), (src / "common/log/include").string()},
          {(src / "common").string(), (src / "a2a3").string(), (r.runtime / "simpler_setup/incore").string(),
           (r.isa / "include").string()}};
}

RuntimeBuildInputs driver_build_inputs(const PtoRuntimeRoots &r, const std::string &driver_dir) {
  const fs::path c = r.runtime / "src/common";
  return {{driver_dir, (c / "task_interface").string(), (c / "worker").string(), (c / "hierarchical").string(),
           (c / "platform/include").string(), (c / "platform/include/common").string(),
           (c / "platform/include/host").string(), (c / "log/include").string()},
          {c.string(), driver_dir}};
}

std::vector<std::string> orchestration_flags() {
  return {"-shared", "-fPIC", "-O2", "-std=c++17", "-fno-gnu-unique", "-Wl,--build-id=sha1", "-pthread", "-w"};
}

std::vector<std::string> orchestration_sources(const PtoRuntimeRoots &r) {
  const fs::path src = r.runtime / "src";
  return {(runtime_dir(r) / "orchestration/common.cpp").string(),
          (src / "common/platform/sim/aicpu/cache_ops.cpp").string(),
          (src / "common/platform/sim/aicpu/device_time.cpp").string(),
          (src / "common/log/host_log.cpp").string(), (src / "common/log/unified_log_host.cpp").string()};
}

std::vector<std::string> kernel_flags(CoreType core, int gcc_major) {
  std::vector<std::string> f = {"-shared", "-O2", "-fPIC", "-std=c++23", "-fpermissive", "-w", "-D__CPU_SIM",
                                "-DPTO_CPU_MAX_THREADS=1", "-DNDEBUG",
                                core == CoreType::AIC ? "-D__DAV_CUBE__" : "-D__DAV_VEC__"};
  // GCC before 13 rejects the static_assert(false) in PTO-ISA's cpu/TReduceIdx.hpp (the arg-reduce
  // instructions, which HTP never emits); leave that one header out by its include guard.
  if (gcc_major > 0 && gcc_major < 13) f.push_back("-DTCOLREDUCEIDX_CPU_HPP");
  return f;
}

std::vector<std::string> driver_flags() {
  return {"-shared", "-fPIC", "-O2", "-std=c++17", "-fvisibility=hidden", "-w"};
}

std::vector<std::string> driver_sources(const PtoRuntimeRoots &r, const std::string &driver_dir) {
  const fs::path c = r.runtime / "src/common";
  return {(fs::path(driver_dir) / "htp_ptort_driver.cpp").string(), (c / "worker/chip_worker.cpp").string(),
          (c / "worker/chip_run_lane.cpp").string(), (c / "log/host_log.cpp").string(),
          (c / "log/unified_log_host.cpp").string(), (c / "task_interface/assert_compat.cpp").string()};
}

std::vector<std::string> driver_libs() { return {"-ldl", "-lpthread", "-lrt"}; }

std::string locate_driver_dir() {
  auto has_driver = [](const fs::path &d) { return fs::exists(d / "htp_ptort_driver.cpp"); };
  if (const std::string e = env("HTP_PTORT_DRIVER_DIR"); !e.empty()) {
    if (!has_driver(e))
      throw RunFailure("pto.runtime.driver", "HTP_PTORT_DRIVER_DIR=" + e + " holds no htp_ptort_driver.cpp");
    return fs::absolute(e).string();
  }
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void *>(&locate_driver_dir), &info) && info.dli_fname) {
    const fs::path data = fs::path(info.dli_fname).parent_path() / "htp-backend-pto.data" / "ptort";
    if (has_driver(data)) return fs::absolute(data).string();
    throw RunFailure("pto.runtime.driver", "HTP's pto-runtime driver was not found (looked in " + data.string() +
                                               "); set HTP_PTORT_DRIVER_DIR");
  }
  throw RunFailure("pto.runtime.driver", "HTP's pto-runtime driver was not found; set HTP_PTORT_DRIVER_DIR");
}

json runtime_report(const PtoRuntimeRoots &roots, PtoPlatform platform) {
  return {{"platform", platform_name(platform)},
          {"variant", kVariant},
          {"root", roots.runtime.string()},
          {"revision", roots.runtime_revision},
          {"isa_root", roots.isa.string()},
          {"isa_revision", roots.isa_revision},
          {"revision_checked", roots.revision_checked}};
}

} // namespace htp_ptosim
