// HTP PTO CPU simulator: task identity as pto-runtime spells it (PTO2TaskId).
#pragma once

#include <cstdint>

/// A submitted task; `raw` is the simulator's task index (ring 0).
struct PTO2TaskId {
  uint64_t raw;

  static constexpr PTO2TaskId make(uint8_t ring_id, uint32_t local_id) {
    return PTO2TaskId{(static_cast<uint64_t>(ring_id) << 32) | local_id};
  }
  static constexpr PTO2TaskId invalid() { return PTO2TaskId{UINT64_MAX}; }
  constexpr uint8_t ring() const { return static_cast<uint8_t>(raw >> 32); }
  constexpr uint32_t local() const { return static_cast<uint32_t>(raw & 0xFFFFFFFFu); }
  constexpr bool is_valid() const { return raw != UINT64_MAX; }
  constexpr bool is_invalid() const { return raw == UINT64_MAX; }
  constexpr bool operator==(const PTO2TaskId &o) const { return raw == o.raw; }
  constexpr bool operator!=(const PTO2TaskId &o) const { return raw != o.raw; }
};
