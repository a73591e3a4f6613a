#include "intrinsics.hpp"

namespace htp::aie {

const std::vector<AieIntrinsic> &intrinsics() {
  using K = IntrinsicKind;
  static const std::vector<AieIntrinsic> table = {
      {"load", K::Load, "", false, "tile <- tensor view (object FIFO buffer or DMA'd memory)"},
      {"store", K::Store, "", false, "tensor view <- tile"},
      {"full", K::Full, "", false, "fill a tile with a constant"},
      {"copy", K::Copy, "", false, "tile copy"},
      {"add", K::Binary, "add", false, "elementwise a + b"},
      {"sub", K::Binary, "sub", false, "elementwise a - b"},
      {"mul", K::Binary, "mul", false, "elementwise a * b"},
      {"div", K::Binary, "div", false, "elementwise a / b"},
      {"max", K::Binary, "max", false, "elementwise maximum"},
      {"min", K::Binary, "min", false, "elementwise minimum"},
      {"adds", K::ScalarBinary, "add", false, "a + scalar"},
      {"subs", K::ScalarBinary, "sub", false, "a - scalar"},
      {"muls", K::ScalarBinary, "mul", false, "a * scalar"},
      {"divs", K::ScalarBinary, "div", false, "a / scalar"},
      {"maxs", K::ScalarBinary, "max", false, "max(a, scalar)"},
      {"mins", K::ScalarBinary, "min", false, "min(a, scalar)"},
      {"exp", K::Unary, "exp", true, "e^a"},
      {"log", K::Unary, "log", true, "natural logarithm"},
      {"sqrt", K::Unary, "sqrt", true, "square root"},
      {"rsqrt", K::Unary, "rsqrt", true, "1 / sqrt(a)"},
      {"recip", K::Unary, "recip", true, "1 / a"},
      {"abs", K::Unary, "abs", false, "|a|"},
      {"neg", K::Unary, "neg", false, "-a"},
      {"relu", K::Unary, "relu", false, "max(a, 0)"},
      {"sigmoid", K::Unary, "sigmoid", true, "1 / (1 + e^-a)"},
      {"tanh", K::Unary, "tanh", true, "hyperbolic tangent"},
      {"rowsum", K::RowReduce, "sum", false, "sum of each row -> [R, 1]"},
      {"rowmax", K::RowReduce, "max", false, "maximum of each row -> [R, 1]"},
      {"rowmin", K::RowReduce, "min", false, "minimum of each row -> [R, 1]"},
      {"colsum", K::ColReduce, "sum", false, "sum of each column -> [1, C]"},
      {"colmax", K::ColReduce, "max", false, "maximum of each column -> [1, C]"},
      {"colmin", K::ColReduce, "min", false, "minimum of each column -> [1, C]"},
      {"rowexpand", K::RowExpand, "", false, "[R, 1] copied across columns"},
      {"colexpand", K::ColExpand, "", false, "[1, C] copied across rows"},
      {"rowexpand_add", K::RowExpandBinary, "add", false, "a + rowexpand(s)"},
      {"rowexpand_sub", K::RowExpandBinary, "sub", false, "a - rowexpand(s)"},
      {"rowexpand_mul", K::RowExpandBinary, "mul", false, "a * rowexpand(s)"},
      {"rowexpand_div", K::RowExpandBinary, "div", false, "a / rowexpand(s)"},
      {"rowexpand_max", K::RowExpandBinary, "max", false, "max(a, rowexpand(s))"},
      {"rowexpand_min", K::RowExpandBinary, "min", false, "min(a, rowexpand(s))"},
      {"colexpand_add", K::ColExpandBinary, "add", false, "a + colexpand(s)"},
      {"colexpand_sub", K::ColExpandBinary, "sub", false, "a - colexpand(s)"},
      {"colexpand_mul", K::ColExpandBinary, "mul", false, "a * colexpand(s)"},
      {"colexpand_div", K::ColExpandBinary, "div", false, "a / colexpand(s)"},
      {"colexpand_max", K::ColExpandBinary, "max", false, "max(a, colexpand(s))"},
      {"colexpand_min", K::ColExpandBinary, "min", false, "min(a, colexpand(s))"},
      {"matmul", K::Matmul, "", false, "acc (+)= a @ b, accumulated in f32"},
      {"cast", K::Cast, "", false, "element type conversion to the result's dtype"},
      {"transpose", K::Transpose, "", false, "[R, C] -> [C, R]"},
  };
  return table;
}

const AieIntrinsic *find_intrinsic(std::string_view op) {
  for (const AieIntrinsic &c : intrinsics())
    if (c.op == op) return &c;
  return nullptr;
}

std::vector<std::string> intrinsic_op_names() {
  std::vector<std::string> out;
  for (const AieIntrinsic &c : intrinsics()) out.emplace_back(c.op);
  return out;
}

std::string_view contract_class(IntrinsicKind k) {
  switch (k) {
  case IntrinsicKind::Load: return "load";
  case IntrinsicKind::Store: return "store";
  case IntrinsicKind::Full: return "full";
  case IntrinsicKind::Copy: return "copy";
  case IntrinsicKind::Binary: return "elementwise";
  case IntrinsicKind::ScalarBinary: return "scalar_form";
  case IntrinsicKind::Unary: return "unary";
  case IntrinsicKind::RowReduce: return "row_reduce";
  case IntrinsicKind::ColReduce: return "col_reduce";
  case IntrinsicKind::RowExpand: return "row_expand";
  case IntrinsicKind::ColExpand: return "col_expand";
  case IntrinsicKind::Transpose: return "transpose";
  case IntrinsicKind::RowExpandBinary: return "row_expand_binary";
  case IntrinsicKind::ColExpandBinary: return "col_expand_binary";
  case IntrinsicKind::Matmul: return "matmul";
  case IntrinsicKind::Cast: return "cast";
  }
  return "?";
}

nlohmann::json intrinsic_set_table() {
  nlohmann::json ops = nlohmann::json::object();
  for (const AieIntrinsic &c : intrinsics())
    ops[std::string(c.op)] = {{"contract", contract_class(c.kind)}, {"float_only", c.float_only},
                              {"core", "compute tile"}, {"spaces", "tile data memory"}, {"summary", c.summary}};
  return {{"schema", "htp.tile.intrinsic-set.v1"}, {"set", "aie"}, {"plugin", "backend-aie"}, {"ops", ops}};
}

}  // namespace htp::aie
