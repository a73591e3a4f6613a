// The parts of a captured module the wsp passes work with: workloads, schedules and the tile kernels
// they call, found through the frontend's node attributes (`htp.dialect`, `htp.decorator`), never by
// the decorator's spelling.
#pragma once

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wsp {

using json = nlohmann::json;

/// A diagnostic raised while reading a workload or schedule: the node it points at, a code and a
/// message. Thrown by the lowering helpers, caught per statement and reported with ctx.error.
class WspError : public std::runtime_error {
public:
  WspError(htp::NodeRef at, std::string code, const std::string &message)
      : std::runtime_error(message), at_(at), code_(std::move(code)) {}
  htp::NodeRef at() const { return at_; }
  const std::string &code() const { return code_; }

private:
  htp::NodeRef at_;
  std::string code_;
};

/// Reports `e` through the pass context.
void report(htp::PassContext &ctx, const WspError &e);

/// The dialect that captured `fn` (node attribute `htp.dialect`), or empty.
std::string dialect_of(htp::NodeRef fn);
/// The decorator surface name that captured `fn` (node attribute `htp.decorator`), or empty.
std::string decorator_of(htp::NodeRef fn);
/// Whether `fn` is a FunctionDef captured by dialect `dialect` through decorator `decorator`.
bool is_captured(htp::NodeRef fn, std::string_view dialect, std::string_view decorator);

/// The top-level captured functions of the module captured by `@wsp.workload`.
std::vector<htp::NodeRef> workloads(const htp::ModuleRef &m);
/// The top-level captured functions of the module captured by `@wsp.schedule(...)`.
std::vector<htp::NodeRef> schedules(const htp::ModuleRef &m);
/// The top-level FunctionDef named `name`, or an empty view.
htp::NodeRef function_named(const htp::ModuleRef &m, std::string_view name);

/// The `schedule(w)` decorator call of a schedule function (empty when it has none).
htp::NodeRef schedule_decorator(htp::NodeRef fn);

/// `{"line", "col", "end_line", "end_col"}` of a node (the file is the module's).
json span_json(htp::NodeRef n);

/// The constants the frontend resolved for the unit (`htp.capture` → `constants`), or an empty object.
json captured_constants(const htp::ModuleRef &m);

/// The last component of a dotted name: `wsp.P` → `P`, `P` → `P`.
std::string last_name(const std::string &dotted);

/// Whether a statement is a string literal on its own (a docstring).
bool is_docstring(htp::NodeRef stmt);

/// The wsp surface name a callee spells, whatever module prefix: `P.when` and `wsp.P.when` give
/// `P.when`, `wsp.combine` gives `combine`; empty for a callee that is not a dotted name.
std::string surface_name(htp::NodeRef callee);

/// "fifo" for a `Channel[T](...)` call (htp.dialects.csp), "event" for `Event()`, else empty: a workload
/// that declares channels runs its `with P.pipe():` as a CSP network (docs/dialects/wsp.md).
std::string channel_kind(htp::NodeRef value);

/// Python's spelling of an expression node for messages (a short approximation).
std::string describe(htp::NodeRef n);

} // namespace wsp
