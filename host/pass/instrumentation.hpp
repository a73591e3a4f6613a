// Pass instrumentation (after MLIR's PassInstrumentation): hooks the pass manager calls around every pass
// and after every rewrite, so that dumps, timing and crash reproducers are components of the pipeline run
// rather than code in its loop. Before-hooks run in registration order, after-hooks in reverse order (the
// first registered instrumentation wraps all the others).
#pragma once

#include <chrono>
#include <string>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "pass/dump_options.hpp"
#include "pass/rewrite_driver.hpp"

namespace htp {

class PackageWriter;
struct PassEvent;
struct Plan;

class PassInstrumentation {
public:
  virtual ~PassInstrumentation() = default;
  /// The pipeline is about to run `plan` over `module`.
  virtual void before_pipeline(const Plan &, const ast::Module &) {}
  /// `event` (index, pass, requirements) is about to run over `module`.
  virtual void before_pass(PassEvent &, const ast::Module &) {}
  /// A pattern of the running pass rewrote a node.
  virtual void after_rewrite(PassEvent &, const RewriteRecord &) {}
  /// The pass succeeded; `event` holds its outcome (changes, rewrites, facts it invalidated).
  virtual void after_pass(PassEvent &, const ast::Module &) {}
  /// The pass failed; `event.diagnostics` says why. `module` is as the pass left it.
  virtual void after_failed_pass(PassEvent &, const ast::Module &) {}
};

/// Times each pass: event.start (since the pipeline began) and event.duration. Register it last so that
/// it measures the pass alone, not other instrumentations.
class PassTimingInstrumentation final : public PassInstrumentation {
public:
  void before_pipeline(const Plan &, const ast::Module &) override;
  void before_pass(PassEvent &event, const ast::Module &) override;
  void after_pass(PassEvent &event, const ast::Module &) override { stop(event); }
  void after_failed_pass(PassEvent &event, const ast::Module &) override { stop(event); }

private:
  void stop(PassEvent &event);
  std::chrono::steady_clock::time_point pipeline_start_{}, pass_start_{};
};

/// Writes the module (Python and .ast.json) into the package's ir/ as DumpOptions ask: before and after
/// one named pass, after every pass, or after every pass that changed the module.
class IrDumpInstrumentation final : public PassInstrumentation {
public:
  IrDumpInstrumentation(PackageWriter &writer, DumpOptions options, DiagnosticList &diagnostics)
      : writer_(writer), options_(std::move(options)), diagnostics_(diagnostics) {}
  void before_pass(PassEvent &event, const ast::Module &module) override;
  void after_pass(PassEvent &event, const ast::Module &module) override;

private:
  PackageWriter &writer_;
  DumpOptions options_;
  DiagnosticList &diagnostics_;
};

/// Keeps the module as the pipeline and as each pass receives it; when a pass fails, writes
/// ir/reproducer/: the module before the first pass (source.ast.json), the module the failing pass
/// received (input.py, input.ast.json), the plan, and reproducer.json naming the pass, its diagnostics and
/// the htp-host command (argv, with the exact plugin files) that re-runs the passes up to it from
/// source.ast.json. Snapshots cost a tree copy per pass, so the compiler installs it only when a failed
/// package is kept (--keep-failed).
class CrashReproducerInstrumentation final : public PassInstrumentation {
public:
  CrashReproducerInstrumentation(PackageWriter &writer, std::string target, DiagnosticList &diagnostics)
      : writer_(writer), target_(std::move(target)), diagnostics_(diagnostics) {}
  void before_pipeline(const Plan &plan, const ast::Module &module) override;
  void before_pass(PassEvent &event, const ast::Module &module) override;
  void after_failed_pass(PassEvent &event, const ast::Module &module) override;

private:
  PackageWriter &writer_;
  std::string target_;
  DiagnosticList &diagnostics_;
  const Plan *plan_ = nullptr;
  ast::Module source_, snapshot_;
};

}  // namespace htp
