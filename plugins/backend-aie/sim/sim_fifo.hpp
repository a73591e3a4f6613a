// An object FIFO of the functional simulator: `depth` object slots, producer parts (a join's sources
// write disjoint regions of one object) and consumers (each reads every object), with MLIR-AIE's
// acquire / release semantics: acquire(n) succeeds when n objects past the ones released are available
// at that end and returns the oldest; release(n) hands them on. The simulator runs every actor on one
// thread (simulator.cpp), so an acquire does not block: it returns nullptr and the actor waits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace htp::aie::sim {

class SimFifo {
public:
  SimFifo(std::string name, size_t object_bytes, int64_t depth, int producers, int consumers);

  const std::string &name() const { return name_; }
  size_t object_bytes() const { return object_bytes_; }

  /// The first of `count` objects to fill for producer part `part`, or nullptr while they are not free.
  char *try_acquire_produce(int part, int64_t count);
  void release_produce(int part, int64_t count);
  /// The first of `count` objects for consumer `consumer` to read, or nullptr while they are not committed.
  char *try_acquire_consume(int consumer, int64_t count);
  void release_consume(int consumer, int64_t count);
  /// Objects every producer part has released.
  int64_t committed() const;
  /// Objects every consumer has released.
  int64_t freed() const;
  /// "(committed 3, freed 1, depth 2)": the state, for a deadlock's message.
  std::string state() const;

private:
  std::string name_;
  size_t object_bytes_;
  int64_t depth_;
  std::vector<std::vector<char>> slots_;
  std::vector<int64_t> produced_;  // released objects per producer part
  std::vector<int64_t> consumed_;  // released objects per consumer
};

}  // namespace htp::aie::sim
