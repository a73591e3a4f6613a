// What htp-host was doing when a plugin crashed it: a pass (or a binding's run) that dereferences a bad pointer
// or aborts takes the process down, and without this the user saw "Segmentation fault" with nothing naming
// the pass or the plugin. The pass manager and the runner say what runs (CrashScope); a handler installed by
// htp-host and the Python module prints it on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, then lets the
// signal take its course (the previous handler, e.g. Python's faulthandler, or the default one).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace htp::crash {

/// Installs the handlers once per process (later calls do nothing).
void install();

/// While alive, a crash reports "htp: <signal> while running <what>".
class Scope {
public:
  explicit Scope(std::string_view what);
  ~Scope();
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;

private:
  std::string outer_;  ///< the activity before this scope, restored when it ends
};

/// While alive, and `seconds` > 0, a watchdog stops the process (exit status 124) once `seconds` have passed,
/// printing "htp: <what> has run for N s, its time limit (<option> N); stopping": a plugin's pass that hangs
/// cannot be interrupted safely, so the process ends naming it rather than waiting for ever.
class TimeLimit {
public:
  TimeLimit(std::string_view what, double seconds, std::string_view option);
  ~TimeLimit();
  TimeLimit(const TimeLimit &) = delete;
  TimeLimit &operator=(const TimeLimit &) = delete;

private:
  struct Watch;
  std::unique_ptr<Watch> watch_;
};

}  // namespace htp::crash
