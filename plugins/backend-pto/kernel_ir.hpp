// The tile kernel IR the backend emits from: a typed view of the `tile.kernels` module attribute
// (htp.tile.kernels.v1, docs/ir-contracts.md §4), parsed once and validated structurally.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptobe {

using json = nlohmann::json;

/// A source span as the contracts carry it (line/col of the Python source; file may be empty).
struct Span {
  std::string file;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
  static Span from_json(const json &j);
};

/// A malformed IR document or an IR the backend cannot lower: a message, the JSON path, a span.
class IrError : public std::runtime_error {
public:
  IrError(const std::string &message, Span span = {}, std::string code = "pto.ir")
      : std::runtime_error(message), span_(std::move(span)), code_(std::move(code)) {}
  const Span &span() const { return span_; }
  const std::string &code() const { return code_; }

private:
  Span span_;
  std::string code_;
};

/// A kernel (or process) parameter: a tensor, a runtime scalar or a compile-time constant.
struct Param {
  std::string name;
  std::string dir = "in";  ///< in | out | inout
  std::string kind;        ///< tensor | scalar | constexpr
  std::vector<int64_t> shape;
  std::string dtype;
  json value;  ///< constexpr value
  bool is_tensor() const { return kind == "tensor"; }
  bool is_scalar() const { return kind == "scalar"; }
};

/// A local register: a tile of fixed shape and dtype, or a scalar.
struct Local {
  std::string name;
  std::vector<int64_t> shape;  ///< [rows, cols]; empty for scalars
  std::string dtype;
  bool scalar = false;
  int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
};

/// One IR statement. `op` is normalised (a `pto.`/`tile.` prefix is dropped; foreign ops keep theirs).
struct Op {
  std::string op;
  std::string set = "tile";  ///< the intrinsic set the op was called from: "tile" (portable) or "pto"
  std::string dst;
  std::vector<std::string> args;
  json raw;  ///< the statement as written (scalar, value, offset, accumulate, attrs, var/start/stop/step, cond)
  Span span;
  std::vector<Op> body, then_body, else_body;
};

/// A kernel or a process of `tile.kernels`.
struct Kernel {
  std::string name;
  std::string kind = "kernel";  ///< kernel | process
  Span span;
  std::vector<Param> params;
  std::vector<Local> locals;
  std::vector<Op> body;

  const Param *param(const std::string &n) const;
  const Local *local(const std::string &n) const;
  std::vector<const Param *> tensor_params() const;
  std::vector<const Param *> scalar_params() const;
};

/// Parses `tile.kernels`; throws IrError naming the JSON path of the first structural problem.
std::vector<Kernel> parse_tile_kernels(const json &doc);

/// Walks every statement of `ops` and the statements nested in them, pre-order.
template <class F> void for_each_op(const std::vector<Op> &ops, F &&f) {
  for (const Op &o : ops) {
    f(o);
    for_each_op(o.body, f);
    for_each_op(o.then_body, f);
    for_each_op(o.else_body, f);
  }
}

}  // namespace ptobe
