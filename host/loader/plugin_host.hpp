// PluginHost: loads plugin libraries through the C ABI and owns the registry of their components.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"
#include "loader/plugin_discovery.hpp"
#include "loader/plugin_manifest.hpp"
#include "registry/registry.hpp"

#include <htp/abi.h>

struct HtpHost;
struct HtpHostApi;
struct HtpPluginInfo;

namespace htp {

/// One plugin that loaded and initialised successfully. Its library stays resident for the process.
class LoadedPlugin {
public:
  std::string name;
  std::string version;
  std::string description;
  std::string sdk_version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::filesystem::path path;               ///< Canonical absolute path.
  std::optional<PluginManifest> manifest;   ///< The manifest read before loading (absent only when not required).
  /// "" for a shared library; "python" for an extension written in Python (path is its source file).
  std::string language;
  std::vector<const Component *> components;

  /// Hex SHA-256 of the library file, computed on first use; empty if the file cannot be read.
  const std::string &sha256() const;
  /// The identity recorded in components, plans and lockfiles.
  PluginRef ref() const;

private:
  friend class PluginHost;
  const HtpPluginInfo *info_ = nullptr;
  void (*shutdown_)() = nullptr;
  mutable std::once_flag sha_once_;
  mutable std::string sha256_;
};

/// A library that was found but not loaded, with the reason; its manifest (when readable) still tells
/// the resolver what it would provide.
struct UnloadedPlugin {
  std::filesystem::path path;
  std::optional<PluginManifest> manifest;
  Diagnostic reason;
};

/// A plugin whose components are implemented in another language (a Python extension): no library is
/// loaded; `init` registers its components through the same host function table a library's init gets,
/// so they are validated, staged and committed exactly like a shared library's.
struct ScriptPlugin {
  std::string name;
  std::string version;
  std::string description;
  std::string language;          ///< e.g. "python"
  std::filesystem::path source;  ///< The file that implements it (hashed for plans and lockfiles).
  std::function<HtpStatus(const HtpHostApi *, HtpDiag *)> init;
};

struct PluginLoadOptions {
  /// Require and cross-check the manifest next to the library (off only to generate a manifest).
  bool require_manifest = true;
};

class PluginHost {
public:
  PluginHost();
  /// Calls every loaded plugin's shutdown, in reverse load order. Libraries are never unloaded.
  ~PluginHost();
  PluginHost(const PluginHost &) = delete;
  PluginHost &operator=(const PluginHost &) = delete;

  /// Discovers and loads every plugin of `search`; each failure is a diagnostic and the others still
  /// load. Returns the number of plugins loaded by this call. A Python extension (`.py`) the search finds
  /// (in a plugin set, a directory entry of HTP_PLUGIN_PATH) is not a library: it is left to the caller,
  /// which has the interpreter (python_extensions_found()).
  size_t load_all(const PluginSearch &search, DiagnosticList &diags);
  /// The Python extensions load_all found and left to the caller, in the order found.
  const std::vector<std::filesystem::path> &python_extensions_found() const { return python_found_; }

  /// Loads one plugin library (absolute path). Returns the plugin (also when the same file was already
  /// loaded through another path) or nullptr with the reason in `diags`.
  const LoadedPlugin *load(const std::filesystem::path &path, DiagnosticList &diags,
                           const PluginLoadOptions &options = {});

  /// Registers a plugin written in another language (see ScriptPlugin): its name must be free and its
  /// components pass the same checks as a library's. Returns the plugin or nullptr with the reason.
  const LoadedPlugin *load_script(const ScriptPlugin &script, DiagnosticList &diags);

  const Registry &registry() const { return registry_; }
  /// The registry with every component's PluginRef::sha256 filled in (hashing each plugin file once,
  /// on first call: plans and lockfiles need digests, loading does not).
  const Registry &registry_with_digests();
  const std::vector<std::unique_ptr<LoadedPlugin>> &plugins() const { return plugins_; }
  const std::vector<UnloadedPlugin> &unloaded() const { return unloaded_; }
  /// The loaded plugin with this name, or nullptr.
  const LoadedPlugin *find(std::string_view name) const;

  /// The host function table given to the named plugin (its callbacks must receive this one), or nullptr.
  const HtpHostApi *api_for(std::string_view plugin) const;

  /// Components declared by manifests of plugins that did not load (for resolver explanations).
  std::vector<Component> known_unloaded_components() const;

private:
  struct PluginContext;  // per-plugin HtpHost + HtpHostApi, alive as long as the host

  const LoadedPlugin *load_checked(const std::filesystem::path &canonical, DiagnosticList &diags,
                                   const PluginLoadOptions &options, std::optional<PluginManifest> &manifest);
  /// Steps shared by libraries and scripts: init with staged registrations, manifest cross-check, commit.
  const LoadedPlugin *initialise(std::unique_ptr<LoadedPlugin> plugin,
                                 const std::function<HtpStatus(const HtpHostApi *, HtpDiag *)> &init,
                                 DiagnosticList &diags, std::optional<PluginManifest> &manifest,
                                 const std::filesystem::path &manifest_file);
  void record_unloaded(const std::filesystem::path &path, std::optional<PluginManifest> manifest,
                       const Diagnostic &reason);
  /// Records a plugin that failed to load, with the first diagnostic reported since `errors_before`.
  void record_unloaded(const std::filesystem::path &path, std::optional<PluginManifest> manifest,
                       const DiagnosticList &diags, size_t errors_before);

  Registry registry_;
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<UnloadedPlugin> unloaded_;
  std::vector<std::filesystem::path> python_found_;
  std::vector<std::unique_ptr<PluginContext>> contexts_;
  std::vector<std::pair<uint64_t, uint64_t>> loaded_files_;
  size_t digested_ = 0;  // components whose PluginRef::sha256 is filled  // (device, inode) of loaded libraries
};

}  // namespace htp
