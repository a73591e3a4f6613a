// What htp-host was doing when a plugin crashed it: a pass (or a binding's run) that dereferences a bad pointer
// or aborts takes the process down, and without this the user saw "Segmentation fault" with nothing naming
// the pass or the plugin. The pass manager and the runner say what runs (CrashScope); a handler installed by
// htp-host and the Python module prints it on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, then lets the
// signal take its course (the previous handler, e.g. Python's faulthandler, or the default one).
#pragma once

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

}  // namespace htp::crash
