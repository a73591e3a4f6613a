// aie.mlir: a design in the MLIR-AIE dialect's textual form, spelled per DialectSpelling.
#pragma once

#include <string>

#include "design.hpp"
#include "dialect_spelling.hpp"

namespace htp::aie {

/// The memref type of a shape and dtype: memref<32x128xf32>.
std::string memref_type(const std::vector<int64_t> &shape, const std::string &dtype);

/// The whole aie.mlir module.
std::string print_mlir(const Design &design, const DialectSpelling &spelling);

}  // namespace htp::aie
