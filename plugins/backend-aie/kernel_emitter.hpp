// External kernels: a tile kernel body (tile.kernels, docs/ir-contracts.md §4) printed as portable C++
// with an `extern "C"` entry, compiled by Peano for the AIE core and by the host compiler for aie-sim
// (which calls it through the generated `htp_aie_call_<name>(void **args)` wrapper).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <htp/tile_kernels.hpp>

#include "design.hpp"
#include "expr.hpp"

namespace htp::aie {

/// What a load / store / csp.send / csp.recv of the body reads or writes: a pointer parameter.
struct TensorAccess {
  std::string param;              ///< C parameter name
  std::vector<int64_t> shape;     ///< shape of the memory behind the pointer
  bool use_offsets = true;        ///< false: the pointer is exactly the tile the op moves
  bool read_only = false;         ///< the object is only read (an In parameter): a load of a contiguous
                                  ///< block of it at constant offsets may point into it instead of copying
};

/// The access of load or store `op` of `kernel` to the object `param` of `shape` behind a tensor parameter
/// of direction `dir`: a tile moved at offset 0 that is the whole object (In or Out) is the object itself
/// (use_offsets false: its register needs no copy on the core's stack); an In object is read-only.
TensorAccess object_access(const htp::TileKernel &kernel, const htp::TileOp &op, std::string param,
                           std::vector<int64_t> shape, const std::string &dir);

/// How the body's names become C parameters.
struct KernelPlan {
  std::string function;                                   ///< C symbol
  std::vector<std::pair<std::string, KernelArg>> params;  ///< C parameters in order
  /// The memory a data-movement op touches (`op` is the body op; `index` counts such ops in order).
  std::function<std::optional<TensorAccess>(const htp::TileOp &op, int index)> access;
  std::map<std::string, std::string> scalars;  ///< IR scalar parameter -> C expression
  std::map<std::string, std::string> vars;     ///< extra variables (process iterations) -> C expression
  ExprEnv constants;                           ///< constexpr parameters
  std::vector<htp::TileOp> body;               ///< the ops to emit
};

struct EmittedKernel {
  std::string source;          ///< the .cc text
  int64_t locals_bytes = 0;
  Json work;                   ///< htp::KernelWork of one call, counted from the emitted ops
};

/// Prints the kernel; nullopt with `error` naming the op that cannot be emitted.
std::optional<EmittedKernel> emit_kernel(const htp::TileKernel &kernel, const KernelPlan &plan, std::string *error);

/// C type of an HTP dtype ("float" for f32).
std::string c_type(const std::string &dtype);

/// The C symbol of a tile kernel's external function (and of its MLIR func.func): the kernel's name, or
/// `htp_<name>` when the name is a C or C++ keyword (a kernel named `double` or `new`).
std::string kernel_symbol(const std::string &kernel);

/// Whether an op of a tile body moves data in or out (load, store, csp.send, csp.recv).
bool is_data_movement(const htp::TileOp &op);

}  // namespace htp::aie
