// Runs one pass (its body, then its patterns through the rewrite driver) or one dialect scanner over a
// module, with every plugin callback wrapped so nothing escapes the boundary.
#pragma once

#include <chrono>

#include <nlohmann/json.hpp>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"
#include "pass/rewrite_driver.hpp"
#include "registry/component.hpp"

namespace htp {

class PackageWriter;

struct PassRun {
  bool ok = false;
  size_t changes = 0;       ///< Edits made through the ABI (node and module-attribute changes).
  RewriteResult rewrite;    ///< What the patterns did.
  DiagnosticList diagnostics;
  std::chrono::nanoseconds duration{0};
};

/// Runs `pass` over `module` with the plugin's host table `api`. `writer` is given to emit and package
/// passes only; `on_rewrite` hears of every rewrite its patterns make. A non-OK status, an error
/// diagnostic or an exception fails the run.
PassRun run_pass(const Component &pass, const HtpHostApi *api, ast::Module &module, const nlohmann::json &options,
                 PackageWriter *writer = nullptr, const RewriteObserver &on_rewrite = {});

struct ScanRun {
  bool ok = false;
  std::vector<RaisedObligation> obligations;
  DiagnosticList diagnostics;
};

/// Runs a dialect's scanner over `module`, collecting the obligations it records.
ScanRun run_scanner(const Component &dialect, const HtpHostApi *api, ast::Module &module,
                    const nlohmann::json &options);

}  // namespace htp
