// Kernels for the runtime tests, written as the kernels of a package are (args: ChipTensor*, then scalars),
// but compiled into the test so the tests can observe them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tensor.h"

namespace ptosim_test {

template <typename T> T *data(int64_t *args, int i) {
  auto *t = reinterpret_cast<ChipTensor *>(args[i]);
  return reinterpret_cast<T *>(t->buffer.addr) + t->start_offset;
}

/// The order in which kernels ran (scalar 0 of k_log is the recorded value).
struct ExecutionLog {
  std::mutex mu;
  std::vector<int64_t> order;
  void add(int64_t v) {
    std::lock_guard<std::mutex> lk(mu);
    order.push_back(v);
  }
};
inline ExecutionLog g_log;

/// args: tensor 0 (inout, float), scalar 0 = value to log, scalar 1 = sleep µs. Adds 1 to element 0.
inline void k_log(int64_t *args) {
  auto *t = reinterpret_cast<ChipTensor *>(args[0]);
  const int64_t value = args[1], sleep_us = args[2];
  if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  data<float>(args, 0)[0] += 1.0f;
  (void)t;
  g_log.add(value);
}

/// args: tensor 0 (in), tensor 1 (out), scalar 0 = sleep µs. Copies element 0.
inline void k_copy(int64_t *args) {
  if (args[2] > 0) std::this_thread::sleep_for(std::chrono::microseconds(args[2]));
  data<float>(args, 1)[0] = data<float>(args, 0)[0];
}

/// args: tensor 0 (out), scalar 0 = value (as float bits), scalar 1 = sleep µs. Fills element 0.
inline void k_set(int64_t *args) {
  if (args[2] > 0) std::this_thread::sleep_for(std::chrono::microseconds(args[2]));
  float v;
  const uint32_t bits = static_cast<uint32_t>(args[1]);
  std::memcpy(&v, &bits, 4);
  data<float>(args, 0)[0] = v;
}

/// args: scalar 0 = sleep µs (no tensors).
inline void k_sleep(int64_t *args) {
  if (args[0] > 0) std::this_thread::sleep_for(std::chrono::microseconds(args[0]));
}

inline void k_noop(int64_t *) {}

inline void k_throw(int64_t *) {
  throw std::runtime_error("boom");
}

} // namespace ptosim_test
