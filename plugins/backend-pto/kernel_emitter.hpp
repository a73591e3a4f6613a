// Emits one PTO-ISA C++ kernel source (kernels/aiv/<name>.cpp or kernels/aic/<name>.cpp) from a planned
// kernel: the pto-runtime kernel_entry, tensor and scalar arguments, tile declarations with their
// addresses, one emitter per intrinsic, and the set_flag/wait_flag pairs between pipes.
#pragma once

#include <string>

#include "kernel_ir.hpp"
#include "memory_plan.hpp"

namespace ptobe {

/// What a kernel source says about where it came from (kept free of absolute paths and times).
struct KernelOrigin {
  std::string target;  ///< pto-a2a3sim, pto-a2a3
  std::string file;    ///< the program file name as the module reports it
};

/// The C++ source of kernel `k` planned as `plan`; throws IrError on a statement it cannot lower.
std::string emit_kernel(const Kernel &k, const KernelPlan &plan, const KernelOrigin &origin);

}  // namespace ptobe
