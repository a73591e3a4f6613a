// An object FIFO of the functional simulator: `depth` object slots, producer parts (a join's sources
// write disjoint regions of one object) and consumers (each reads every object), with MLIR-AIE's
// acquire / release semantics: acquire(n) blocks until n objects past the ones released are available
// at that end and returns the oldest; release(n) hands them on.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace htp::aie::sim {

/// Thrown by a blocked acquire when the simulation stops (shutdown after the run, or an error elsewhere).
struct Stopped {};

/// Thrown when an acquire waits past the deadline (a deadlock or a design that never feeds a FIFO).
class Deadlock : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The flag every FIFO wait watches.
struct StopFlag {
  std::atomic<bool> stop{false};
  std::chrono::steady_clock::time_point deadline;
};

class SimFifo {
public:
  SimFifo(std::string name, size_t object_bytes, int64_t depth, int producers, int consumers, StopFlag &flag);

  const std::string &name() const { return name_; }
  size_t object_bytes() const { return object_bytes_; }

  char *acquire_produce(int part, int64_t count, const std::string &who);
  void release_produce(int part, int64_t count);
  char *acquire_consume(int consumer, int64_t count, const std::string &who);
  void release_consume(int consumer, int64_t count);
  /// Wakes every waiter (after the stop flag changed).
  void wake();
  /// Objects every producer part has released.
  int64_t committed() const;

private:
  int64_t committed_locked() const;
  int64_t freed_locked() const;
  void wait(std::unique_lock<std::mutex> &lock, const std::string &who, const std::string &what,
            const std::function<bool()> &ready);

  std::string name_;
  size_t object_bytes_;
  int64_t depth_;
  StopFlag &flag_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> slots_;
  std::vector<int64_t> produced_;  // released objects per producer part
  std::vector<int64_t> consumed_;  // released objects per consumer
};

}  // namespace htp::aie::sim
