// htp/progress.hpp — a progress line for long work in bindings (kernel builds, long simulator runs):
// "htp: building kernels 3/7 (2.1 s)" redrawn in place on stderr when stderr is a terminal, nothing
// otherwise (logs and pipes stay clean); HTP_PROGRESS=0 turns it off. Thread-safe; header-only.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace htp {

class Progress {
public:
  /// A line for `total` steps of `what` ("building kernels"); shown only on a terminal.
  Progress(std::string what, size_t total)
      : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()), on_(enabled()) {}
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;
  ~Progress() { finish(); }

  /// Whether progress lines are drawn: stderr is a terminal and HTP_PROGRESS is not "0".
  static bool enabled() {
    const char *env = std::getenv("HTP_PROGRESS");
    return ::isatty(STDERR_FILENO) == 1 && !(env && std::strcmp(env, "0") == 0);
  }

  /// Counts `n` more steps done and redraws the line.
  void advance(size_t n = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    done_ += n;
    draw();
  }

  /// Clears the line (once); later advances draw nothing.
  void finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (on_ && drawn_) std::fprintf(stderr, "\r\033[K");
    if (on_) std::fflush(stderr);
    on_ = false;
  }

private:
  void draw() {
    if (!on_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "\r\033[Khtp: %s %zu/%zu (%.1f s)", what_.c_str(), done_, total_, s);
    std::fflush(stderr);
    drawn_ = true;
  }

  std::mutex mu_;
  std::string what_;
  size_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool on_ = false, drawn_ = false;
};

}  // namespace htp
