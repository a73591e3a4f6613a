#include "loader/plugin_probe.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "diag/diagnostic_json.hpp"
#include "loader/plugin_host.hpp"

namespace htp {

namespace {

void write_all(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// The verdict is the signal that ends the child, so the child lets a plugin's crash kill it: handlers the
// parent installed (AddressSanitizer's and UBSan's deadly-signal handlers in a sanitizer build, which
// would turn SIGSEGV into "exit 1"; an embedding application's) go back to the default action. The
// verdict is then the same in every build. No core file: the crash is expected and already reported.
void let_crashes_kill_the_child() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) ::sigaction(sig, &dfl, nullptr);
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
}

[[noreturn]] void run_child(const std::filesystem::path &path, int fd, const PluginLoader &load) {
  let_crashes_kill_the_child();
  nlohmann::json report;
  {
    PluginHost host;
    DiagnosticList diags;
    const LoadedPlugin *p = load ? nullptr : host.load(path, diags);
    report["loaded"] = load ? load(host, path, diags) && !diags.has_errors() : p != nullptr;
    if (p) {
      report["name"] = p->name;
      report["version"] = p->version;
      report["components"] = p->components.size();
    }
    report["diagnostics"] = diagnostics_to_json(diags);
  }
  write_all(fd, report.dump());
  ::close(fd);
  ::_exit(0);
}

}  // namespace

ProbeResult probe_plugin_isolated(const std::filesystem::path &path, std::chrono::milliseconds timeout,
                                  const PluginLoader &load) {
  ProbeResult result;
  const std::string file = path.string();
  int fds[2];
  if (::pipe(fds) != 0) {
    result.diagnostics.report(Diagnostic::error("probe.pipe", std::string("cannot create a pipe: ") + std::strerror(errno)));
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    result.diagnostics.report(Diagnostic::error("probe.fork", std::string("cannot fork: ") + std::strerror(errno)));
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(path, fds[1], load);
  }
  ::close(fds[1]);

  std::string output;
  bool timed_out = false;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child finished or died
    output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out) {
    result.outcome = ProbeResult::Outcome::TimedOut;
    result.diagnostics.report(Diagnostic::error(
        "probe.timeout", "plugin '" + file + "' did not finish loading within " + std::to_string(timeout.count()) +
                             " ms (hang in query or init?); it was killed"));
    return result;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    result.outcome = ProbeResult::Outcome::Crashed;
    const char *name = ::sigabbrev_np(sig);
    result.diagnostics.report(Diagnostic::error(
        "probe.crash", "plugin '" + file + "' crashed while loading: SIG" + (name ? name : "?") + " (signal " +
                           std::to_string(sig) + ", " + ::strsignal(sig) + ")"));
    return result;
  }
  auto report = nlohmann::json::parse(output, nullptr, false);
  if (report.is_discarded() || !report.is_object()) {
    result.outcome = ProbeResult::Outcome::Crashed;
    result.diagnostics.report(Diagnostic::error(
        "probe.exit", "plugin '" + file + "' ended the probe process (exit status " +
                          std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ") without a report"));
    return result;
  }
  if (auto it = report.find("diagnostics"); it != report.end() && it->is_array())
    for (const auto &d : *it) result.diagnostics.report(diagnostic_from_json(d));
  if (report.value("loaded", false)) {
    result.outcome = ProbeResult::Outcome::Loaded;
    result.name = report.value("name", "");
    result.version = report.value("version", "");
    result.components = report.value("components", size_t{0});
  }
  return result;
}

}  // namespace htp
