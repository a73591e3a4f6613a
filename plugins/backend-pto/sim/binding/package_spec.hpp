// htp_ptosim: what the a2a3sim binding reads of a package: codegen/pto/kernel_registry.json
// (htp.pto.kernel_registry.v1, docs/backends/pto-sim.md §1) and the entry's parameters in manifest.json.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime.hpp"

namespace htp_ptosim {

/// A run that cannot proceed; `code` is the diagnostic code ("pto.sim.package", ...).
struct RunFailure : std::runtime_error {
  RunFailure(std::string c, const std::string &message) : std::runtime_error(message), code(std::move(c)) {}
  std::string code;
};

struct KernelSpec {
  int32_t func_id = -1;
  std::string name;
  std::string source; ///< relative to codegen/pto
  CoreType core = CoreType::AIV;
  std::vector<std::string> signature; ///< tensor directions "in" | "out" | "inout" (may be empty)
};

struct OrchestrationSpec {
  std::string source; ///< relative to codegen/pto
  std::string function_name = "aicpu_orchestration_entry";
  std::string config_name = "aicpu_orchestration_config";
  /// Parameters global memory holds in a `mem` layout: name -> {"extents", "strides"} (the binding stages
  /// the caller's arrays into that order and back; docs/backends/pto.md, Memory layouts).
  nlohmann::json staging = nlohmann::json::object();
};

/// A parameter of the entry as the manifest records it.
struct ParamSpec {
  std::string name;
  std::string kind;  ///< "tensor" | "scalar"
  std::string dir;   ///< "in" | "out" | "inout" for tensors (may be empty)
  std::string dtype; ///< "f32", "i64", ... (may be empty)
};

struct PackageSpec {
  std::filesystem::path codegen_dir; ///< <package>/codegen/pto
  OrchestrationSpec orchestration;
  std::vector<KernelSpec> kernels;
  nlohmann::json runtime_config = nlohmann::json::object();
  std::vector<ParamSpec> params; ///< empty when the manifest does not list the entry
  std::string runtime_revision;  ///< pto_runtime_revision the package was emitted for (may be empty)
  std::string isa_revision;      ///< pto_isa_revision (may be empty)
};

/// Reads the registry (and the manifest entry) of `entry`; throws RunFailure naming the file and field.
PackageSpec read_package(const std::filesystem::path &package_dir, const std::string &entry);

} // namespace htp_ptosim
