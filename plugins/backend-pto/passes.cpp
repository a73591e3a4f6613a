#include "passes.hpp"

#include "package_builder.hpp"

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
  if (problems.empty()) return pkg;
  report(ctx, problems);
  return std::nullopt;
}

}  // namespace

void legalize_pass(htp::PassContext &ctx) {
  if (auto in = inputs(ctx)) (void)build(ctx, *in);
}

void emit_pass(htp::PassContext &ctx) {
  const std::optional<PackageInputs> read = inputs(ctx);
  if (!read) return;
  const PackageInputs &in = *read;
  auto pkg = build(ctx, in);
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
  ctx.module().set_attr("htp.entrypoints", entrypoints_json(*pkg).dump());
}

}  // namespace ptobe
