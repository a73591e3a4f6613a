// Running a package: verify it, check the arguments against the entry's signature in the manifest, call
// the binding's run callback (ABI 1.2) with DLPack tensors, collect outputs and the run report.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/cache_dir.hpp"
#include "diag/diagnostic.hpp"
#include "loader/plugin_host.hpp"
#include "run/npy.hpp"

namespace htp {

struct RunRequest {
  std::filesystem::path package;
  std::string entry;                        ///< Empty: the package's only entrypoint.
  std::map<std::string, HostArray> tensors; ///< Tensor arguments by parameter name (in and inout; out optional).
  std::map<std::string, nlohmann::json> scalars;  ///< Scalar arguments by parameter name.
  std::filesystem::path cache_dir;          ///< Empty: default_cache_dir().
  std::filesystem::path run_dir;            ///< Empty: <package>/logs/run.
  nlohmann::json options = nlohmann::json::object();
  bool verify = true;                       ///< Verify manifest, hashes and plugin set first.
};

struct RunOutcome {
  std::map<std::string, HostArray> outputs;  ///< out and inout tensors after the run.
  nlohmann::json report;                     ///< <run_dir>/report.json (htp.run.v1), or null.
  std::filesystem::path run_dir;
  std::string binding;                       ///< Binding component id.
};

/// Runs an entry of a package with the binding its plan chose (which must be loaded in `host`).
/// Every problem is a diagnostic in `diags` naming the argument, file or component; returns nullopt then.
std::optional<RunOutcome> run_package(PluginHost &host, const RunRequest &request, DiagnosticList &diags);

}  // namespace htp
