// The host's deep copy of one registered component descriptor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <htp/abi.h>

namespace htp {

enum class ComponentKind { Dialect, IntrinsicSet, Layout, Pass, Pipeline, Backend, Binding };

/// "dialect", "intrinsic-set", "layout", "pass", "pipeline", "backend", "binding".
const char *component_kind_name(ComponentKind k);
/// Inverse of component_kind_name; false when the name is unknown.
bool parse_component_kind(std::string_view name, ComponentKind &out);

/// Pass stages in pipeline order (mirrors HtpPassStage).
enum class PassStage { Canonicalize, Analyze, Typecheck, Schedule, Lower, Emit, Package };
const char *pass_stage_name(PassStage s);
bool parse_pass_stage(std::string_view name, PassStage &out);

/// Identity of the plugin that registered a component (for plans, lockfiles and messages).
struct PluginRef {
  std::string name;
  std::string version;
  std::string path;    ///< Canonical absolute path of the shared object; empty for synthetic components.
  std::string sha256;  ///< Hex digest of the shared object; empty for synthetic components.
  std::string language;  ///< "" for a shared library; "python" for a Python extension (path is its source).
  /// A plugin known from its manifest that was given but did not load: why, briefly (empty otherwise).
  std::string load_error;
};

/// A rewrite pattern registered with a pass (strings deep-copied; callbacks live in the resident plugin).
struct Pattern {
  std::string name;
  std::vector<std::string> root_types;
  int32_t benefit = 0;
  int32_t (*match)(void *, const HtpHostApi *, HtpPassContext *, const HtpNode *) = nullptr;
  HtpStatus (*apply)(void *, const HtpHostApi *, HtpPassContext *, HtpNode *) = nullptr;
  /// ABI 1.3: one callback that matches and rewrites; when set, match and apply are unused.
  HtpRewriteResult (*match_and_rewrite)(void *, const HtpHostApi *, HtpPassContext *, HtpNode *) = nullptr;
  void *user_data = nullptr;
};

/// One component. Capability lists hold capability text as registered (validated at registration).
struct Component {
  ComponentKind kind = ComponentKind::Dialect;
  std::string id;
  std::string version;
  std::string summary;
  PluginRef plugin;

  std::vector<std::string> provides;
  std::vector<std::string> requires_;  ///< `requires` is a C++20 keyword.
  std::vector<std::string> conflicts;
  std::vector<std::string> accepts;

  // Dialect: name + surface; intrinsic set: set + ops; layout: kind + facets.
  std::string name;
  std::vector<std::string> names;
  /// Dialect scanner (obligations), or null.
  HtpStatus (*scan)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;

  // Pass.
  PassStage stage = PassStage::Canonicalize;
  std::vector<std::string> applies_to;
  std::vector<std::string> invalidates;
  std::vector<std::string> before;
  std::vector<std::string> after;
  /// Whole-module body, or null when the pass is only its patterns.
  HtpStatus (*run)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;
  std::vector<Pattern> patterns;
  /// Whole-module body after the patterns' fixpoint (ABI 1.4), or null.
  HtpStatus (*finish)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;
  /// The plugin's user data for scan/run.
  void *user_data = nullptr;

  // Pipeline (targets + passes), backend and binding (targets + priority).
  std::vector<std::string> targets;
  std::vector<std::string> passes;
  int32_t priority = 0;
  /// Binding (ABI 1.2): runs a package entry, or null for a compile-only binding; uses user_data.
  HtpStatus (*binding_run)(void *, const HtpHostApi *, const HtpRunRequest *, HtpDiag *) = nullptr;
};

}  // namespace htp
