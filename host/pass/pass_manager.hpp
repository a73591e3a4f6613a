// The pass manager: runs a resolved plan's passes over a module, checking each pass's requirements
// against the facts that hold, timing every pass, dumping the module on request, and recording a trace
// (ir/pass_trace.jsonl and the Chrome trace ir/trace.json).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "pass/rewrite_driver.hpp"
#include "resolver/plan.hpp"

namespace htp {

class PackageWriter;

/// What to dump: nothing; after every pass (`all`); after every pass that changed the module (`after`);
/// or before and after one named pass (`PASS`).
struct DumpOptions {
  enum class Mode { None, All, Changed, Pass } mode = Mode::None;
  std::string pass;

  /// Parses `all`, `after`, `none` or a pass id.
  static DumpOptions parse(std::string_view text);
};

struct PassManagerOptions {
  DumpOptions dump;
  /// Replace measured times in traces by the pass index, so the whole package is byte-identical.
  bool pin_timings = false;
  /// Options every pass sees (pass_option): "target" and pass parameters.
  nlohmann::json pass_options = nlohmann::json::object();
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

  /// Runs the plan's passes in order over `module`; emit and package passes write through `writer`,
  /// dumps and traces go there too. Stops at the first failing pass, with its diagnostics.
  PipelineResult run(const Plan &plan, ast::Module &module, PackageWriter &writer,
                     const PassManagerOptions &options) const;

  /// ir/pass_trace.jsonl for `result` (one JSON object per line).
  static std::string pass_trace_jsonl(const PipelineResult &result, bool pin_timings);
  /// ir/trace.json for `result` (Chrome trace-event format; opens in Perfetto).
  static std::string chrome_trace(const PipelineResult &result, bool pin_timings);

private:
  ApiLookup apis_;
};

}  // namespace htp
