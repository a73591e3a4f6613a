#include "pass/instrumentation.hpp"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "diag/diagnostic_json.hpp"
#include "package/package_writer.hpp"
#include "pass/pass_manager.hpp"
#include "registry/component.hpp"
#include "resolver/plan.hpp"

namespace htp {

namespace {

std::string dump_name(size_t index, const std::string &pass, const char *suffix) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02zu_", index);
  return std::string("ir/") + prefix + pass + suffix;
}

/// The module's .ast.json, naming the source by its file name as the manifest's spans do (attributes
/// hold spans too): a package holds no host path.
std::string portable_ast_json(const ast::Module &module) {
  std::string json = ast::dump_json(module, 1) + "\n";
  if (!module.file.empty()) {
    const std::string escaped = nlohmann::json(module.file).dump(),
                      name = nlohmann::json(std::filesystem::path(module.file).filename().string()).dump();
    const std::string from = escaped.substr(1, escaped.size() - 2), to = name.substr(1, name.size() - 2);
    for (size_t at = json.find(from); at != std::string::npos; at = json.find(from, at + to.size()))
      json.replace(at, from.size(), to);
  }
  return json;
}

/// Writes `<base>.py` and `<base>.ast.json`; returns the paths written.
std::vector<std::string> write_module(PackageWriter &writer, const ast::Module &module, const std::string &base,
                                      const char *role, DiagnosticList &diags) {
  std::vector<std::string> written;
  if (auto e = writer.write(base + ".py", ast::to_source(module) + "\n", role, kHostWriter)) diags.report(*e);
  else written.push_back(base + ".py");
  if (auto e = writer.write(base + ".ast.json", portable_ast_json(module), role, kHostWriter)) diags.report(*e);
  else written.push_back(base + ".ast.json");
  return written;
}

}  // namespace

// ---- timing ----------------------------------------------------------------------------------------

void PassTimingInstrumentation::before_pipeline(const Plan &, const ast::Module &) {
  pipeline_start_ = std::chrono::steady_clock::now();
}

void PassTimingInstrumentation::before_pass(PassEvent &event, const ast::Module &) {
  pass_start_ = std::chrono::steady_clock::now();
  event.start = pass_start_ - pipeline_start_;
}

void PassTimingInstrumentation::stop(PassEvent &event) { event.duration = std::chrono::steady_clock::now() - pass_start_; }

// ---- IR dumps ----------------------------------------------------------------------------------------

void IrDumpInstrumentation::before_pass(PassEvent &event, const ast::Module &module) {
  if (options_.mode != DumpOptions::Mode::Pass || options_.pass != event.pass->id) return;
  for (auto &p : write_module(writer_, module, dump_name(event.index, event.pass->id, ".before"), "ir-dump",
                              diagnostics_))
    event.dumps.push_back(std::move(p));
}

void IrDumpInstrumentation::after_pass(PassEvent &event, const ast::Module &module) {
  const bool dump = options_.mode == DumpOptions::Mode::All ||
                    (options_.mode == DumpOptions::Mode::Pass && options_.pass == event.pass->id) ||
                    (options_.mode == DumpOptions::Mode::Changed && event.changes > 0);
  if (!dump) return;
  for (auto &p : write_module(writer_, module, dump_name(event.index, event.pass->id, ""), "ir-dump", diagnostics_))
    event.dumps.push_back(std::move(p));
}

// ---- crash reproducer --------------------------------------------------------------------------------

void CrashReproducerInstrumentation::before_pipeline(const Plan &plan, const ast::Module &module) {
  plan_ = &plan;
  source_ = module.clone();
}

void CrashReproducerInstrumentation::before_pass(PassEvent &, const ast::Module &module) {
  snapshot_ = module.clone();
}

void CrashReproducerInstrumentation::after_failed_pass(PassEvent &event, const ast::Module &) {
  auto write = [&](const std::string &path, const std::string &text) {
    if (auto e = writer_.write(path, text, "reproducer", kHostWriter)) diagnostics_.report(*e);
    else event.dumps.push_back(path);
  };
  write("ir/reproducer/source.ast.json", portable_ast_json(source_));
  for (auto &p : write_module(writer_, snapshot_, "ir/reproducer/input", "reproducer", diagnostics_))
    event.dumps.push_back(std::move(p));
  nlohmann::ordered_json doc;
  doc["schema"] = "htp.reproducer.v1";
  doc["pass"] = event.pass->id;
  doc["plugin"] = event.pass->plugin.name;
  doc["index"] = event.index;
  doc["target"] = target_;
  doc["source"] = "ir/reproducer/source.ast.json";
  doc["input"] = "ir/reproducer/input.ast.json";
  std::string ids;
  nlohmann::ordered_json passes = nlohmann::ordered_json::array();
  // The passes up to the failing one, from the module before the first pass: the resolver checks each
  // pass's requirements, so the run starts there rather than from the failing pass's input. The plugin
  // files are the plan's own, exactly (run from the package directory).
  std::vector<std::string> argv = {"htp-host", "--no-builtin-plugins"};
  if (plan_) {
    for (size_t i = 0; i < plan_->passes.size() && i < event.index; ++i) {
      passes.push_back(plan_->passes[i].component->id);
      ids += (ids.empty() ? "" : ",") + plan_->passes[i].component->id;
    }
    for (const auto &p : plan_->plugins())
      if (!p.path.empty()) argv.insert(argv.end(), {"--plugins", p.path});
  }
  argv.insert(argv.end(), {"compile", "ir/reproducer/source.ast.json", "--target", target_, "--pipeline", ids});
  if (plan_ && plan_->backend) argv.insert(argv.end(), {"--backend", plan_->backend->id});
  if (plan_ && plan_->binding) argv.insert(argv.end(), {"--binding", plan_->binding->id});
  argv.insert(argv.end(), {"-o", "reproduced", "--keep-failed"});
  doc["passes"] = std::move(passes);
  doc["argv"] = argv;
  doc["diagnostics"] = diagnostics_to_json(event.diagnostics);
  write("ir/reproducer/reproducer.json", doc.dump(2) + "\n");
  if (plan_) write("ir/reproducer/plan.json", plan_->to_json_text());
}

}  // namespace htp
