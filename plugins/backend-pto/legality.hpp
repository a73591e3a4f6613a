// The legality check of the `pto.legalize` pass: every statement against its intrinsic contract (shapes,
// dtypes, the memory spaces the plan gives its tiles) and every kernel's tiles against the hardware profile
// (capacity of each memory space, alignment, cube element types, one core type per kernel).
#pragma once

#include <string>
#include <vector>

#include "hardware_profile.hpp"
#include "kernel_ir.hpp"

namespace ptobe {

/// A problem found in the IR: a diagnostic code, a message and the span it points at.
struct Problem {
  std::string code;
  std::string message;
  Span span;
};

/// Every problem of kernel `k` on `hw` (empty when it can be emitted).
std::vector<Problem> check_kernel(const Kernel &k, const HardwareProfile &hw);

}  // namespace ptobe
