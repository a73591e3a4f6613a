// Memory planning of one kernel: the core type it runs on, the memory space, PTO-ISA tile type, padded
// physical shape and address of every tile register, the cube companions (L0A/L0B) of matmul operands and
// the scratch tiles reductions need. Legality checks the plan against the hardware profile; the kernel
// emitter declares exactly these tiles.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hardware_profile.hpp"
#include "intrinsics.hpp"
#include "kernel_ir.hpp"

namespace ptobe {

/// A tile buffer of the plan.
struct TileBuffer {
  std::string name;       ///< C++ variable name
  std::string register_;  ///< the IR register it holds (or the op it serves, for scratch tiles)
  std::string space;      ///< UB L1 L0A L0B L0C
  std::string tile_type;  ///< Vec Mat Left Right Acc (PTO-ISA TileType)
  bool col_major = false; ///< an [R, 1] vector tile (BLayout::ColMajor)
  std::string dtype;
  int64_t rows = 0, cols = 0;    ///< valid (logical) shape
  int64_t prows = 0, pcols = 0;  ///< physical (padded) shape
  uint64_t bytes = 0;
  uint64_t address = 0;
};

/// The plan of one kernel.
struct KernelPlan {
  CoreType core = CoreType::Aiv;
  std::vector<TileBuffer> tiles;                ///< declaration order
  std::map<std::string, size_t> by_register;    ///< IR register -> main buffer
  std::map<std::string, size_t> left_of;        ///< matmul left operand register -> L0A buffer
  std::map<std::string, size_t> right_of;       ///< matmul right operand register -> L0B buffer
  std::map<const Op *, size_t> scratch_of;      ///< reduction statement -> scratch buffer
  std::map<std::string, uint64_t> used;         ///< bytes per memory space

  const TileBuffer &buffer(const std::string &reg) const { return tiles.at(by_register.at(reg)); }
};

/// Plans `k` on `hw`; throws IrError when the kernel mixes cube and vector work or uses a register
/// in two incompatible roles. Capacity and alignment are checked by check_memory().
KernelPlan plan_memory(const Kernel &k, const HardwareProfile &hw);

/// In a kernel with a matmul, its first statement that needs the vector core (a kernel runs on one core type),
/// or nullptr.
const Op *vector_op_beside_matmul(const Kernel &k);

/// The capacity/alignment violations of `plan` on `hw`, one message each (empty when legal).
std::vector<std::string> check_memory(const Kernel &k, const KernelPlan &plan, const HardwareProfile &hw);

}  // namespace ptobe
