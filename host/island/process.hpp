// Runs a child process with its standard input given, its output captured and a time limit: what the host
// needs to run an external compiler (an island) without trusting it to finish.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace htp {

struct ProcessResult {
  bool started = false;     ///< False when the program could not be executed (see `error`).
  bool timed_out = false;   ///< Killed (SIGKILL) after the time limit.
  int exit_code = -1;       ///< The exit status, or -1 when killed by a signal.
  int signal = 0;           ///< The signal that ended it, or 0.
  std::string out, err;     ///< Everything it wrote to stdout and stderr.
  std::string error;        ///< Why it did not start (e.g. "No such file or directory").
  std::chrono::duration<double> seconds{0};

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
};

/// Runs `argv` (argv[0] an absolute path or a name looked up in PATH) with `input` on its stdin, in its
/// own process group, killing the group when `limit` passes.
ProcessResult run_process(const std::vector<std::string> &argv, const std::string &input,
                          std::chrono::milliseconds limit);

/// The last `lines` lines of `text` (for diagnostics that quote a tool's stderr).
std::string tail_lines(const std::string &text, size_t lines);

}  // namespace htp
