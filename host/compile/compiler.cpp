#include "compile/compiler.hpp"

#include <algorithm>
#include <map>

#include "package/package_manifest.hpp"
#include "package/package_writer.hpp"
#include "pass/pass_runner.hpp"
#include "resolver/lockfile.hpp"

#ifndef HTP_VERSION_STRING
#define HTP_VERSION_STRING "unknown"
#endif

namespace htp {

namespace {

nlohmann::json entrypoints_of(const ast::Module &m) {
  if (auto it = m.attrs.find("htp.entrypoints"); it != m.attrs.end()) return it->second;
  if (auto it = m.attrs.find("htp.capture"); it != m.attrs.end() && it->second.contains("entries"))
    return it->second["entries"];
  return nlohmann::json::array();
}

nlohmann::ordered_json obligations_json(const std::vector<Obligation> &obs) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto &o : obs)
    a.push_back({{"capability", to_string(o.capability)}, {"label", o.display()}, {"span", span_to_json(o.span)}});
  return a;
}

/// Replaces the source path `file` by `relative` in every string of `j` (span files, and the explanations
/// that quote a location), in place.
void relativize_spans(nlohmann::ordered_json &j, const std::string &file, const std::string &relative) {
  if (j.is_string()) {
    std::string &s = j.get_ref<std::string &>();
    for (size_t at = s.find(file); at != std::string::npos; at = s.find(file, at + relative.size()))
      s.replace(at, file.size(), relative);
  } else if (j.is_structured()) {
    for (auto &x : j) relativize_spans(x, file, relative);
  }
}

}  // namespace

nlohmann::ordered_json build_environment() {
  nlohmann::ordered_json env;
  env["htp_version"] = HTP_VERSION_STRING;
  env["abi"] = std::to_string(HTP_ABI_MAJOR) + "." + std::to_string(HTP_ABI_MINOR);
#if defined(__x86_64__)
  env["host_arch"] = "x86_64";
#elif defined(__aarch64__)
  env["host_arch"] = "aarch64";
#else
  env["host_arch"] = "unknown";
#endif
  env["host_os"] = "linux";
#if defined(__clang__)
  env["host_compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  env["host_compiler"] = std::string("gcc ") + __VERSION__;
#endif
  return env;
}

std::vector<Obligation> Compiler::scan(ast::Module &module, DiagnosticList &diags) const {
  std::vector<Obligation> out;
  nlohmann::json options = nlohmann::json::object();
  for (const Component *d : host_.registry().of_kind(ComponentKind::Dialect)) {
    if (!d->scan) continue;
    ScanRun run = run_scanner(*d, host_.api_for(d->plugin.name), module, options);
    diags.append(run.diagnostics);
    for (auto &raised : run.obligations) {
      auto ob = parse_obligation(raised.capability, raised.span);
      if (ob) out.push_back(std::move(*ob));
      else diags.report(ob.error());
    }
  }
  // Every use keeps its own span so errors point at each offending site; source order makes the
  // obligation list deterministic whatever order the dialects registered in.
  std::stable_sort(out.begin(), out.end(), [](const Obligation &a, const Obligation &b) {
    return std::tie(a.span.line, a.span.col) < std::tie(b.span.line, b.span.col);
  });
  return out;
}

CompileResult Compiler::compile(ast::Module module, const CompileOptions &options) const {
  CompileResult result;
  auto fail = [&](CompileResult &r) -> CompileResult & {
    r.ok = false;
    return r;
  };

  // 1. Scan: what the program uses.
  result.obligations = scan(module, result.diagnostics);
  if (result.diagnostics.has_errors()) return fail(result);

  // 2. Resolve: one backend, one binding, the pipeline and every pass that applies.
  const Registry &registry = host_.registry_with_digests();
  ResolveRequest request;
  request.target = options.target;
  request.obligations = result.obligations;
  request.backend = options.backend;
  request.binding = options.binding;
  request.passes = options.passes;
  request.known_unloaded = host_.known_unloaded_components();
  std::optional<Lockfile> lock;
  if (options.locked) {
    auto read = read_lockfile(*options.locked);
    if (!read) {
      result.diagnostics.report(read.error());
      return fail(result);
    }
    lock = std::move(*read);
    result.diagnostics.append(apply_lockfile(*lock, registry, request, *options.locked));
    if (lock->target != request.target) return fail(result);  // (lock.target: nothing to compare)
  }
  Resolution resolution = resolve(registry, request);
  result.diagnostics.append(resolution.diagnostics);
  if (lock && resolution.plan) result.diagnostics.append(compare_lockfile_plan(*lock, *resolution.plan, *options.locked));
  if (!resolution.ok() || result.diagnostics.has_errors()) return fail(result);
  result.plan = std::move(resolution.plan);
  const Plan &plan = *result.plan;

  // 3. The package, assembled in a temporary sibling.
  PackageOptions popts;
  popts.force = options.force;
  popts.keep_failed = options.keep_failed;
  auto writer = PackageWriter::begin(options.out, popts);
  if (!writer) {
    result.diagnostics.report(writer.error());
    return fail(result);
  }
  PackageWriter &w = **writer;
  auto abandon = [&]() -> CompileResult & {
    result.failed = w.abandon(result.diagnostics);
    return fail(result);
  };
  if (auto e = w.write("ir/00_source.py", module.source, "source", kHostWriter)) {
    result.diagnostics.report(*e);
    return abandon();
  }

  // 4. Passes.
  PassManagerOptions pm;
  pm.dump = options.dump;
  pm.pin_timings = options.pin_timings;
  pm.pass_time_limit_s = options.pass_time_limit_s;
  pm.reproducer = options.keep_failed;  // a reproducer is only of use in a package that is kept
  pm.pass_options = options.pass_options;
  pm.pass_options["target"] = options.target;
  PassManager manager([this](std::string_view plugin) { return host_.api_for(plugin); });
  result.pipeline = manager.run(plan, module, w, pm);
  result.diagnostics.append(result.pipeline.diagnostics);
  // Traces are written for failed compiles too (they land in <out>.failed/ when kept).
  const bool pinned = options.pin_timings;
  // Rewrite and diagnostic spans name the source relative to the compile's root, as the manifest's do.
  const std::string source_name =
      module.file.empty() ? std::string() : std::filesystem::path(module.file).filename().string();
  (void)w.write("ir/pass_trace.jsonl",
                PassManager::pass_trace_jsonl(result.pipeline, pinned,
                                              [&](nlohmann::ordered_json &line) {
                                                if (!module.file.empty()) relativize_spans(line, module.file, source_name);
                                              }),
                "trace", kHostWriter, !pinned);
  (void)w.write("ir/trace.json", PassManager::chrome_trace(result.pipeline, pinned), "trace", kHostWriter, !pinned);
  if (!result.pipeline.ok) return abandon();

  // 5. Manifest and lockfile.
  Lockfile written = Lockfile::from_plan(plan);
  if (auto e = w.write("htp.lock.json", written.to_json_text(), "lockfile", kHostWriter)) {
    result.diagnostics.report(*e);
    return abandon();
  }
  nlohmann::ordered_json manifest;
  manifest["schema"] = kPackageManifestSchema;
  manifest["htp_version"] = HTP_VERSION_STRING;
  manifest["target"] = options.target;
  nlohmann::ordered_json plugins = nlohmann::ordered_json::array();
  for (const auto &p : plan.plugins()) {
    nlohmann::ordered_json entry = {{"name", p.name}, {"version", p.version}, {"sha256", p.sha256}};
    if (!p.language.empty()) {
      entry["language"] = p.language;
      entry["source"] = p.path;
    }
    plugins.push_back(std::move(entry));
  }
  manifest["plugins"] = std::move(plugins);
  manifest["plan"] = plan.to_json();
  manifest["capabilities"] = {{"obligations", obligations_json(result.obligations)},
                              {"facts", result.pipeline.facts}};
  manifest["entrypoints"] = entrypoints_of(module);
  // The entry points a backend declared (htp.entrypoints) pass the checks verify and run apply, or the compile
  // would write a package that can never verify or run.
  auto entry_function = [&](const std::string &entry) {  // (the entry's def, else the module's first line)
    Span at;
    if (module.root)
      for (const auto &stmt : module.root->children("body"))
        if (stmt && stmt->type_name() == "FunctionDef" && stmt->text("name") && *stmt->text("name") == entry)
          at = stmt->span();
    if (at.file.empty()) at.file = module.file;
    if (!at.known()) at.line = 1;
    return at;
  };
  if (DiagnosticList bad = check_entrypoints(manifest["entrypoints"], entry_function); bad.has_errors()) {
    for (Diagnostic d : bad.items())
      result.diagnostics.report(std::move(d.with_note("in the module attribute htp.entrypoints, which the emit passes "
                                                      "of the plan wrote: fix the backend that declares the entry")));
    return abandon();
  }
  manifest["build"] = build_environment();
  // Spans name the source relative to the compile's root (its directory): a manifest holds no host path
  // and is the same wherever the program is compiled.
  if (!module.file.empty())
    relativize_spans(manifest, module.file, std::filesystem::path(module.file).filename().string());
  if (auto e = w.commit(std::move(manifest))) {
    result.diagnostics.report(*e);
    return abandon();
  }
  result.package = w.out();
  result.ok = true;
  return result;
}

}  // namespace htp
