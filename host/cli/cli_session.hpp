// State shared by the htp-host subcommands: global options, the lazily loaded plugin set, exit codes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"
#include "loader/plugin_host.hpp"

namespace htp::cli {

/// Exit status of htp-host: 0 success, 1 diagnosed error, 2 usage error.
enum ExitCode : int { kExitOk = 0, kExitError = 1, kExitUsage = 2 };

class Session {
public:
  /// --plugins values as given (made absolute against the working directory when loading).
  std::vector<std::string> plugin_specs;
  /// --log-level (else HTP_LOG_LEVEL, else "warn").
  std::string log_level;
  /// --no-builtin-plugins: start from an empty set instead of the built-in plugins.
  bool no_builtin_plugins = false;
  /// --safe-plugins: probe each plugin in a child process before loading it; skip the unsafe ones.
  bool safe_plugins = false;
  /// --probe-cache (default: <cache dir>/plugin-probes.json) and --probe-timeout-ms for --safe-plugins.
  std::string probe_cache;
  int probe_timeout_ms = 5000;
  /// The action of the chosen subcommand; returns the exit status.
  std::function<int()> action;

  /// Loads the plugin set once: the built-in plugins (unless --no-builtin-plugins), --plugins, HTP_PLUGIN_PATH.
  /// Load failures are printed to stderr and remembered (see plugin_errors()).
  PluginHost &plugins();
  /// True when loading the plugin set reported an error.
  bool plugin_errors() const { return plugin_errors_; }

  /// Prints diagnostics to stderr, one per line.
  static void print(const DiagnosticList &diags);
  static void print(const Diagnostic &diag);

private:
  std::unique_ptr<PluginHost> host_;
  bool plugin_errors_ = false;
};

/// Configures spdlog: stderr only, level from `level` (or HTP_LOG_LEVEL); false on an unknown level.
bool configure_logging(const std::string &level);

/// Writes text to `path` through a temporary sibling renamed into place, or to stdout for "-".
std::optional<Diagnostic> write_output_file(const std::string &path, const std::string &text);

/// Whether a --plugins entry is a Python extension (`.py`).
bool is_python_extension(const std::string &spec);
/// Loads the Python extension `spec` into `host` through libhtp-python-embed (an embedded interpreter, opened
/// on first use); a diagnostic names what is missing when this htp-host has no Python support.
void load_python_extension(PluginHost &host, const std::string &spec, DiagnosticList &diags);

/// Parses `KEY=JSON` (a value that is not JSON is taken as a string); nullopt without '='.
std::optional<std::pair<std::string, nlohmann::json>> parse_key_json(const std::string &kv);

/// A path from the command line made absolute against the working directory.
std::string absolute_cli_path(const std::string &path);

// Each subcommand lives in its own file and registers itself on the app.
void register_plugins_command(CLI::App &app, Session &session);
void register_resolve_command(CLI::App &app, Session &session);
void register_compile_command(CLI::App &app, Session &session);
void register_package_commands(CLI::App &app, Session &session);
void register_run_command(CLI::App &app, Session &session);

}  // namespace htp::cli
