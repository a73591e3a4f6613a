// Isolated probing: query and init a plugin in a child process so a crash, hang or abort cannot take
// the host down.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "diag/diagnostic.hpp"
#include "loader/safe_loading.hpp"

namespace htp {

struct ProbeResult {
  enum class Outcome { Loaded, Failed, Crashed, TimedOut };
  Outcome outcome = Outcome::Failed;
  std::string name;      ///< Plugin name when it loaded.
  std::string version;   ///< Plugin version when it loaded.
  size_t components = 0; ///< Components it registered when it loaded.
  DiagnosticList diagnostics;
};

/// Loads `path` in a forked child (manifest, query, init into a scratch registry; or `load`, when given) and
/// reports what happened; a signal or a timeout becomes a diagnostic naming the plugin path.
ProbeResult probe_plugin_isolated(const std::filesystem::path &path, std::chrono::milliseconds timeout,
                                  const PluginLoader &load = {});

}  // namespace htp
