// The time limit of a simulated run (`--option timeout_s`, both simulator bindings). Emitted kernels and
// orchestrations poll a stop flag at every iteration of their loops (HTP_TICK, htp::kScalarHelpersCpp) and
// throw `htp_time_limit` once it is raised; a watchdog thread raises it when the limit passes. So a program
// that would run for hours (a loop to a runtime bound of 10**12) ends with a run error naming the limit,
// whether it is inside a kernel call, an orchestration loop or the simulator's own scheduling.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace htp {

/// The symbol each library built from emitted code exports to receive the stop flag (a weak definition in
/// every translation unit that includes htp::kScalarHelpersCpp).
inline constexpr const char *kBindStopSymbol = "htp_sim_bind_stop";
/// What a kernel whose run passed its time limit throws says (htp_time_limit::what()).
inline constexpr const char *kTimeLimitMessage = "the run passed its time limit (--option timeout_s)";

/// One run's time limit: a stop flag and the watchdog that raises it after `seconds` (none for seconds <= 0).
/// The flags live in a pool for the lifetime of the plugin, so a library still holding a finished run's flag
/// reads a valid object; the pool holds 256, and a run beyond them has no watchdog in its kernels (the
/// simulator's own checks still stop it).
class RunTimeLimit {
public:
  explicit RunTimeLimit(double seconds) : seconds_(seconds) {
    if (!(seconds > 0)) return;
    flag_ = acquire();
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    watchdog_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!done_cv_.wait_until(lock, deadline_, [this] { return done_; })) raise();
    });
  }
  ~RunTimeLimit() {
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_ = true;
      }
      done_cv_.notify_all();
      watchdog_.join();
    }
    if (flag_) release(flag_);
  }
  RunTimeLimit(const RunTimeLimit &) = delete;
  RunTimeLimit &operator=(const RunTimeLimit &) = delete;

  /// The limit in seconds (<= 0: none).
  double seconds() const { return seconds_; }
  /// Whether the limit has passed.
  bool expired() const {
    if (!(seconds_ > 0)) return false;
    return (flag_ && flag_->load(std::memory_order_relaxed)) || std::chrono::steady_clock::now() > deadline_;
  }
  /// Hands the stop flag to a library's emitted code: `bind_symbol` is its kBindStopSymbol (nullptr: the
  /// library has none, nothing to do).
  void bind(void *bind_symbol) const {
    if (!bind_symbol) return;
    reinterpret_cast<void (*)(const std::atomic<bool> *)>(bind_symbol)(flag_);
  }
  /// "the run passed its time limit of 30 s (--option timeout_s)".
  std::string message() const { return message(seconds_); }
  /// The same for a limit of `seconds`.
  static std::string message(double seconds) {
    std::string s = std::to_string(seconds);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return "the run passed its time limit of " + s + " s (--option timeout_s)";
  }

private:
  struct Pool {
    std::mutex mutex;
    std::array<std::atomic<bool>, 256> flags{};
    std::array<bool, 256> used{};
  };
  static Pool &pool() {
    static Pool p;
    return p;
  }
  static std::atomic<bool> *acquire() {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    for (size_t i = 0; i < p.flags.size(); ++i)
      if (!p.used[i]) {
        p.used[i] = true;
        p.flags[i].store(false);
        return &p.flags[i];
      }
    return nullptr;
  }
  static void release(std::atomic<bool> *flag) {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.used[static_cast<size_t>(flag - p.flags.data())] = false;
  }
  void raise() {
    if (flag_) flag_->store(true, std::memory_order_relaxed);
  }

  double seconds_ = 0;
  std::atomic<bool> *flag_ = nullptr;
  std::chrono::steady_clock::time_point deadline_{};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread watchdog_;
};

}  // namespace htp
