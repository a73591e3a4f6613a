// The pass manager: runs a resolved plan's passes over a module, checking each pass's requirements
// against the facts that hold, timing every pass, dumping the module on request, and recording a trace
// (ir/pass_trace.jsonl and the Chrome trace ir/trace.json).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "pass/dump_options.hpp"
#include "pass/instrumentation.hpp"
#include "pass/rewrite_driver.hpp"
#include "resolver/plan.hpp"

namespace htp {

class PackageWriter;

struct PassManagerOptions {
  DumpOptions dump;  ///< Installs an IrDumpInstrumentation unless mode is None.
  /// Installs a CrashReproducerInstrumentation (ir/reproducer/ when a pass fails; a tree copy per pass).
  bool reproducer = false;
  /// Replace measured times in traces by the pass index, so the whole package is byte-identical.
  bool pin_timings = false;
  /// Options every pass sees (pass_option): "target" and pass parameters.
  nlohmann::json pass_options = nlohmann::json::object();
  /// Seconds one pass may run (0: no limit). A pass past it stops the process with a message naming the pass
  /// and its plugin (a pass cannot be interrupted safely): a hang is reported instead of waited on.
  double pass_time_limit_s = 0;
};

/// The record of one pass run (one line of ir/pass_trace.jsonl).
struct PassEvent {
  size_t index = 0;  ///< 1-based position in the pipeline.
  const Component *pass = nullptr;
  std::vector<std::string> requires_;
  std::vector<std::string> provides;
  std::vector<std::string> invalidated;
  std::chrono::nanoseconds start{0};  ///< Since the pipeline started.
  std::chrono::nanoseconds duration{0};
  size_t changes = 0;
  RewriteResult rewrite;
  std::vector<std::string> dumps;  ///< Package paths of the dumps written for this pass.
  DiagnosticList diagnostics;
  bool ok = false;
};

struct PipelineResult {
  bool ok = false;
  std::vector<PassEvent> events;
  DiagnosticList diagnostics;
  std::vector<std::string> facts;  ///< Facts that hold after the last pass that ran.
};

/// Finds the host table of a plugin (its callbacks must receive their own table).
using ApiLookup = std::function<const HtpHostApi *(std::string_view plugin)>;

class PassManager {
public:
  explicit PassManager(ApiLookup apis) : apis_(std::move(apis)) {}

  /// Adds an instrumentation for the runs of this manager (before those `options` install).
  void add_instrumentation(std::shared_ptr<PassInstrumentation> instrumentation) {
    instrumentations_.push_back(std::move(instrumentation));
  }

  /// Runs the plan's passes in order over `module`; emit and package passes write through `writer`,
  /// dumps and traces go there too. Stops at the first failing pass, with its diagnostics. Around each
  /// pass it calls the instrumentations: those added, then dumps and the reproducer as `options` ask,
  /// then timing (last, so that it times the pass alone).
  PipelineResult run(const Plan &plan, ast::Module &module, PackageWriter &writer,
                     const PassManagerOptions &options) const;

  /// ir/pass_trace.jsonl for `result` (one JSON object per line).
  /// `each_line`, when given, may edit each line's JSON before it is printed (e.g. relativize spans).
  static std::string pass_trace_jsonl(const PipelineResult &result, bool pin_timings,
                                      const std::function<void(nlohmann::ordered_json &)> &each_line = {});
  /// ir/trace.json for `result` (Chrome trace-event format; opens in Perfetto).
  static std::string chrome_trace(const PipelineResult &result, bool pin_timings);

private:
  ApiLookup apis_;
  std::vector<std::shared_ptr<PassInstrumentation>> instrumentations_;
};

}  // namespace htp
