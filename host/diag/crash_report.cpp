#include "diag/crash_report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

namespace htp::crash {

namespace {

// The current activity of the thread, written outside signal context and read (async-signal-safely) by the
// handler; a nested scope replaces it and restores the outer one when it ends.
constexpr size_t kCapacity = 512;
thread_local std::array<char, kCapacity> current{};
thread_local size_t current_size = 0;

constexpr std::array<int, 5> kSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction previous[NSIG];

void write_all(const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "a segmentation fault (SIGSEGV)";
  case SIGBUS: return "a bus error (SIGBUS)";
  case SIGFPE: return "an arithmetic fault (SIGFPE)";
  case SIGILL: return "an illegal instruction (SIGILL)";
  default: return "an abort (SIGABRT)";
  }
}

void on_signal(int sig, siginfo_t *info, void *uctx) {
  if (current_size > 0) {
    const char *head = "htp: ";
    write_all(head, std::strlen(head));
    const char *name = signal_name(sig);
    write_all(name, std::strlen(name));
    const char *mid = " while running ";
    write_all(mid, std::strlen(mid));
    write_all(current.data(), current_size);
    write_all("\n", 1);
  }
  // Let the signal take its course: the handler before ours, or the default action.
  const struct sigaction &prev = previous[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
    ::sigaction(sig, &prev, nullptr);
    prev.sa_sigaction(sig, info, uctx);
    return;
  }
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
    ::sigaction(sig, &prev, nullptr);
    prev.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      struct sigaction sa {};
      sa.sa_sigaction = on_signal;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, &previous[sig]);
    }
  });
}

Scope::Scope(std::string_view what) : outer_(current.data(), current_size) {
  current_size = std::min(what.size(), kCapacity);
  std::memcpy(current.data(), what.data(), current_size);
}

Scope::~Scope() {
  current_size = outer_.size();
  std::memcpy(current.data(), outer_.data(), current_size);
}

struct TimeLimit::Watch {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::thread thread;
};

TimeLimit::TimeLimit(std::string_view what, double seconds, std::string_view option) {
  if (!(seconds > 0)) return;
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", seconds);
  const std::string message = "htp: " + std::string(what) + " has run for " + limit + " s, its time limit (" +
                              std::string(option) + " " + limit + "); stopping\n";
  watch_ = std::make_unique<Watch>();
  watch_->thread = std::thread([w = watch_.get(), seconds, message] {
    std::unique_lock<std::mutex> lock(w->mutex);
    if (w->done_cv.wait_for(lock, std::chrono::duration<double>(seconds), [w] { return w->done; })) return;
    write_all(message.data(), message.size());
    ::_exit(124);
  });
}

TimeLimit::~TimeLimit() {
  if (!watch_) return;
  {
    std::lock_guard<std::mutex> lock(watch_->mutex);
    watch_->done = true;
  }
  watch_->done_cv.notify_all();
  watch_->thread.join();
}

}  // namespace htp::crash
