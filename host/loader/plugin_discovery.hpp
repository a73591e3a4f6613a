// Discovery: turns --plugins specs (directories, libraries, plugin-set files) and HTP_PLUGIN_PATH into
// the ordered list of plugin libraries to load.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.hpp"
#include "loader/safe_loading.hpp"

namespace htp {

inline constexpr const char *kPluginSetSchema = "htp.plugin-set.v1";

struct PluginSearch {
  /// Absolute paths: a directory (every *.so in it), a plugin library, or a plugin-set JSON file.
  std::vector<std::string> specs;
  /// Also load the built-in plugins next to the host library, before the specs (extensions are added to
  /// the built-ins, as LLVM pass plugins are). A built-in is left out when a spec names a library with the
  /// same file name (the user's copy replaces it). False: exactly the specs (--no-builtin-plugins).
  bool include_builtins = true;
  /// Also search the colon-separated HTP_PLUGIN_PATH (never when running set-uid/set-gid).
  bool use_environment = true;
  /// --safe-plugins: probe every library in a child process first and skip the unsafe ones.
  std::optional<SafeLoadOptions> safe;
};

/// The directory of the host library (libhtp-host.so) this process loaded; empty if unknown.
std::filesystem::path host_library_dir();

/// The built-in plugin directory: `htp/plugins` next to the host library.
std::filesystem::path builtin_plugin_dir();

/// Expands a search into plugin library paths in a deterministic order (directory entries sorted);
/// every unusable spec becomes a diagnostic and is skipped.
std::vector<std::filesystem::path> discover_plugins(const PluginSearch &search, DiagnosticList &diags);

/// Checks a location is acceptable for loading code: absolute, existing, a regular file, and neither
/// the file nor its directory world-writable. Returns the canonical path.
Expected<std::filesystem::path> check_plugin_location(const std::filesystem::path &path);

}  // namespace htp
