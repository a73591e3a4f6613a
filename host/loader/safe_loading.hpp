// --safe-plugins: every plugin is probed in a child process (plugin_probe) before the host loads it; a
// plugin whose query or init crashes, aborts, hangs or fails is skipped with a warning naming its path.
// Verdicts are remembered in a small probe cache keyed by canonical path, size and mtime, so an
// unchanged plugin is not probed again (a bad one stays skipped until the file changes).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <vector>

#include "diag/diagnostic.hpp"

namespace htp {

class PluginHost;

/// Loads one plugin into `host` (in the probe's child process); true when it loaded.
using PluginLoader = std::function<bool(PluginHost &host, const std::filesystem::path &plugin, DiagnosticList &diags)>;

struct SafeLoadOptions {
  std::filesystem::path probe_cache;  ///< JSON file (htp.plugin-probes.v1); empty: no memory.
  std::chrono::milliseconds timeout{5000};
  /// How the child loads a plugin; empty: as a shared library (PluginHost::load). A Python extension's loader
  /// imports it through the embedded interpreter.
  PluginLoader load;
};

struct SafeLoadResult {
  std::vector<std::filesystem::path> safe;    ///< Libraries to load, in the given order.
  std::vector<std::filesystem::path> skipped; ///< Libraries skipped (each with a warning in diags).
  size_t probed = 0;                          ///< Child processes run (the rest came from the cache).
};

/// Probes (or recalls) each library; warnings `plugins.unsafe` for the skipped ones.
SafeLoadResult filter_safe_plugins(const std::vector<std::filesystem::path> &libraries, const SafeLoadOptions &options,
                                   DiagnosticList &diags);

}  // namespace htp
