#include "pass/pass_manager.hpp"

#include <htp/capability.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "diag/crash_report.hpp"
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

int64_t micros(std::chrono::nanoseconds ns) { return std::chrono::duration_cast<std::chrono::microseconds>(ns).count(); }

}  // namespace

PipelineResult PassManager::run(const Plan &plan, ast::Module &module, PackageWriter &writer,
                                const PassManagerOptions &options) const {
  PipelineResult result;
  std::vector<PassInstrumentation *> instr;
  for (const auto &i : instrumentations_) instr.push_back(i.get());
  std::optional<IrDumpInstrumentation> dumps;
  if (options.dump.mode != DumpOptions::Mode::None) instr.push_back(&dumps.emplace(writer, options.dump, result.diagnostics));
  if (options.dump.mode == DumpOptions::Mode::Pass &&
      std::none_of(plan.passes.begin(), plan.passes.end(),
                   [&](const PlannedPass &p) { return p.component->id == options.dump.pass; })) {
    std::vector<std::string> ids;  // (a typo, or a pass another target's plan runs)
    for (const PlannedPass &p : plan.passes) ids.push_back(p.component->id);
    result.diagnostics.report(Diagnostic::warning(
        "pass.dump-ir", "--dump-ir names '" + options.dump.pass + "', which this plan does not run, so nothing is "
                        "dumped (modes: all, after, none, or one of the plan's passes: " + join_text(ids) + ")"));
  }
  std::optional<CrashReproducerInstrumentation> reproducer;
  if (options.reproducer) {
    const auto target = options.pass_options.find("target");
    instr.push_back(&reproducer.emplace(
        writer, target != options.pass_options.end() && target->is_string() ? target->get<std::string>() : plan.target,
        result.diagnostics));
  }
  PassTimingInstrumentation timing;
  instr.push_back(&timing);
  for (auto *i : instr) i->before_pipeline(plan, module);

  FactSet facts(plan.initial_facts);
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
    for (auto *in : instr) in->before_pass(event, module);
    const std::string what = "pass '" + pass.id + "' of plugin '" + pass.plugin.name + "'" +
                             (pass.plugin.path.empty() ? std::string() : " (" + pass.plugin.path + ")");
    crash::Scope crash_scope(what);
    crash::TimeLimit time_limit(what, options.pass_time_limit_s, "--pass-time-limit");
    PassRun run = run_pass(pass, api, module, options.pass_options, &writer, [&](const RewriteRecord &r) {
      for (auto *in : instr) in->after_rewrite(event, r);
    });
    event.changes = run.changes + run.rewrite.rewrites.size();
    event.rewrite = std::move(run.rewrite);
    event.diagnostics = run.diagnostics;
    event.ok = run.ok;
    result.diagnostics.append(run.diagnostics);
    if (!run.ok) {
      for (auto it = instr.rbegin(); it != instr.rend(); ++it) (*it)->after_failed_pass(event, module);
      result.events.push_back(std::move(event));
      result.facts = facts.sorted();
      return result;
    }
    for (const auto &inv : pass.invalidates)
      for (auto &gone : facts.remove_matching(inv)) event.invalidated.push_back(std::move(gone));
    for (const auto &p : pass.provides) facts.add(p);
    for (auto it = instr.rbegin(); it != instr.rend(); ++it) (*it)->after_pass(event, module);
    result.events.push_back(std::move(event));
  }
  result.facts = facts.sorted();
  result.ok = !result.diagnostics.has_errors();
  return result;
}

std::string PassManager::pass_trace_jsonl(const PipelineResult &result, bool pin_timings,
                                          const std::function<void(nlohmann::ordered_json &)> &each_line) {
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
    j["rewrite_visits"] = e.rewrite.visits;
    nlohmann::ordered_json rewrites = nlohmann::ordered_json::array();
    for (const auto &r : e.rewrite.rewrites)
      rewrites.push_back({{"pattern", r.pattern}, {"node", r.node_id}, {"iteration", r.iteration},
                          {"span", span_to_json(r.span)}});
    j["rewrites"] = std::move(rewrites);
    j["dumps"] = e.dumps;
    j["diagnostics"] = diagnostics_to_json(e.diagnostics);
    if (each_line) each_line(j);
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
