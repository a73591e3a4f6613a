#include "a2a3_toolchain.hpp"

#include <cstdlib>
#include <filesystem>

#include "runtime_api.hpp"

namespace ptobe {

ToolchainEnv ToolchainEnv::system() {
  ToolchainEnv env;
  env.getenv = [](const std::string &k) -> std::optional<std::string> {
    const char *v = std::getenv(k.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
  env.is_file = [](const std::string &p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
  };
  env.is_dir = [](const std::string &p) {
    std::error_code ec;
    return std::filesystem::is_directory(p, ec);
  };
  return env;
}

namespace {

std::optional<std::string> on_path(const ToolchainEnv &env, const std::string &exe) {
  auto path = env.getenv("PATH");
  if (!path) return std::nullopt;
  size_t start = 0;
  while (start <= path->size()) {
    size_t end = path->find(':', start);
    if (end == std::string::npos) end = path->size();
    std::string dir = path->substr(start, end - start);
    if (!dir.empty() && env.is_file(dir + "/" + exe)) return dir + "/" + exe;
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> first_file(const ToolchainEnv &env, const std::vector<std::string> &candidates) {
  for (const auto &c : candidates)
    if (env.is_file(c)) return c;
  return std::nullopt;
}

/// A root directory from `var` holding `marker`; otherwise a phrase for the missing list.
std::string root(const ToolchainEnv &env, const std::string &var, const std::string &marker, const std::string &what,
                 std::vector<std::string> &missing) {
  auto v = env.getenv(var);
  if (!v) {
    missing.push_back(var + " (" + what + ": not set)");
    return {};
  }
  if (!env.is_dir(*v)) {
    missing.push_back(var + "=" + *v + " (" + what + ": not a directory)");
    return {};
  }
  if (!marker.empty() && !env.is_file(*v + "/" + marker)) {
    missing.push_back(var + "=" + *v + " (" + what + ": " + marker + " not found)");
    return {};
  }
  return *v;
}

}  // namespace

Toolchain find_a2a3_toolchain(const ToolchainEnv &env) {
  Toolchain tc;
  tc.ascend_home = root(env, "ASCEND_HOME_PATH", "", "the CANN installation", tc.missing);
  const std::string home = tc.ascend_home;
  auto ccec = first_file(env, home.empty() ? std::vector<std::string>{}
                                           : std::vector<std::string>{home + "/compiler/ccec_compiler/bin/ccec",
                                                                      home + "/bin/ccec"});
  if (!ccec) ccec = on_path(env, "ccec");
  if (ccec) tc.ccec = *ccec;
  else tc.missing.push_back("ccec (the AI Core compiler: not in $ASCEND_HOME_PATH/compiler/ccec_compiler/bin nor on PATH)");
  auto cross = env.getenv("CROSS_CXX");
  if (cross && env.is_file(*cross)) tc.cross_cxx = *cross;
  else if (auto c = on_path(env, "aarch64-linux-gnu-g++")) tc.cross_cxx = *c;
  else if (auto c2 = first_file(env, home.empty() ? std::vector<std::string>{}
                                                  : std::vector<std::string>{home + "/toolkit/toolchain/hcc/bin/aarch64-target-linux-gnu-g++"}))
    tc.cross_cxx = *c2;
  else
    tc.missing.push_back("the aarch64 cross compiler (CROSS_CXX, aarch64-linux-gnu-g++ on PATH, or "
                         "$ASCEND_HOME_PATH/toolkit/toolchain/hcc/bin/aarch64-target-linux-gnu-g++)");
  tc.runtime_root = root(env, "PTO_RUNTIME_ROOT",
                         std::string("src/a2a3/runtime/") + rt::kRuntimeVariant + "/orchestration/pto_orchestration_api.h",
                         std::string("a pto-runtime checkout, hw-native-sys/simpler ") + rt::kRuntimeRevision, tc.missing);
  tc.isa_root = root(env, "PTO_ISA_ROOT", "include/pto/pto-inst.hpp",
                     std::string("a PTO-ISA checkout, hw-native-sys/pto-isa ") + rt::kIsaRevision, tc.missing);
  return tc;
}

std::string missing_toolchain_message(const Toolchain &tc, const std::string &recipe_path) {
  std::string list;
  for (size_t i = 0; i < tc.missing.size(); ++i) list += (i ? "; " : "") + tc.missing[i];
  return "target pto-a2a3 builds and runs on an Ascend device with the CANN toolchain, which is incomplete: missing " +
         list + ". The build recipe is in " + recipe_path;
}

std::optional<std::string> find_ld_lld(const ToolchainEnv &env, const Toolchain &tc) {
  std::vector<std::string> candidates;
  if (auto slash = tc.ccec.rfind('/'); slash != std::string::npos) candidates.push_back(tc.ccec.substr(0, slash) + "/ld.lld");
  if (!tc.ascend_home.empty()) candidates.push_back(tc.ascend_home + "/bin/ld.lld");
  if (auto l = first_file(env, candidates)) return l;
  return on_path(env, "ld.lld");
}

std::string a2a3_kernel_binary(const std::string &kernel) { return "build/a2a3/" + kernel + ".elf"; }

std::string a2a3_orchestration_binary(const std::string &entry) {
  return "build/a2a3/" + entry + "_orchestration.so";
}

std::string a2a3_build_recipe(const nlohmann::json &registry) {
  // The flags follow pto-runtime's own device build (simpler_setup/kernel_compiler.py, toolchain.py at the
  // pinned revision): ccec per kernel, linked with ld.lld at kernel_entry (the runtime uploads its .text),
  // and the orchestration cross-compiled for the AICPU with the runtime's orchestration sources.
  std::string s =
      "#!/bin/sh\n"
      "# Device build of this package for target pto-a2a3 (written by the HTP a2a3 binding from\n"
      "# codegen/pto/kernel_registry.json). pto-runtime " + std::string(rt::kRuntimeRevision) + ", PTO-ISA " +
      rt::kIsaRevision + ".\n"
      "# Needs ASCEND_HOME_PATH (CANN), ccec and ld.lld, an aarch64 cross compiler (CROSS_CXX), PTO_RUNTIME_ROOT,\n"
      "# PTO_ISA_ROOT. Outputs: build/a2a3/<kernel>.elf and build/a2a3/<entry>_orchestration.so.\n"
      "set -eu\n"
      "PKG=\"$(cd \"$(dirname \"$0\")/../..\" && pwd)\"\n"
      "SRC=\"$PKG/codegen/pto\"\n"
      "OUT=\"$PKG/build/a2a3\"\n"
      "CCEC=\"${CCEC:-$ASCEND_HOME_PATH/compiler/ccec_compiler/bin/ccec}\"\n"
      "LD_LLD=\"${LD_LLD:-$(dirname \"$CCEC\")/ld.lld}\"\n"
      "CROSS_CXX=\"${CROSS_CXX:-aarch64-linux-gnu-g++}\"\n"
      "RT=\"$PTO_RUNTIME_ROOT/src/a2a3/runtime/" + rt::kRuntimeVariant + "\"\n"
      "INC=\"-I$PTO_ISA_ROOT/include -I$PTO_ISA_ROOT/include/pto -I$PTO_RUNTIME_ROOT/simpler_setup/incore "
      "-I$PTO_RUNTIME_ROOT/src/common/task_interface -I$PTO_RUNTIME_ROOT/src/common "
      "-I$PTO_RUNTIME_ROOT/src/a2a3/platform/include -I$PTO_RUNTIME_ROOT/src/common/platform/include "
      "-I$RT/runtime -I$RT/common -I$RT/orchestration -I$RT\"\n"
      "CCE_FLAGS=\"-c -O3 -x cce -std=c++17 --cce-aicore-only -mllvm -cce-aicore-stack-size=0x8000 "
      "-mllvm -cce-aicore-function-stack-size=0x8000 -mllvm -cce-aicore-record-overflow=false "
      "-mllvm -cce-aicore-addr-transform -mllvm -cce-aicore-dcci-insert-for-scalar=false -DMEMORY_BASE\"\n"
      "ORCH_SRC=\"$RT/orchestration/common.cpp $PTO_RUNTIME_ROOT/src/common/platform/onboard/aicpu/cache_ops.cpp "
      "$PTO_RUNTIME_ROOT/src/common/platform/onboard/aicpu/device_time.cpp\"\n"
      "mkdir -p \"$OUT\"\n";
  for (const auto &k : registry.value("kernels", nlohmann::json::array())) {
    const std::string core = k.value("core_type", std::string("aiv"));
    const std::string name = k.value("name", std::string());
    s += "# func_id " + std::to_string(k.value("func_id", 0)) + ": " + name + " (" + core + ")\n";
    s += "\"$CCEC\" $CCE_FLAGS --cce-aicore-arch=dav-c220-" +
         std::string(core == "aic" ? "cube -D__DAV_CUBE__" : "vec -D__DAV_VEC__") + " $INC \"$SRC/" +
         k.value("source", std::string()) + "\" -o \"$OUT/" + name + ".o\"\n";
    s += "\"$LD_LLD\" -e " + std::string(rt::kKernelEntry) + " -o \"$PKG/" + a2a3_kernel_binary(name) + "\" \"$OUT/" +
         name + ".o\"\n";
  }
  const nlohmann::json entries = registry.value("entries", nlohmann::json::object());
  for (const auto &[name, e] : entries.items()) {
    s += "# orchestration of entry " + name + "\n";
    s += "\"$CROSS_CXX\" -O2 -std=c++17 -fPIC -shared $INC \"$SRC/" + e.value("source", std::string()) +
         "\" $ORCH_SRC -fno-gnu-unique -Wl,--build-id=sha1 -o \"$PKG/" + a2a3_orchestration_binary(name) + "\"\n";
  }
  return s;
}

}  // namespace ptobe
