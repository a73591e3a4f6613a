#include "pass/pass_runner.hpp"

#include "pass/invocation.hpp"

namespace htp {

namespace {

/// Calls a plugin body; converts a bad status or an escaped exception into a diagnostic.
bool call_body(HtpStatus (*fn)(void *, const HtpHostApi *, HtpPassContext *), void *user_data,
               const HtpHostApi *api, HtpPassContext &ctx, const char *what) {
  HtpStatus status = HTP_ERR_INTERNAL;
  try {
    status = fn(user_data, api, &ctx);
  } catch (const std::exception &e) {
    ctx.diagnostics.report(Diagnostic::error("pass.exception", std::string(what) + " '" + ctx.component +
                                                                   "' threw an exception: " + e.what()));
    return false;
  } catch (...) {
    ctx.diagnostics.report(
        Diagnostic::error("pass.exception", std::string(what) + " '" + ctx.component + "' threw an exception"));
    return false;
  }
  if (status != HTP_OK && !ctx.diagnostics.has_errors())
    ctx.diagnostics.report(Diagnostic::error("pass.failed", std::string(what) + " '" + ctx.component +
                                                                "' failed (status " + std::to_string(status) +
                                                                ") without a diagnostic"));
  return status == HTP_OK && !ctx.diagnostics.has_errors();
}

}  // namespace

PassRun run_pass(const Component &pass, const HtpHostApi *api, ast::Module &module, const nlohmann::json &options,
                 PackageWriter *writer, const RewriteObserver &on_rewrite) {
  PassRun out;
  auto start = std::chrono::steady_clock::now();
  HtpModule handle{&module, {}, 0};
  HtpPassContext ctx(&handle, options, pass.id);
  if (pass.stage == PassStage::Emit || pass.stage == PassStage::Package) ctx.writer = writer;
  ctx.records = writer;
  bool ok = true;
  if (pass.run) ok = call_body(pass.run, pass.user_data, api, ctx, "pass");
  if (ok && !pass.patterns.empty()) {
    try {
      RewriteOptions ro;
      ro.on_rewrite = on_rewrite;
      out.rewrite = drive_patterns(pass.patterns, api, ctx, ro);
    } catch (const std::exception &e) {
      ctx.diagnostics.report(Diagnostic::error("pass.exception", "a pattern of '" + pass.id + "' threw: " + e.what()));
    }
    ok = !ctx.diagnostics.has_errors();
  }
  if (ok && pass.finish) ok = call_body(pass.finish, pass.user_data, api, ctx, "pass");
  out.ok = ok;
  out.changes = handle.changes;
  // An exception a plugin caught at its boundary (plugin.exception, "uncaught exception: ...") names no pass:
  // the note says which pass of which plugin raised it.
  for (const Diagnostic &d : ctx.diagnostics.items()) {
    if (d.code != "plugin.exception") {
      out.diagnostics.report(d);
      continue;
    }
    Diagnostic named = d;
    named.with_note("raised in pass '" + pass.id + "' of plugin '" + pass.plugin.name + "'" +
                    (pass.plugin.path.empty() ? std::string() : " (" + pass.plugin.path + ")"));
    out.diagnostics.report(std::move(named));
  }
  out.duration = std::chrono::steady_clock::now() - start;
  return out;
}

ScanRun run_scanner(const Component &dialect, const HtpHostApi *api, ast::Module &module,
                    const nlohmann::json &options) {
  ScanRun out;
  if (!dialect.scan) {
    out.ok = true;
    return out;
  }
  HtpModule handle{&module, {}, 0};
  HtpPassContext ctx(&handle, options, dialect.id);
  ctx.obligations = &out.obligations;
  out.ok = call_body(dialect.scan, dialect.user_data, api, ctx, "scanner");
  out.diagnostics = std::move(ctx.diagnostics);
  return out;
}

}  // namespace htp
