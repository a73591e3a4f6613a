// Orders passes: Kahn's algorithm with a priority queue (deterministic), strong components for cycles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace htp {

/// `from` must run before `to`, because of `reason` (a requirement, an explicit before/after, ...).
struct PassEdge {
  uint32_t from = 0;
  uint32_t to = 0;
  std::string reason;
};

/// The order found, and every cycle that prevented a complete one (members ascending by rank).
struct PassOrder {
  std::vector<uint32_t> order;
  std::vector<std::vector<uint32_t>> cycles;
  /// True when every node was ordered.
  bool complete() const { return cycles.empty(); }
};

/// Orders nodes 0..n-1 so every edge points forward, taking the ready node of smallest `rank` first;
/// when edges form cycles, `order` holds what could be ordered and `cycles` each strong component.
PassOrder order_passes(uint32_t n, const std::vector<uint64_t> &rank, const std::vector<PassEdge> &edges);

} // namespace htp
