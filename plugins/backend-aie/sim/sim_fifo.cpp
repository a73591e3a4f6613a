#include "sim_fifo.hpp"

#include <algorithm>
#include <functional>
#include <thread>

namespace htp::aie::sim {

namespace {
constexpr int kYieldsBeforeSleep = 256;
}  // namespace

SimFifo::SimFifo(std::string name, size_t object_bytes, int64_t depth, int producers, int consumers, StopFlag &flag)
    : name_(std::move(name)), object_bytes_(object_bytes), depth_(std::max<int64_t>(1, depth)), flag_(flag),
      slots_(static_cast<size_t>(depth_), std::vector<char>(object_bytes)),
      produced_(static_cast<size_t>(std::max(1, producers)), 0), consumed_(static_cast<size_t>(std::max(1, consumers)), 0) {}

int64_t SimFifo::committed_locked() const { return *std::min_element(produced_.begin(), produced_.end()); }
int64_t SimFifo::freed_locked() const { return *std::min_element(consumed_.begin(), consumed_.end()); }

int64_t SimFifo::committed() const {
  std::lock_guard<std::mutex> l(m_);
  return committed_locked();
}

void SimFifo::wait(std::unique_lock<std::mutex> &lock, const std::string &who, const std::string &what,
                   const std::function<bool()> &ready) {
  // The other side is usually about to release (a DMA or core thread one object behind): yield the CPU to
  // it a few times before sleeping on the condition variable, whose futex sleep and wake-up cost tens of
  // microseconds per object hand-off on a machine with fewer cores than simulated threads.
  for (int spin = 0; spin < kYieldsBeforeSleep && !ready(); ++spin) {
    if (flag_.stop) throw Stopped{};
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
  while (!ready()) {
    if (flag_.stop) throw Stopped{};
    if (cv_.wait_until(lock, flag_.deadline) == std::cv_status::timeout && !ready()) {
      if (flag_.stop) throw Stopped{};
      throw Deadlock(who + " waited past the deadline to acquire " + what + " of @" + name_ +
                     " (committed " + std::to_string(committed_locked()) + ", freed " + std::to_string(freed_locked()) +
                     ", depth " + std::to_string(depth_) + ")");
    }
  }
}

char *SimFifo::acquire_produce(int part, int64_t count, const std::string &who) {
  std::unique_lock<std::mutex> l(m_);
  const int64_t first = produced_[static_cast<size_t>(part)];
  wait(l, who, std::to_string(count) + " object(s) to produce", [&] { return first + count <= freed_locked() + depth_; });
  return slots_[static_cast<size_t>(first % depth_)].data();
}

void SimFifo::release_produce(int part, int64_t count) {
  {
    std::lock_guard<std::mutex> l(m_);
    produced_[static_cast<size_t>(part)] += count;
  }
  cv_.notify_all();
}

char *SimFifo::acquire_consume(int consumer, int64_t count, const std::string &who) {
  std::unique_lock<std::mutex> l(m_);
  const int64_t first = consumed_[static_cast<size_t>(consumer)];
  wait(l, who, std::to_string(count) + " object(s) to consume", [&] { return first + count <= committed_locked(); });
  return slots_[static_cast<size_t>(first % depth_)].data();
}

void SimFifo::release_consume(int consumer, int64_t count) {
  {
    std::lock_guard<std::mutex> l(m_);
    consumed_[static_cast<size_t>(consumer)] += count;
  }
  cv_.notify_all();
}

void SimFifo::wake() {
  { std::lock_guard<std::mutex> l(m_); }
  cv_.notify_all();
}

}  // namespace htp::aie::sim
