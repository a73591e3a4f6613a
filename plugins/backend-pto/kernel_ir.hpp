// The tile kernels in the form backend-pto lowers: the kernels of `tile.kernels` (htp.tile.kernels.v1,
// docs/ir-contracts.md §4), read and validated by the SDK (htp/tile_kernels.hpp), with what this backend
// needs on top: op names without a `pto.`/`tile.` prefix, tensor parameters at the shape the body sees,
// the intrinsic set checked, and the backend's own derived kernels (CSP process iterations) alongside.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <htp/tile_kernels.hpp>
#include <nlohmann/json.hpp>

namespace ptobe {

using json = nlohmann::json;

/// A source span as the contracts carry it (line/col of the Python source; file may be empty).
struct Span {
  std::string file;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
  /// A span of wsp.task_graph / csp.graph (JSON); zero when absent.
  static Span from_json(const json &j);
  /// A span of tile.kernels or wsp.task_graph; zero when absent.
  static Span from(const std::optional<htp::IrSpan> &s);
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

/// The SDK reader's error as this backend reports it.
IrError ir_error(const htp::IrDocumentError &e);

/// A kernel (or process) parameter: a tensor, a runtime scalar or a compile-time constant.
struct Param {
  std::string name;
  std::string dir = "in";  ///< in | out | inout
  std::string kind;        ///< tensor | scalar | constexpr
  std::vector<int64_t> shape;  ///< tensors: the shape the body sees (the local shape under a layout)
  std::vector<int64_t> global_shape;  ///< tensors: the whole tensor's shape (= shape without a layout)
  std::string dtype;
  json value;  ///< constexpr value
  /// A tensor whose layout has a `mem` facet: global memory holds it with these element strides over these
  /// extents (the row-major index split into digits over mem_extents, digit k at mem_strides[k]); the
  /// binding stages the caller's array into that order. Empty: row-major.
  std::vector<int64_t> mem_extents, mem_strides;
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
  std::vector<std::string> args;  ///< register names; a foreign op's other operands as JSON text
  /// The statement as tile.kernels states it (src, offset, value, scalar, accumulate, attrs, var, start,
  /// stop, step, cond, span); its nested statements are in body / then_body / else_body below.
  htp::TileOp ir;
  Span span;
  std::vector<Op> body, then_body, else_body;

  /// load: the tensor parameter read.
  std::string src() const { return ir.src.value_or(""); }
  /// store: the register stored.
  std::string stored() const { return ir.value && ir.value->is_string() ? ir.value->get<std::string>() : ""; }
  /// load, store: the element offsets (an array of Exprs; null when the op has none).
  json offset() const { return ir.offset ? json(*ir.offset) : json(); }
};

/// A kernel or a process of `tile.kernels`.
struct Kernel {
  std::string name;
  std::string kind = "kernel";  ///< kernel | process
  Span span;
  std::vector<Param> params;
  std::vector<Local> locals;
  std::vector<Op> body;
  /// A task of this kernel runs the body `repeat` times, each run on its own arguments (schedule
  /// tile(axis, f): f consecutive iterations form one task). The task's arguments are the tensors of
  /// every run, then the scalars of every run.
  int64_t repeat = 1;

  const Param *param(const std::string &n) const;
  const Local *local(const std::string &n) const;
  std::vector<const Param *> tensor_params() const;
  std::vector<const Param *> scalar_params() const;
};

/// The kernels of `doc` as backend-pto lowers them; IrError for what it cannot (a tile parameter, an op
/// of another intrinsic set).
std::vector<Kernel> pto_kernels(const htp::TileKernels &doc);

/// The statement `o` as tile.kernels states it, nested statements included.
json op_json(const Op &o);

/// Walks every statement of `ops` and the statements nested in them, pre-order.
using htp::for_each_op;

}  // namespace ptobe
