// htp.lock.json (`htp.lock.v1`): the plugin set and components a plan was resolved with, so a later
// compile reproduces the plan or fails naming each difference.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"
#include "registry/registry.hpp"
#include "resolver/plan.hpp"
#include "resolver/resolver.hpp"

namespace htp {

/// One chosen component as locked.
struct LockedComponent {
  std::string kind;
  std::string id;
  std::string version;
  std::string plugin; ///< Plugin name.

  friend bool operator==(const LockedComponent &, const LockedComponent &) = default;
};

struct Lockfile {
  std::string target;
  std::vector<PluginRef> plugins;          ///< Sorted by name.
  std::vector<LockedComponent> components; ///< By kind, then id (the plan's order).

  /// The lockfile of a resolved plan.
  static Lockfile from_plan(const Plan &plan);
  /// The `htp.lock.v1` document.
  nlohmann::ordered_json to_json() const;
  /// to_json() with two-space indentation and a final newline.
  std::string to_json_text() const;
};

inline constexpr const char *kLockSchema = "htp.lock.v1";

/// Parses lockfile text; a JSON syntax error is reported at its line and column in `file`, a schema
/// error names the JSON path (e.g. `/plugins/1/sha256`).
Expected<Lockfile> parse_lockfile(std::string_view text, const std::string &file);
/// Reads and parses a lockfile; an unreadable file is a diagnostic naming it.
Expected<Lockfile> read_lockfile(const std::string &path);
/// Writes the lockfile through a temporary sibling renamed into place; a diagnostic on failure.
std::optional<Diagnostic> write_lockfile(const Lockfile &lock, const std::string &path);

/// The plugins of a registry's components, unique by name, sorted by name.
std::vector<PluginRef> loaded_plugins(const Registry &registry);

/// One `lock.*` error per difference between the locked plugins and the loaded ones: a locked plugin
/// that is not loaded, loaded at another version, or loaded from a file with another hash.
DiagnosticList compare_lockfile_plugins(const Lockfile &lock, const std::vector<PluginRef> &loaded,
                                        const std::string &file);
/// Prepares `request` to reproduce `lock`: compares the locked plugins with the ones in `registry`
/// (one `lock.*` error per difference) and pins the locked backend and binding unless the request
/// already picks them (a locked one that is no longer loaded is one of the differences).
DiagnosticList apply_lockfile(const Lockfile &lock, const Registry &registry, ResolveRequest &request,
                              const std::string &file);

/// One `lock.*` error per difference between the lockfile and a new plan: another target, a locked
/// component no longer chosen or chosen at another version, a component chosen that was not locked.
DiagnosticList compare_lockfile_plan(const Lockfile &lock, const Plan &plan, const std::string &file);

} // namespace htp
