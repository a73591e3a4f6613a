#include "loader/host_api.hpp"

#include <htp/capability.hpp>

#include "ast/grammar.hpp"
#include "ast/unicode.hpp"
#include "pass/invocation.hpp"

#include "diag/log.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace htp {

namespace {

constexpr size_t kMaxStringBytes = size_t{1} << 20;
constexpr size_t kMaxListItems = size_t{1} << 16;

/// Thrown inside descriptor conversion; caught in the register_* entry points.
struct DescriptorError {
  std::string message;
};

std::string take_str(HtpStr s, const char *field) {
  std::string out, why;
  if (!copy_htp_str(s, out, why)) throw DescriptorError{std::string(field) + ": " + why};
  return out;
}

std::vector<std::string> take_list(HtpStrList l, const char *field) {
  if (l.count > kMaxListItems)
    throw DescriptorError{std::string(field) + ": " + std::to_string(l.count) + " items exceed the limit of " +
                          std::to_string(kMaxListItems)};
  if (l.count > 0 && !l.items) throw DescriptorError{std::string(field) + ": NULL items with a non-zero count"};
  std::vector<std::string> out;
  out.reserve(l.count);
  for (size_t i = 0; i < l.count; ++i)
    out.push_back(take_str(l.items[i], (std::string(field) + "[" + std::to_string(i) + "]").c_str()));
  return out;
}

bool valid_id(const std::string &id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

void fill_info(Component &c, const HtpComponentInfo &info) {
  c.id = take_str(info.id, "info.id");
  if (!valid_id(c.id))
    throw DescriptorError{"info.id: '" + c.id + "' is not a valid component id ([A-Za-z0-9._-], 1-128 chars)"};
  c.version = take_str(info.version, "info.version");
  if (c.version.empty()) throw DescriptorError{"info.version: empty version of component '" + c.id + "'"};
  c.summary = take_str(info.summary, "info.summary");
  c.provides = take_list(info.provides, "info.provides");
  c.requires_ = take_list(info.requirements, "info.requirements");
  c.conflicts = take_list(info.conflicts, "info.conflicts");
  c.accepts = take_list(info.accepts, "info.accepts");
}

/// Size of each descriptor in ABI 1.0: fields appended by later minors are read as zero when absent.
template <class Desc> constexpr size_t abi_1_0_size() { return sizeof(Desc); }
template <> constexpr size_t abi_1_0_size<HtpDialectDesc>() { return offsetof(HtpDialectDesc, scan); }
template <> constexpr size_t abi_1_0_size<HtpPassDesc>() { return offsetof(HtpPassDesc, run); }
template <> constexpr size_t abi_1_0_size<HtpBindingDesc>() { return offsetof(HtpBindingDesc, run); }
// Patterns arrived in 1.1 as match + apply; 1.3 appended match_and_rewrite.
template <> constexpr size_t abi_1_0_size<HtpPatternDesc>() { return offsetof(HtpPatternDesc, match_and_rewrite); }

/// Validates struct_size and copies min(struct_size, sizeof(Desc)) bytes into a zeroed Desc.
template <class Desc> Desc copy_descriptor(const Desc *d, const char *type) {
  if (!d) throw DescriptorError{std::string("NULL ") + type};
  size_t size = d->struct_size;
  if (size == 0) throw DescriptorError{std::string(type) + ".struct_size is 0"};
  if (size < abi_1_0_size<Desc>())
    throw DescriptorError{std::string(type) + ".struct_size " + std::to_string(size) +
                          " is smaller than the ABI 1.0 size " + std::to_string(abi_1_0_size<Desc>())};
  if (size > sizeof(Desc))
    throw DescriptorError{std::string(type) + ".struct_size " + std::to_string(size) +
                          " is larger than this host's " + std::to_string(sizeof(Desc)) +
                          " bytes (built against a newer ABI?)"};
  Desc out{};
  std::memcpy(static_cast<void *>(&out), d, size);
  return out;
}

void report_to(HtpDiag *sink, Diagnostic d) {
  if (sink && sink->list) sink->list->report(std::move(d));
}

/// Every capability list must parse: provided facts as facts, everything else as requirements.
void check_capabilities(const Component &c) {
  auto check = [&](const std::vector<std::string> &list, const char *field, CapabilityMode mode) {
    for (size_t i = 0; i < list.size(); ++i) {
      auto parsed = parse_capability(list[i], mode);
      if (!parsed)
        throw DescriptorError{std::string(field) + "[" + std::to_string(i) + "]: '" + list[i] +
                              "' is not a valid capability (column " + std::to_string(parsed.error().column + 1) +
                              ": " + parsed.error().reason + ")"};
    }
  };
  check(c.provides, "provides", CapabilityMode::Fact);
  check(c.requires_, "requires", CapabilityMode::Requirement);
  check(c.conflicts, "conflicts", CapabilityMode::Requirement);
  check(c.accepts, "accepts", CapabilityMode::Requirement);
  check(c.applies_to, "applies_to", CapabilityMode::Requirement);
  check(c.invalidates, "invalidates", CapabilityMode::Requirement);
}

template <class Desc, class Fill>
HtpStatus register_component(HtpHost *host, const Desc *desc, HtpDiag *sink, ComponentKind kind,
                             const char *type, Fill fill) {
  if (!host) return HTP_ERR_INVALID_ARGUMENT;
  try {
    if (!host->registering)
      throw DescriptorError{"components can only be registered during init"};
    Desc d = copy_descriptor(desc, type);
    Component c;
    c.kind = kind;
    fill_info(c, d.info);
    fill(c, d);
    check_capabilities(c);
    host->pending.push_back(std::move(c));
    return HTP_OK;
  } catch (const DescriptorError &e) {
    report_to(sink, Diagnostic::error("abi.descriptor", "plugin '" + host->plugin_name + "' registered an invalid " +
                                                            component_kind_name(kind) + ": " + e.message));
    return HTP_ERR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc &) {
    return HTP_ERR_INTERNAL;
  }
}

// ---- the C entry points ------------------------------------------------------------------------

void api_log(HtpHost *host, HtpLogLevel level, HtpStr message) {
  std::string text, why;
  if (!copy_htp_str(message, text, why)) text = "<invalid log message: " + why + ">";
  const std::string &who = host ? host->plugin_name : std::string("?");
  auto lvl = level <= HTP_LOG_TRACE   ? spdlog::level::trace
             : level == HTP_LOG_DEBUG ? spdlog::level::debug
             : level == HTP_LOG_INFO  ? spdlog::level::info
             : level == HTP_LOG_WARN  ? spdlog::level::warn
                                      : spdlog::level::err;
  htp::log().log(lvl, "[{}] {}", who, text);
}

void api_report(HtpHost *host, HtpDiag *sink, const HtpDiagnostic *d) {
  if (!sink || !sink->list || !d) return;
  // An older plugin may pass a smaller HtpDiagnostic: read only what it has.
  HtpDiagnostic copy{};
  size_t size = d->struct_size;
  if (size < offsetof(HtpDiagnostic, message) + sizeof(HtpStr) || size > sizeof(HtpDiagnostic)) {
    sink->list->report(Diagnostic::error("abi.diagnostic", "plugin '" + (host ? host->plugin_name : "?") +
                                                               "' reported a diagnostic with struct_size " +
                                                               std::to_string(size)));
    return;
  }
  std::memcpy(static_cast<void *>(&copy), d, size);
  Diagnostic out;
  std::string why;
  out.severity = copy.severity == HTP_SEV_NOTE      ? Severity::Note
                 : copy.severity == HTP_SEV_WARNING ? Severity::Warning
                                                    : Severity::Error;
  if (!copy_htp_str(copy.code, out.code, why)) out.code = "plugin.invalid-code";
  if (!copy_htp_str(copy.message, out.message, why)) out.message = "<invalid message: " + why + ">";
  if (!copy_htp_str(copy.span.file, out.span.file, why)) out.span.file.clear();
  // Strings crossing the ABI are UTF-8 (docs/abi.md); a message that is not stays readable instead of failing
  // later where diagnostics become JSON.
  out.code = ast::replace_invalid_utf8(out.code);
  out.message = ast::replace_invalid_utf8(out.message);
  out.span.file = ast::replace_invalid_utf8(out.span.file);
  out.span.line = copy.span.line;
  out.span.col = copy.span.col;
  out.span.end_line = copy.span.end_line;
  out.span.end_col = copy.span.end_col;
  if (copy.severity != HTP_SEV_NOTE && copy.severity != HTP_SEV_WARNING && copy.severity != HTP_SEV_ERROR)
    out.with_note("plugin '" + (host ? host->plugin_name : std::string("?")) + "' gave severity " +
                  std::to_string(static_cast<long long>(copy.severity)) + ", which is none of note (" +
                  std::to_string(HTP_SEV_NOTE) + "), warning (" + std::to_string(HTP_SEV_WARNING) + ") or error (" +
                  std::to_string(HTP_SEV_ERROR) + "); reported as an error");
  sink->list->report(std::move(out));
}

void *api_alloc(HtpHost *, size_t size, size_t align) {
  if (size == 0) size = 1;
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  if ((align & (align - 1)) != 0) return nullptr;
  size = (size + align - 1) / align * align;  // aligned_alloc wants a multiple of the alignment
  return std::aligned_alloc(align, size);
}

void api_free(HtpHost *, void *ptr) { std::free(ptr); }

HtpStatus api_register_dialect(HtpHost *h, const HtpDialectDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Dialect, "HtpDialectDesc",
                            [](Component &c, const HtpDialectDesc &x) {
                              c.name = take_str(x.name, "name");
                              c.names = take_list(x.surface, "surface");
                              c.scan = x.scan;
                              c.user_data = x.user_data;
                            });
}

HtpStatus api_register_intrinsic_set(HtpHost *h, const HtpIntrinsicSetDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::IntrinsicSet, "HtpIntrinsicSetDesc",
                            [](Component &c, const HtpIntrinsicSetDesc &x) {
                              c.name = take_str(x.set, "set");
                              c.names = take_list(x.ops, "ops");
                            });
}

HtpStatus api_register_layout(HtpHost *h, const HtpLayoutDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Layout, "HtpLayoutDesc",
                            [](Component &c, const HtpLayoutDesc &x) {
                              c.name = take_str(x.kind, "kind");
                              c.names = take_list(x.facets, "facets");
                            });
}

HtpStatus api_register_pass(HtpHost *h, const HtpPassDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Pass, "HtpPassDesc", [](Component &c, const HtpPassDesc &x) {
    if (x.stage < HTP_STAGE_CANONICALIZE || x.stage > HTP_STAGE_PACKAGE)
      throw DescriptorError{"stage: unknown stage " + std::to_string(x.stage)};
    c.stage = static_cast<PassStage>(x.stage);
    c.applies_to = take_list(x.applies_to, "applies_to");
    c.invalidates = take_list(x.invalidates, "invalidates");
    c.before = take_list(x.before, "before");
    c.after = take_list(x.after, "after");
    c.run = x.run;
    c.finish = x.finish;  // zero in the copy of a pre-1.4 descriptor
    c.user_data = x.user_data;
    if (x.pattern_count > kMaxListItems) throw DescriptorError{"pattern_count: too many patterns"};
    if (x.pattern_count > 0 && !x.patterns) throw DescriptorError{"patterns: NULL with a non-zero pattern_count"};
    // The array stride is the plugin's sizeof(HtpPatternDesc), which its first struct_size states.
    const size_t stride = x.pattern_count > 0 ? x.patterns[0].struct_size : 0;
    for (size_t i = 0; i < x.pattern_count; ++i) {
      std::string where = "patterns[" + std::to_string(i) + "]";
      const auto *raw = reinterpret_cast<const HtpPatternDesc *>(reinterpret_cast<const char *>(x.patterns) + i * stride);
      HtpPatternDesc p = copy_descriptor(raw, "HtpPatternDesc");
      Pattern out;
      out.name = take_str(p.name, (where + ".name").c_str());
      if (out.name.empty()) throw DescriptorError{where + ".name: empty pattern name"};
      out.root_types = take_list(p.root_types, (where + ".root_types").c_str());
      for (const auto &t : out.root_types)
        if (!ast::kind_from_name(t))
          throw DescriptorError{where + ".root_types: '" + t + "' is not a Python 3.11 ast node type"};
      out.benefit = p.benefit;
      if (!p.match_and_rewrite && (!p.match || !p.apply))
        throw DescriptorError{where + ": match_and_rewrite, or match and apply, are required"};
      out.match_and_rewrite = p.match_and_rewrite;
      if (!out.match_and_rewrite) {
        out.match = p.match;
        out.apply = p.apply;
      }
      out.user_data = p.user_data;
      c.patterns.push_back(std::move(out));
    }
  });
}

HtpStatus api_register_pipeline(HtpHost *h, const HtpPipelineDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Pipeline, "HtpPipelineDesc",
                            [](Component &c, const HtpPipelineDesc &x) {
                              c.targets = take_list(x.targets, "targets");
                              c.passes = take_list(x.passes, "passes");
                            });
}

HtpStatus api_register_backend(HtpHost *h, const HtpBackendDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Backend, "HtpBackendDesc",
                            [](Component &c, const HtpBackendDesc &x) {
                              c.targets = take_list(x.targets, "targets");
                              c.priority = x.priority;
                            });
}

HtpStatus api_register_binding(HtpHost *h, const HtpBindingDesc *d, HtpDiag *s) {
  return register_component(h, d, s, ComponentKind::Binding, "HtpBindingDesc",
                            [](Component &c, const HtpBindingDesc &x) {
                              c.targets = take_list(x.targets, "targets");
                              c.priority = x.priority;
                              c.binding_run = x.run;
                              c.user_data = x.user_data;
                            });
}

}  // namespace

bool copy_htp_str(HtpStr s, std::string &out, std::string &why) {
  if (s.len == 0) {
    out.clear();
    return true;
  }
  if (!s.ptr) {
    why = "NULL string with length " + std::to_string(s.len);
    return false;
  }
  if (s.len > kMaxStringBytes) {
    why = "string of " + std::to_string(s.len) + " bytes exceeds the limit of " + std::to_string(kMaxStringBytes);
    return false;
  }
  out.assign(s.ptr, s.len);
  return true;
}

HtpHostApi make_host_api(HtpHost *host) {
  HtpHostApi api{};
  api.struct_size = sizeof(HtpHostApi);
  api.abi_major = HTP_ABI_MAJOR;
  api.abi_minor = HTP_ABI_MINOR;
  api.host = host;
  api.log = &api_log;
  api.report = &api_report;
  api.alloc = &api_alloc;
  api.free = &api_free;
  api.register_dialect = &api_register_dialect;
  api.register_intrinsic_set = &api_register_intrinsic_set;
  api.register_layout = &api_register_layout;
  api.register_pass = &api_register_pass;
  api.register_pipeline = &api_register_pipeline;
  api.register_backend = &api_register_backend;
  api.register_binding = &api_register_binding;
  fill_ast_api(api);
  return api;
}

}  // namespace htp
