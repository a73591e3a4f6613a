// The `a2a3` binding's toolchain: the CANN pieces it needs (ASCEND_HOME_PATH, ccec, an aarch64 cross
// compiler) and pto-runtime/PTO-ISA checkouts, the exact message naming what is missing, and the build
// recipe it writes into the package either way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptobe {

/// Where the binding looks: the environment and a PATH search (injectable for tests).
struct ToolchainEnv {
  std::function<std::optional<std::string>(const std::string &)> getenv;
  std::function<bool(const std::string &)> is_file;  ///< an existing regular file (executables too)
  std::function<bool(const std::string &)> is_dir;
  static ToolchainEnv system();
};

/// What was found.
struct Toolchain {
  std::string ascend_home, ccec, cross_cxx, runtime_root, isa_root;
  std::vector<std::string> missing;  ///< one phrase per missing piece, in a fixed order
  bool complete() const { return missing.empty(); }
};

/// Looks for every piece; never throws.
Toolchain find_a2a3_toolchain(const ToolchainEnv &env);

/// The error message for an incomplete toolchain, naming each missing piece and the recipe's path.
std::string missing_toolchain_message(const Toolchain &tc, const std::string &recipe_path);

/// A POSIX shell script that builds the package for the device from codegen/pto/kernel_registry.json
/// (CCEC, LD_LLD and CROSS_CXX in its environment override its defaults).
std::string a2a3_build_recipe(const nlohmann::json &registry);

/// The ccec linker: next to ccec, in $ASCEND_HOME_PATH/bin, or on PATH.
std::optional<std::string> find_ld_lld(const ToolchainEnv &env, const Toolchain &tc);

/// What the recipe builds, relative to the package: a kernel's linked object, an entry's orchestration.
std::string a2a3_kernel_binary(const std::string &kernel);
std::string a2a3_orchestration_binary(const std::string &entry);

}  // namespace ptobe
