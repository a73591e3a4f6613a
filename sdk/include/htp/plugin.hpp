// htp/plugin.hpp — the header-only C++ layer over htp/abi.h for plugin authors.
//
// A plugin is a few lines:
//
//   #include <htp/plugin.hpp>
//
//   static void register_components(htp::Registrar &r) {
//     r.add(htp::BackendSpec{.info = {.id = "my.backend", .version = "1.0.0", .provides = {"Backend.Mine"}},
//                            .targets = {"mine-sim"}});
//   }
//   HTP_DEFINE_PLUGIN("my-plugin", "1.0.0", "What it does in one line", register_components)
//
// Everything here compiles into the plugin (no HTP library is linked); exceptions thrown by author code
// are caught at the ABI boundary by the guards below and turned into a status plus a diagnostic.
#pragma once

#include <htp/abi.h>

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef HTP_SDK_VERSION
/** Version of the HTP SDK these headers belong to. */
#define HTP_SDK_VERSION "0.1.0"
#endif

namespace htp {

/// Borrowed view of a std::string_view as an HtpStr (valid while the view's storage lives).
inline HtpStr to_htp_str(std::string_view s) { return HtpStr{s.data(), s.size()}; }

/// Copies an HtpStr into a std::string (an empty string for NULL).
inline std::string from_htp_str(HtpStr s) { return s.ptr ? std::string(s.ptr, s.len) : std::string(); }

/// Thrown by SDK helpers when the host rejects a request; carries the status for the boundary guard.
class PluginError : public std::runtime_error {
public:
  PluginError(HtpStatus status, const std::string &message) : std::runtime_error(message), status_(status) {}
  /// The status to return across the boundary.
  HtpStatus status() const { return status_; }

private:
  HtpStatus status_;
};

/// A source span for diagnostics reported by plugins.
struct SourceSpan {
  std::string file;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
};

/// RAII-free, copyable wrapper over the host function table given to init.
class Host {
public:
  explicit Host(const HtpHostApi *api) : api_(api) {}

  /// The raw table (for functions the wrapper does not cover).
  const HtpHostApi *api() const { return api_; }
  /// True when the host's table contains the member at `offset` (i.e. the host is new enough).
  bool has(size_t offset_end) const { return api_ && api_->struct_size >= offset_end; }

  /// Writes a log line attributed to this plugin.
  void log(HtpLogLevel level, std::string_view message) const {
    if (api_ && api_->log) api_->log(api_->host, level, to_htp_str(message));
  }

  /// Reports a diagnostic into `sink`.
  void report(HtpDiag *sink, HtpSeverity severity, std::string_view code, std::string_view message,
              const SourceSpan &span = {}) const {
    if (!api_ || !api_->report) return;
    HtpDiagnostic d{};
    d.struct_size = sizeof(HtpDiagnostic);
    d.severity = severity;
    d.code = to_htp_str(code);
    d.message = to_htp_str(message);
    d.span = HtpSpan{to_htp_str(span.file), span.line, span.col, span.end_line, span.end_col};
    api_->report(api_->host, sink, &d);
  }

  /// Reports an error diagnostic into `sink`.
  void error(HtpDiag *sink, std::string_view code, std::string_view message, const SourceSpan &span = {}) const {
    report(sink, HTP_SEV_ERROR, code, message, span);
  }

private:
  const HtpHostApi *api_;
};

/// Fields every component shares (mirrors HtpComponentInfo).
struct ComponentSpec {
  std::string id;
  std::string version = "0.0.0";
  std::string summary;
  std::vector<std::string> provides;
  std::vector<std::string> requires_;
  std::vector<std::string> conflicts;
  std::vector<std::string> accepts;
};

/// A programming model: its name, the Python surface names it exports, and its obligation scanner.
struct DialectSpec {
  ComponentSpec info;
  std::string name;
  std::vector<std::string> surface;
  HtpStatus (*scan)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;  ///< e.g. htp::pass_body<fn>
  void *user_data = nullptr;
};

/// A rewrite pattern (see htp::pattern<P>() in htp/ast.hpp).
struct PatternSpec {
  std::string name;
  std::vector<std::string> roots;
  int32_t benefit = 0;
  int32_t (*match)(void *, const HtpHostApi *, HtpPassContext *, const HtpNode *) = nullptr;
  HtpStatus (*apply)(void *, const HtpHostApi *, HtpPassContext *, HtpNode *) = nullptr;
  void *user_data = nullptr;
  /// One callback that matches and rewrites (ABI 1.3); when set, match and apply may stay null.
  HtpRewriteResult (*match_and_rewrite)(void *, const HtpHostApi *, HtpPassContext *, HtpNode *) = nullptr;
};

/// An intrinsic set: its name and operations.
struct IntrinsicSetSpec {
  ComponentSpec info;
  std::string set;
  std::vector<std::string> ops;
};

/// A layout system: its kind and facets.
struct LayoutSpec {
  ComponentSpec info;
  std::string kind;
  std::vector<std::string> facets;
};

/// A pass: stage, selection and invalidation.
struct PassSpec {
  ComponentSpec info;
  HtpPassStage stage = HTP_STAGE_CANONICALIZE;
  std::vector<std::string> applies_to;
  std::vector<std::string> invalidates;
  std::vector<std::string> before;
  std::vector<std::string> after;
  HtpStatus (*run)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;  ///< e.g. htp::pass_body<fn>
  std::vector<PatternSpec> patterns;
  void *user_data = nullptr;
  /// Runs after the patterns' fixpoint (ABI 1.4), e.g. htp::pass_body<fn>; null for none.
  HtpStatus (*finish)(void *, const HtpHostApi *, HtpPassContext *) = nullptr;
};

/// A pipeline template for some targets.
struct PipelineSpec {
  ComponentSpec info;
  std::vector<std::string> targets;
  std::vector<std::string> passes;
};

/// A backend for some targets.
struct BackendSpec {
  ComponentSpec info;
  std::vector<std::string> targets;
  int32_t priority = 0;
};

/// A binding for some targets.
struct BindingSpec {
  ComponentSpec info;
  std::vector<std::string> targets;
  int32_t priority = 0;
  /// Runs a package entry (ABI 1.2), e.g. htp::run_body<fn> from <htp/run.hpp>; null for compile-only.
  HtpStatus (*run)(void *, const HtpHostApi *, const HtpRunRequest *, HtpDiag *) = nullptr;
  void *user_data = nullptr;
};

namespace detail {

/// Owns HtpStr arrays that borrow from spec strings for the duration of one registration call.
class StrLists {
public:
  HtpStrList list(const std::vector<std::string> &v) {
    auto &storage = lists_.emplace_back();
    storage.reserve(v.size());
    for (const auto &s : v) storage.push_back(to_htp_str(s));
    return HtpStrList{storage.empty() ? nullptr : storage.data(), storage.size()};
  }

private:
  std::vector<std::vector<HtpStr>> lists_;
};

inline HtpComponentInfo component_info(const ComponentSpec &c, StrLists &lists) {
  HtpComponentInfo info{};
  info.id = to_htp_str(c.id);
  info.version = to_htp_str(c.version);
  info.summary = to_htp_str(c.summary);
  info.provides = lists.list(c.provides);
  info.requirements = lists.list(c.requires_);
  info.conflicts = lists.list(c.conflicts);
  info.accepts = lists.list(c.accepts);
  return info;
}

}  // namespace detail

/// Registers components with the host during init; throws PluginError when the host rejects one.
class Registrar {
public:
  Registrar(const HtpHostApi *api, HtpDiag *diag) : host_(api), diag_(diag) {}

  /// The host wrapper, for logging and diagnostics.
  const Host &host() const { return host_; }
  /// The diagnostic sink of the current init call.
  HtpDiag *diag() const { return diag_; }

  void add(const DialectSpec &s) {
    detail::StrLists l;
    HtpDialectDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.name = to_htp_str(s.name);
    d.surface = l.list(s.surface);
    d.scan = s.scan;
    d.user_data = s.user_data;
    check(host_.api()->register_dialect(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const IntrinsicSetSpec &s) {
    detail::StrLists l;
    HtpIntrinsicSetDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.set = to_htp_str(s.set);
    d.ops = l.list(s.ops);
    check(host_.api()->register_intrinsic_set(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const LayoutSpec &s) {
    detail::StrLists l;
    HtpLayoutDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.kind = to_htp_str(s.kind);
    d.facets = l.list(s.facets);
    check(host_.api()->register_layout(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const PassSpec &s) {
    detail::StrLists l;
    HtpPassDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.stage = s.stage;
    d.applies_to = l.list(s.applies_to);
    d.invalidates = l.list(s.invalidates);
    d.before = l.list(s.before);
    d.after = l.list(s.after);
    d.run = s.run;
    d.finish = s.finish;
    d.user_data = s.user_data;
    std::vector<HtpPatternDesc> patterns;
    for (const auto &p : s.patterns) {
      HtpPatternDesc pd{};
      pd.struct_size = sizeof pd;
      pd.name = to_htp_str(p.name);
      pd.root_types = l.list(p.roots);
      pd.benefit = p.benefit;
      pd.match = p.match;
      pd.apply = p.apply;
      pd.user_data = p.user_data;
      pd.match_and_rewrite = p.match_and_rewrite;
      patterns.push_back(pd);
    }
    d.patterns = patterns.empty() ? nullptr : patterns.data();
    d.pattern_count = patterns.size();
    check(host_.api()->register_pass(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const PipelineSpec &s) {
    detail::StrLists l;
    HtpPipelineDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.targets = l.list(s.targets);
    d.passes = l.list(s.passes);
    check(host_.api()->register_pipeline(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const BackendSpec &s) {
    detail::StrLists l;
    HtpBackendDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.targets = l.list(s.targets);
    d.priority = s.priority;
    check(host_.api()->register_backend(host_.api()->host, &d, diag_), s.info.id);
  }
  void add(const BindingSpec &s) {
    detail::StrLists l;
    HtpBindingDesc d{};
    d.struct_size = sizeof d;
    d.info = detail::component_info(s.info, l);
    d.targets = l.list(s.targets);
    d.priority = s.priority;
    d.run = s.run;
    d.user_data = s.user_data;
    check(host_.api()->register_binding(host_.api()->host, &d, diag_), s.info.id);
  }

private:
  static void check(HtpStatus status, const std::string &id) {
    if (status != HTP_OK) throw PluginError(status, "the host rejected component '" + id + "'");
  }

  Host host_;
  HtpDiag *diag_;
};

namespace detail {

/// Reports the in-flight exception into `sink` and returns the status for the boundary.
inline HtpStatus report_exception(const HtpHostApi *api, HtpDiag *sink) noexcept {
  try {
    throw;
  } catch (const PluginError &e) {
    // The host already described the rejection; add the plugin's context only for other statuses.
    if (e.status() != HTP_ERR) Host(api).error(sink, "plugin.error", e.what());
    return e.status();
  } catch (const std::exception &e) {
    try {
      Host(api).error(sink, "plugin.exception", std::string("uncaught exception: ") + e.what());
    } catch (...) {
    }
    return HTP_ERR_INTERNAL;
  } catch (...) {
    try {
      Host(api).error(sink, "plugin.exception", "uncaught non-standard exception");
    } catch (...) {
    }
    return HTP_ERR_INTERNAL;
  }
}

}  // namespace detail

}  // namespace htp

/// Opens a region whose exceptions become a status; close it with HTP_GUARD_END(api, sink).
#define HTP_GUARD_BEGIN try {
/// Closes HTP_GUARD_BEGIN: returns the status for any exception, reported into `sink` through `api`.
#define HTP_GUARD_END(api, sink)                                                                           \
  }                                                                                                        \
  catch (...) {                                                                                            \
    return ::htp::detail::report_exception((api), (sink));                                                 \
  }

/// Defines the plugin entry `htp_plugin_query` and an init that calls `register_fn(htp::Registrar&)`
/// inside the boundary guard. NAME and VERSION are string literals; DESCRIPTION one line.
#define HTP_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, register_fn)                                         \
  static HtpStatus htp_plugin_init_(const HtpHostApi *api, HtpDiag *diag) {                                \
    HTP_GUARD_BEGIN                                                                                        \
    ::htp::Registrar registrar(api, diag);                                                                 \
    register_fn(registrar);                                                                                \
    return HTP_OK;                                                                                         \
    HTP_GUARD_END(api, diag)                                                                               \
  }                                                                                                        \
  extern "C" HTP_PLUGIN_EXPORT const HtpPluginInfo *htp_plugin_query(void) {                               \
    static const HtpPluginInfo info = {sizeof(HtpPluginInfo), HTP_ABI_MAJOR, HTP_ABI_MINOR, NAME, VERSION, \
                                       &htp_plugin_init_,     nullptr,       DESCRIPTION,   HTP_SDK_VERSION}; \
    return &info;                                                                                          \
  }
