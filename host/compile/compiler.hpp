// The compile flow: scan the module for obligations, resolve a plan for the target, run its passes,
// and write the artifact package (manifest, lockfile, IR dumps, traces) atomically.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "loader/plugin_host.hpp"
#include "package/package_manifest.hpp"
#include "pass/pass_manager.hpp"
#include "resolver/plan.hpp"
#include "resolver/resolver.hpp"

namespace htp {

struct CompileOptions {
  std::string target;
  std::filesystem::path out;
  DumpOptions dump;
  bool force = false;        ///< Replace an existing package directory.
  bool keep_failed = false;  ///< Keep `<out>.failed/` with diagnostics and dumps when the compile fails.
  bool pin_timings = false;  ///< Byte-identical traces too (measured times replaced by pass indices).
  double pass_time_limit_s = 0;  ///< Seconds one pass may run before the process stops naming it (0: none).
  std::optional<std::string> backend;
  std::optional<std::string> binding;
  std::optional<std::vector<std::string>> passes;  ///< Explicit pass list instead of the pipeline.
  std::optional<std::string> locked;               ///< Lockfile the plan must reproduce.
  nlohmann::json pass_options = nlohmann::json::object();
};

struct CompileResult {
  bool ok = false;
  std::filesystem::path package;               ///< The package directory when ok.
  std::optional<std::filesystem::path> failed;  ///< `<out>.failed/` when kept.
  std::vector<Obligation> obligations;
  std::optional<Plan> plan;
  PipelineResult pipeline;
  DiagnosticList diagnostics;
};

class Compiler {
public:
  /// Compiles with the plugins of `host` (which must outlive the compiler).
  explicit Compiler(PluginHost &host) : host_(host) {}

  /// Runs every dialect scanner over `module`; the obligations it raises, or diagnostics.
  std::vector<Obligation> scan(ast::Module &module, DiagnosticList &diags) const;

  /// The whole flow. On failure nothing is left at `options.out` (or `<out>.failed/` when asked).
  CompileResult compile(ast::Module module, const CompileOptions &options) const;

private:
  PluginHost &host_;
};

/// The build environment recorded in manifests (deterministic: no host names, no times).
nlohmann::ordered_json build_environment();

}  // namespace htp
