#include "loader/plugin_host.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <boost/dll/shared_library.hpp>
#include "diag/crash_report.hpp"
#include "diag/log.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>

#include <htp/capability.hpp>

#include "digest/sha256.hpp"
#include "loader/host_api.hpp"

namespace fs = std::filesystem;

namespace htp {

struct PluginHost::PluginContext {
  HtpHost host;
  HtpHostApi api{};
};

namespace {

/// Size of HtpPluginInfo in ABI 1.0 (before description and sdk_version were appended).
constexpr size_t kPluginInfoSizeV1_0 = offsetof(HtpPluginInfo, description);

bool valid_plugin_name(const std::string &n) {
  if (n.empty() || n.size() > 64) return false;
  if (!(std::islower(static_cast<unsigned char>(n[0])) || std::isdigit(static_cast<unsigned char>(n[0]))))
    return false;
  for (char c : n)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return true;
}

/// Reads a NUL-terminated string from plugin memory with a length bound.
std::string bounded_cstr(const char *s, size_t max = 4096) {
  if (!s) return {};
  size_t n = ::strnlen(s, max);
  return std::string(s, n);
}

std::string abi_text(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Compares the manifest with what the binary reported; one diagnostic naming every difference.
std::optional<Diagnostic> cross_check(const PluginManifest &m, const LoadedPlugin &p,
                                      const std::vector<Component> &registered, const fs::path &manifest_file) {
  std::vector<std::string> diffs;
  auto field = [&](const char *what, const std::string &declared, const std::string &actual) {
    if (declared != actual)
      diffs.push_back(std::string(what) + ": manifest says '" + declared + "', the binary says '" + actual + "'");
  };
  field("name", m.name, p.name);
  field("version", m.version, p.version);
  field("ABI", abi_text(m.abi_major, m.abi_minor), abi_text(p.abi_major, p.abi_minor));
  field("library", m.library, p.path.filename().string());
  std::set<std::pair<std::string, std::string>> declared, actual;
  for (const auto &c : m.components) declared.emplace(component_kind_name(c.kind), c.id);
  for (const auto &c : registered) actual.emplace(component_kind_name(c.kind), c.id);
  for (const auto &[kind, id] : declared)
    if (!actual.count({kind, id})) diffs.push_back("declares " + kind + " '" + id + "', which the binary does not register");
  for (const auto &[kind, id] : actual)
    if (!declared.count({kind, id})) diffs.push_back("the binary registers " + kind + " '" + id + "', which is not declared");
  if (diffs.empty()) return std::nullopt;
  Diagnostic d = Diagnostic::error("manifest.mismatch", "plugin manifest '" + manifest_file.string() +
                                                            "' disagrees with the binary '" + p.path.string() + "'");
  for (const auto &x : diffs) d.with_note(x);
  return d;
}

}  // namespace

// ---- LoadedPlugin --------------------------------------------------------------------------------

const std::string &LoadedPlugin::sha256() const {
  std::call_once(sha_once_, [this] {
    auto h = sha256_file(path);
    if (h) sha256_ = *h;
  });
  return sha256_;
}

PluginRef LoadedPlugin::ref() const { return PluginRef{name, version, path.string(), sha256(), language}; }

// ---- PluginHost ----------------------------------------------------------------------------------

PluginHost::PluginHost() = default;

PluginHost::~PluginHost() {
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) {
    if (!(*it)->shutdown_) continue;
    try {
      (*it)->shutdown_();
    } catch (...) {
      htp::log().error("plugin '{}' threw from shutdown", (*it)->name);
    }
  }
}

const LoadedPlugin *PluginHost::find(std::string_view name) const {
  for (const auto &p : plugins_)
    if (p->name == name) return p.get();
  return nullptr;
}

const Registry &PluginHost::registry_with_digests() {
  // Components are only ever appended, so only those registered since the last call need digests.
  if (digested_ < registry_.size()) {
    for (const auto &p : plugins_) registry_.set_plugin_sha256(p->name, p->sha256());
    digested_ = registry_.size();
  }
  return registry_;
}

const HtpHostApi *PluginHost::api_for(std::string_view plugin) const {
  for (const auto &c : contexts_)
    if (c->host.plugin_name == plugin) return &c->api;
  return nullptr;
}

std::vector<Component> PluginHost::known_unloaded_components() const {
  std::vector<Component> out;
  for (const auto &u : unloaded_) {
    if (!u.manifest) continue;
    for (auto c : u.manifest->components) {
      c.plugin = PluginRef{u.manifest->name, u.manifest->version, u.path.string(), {}};
      c.plugin.load_error = u.reason.code.empty() ? "it did not load" : "[" + u.reason.code + "], reported when loading";
      out.push_back(std::move(c));
    }
  }
  return out;
}

size_t PluginHost::load_all(const PluginSearch &search, DiagnosticList &diags) {
  size_t before = plugins_.size();
  auto libraries = discover_plugins(search, diags);
  std::erase_if(libraries, [&](const fs::path &p) {
    if (p.extension() != ".py") return false;
    python_found_.push_back(p);
    return true;
  });
  if (search.safe) {
    SafeLoadResult r = filter_safe_plugins(libraries, *search.safe, diags);
    for (const auto &skipped : r.skipped)
      record_unloaded(skipped, std::nullopt, Diagnostic::error("plugins.unsafe", "skipped by --safe-plugins"));
    libraries = std::move(r.safe);
  }
  for (const auto &path : libraries) load(path, diags);
  return plugins_.size() - before;
}

void PluginHost::record_unloaded(const fs::path &path, std::optional<PluginManifest> manifest,
                                 const Diagnostic &reason) {
  unloaded_.push_back(UnloadedPlugin{path, std::move(manifest), reason});
}

void PluginHost::record_unloaded(const fs::path &path, std::optional<PluginManifest> manifest,
                                 const DiagnosticList &diags, size_t errors_before) {
  record_unloaded(path, std::move(manifest),
                  diags.items().size() > errors_before
                      ? diags.items()[errors_before]
                      : Diagnostic::error("plugins.failed", "plugin '" + path.string() + "' failed"));
}

const LoadedPlugin *PluginHost::load(const fs::path &path, DiagnosticList &diags, const PluginLoadOptions &options) {
  auto canonical = check_plugin_location(path);
  if (!canonical) {
    diags.report(canonical.error());
    record_unloaded(path, std::nullopt, canonical.error());
    return nullptr;
  }
  // The same file reached through a symlink or a second path loads once.
  struct stat st {};
  if (::stat(canonical->c_str(), &st) == 0) {
    std::pair<uint64_t, uint64_t> key{st.st_dev, st.st_ino};
    for (size_t i = 0; i < loaded_files_.size(); ++i)
      if (loaded_files_[i] == key) {
        htp::log().debug("plugin '{}' is '{}', already loaded", path.string(), plugins_[i]->path.string());
        return plugins_[i].get();
      }
  }
  std::optional<PluginManifest> manifest;
  size_t errors_before = diags.items().size();
  const LoadedPlugin *p = load_checked(*canonical, diags, options, manifest);
  if (!p) {
    record_unloaded(*canonical, std::move(manifest), diags, errors_before);
    return nullptr;
  }
  loaded_files_.emplace_back(st.st_dev, st.st_ino);
  return p;
}

const LoadedPlugin *PluginHost::load_checked(const fs::path &canonical, DiagnosticList &diags,
                                             const PluginLoadOptions &options,
                                             std::optional<PluginManifest> &manifest) {
  const std::string file = canonical.string();
  auto fail = [&](const char *code, const std::string &message) -> const LoadedPlugin * {
    diags.report(Diagnostic::error(code, message));
    return nullptr;
  };

  // 1. The manifest is read before any code of the plugin runs.
  const fs::path manifest_file = manifest_path_for(canonical);
  if (options.require_manifest) {
    if (!fs::exists(manifest_file))
      return fail("manifest.missing", "plugin '" + file + "' has no manifest (expected '" + manifest_file.string() + "')");
    auto m = read_plugin_manifest(manifest_file);
    if (!m) {
      diags.report(m.error());
      return nullptr;
    }
    manifest = std::move(*m);
  }

  // 2. Load with RTLD_NOW | RTLD_LOCAL, never unloaded (RTLD_NODELETE keeps the code resident).
  boost::dll::shared_library lib;
  boost::dll::fs::error_code ec;
  const auto mode = boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                    static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
  ::dlerror();
  lib.load(canonical, mode, ec);
  if (ec || !lib.is_loaded()) {
    const char *why = ::dlerror();
    return fail("abi.load", "cannot load plugin '" + file + "': " + (why ? why : ec.message()));
  }

  // 3. The one entry symbol.
  if (!lib.has(HTP_PLUGIN_QUERY_SYMBOL))
    return fail("abi.no-entry", "plugin '" + file + "' does not export '" HTP_PLUGIN_QUERY_SYMBOL "'");
  auto &query = lib.get<const HtpPluginInfo *()>(HTP_PLUGIN_QUERY_SYMBOL);
  const HtpPluginInfo *raw = nullptr;
  try {
    raw = query();
  } catch (...) {
    return fail("abi.query-threw", "plugin '" + file + "': " HTP_PLUGIN_QUERY_SYMBOL " threw an exception");
  }
  if (!raw) return fail("abi.null-info", "plugin '" + file + "': " HTP_PLUGIN_QUERY_SYMBOL " returned NULL");

  // 4. Version negotiation before reading anything beyond the version fields.
  if (raw->struct_size == 0) return fail("abi.struct-size", "plugin '" + file + "': HtpPluginInfo.struct_size is 0");
  if (raw->struct_size < kPluginInfoSizeV1_0)
    return fail("abi.struct-size", "plugin '" + file + "': HtpPluginInfo.struct_size " +
                                       std::to_string(raw->struct_size) + " is smaller than the ABI 1.0 size " +
                                       std::to_string(kPluginInfoSizeV1_0));
  if (raw->abi_major != HTP_ABI_MAJOR)
    return fail("abi.major", "plugin '" + file + "' was built for ABI " + abi_text(raw->abi_major, raw->abi_minor) +
                                 ", this host speaks ABI " + abi_text(HTP_ABI_MAJOR, HTP_ABI_MINOR) +
                                 " (the major versions differ)");
  if (raw->abi_minor > HTP_ABI_MINOR)
    return fail("abi.minor", "plugin '" + file + "' was built for ABI " + abi_text(raw->abi_major, raw->abi_minor) +
                                 ", newer than this host's " + abi_text(HTP_ABI_MAJOR, HTP_ABI_MINOR) +
                                 "; rebuild it against this SDK or upgrade the host");
  if (raw->struct_size > sizeof(HtpPluginInfo))
    return fail("abi.struct-size", "plugin '" + file + "': HtpPluginInfo.struct_size " +
                                       std::to_string(raw->struct_size) + " is larger than this host's " +
                                       std::to_string(sizeof(HtpPluginInfo)) + " bytes");
  // Copy what the plugin has; fields of newer minors read as zero.
  HtpPluginInfo info{};
  std::memcpy(static_cast<void *>(&info), raw, raw->struct_size);

  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->name = bounded_cstr(info.name, 65);
  plugin->version = bounded_cstr(info.version, 129);
  plugin->description = bounded_cstr(info.description);
  plugin->sdk_version = bounded_cstr(info.sdk_version, 129);
  plugin->abi_major = info.abi_major;
  plugin->abi_minor = info.abi_minor;
  plugin->path = canonical;
  plugin->info_ = raw;
  plugin->shutdown_ = info.shutdown;
  if (!info.init) return fail("abi.no-init", "plugin '" + file + "' has no init function");
  return initialise(std::move(plugin), info.init, diags, manifest, manifest_file);
}

const LoadedPlugin *PluginHost::load_script(const ScriptPlugin &script, DiagnosticList &diags) {
  std::error_code ec;
  fs::path source = fs::weakly_canonical(script.source, ec);
  if (ec) source = script.source;
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->name = script.name;
  plugin->version = script.version;
  plugin->description = script.description;
  plugin->sdk_version = HTP_VERSION_STRING;
  plugin->abi_major = HTP_ABI_MAJOR;
  plugin->abi_minor = HTP_ABI_MINOR;
  plugin->path = source;
  plugin->language = script.language;
  std::optional<PluginManifest> none;
  const size_t errors_before = diags.items().size();
  const LoadedPlugin *p = initialise(std::move(plugin), script.init, diags, none, {});
  if (!p) record_unloaded(source, std::nullopt, diags, errors_before);
  return p;
}

const LoadedPlugin *PluginHost::initialise(std::unique_ptr<LoadedPlugin> plugin,
                                           const std::function<HtpStatus(const HtpHostApi *, HtpDiag *)> &init,
                                           DiagnosticList &diags, std::optional<PluginManifest> &manifest,
                                           const fs::path &manifest_file) {
  const std::string file = plugin->path.string();
  auto fail = [&](const char *code, const std::string &message) -> const LoadedPlugin * {
    diags.report(Diagnostic::error(code, message));
    return nullptr;
  };
  if (!valid_plugin_name(plugin->name))
    return fail("abi.name", "plugin '" + file + "' has an invalid name '" + plugin->name +
                                "' (expected [a-z0-9][a-z0-9-]*, at most 64 characters)");
  if (plugin->version.empty()) return fail("abi.version", "plugin '" + file + "' has an empty version");
  // (lockfiles pin it and requirements compare it: `version=^1.2` reads it as a semantic version)
  if (auto v = parse_version(plugin->version); !v)
    return fail("abi.version", "plugin '" + plugin->name + "' (" + file + ") has version '" + plugin->version +
                                   "', which is not a semantic version such as 1.0.0: " + v.error().reason);
  if (const LoadedPlugin *other = find(plugin->name))
    return fail("plugins.duplicate-name", "plugin name '" + plugin->name + "' of '" + file +
                                              "' is already taken by '" + other->path.string() + "'");

  // 5. init, with registrations staged until it succeeds; the host wraps the call whatever the plugin does.
  auto ctx = std::make_unique<PluginContext>();
  ctx->host.plugin_name = plugin->name;
  ctx->api = make_host_api(&ctx->host);
  DiagnosticList init_diags;
  HtpDiag sink{&init_diags, plugin->name};
  HtpStatus status = HTP_ERR_INTERNAL;
  ctx->host.registering = true;
  crash::Scope crash_scope("the init function of plugin '" + plugin->name + "' (" + file + ")");
  try {
    status = init(&ctx->api, &sink);
  } catch (const std::exception &e) {
    init_diags.report(Diagnostic::error("abi.init-threw", "plugin '" + plugin->name + "' (" + file +
                                                              ") threw from init: " + e.what()));
    status = HTP_ERR_INTERNAL;
  } catch (...) {
    init_diags.report(Diagnostic::error("abi.init-threw", "plugin '" + plugin->name + "' (" + file +
                                                              ") threw a non-standard exception from init"));
    status = HTP_ERR_INTERNAL;
  }
  ctx->host.registering = false;
  if (status != HTP_OK) {
    Diagnostic d = Diagnostic::error("abi.init-failed", "plugin '" + plugin->name + "' (" + file +
                                                            ") failed to initialise (status " +
                                                            std::to_string(status) + "); it is not loaded");
    for (const auto &x : init_diags.items()) d.notes.push_back(Diagnostic::note(x.message, x.span));
    if (init_diags.empty()) d.with_note("the plugin reported no diagnostic");
    diags.report(std::move(d));
    return nullptr;
  }
  diags.append(init_diags);  // warnings and notes of a successful init

  // 6. Cross-check the manifest, then commit the staged components atomically.
  if (manifest)
    if (auto d = cross_check(*manifest, *plugin, ctx->host.pending, manifest_file)) {
      diags.report(std::move(*d));
      return nullptr;
    }
  std::set<std::string> staged_ids;
  for (auto &c : ctx->host.pending) {
    c.plugin = PluginRef{plugin->name, plugin->version, file, {}, plugin->language};
    std::optional<Diagnostic> error = registry_.check_insertable(c);
    if (!error && !staged_ids.insert(c.id).second)
      error = Diagnostic::error("registry.duplicate-id", "plugin '" + plugin->name + "' registers component id '" +
                                                             c.id + "' twice");
    if (error) {
      error->with_note("plugin '" + plugin->name + "' (" + file + ") is not loaded");
      diags.report(std::move(*error));
      return nullptr;
    }
  }
  plugin->manifest = std::move(manifest);
  manifest.reset();
  for (auto &c : ctx->host.pending) {
    auto added = registry_.add(std::move(c));
    if (added) plugin->components.push_back(*added);
  }
  ctx->host.pending.clear();
  htp::log().debug("loaded plugin '{}' {} from '{}' with {} components", plugin->name, plugin->version, file,
                plugin->components.size());
  contexts_.push_back(std::move(ctx));
  plugins_.push_back(std::move(plugin));
  return plugins_.back().get();
}

}  // namespace htp
