#include "passes.hpp"

#include "package_builder.hpp"
#include "cost_model.hpp"

#include <mutex>

namespace ptobe {

namespace {

std::string option_text(const htp::PassContext &ctx, const char *key) {
  auto text = ctx.option(key);
  if (!text) return {};
  json v = json::parse(*text, nullptr, false);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::string base_name(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void report(const htp::PassContext &ctx, const std::vector<Problem> &problems) {
  const std::string file = ctx.module().file();
  for (const Problem &p : problems) {
    htp::SourceSpan span{p.span.file.empty() ? file : p.span.file, p.span.line, p.span.col, p.span.end_line,
                         p.span.end_col};
    htp::Host(ctx.api()).error(ctx.diag(), p.code, p.message, span);
  }
}

/// The module attributes the package is built from, read by the SDK readers; nullopt (reported) when one
/// is malformed.
std::optional<PackageInputs> inputs(const htp::PassContext &ctx) {
  htp::ModuleRef m = ctx.module();
  PackageInputs in{std::nullopt, std::nullopt, std::nullopt, Origin{option_text(ctx, "target"), base_name(m.file())}};
  try {
    in.tile_kernels = htp::tile_kernels(m);
    in.task_graph = htp::wsp_task_graph(m);
    in.csp_graph = htp::csp_graph(m);
    in.layouts = htp::layout_signatures(m);
  } catch (const htp::IrDocumentError &e) {
    const IrError error = ir_error(e);
    report(ctx, {Problem{error.code(), error.what(), error.span()}});
    return std::nullopt;
  }
  return in;
}

/// Builds the package, reporting every problem at its span; nullopt when there were problems.
std::optional<BuiltPackage> build(const htp::PassContext &ctx, const PackageInputs &in) {
  std::vector<Problem> problems;
  BuiltPackage pkg = build_package(in, a2a3_profile(), problems);
  // (a pass may have erased every function: a package nothing can run is an error here, as on aie)
  if (problems.empty() && pkg.entries.empty()) {
    Problem p{"pto.no-entry", "the program has no kernel, workload or CSP program to build for " +
                                  option_text(ctx, "target"),
              Span{}};
    if (auto f = htp::first_decorated_function(ctx.module())) {
      p.message += ": " + f->sentence;
      p.span = Span{f->span.file, f->span.line, f->span.col, f->span.end_line, f->span.end_col};
    }
    problems.push_back(std::move(p));
  }
  if (problems.empty()) return pkg;
  report(ctx, problems);
  return std::nullopt;
}

/// What the package is built from, as text: the four attributes, the target and the file name. pto.emit
/// reuses pto.legalize's package only when this is the same (no pass in between changed them).
std::string build_key(const htp::PassContext &ctx) {
  htp::ModuleRef m = ctx.module();
  std::string key = option_text(ctx, "target") + '\n' + m.file();
  for (const char *attr : {"tile.kernels", "wsp.task_graph", "csp.graph", "layout.signatures"})
    key += '\n' + m.attr(attr).value_or("");
  return key;
}

/// The package pto.legalize built, kept for pto.emit of the same compile (one entry; a compile on another
/// thread with other inputs simply misses and builds its own).
struct BuiltCache {
  std::mutex mutex;
  std::string key;
  std::optional<BuiltPackage> package;
};
BuiltCache &built_cache() {
  static BuiltCache cache;
  return cache;
}

}  // namespace

void legalize_pass(htp::PassContext &ctx) {
  auto in = inputs(ctx);
  if (!in) return;
  auto pkg = build(ctx, *in);
  if (pkg)  // (pto.emit reuses this package, or builds the same one: reported once, here)
    for (const Problem &w : pkg->warnings)
      htp::Host(ctx.api()).report(ctx.diag(), HTP_SEV_WARNING, w.code, w.message,
                                   htp::SourceSpan{w.span.file.empty() ? ctx.module().file() : w.span.file, w.span.line,
                                                   w.span.col, w.span.end_line, w.span.end_col});
  BuiltCache &cache = built_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.package.reset();
  if (!pkg) return;
  cache.key = build_key(ctx);
  cache.package = std::move(pkg);
}

void emit_pass(htp::PassContext &ctx) {
  const std::optional<PackageInputs> read = inputs(ctx);
  if (!read) return;
  const PackageInputs &in = *read;
  std::optional<BuiltPackage> pkg;
  {
    BuiltCache &cache = built_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.package && cache.key == build_key(ctx)) {
      pkg = std::move(cache.package);
      htp::Host(ctx.api()).log(HTP_LOG_DEBUG, "pto.emit: the package model pto.legalize built is reused");
    }
    cache.package.reset();
    cache.key.clear();
  }
  if (!pkg) {
    htp::Host(ctx.api()).log(HTP_LOG_DEBUG, "pto.emit: building the package model (pto.legalize's is not there)");
    pkg = build(ctx, in);
  }
  if (!pkg) return;
  std::vector<std::pair<std::string, std::string>> files;
  try {
    files = package_files(*pkg, in.origin);
  } catch (const IrError &e) {
    const Span &s = e.span();
    htp::Host(ctx.api()).error(ctx.diag(), e.code(), e.what(),
                               htp::SourceSpan{s.file.empty() ? ctx.module().file() : s.file, s.line, s.col,
                                               s.end_line, s.end_col});
    return;
  }
  for (const auto &[path, text] : files)
    ctx.write_file("codegen/pto/" + path, text,
                   path.rfind("kernels/", 0) == 0 ? (path.find("orchestration") != std::string::npos ? "orchestration" : "kernel")
                                                  : "config");
  // The estimate's input, outside package_files(): the package goldens hold what pto-runtime consumes.
  ctx.write_file("codegen/pto/kernel_costs.json", kernel_costs_json(*pkg, a2a3_profile()).dump(2) + "\n", "config");
  ctx.module().set_attr("htp.entrypoints", entrypoints_json(*pkg).dump());
}

}  // namespace ptobe
