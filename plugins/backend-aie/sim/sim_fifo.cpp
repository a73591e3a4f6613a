#include "sim_fifo.hpp"

#include <algorithm>

namespace htp::aie::sim {

SimFifo::SimFifo(std::string name, size_t object_bytes, int64_t depth, int producers, int consumers)
    : name_(std::move(name)), object_bytes_(object_bytes), depth_(std::max<int64_t>(1, depth)),
      slots_(static_cast<size_t>(depth_), std::vector<char>(object_bytes)),
      produced_(static_cast<size_t>(std::max(1, producers)), 0), consumed_(static_cast<size_t>(std::max(1, consumers)), 0) {}

int64_t SimFifo::committed() const { return *std::min_element(produced_.begin(), produced_.end()); }
int64_t SimFifo::freed() const { return *std::min_element(consumed_.begin(), consumed_.end()); }

std::string SimFifo::state() const {
  return "(committed " + std::to_string(committed()) + ", freed " + std::to_string(freed()) + ", depth " +
         std::to_string(depth_) + ")";
}

char *SimFifo::try_acquire_produce(int part, int64_t count) {
  const int64_t first = produced_[static_cast<size_t>(part)];
  if (first + count > freed() + depth_) return nullptr;
  return slots_[static_cast<size_t>(first % depth_)].data();
}

void SimFifo::release_produce(int part, int64_t count) { produced_[static_cast<size_t>(part)] += count; }

char *SimFifo::try_acquire_consume(int consumer, int64_t count) {
  const int64_t first = consumed_[static_cast<size_t>(consumer)];
  if (first + count > committed()) return nullptr;
  return slots_[static_cast<size_t>(first % depth_)].data();
}

void SimFifo::release_consume(int consumer, int64_t count) { consumed_[static_cast<size_t>(consumer)] += count; }

}  // namespace htp::aie::sim
