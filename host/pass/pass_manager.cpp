#include "pass/pass_manager.hpp"

#include <htp/capability.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "diag/diagnostic_json.hpp"
#include "package/package_writer.hpp"
#include "pass/pass_runner.hpp"

namespace htp {

DumpOptions DumpOptions::parse(std::string_view text) {
  DumpOptions d;
  if (text.empty() || text == "none") d.mode = Mode::None;
  else if (text == "all") d.mode = Mode::All;
  else if (text == "after") d.mode = Mode::Changed;
  else {
    d.mode = Mode::Pass;
    d.pass = std::string(text);
  }
  return d;
}

namespace {

/// The facts that hold while the pipeline runs, parsed once.
class FactSet {
public:
  explicit FactSet(const std::vector<std::string> &facts) {
    for (const auto &f : facts) add(f);
  }
  void add(const std::string &text) {
    if (std::find(texts_.begin(), texts_.end(), text) != texts_.end()) return;
    auto c = parse_capability(text, CapabilityMode::Fact);
    if (!c) return;  // the resolver validated every capability; nothing unparsable reaches here
    texts_.push_back(text);
    parsed_.push_back(std::move(*c));
  }
  /// Removes every fact the invalidation pattern matches; returns the removed texts.
  std::vector<std::string> remove_matching(const std::string &pattern) {
    std::vector<std::string> removed;
    auto req = parse_capability(pattern, CapabilityMode::Requirement);
    if (!req) return removed;
    for (size_t i = 0; i < parsed_.size();) {
      if (matches(*req, parsed_[i])) {
        removed.push_back(texts_[i]);
        texts_.erase(texts_.begin() + static_cast<std::ptrdiff_t>(i));
        parsed_.erase(parsed_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    return removed;
  }
  /// Whether a requirement holds (an unmet optional requirement holds).
  bool satisfies(const Capability &req) const {
    if (req.optional) return true;
    return std::any_of(parsed_.begin(), parsed_.end(), [&](const Capability &f) { return matches(req, f); });
  }
  std::vector<std::string> sorted() const {
    auto out = texts_;
    std::sort(out.begin(), out.end());
    return out;
  }

private:
  std::vector<std::string> texts_;
  std::vector<Capability> parsed_;
};

std::string dump_name(size_t index, const std::string &pass, const char *suffix) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02zu_", index);
  return std::string("ir/") + prefix + pass + suffix;
}

void write_dump(PackageWriter &writer, ast::Module &module, const std::string &base, PassEvent &event,
                DiagnosticList &diags) {
  if (auto e = writer.write(base + ".py", ast::to_source(module) + "\n", "ir-dump", kHostWriter)) diags.report(*e);
  else event.dumps.push_back(base + ".py");
  // The dump names the source by its file name, as the manifest's spans do (attributes hold spans too): a
  // package holds no host path.
  std::string json = ast::dump_json(module, 1) + "\n";
  if (!module.file.empty()) {
    const std::string escaped = nlohmann::json(module.file).dump(), name = nlohmann::json(
        std::filesystem::path(module.file).filename().string()).dump();
    const std::string from = escaped.substr(1, escaped.size() - 2), to = name.substr(1, name.size() - 2);
    for (size_t at = json.find(from); at != std::string::npos; at = json.find(from, at + to.size()))
      json.replace(at, from.size(), to);
  }
  if (auto e = writer.write(base + ".ast.json", json, "ir-dump", kHostWriter))
    diags.report(*e);
  else event.dumps.push_back(base + ".ast.json");
}

int64_t micros(std::chrono::nanoseconds ns) { return std::chrono::duration_cast<std::chrono::microseconds>(ns).count(); }

}  // namespace

PipelineResult PassManager::run(const Plan &plan, ast::Module &module, PackageWriter &writer,
                                const PassManagerOptions &options) const {
  PipelineResult result;
  FactSet facts(plan.initial_facts);
  const auto pipeline_start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < plan.passes.size(); ++i) {
    const Component &pass = *plan.passes[i].component;
    PassEvent event;
    event.index = i + 1;
    event.pass = &pass;
    event.requires_ = pass.requires_;
    event.provides = pass.provides;

    // Requirements must hold now: the resolver checked the plan, this checks the run.
    for (const auto &text : pass.requires_) {
      auto req = parse_capability(text, CapabilityMode::Requirement);
      if (req && facts.satisfies(*req)) continue;
      Diagnostic d = Diagnostic::error("pass.unmet-requirement", "pass '" + pass.id + "' requires '" + text +
                                                                     "', which no chosen component or earlier pass "
                                                                     "provided");
      auto held = facts.sorted();
      d.with_note("facts before '" + pass.id + "': " + (held.empty() ? std::string("none") : join_text(held)));
      event.diagnostics.report(d);
      result.diagnostics.report(std::move(d));
      result.events.push_back(std::move(event));
      result.facts = facts.sorted();
      return result;
    }

    const HtpHostApi *api = apis_(pass.plugin.name);
    if (!api) {
      result.diagnostics.report(Diagnostic::error(
          "pass.no-plugin", "pass '" + pass.id + "' belongs to plugin '" + pass.plugin.name + "', which is not loaded"));
      result.facts = facts.sorted();
      return result;
    }
    const bool dump_pass = options.dump.mode == DumpOptions::Mode::Pass && options.dump.pass == pass.id;
    if (dump_pass) write_dump(writer, module, dump_name(i + 1, pass.id, ".before"), event, result.diagnostics);

    event.start = std::chrono::steady_clock::now() - pipeline_start;
    PassRun run = run_pass(pass, api, module, options.pass_options, &writer);
    event.duration = run.duration;
    event.changes = run.changes + run.rewrite.rewrites.size();
    event.rewrite = std::move(run.rewrite);
    event.diagnostics = run.diagnostics;
    event.ok = run.ok;
    result.diagnostics.append(run.diagnostics);
    if (!run.ok) {
      result.events.push_back(std::move(event));
      result.facts = facts.sorted();
      return result;
    }
    for (const auto &inv : pass.invalidates)
      for (auto &gone : facts.remove_matching(inv)) event.invalidated.push_back(std::move(gone));
    for (const auto &p : pass.provides) facts.add(p);

    bool dump = options.dump.mode == DumpOptions::Mode::All || dump_pass ||
                (options.dump.mode == DumpOptions::Mode::Changed && event.changes > 0);
    if (dump) write_dump(writer, module, dump_name(i + 1, pass.id, ""), event, result.diagnostics);
    result.events.push_back(std::move(event));
  }
  result.facts = facts.sorted();
  result.ok = !result.diagnostics.has_errors();
  return result;
}

std::string PassManager::pass_trace_jsonl(const PipelineResult &result, bool pin_timings) {
  std::string out;
  for (const auto &e : result.events) {
    nlohmann::ordered_json j;
    j["index"] = e.index;
    j["pass"] = e.pass->id;
    j["version"] = e.pass->version;
    j["plugin"] = e.pass->plugin.name;
    j["stage"] = pass_stage_name(e.pass->stage);
    j["requires"] = e.requires_;
    j["provides"] = e.provides;
    j["invalidated"] = e.invalidated;
    j["start_us"] = pin_timings ? static_cast<int64_t>(e.index) : micros(e.start);
    j["duration_us"] = pin_timings ? int64_t{0} : micros(e.duration);
    j["ok"] = e.ok;
    j["nodes_changed"] = e.changes;
    j["rewrite_iterations"] = e.rewrite.iterations;
    nlohmann::ordered_json rewrites = nlohmann::ordered_json::array();
    for (const auto &r : e.rewrite.rewrites)
      rewrites.push_back({{"pattern", r.pattern}, {"node", r.node_id}, {"iteration", r.iteration},
                          {"span", span_to_json(r.span)}});
    j["rewrites"] = std::move(rewrites);
    j["dumps"] = e.dumps;
    j["diagnostics"] = diagnostics_to_json(e.diagnostics);
    out += j.dump() + "\n";
  }
  return out;
}

std::string PassManager::chrome_trace(const PipelineResult &result, bool pin_timings) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1},
                    {"args", {{"name", "htp compile"}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "passes"}}}});
  for (const auto &e : result.events) {
    nlohmann::ordered_json ev;
    ev["name"] = e.pass->id;
    ev["cat"] = std::string("pass,") + pass_stage_name(e.pass->stage);
    ev["ph"] = "X";
    ev["ts"] = pin_timings ? static_cast<int64_t>(e.index) : micros(e.start);
    ev["dur"] = pin_timings ? int64_t{1} : std::max<int64_t>(1, micros(e.duration));
    ev["pid"] = 1;
    ev["tid"] = 1;
    ev["args"] = {{"plugin", e.pass->plugin.name},
                  {"nodes_changed", e.changes},
                  {"rewrites", e.rewrite.rewrites.size()},
                  {"ok", e.ok}};
    events.push_back(std::move(ev));
  }
  nlohmann::ordered_json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  return doc.dump(1) + "\n";
}

}  // namespace htp
