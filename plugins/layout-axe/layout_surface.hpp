// Reading the layout surface from the AST: `Tensor[...] @ Layout("S(0)R", space="UB")`,
// `Layout.axe(shard=[...], replica=[...], offset={...})`, layouts converted from other kinds (node
// attribute `layout.axe`), kernel mappings and captured constants. Errors are reported at spans.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

#include "axe_layout.hpp"
#include "layout_builder.hpp"

namespace htp::axe {

/// Node attribute set by a converter of another layout kind on its layout expression: the layout as a
/// (partial) htp.layout.v1 object. axe.infer reads it instead of parsing the expression.
inline constexpr const char *kConvertedAttr = "layout.axe";

/// Reports layout errors at AST spans, once per (node, code); a text column moves the span into the string.
class Reporter {
public:
  explicit Reporter(htp::PassContext &ctx) : ctx_(ctx) {}
  void error(htp::NodeRef at, const LayoutError &e);
  void error(htp::NodeRef at, const std::string &code, const std::string &message) {
    error(at, LayoutError{code, message, -1});
  }
  bool failed() const { return !seen_.empty(); }
  htp::PassContext &ctx() const { return ctx_; }

private:
  htp::PassContext &ctx_;
  std::set<std::pair<std::string, std::string>> seen_;
};

/// Captured module constants (`htp.capture.constants`), for names used as sizes.
class Constants {
public:
  explicit Constants(const htp::ModuleRef &m);
  /// The JSON value of a constant expression: literals, lists/tuples/dicts of them, captured names, -x.
  std::optional<nlohmann::json> eval(htp::NodeRef n) const;
  std::optional<int64_t> eval_int(htp::NodeRef n) const;

private:
  nlohmann::json values_ = nlohmann::json::object();
};

/// Whether `n` is a call of the layout constructor: `Layout(...)` or `Layout.axe(...)` (any prefix).
bool is_layout_call(htp::NodeRef n);
/// Whether `n` is a layout expression: a layout call or an expression another kind converted.
bool is_layout_expr(htp::NodeRef n);
/// The facets a layout expression uses: a subset of {"dist", "mem", "hw"}.
std::set<std::string> layout_facets(htp::NodeRef n);
/// The last dotted part of a call's callee ("allreduce" for `layout.allreduce(...)`), or "".
std::string callee_name(htp::NodeRef call);
/// A keyword argument of a call, or an empty view.
htp::NodeRef keyword(htp::NodeRef call, std::string_view name);

/// The mesh of a function: `mapping=[...]` of its decorator call (no mapping: no axes).
std::optional<Mesh> mesh_of(htp::NodeRef fn, const Constants &c, Reporter &r);

/// A parameter annotation split into direction, tensor type and layout expression.
struct ParamAnnotation {
  std::string dir = "in";
  std::optional<TensorInfo> tensor; ///< from Tensor[d0, ..., dtype] / Tile[R, C, dtype]
  htp::NodeRef type_node;
  htp::NodeRef layout_expr; ///< the right operand of `@`, or empty
};
ParamAnnotation read_annotation(htp::NodeRef annotation, const Constants &c);

/// The canonical layout of a layout expression for a tensor; errors reported at their spans.
std::optional<AxeLayout> read_layout(htp::NodeRef expr, const TensorInfo &t, const Mesh &mesh,
                                     const Constants &c, Reporter &r);

} // namespace htp::axe
