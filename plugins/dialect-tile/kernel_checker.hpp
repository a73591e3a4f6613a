// The kernel checker: types one function with a tile body (a kernel, or a function another dialect marked
// `tile.lower`) and builds its register IR in the same walk. tile.typecheck reports its diagnostics and
// stores the types on the nodes; tile.lower runs it again and collects the IR (docs/dialects/tile.md).
//
// Split by concern: kernel_checker.cpp (driver, signature, bindings), check_stmt.cpp (statements, control
// flow, the Out discipline), check_expr.cpp (names, scalars, views), check_intrinsics.cpp (intrinsic
// contracts and their ops).
#pragma once

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "expr.hpp"
#include "functions.hpp"
#include "surface.hpp"
#include "types.hpp"

namespace tile {

using ojson = nlohmann::ordered_json;

/// The most points (cores) a kernel's `mapping=[...]` mesh may have; no target has more cores.
inline constexpr int64_t kMaxMeshPoints = 65536;
/// The most elements a Tensor or Tile type may have: 2**48 bytes of the widest dtype (8 bytes).
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 45;

struct CheckResult {
  ojson signature;                                   ///< tile.signature of the function
  ojson kernel;                                      ///< its entry of tile.kernels
  std::vector<std::pair<htp::NodeRef, ojson>> types; ///< tile.type of each typed expression
  bool ok = true;
};

struct CheckOptions {
  bool warnings = true;     ///< report warnings (tile.lower re-runs the checker without them)
  bool record_types = true; ///< collect CheckResult::types
};

/// Checks `f` of `module`; errors (and warnings) are reported through `ctx`.
CheckResult check_tile_function(htp::PassContext &ctx, const TileFunction &f, const CheckOptions &options);

/// A value computed by an expression of a tile body.
struct Value {
  enum class Kind {
    None,   ///< no value (a store, or an expression that failed: no further diagnostics about it)
    Tile,   ///< a tile register
    Scalar, ///< a runtime scalar expression
    Const,  ///< a compile-time constant (number, bool, or tuple of these)
    View,   ///< a view of a tensor parameter
    DType,  ///< a dtype name (argument of cast / full)
    Opaque, ///< a value of another dialect (a channel): only passed to foreign ops
  };
  Kind kind = Kind::None;
  Type type;                ///< Tile / View (tensor type of the view's shape) / Scalar / Const
  std::string reg;          ///< Tile: register; View: tensor parameter; DType: the dtype; Opaque: its name
  Expr expr;                ///< Scalar / Const
  std::vector<Expr> offset; ///< View: element offsets into the parameter

  bool is(Kind k) const { return kind == k; }
  bool scalar_like() const { return kind == Kind::Scalar || kind == Kind::Const; }
};

struct Param {
  std::string name;
  std::string dir; ///< in | out | inout
  Type type;
  std::vector<int64_t> local_shape; ///< tensors: the per-core shape bodies are typed with
  htp::NodeRef node;                ///< the `arg`
};

class KernelChecker {
public:
  KernelChecker(htp::PassContext &ctx, const TileFunction &f, const CheckOptions &options);
  CheckResult run();

private:
  // ---- kernel_checker.cpp: driver, signature, bindings, registers
  struct Binding {
    enum class Kind { Param, TileReg, ScalarReg, ConstLocal, LoopVar, ViewAlias, Opaque };
    Kind kind;
    Value value;
    htp::NodeRef def;
  };
  void read_signature();
  std::optional<Param> read_param(htp::NodeRef arg, htp::NodeRef default_value);
  std::optional<Type> read_type(htp::NodeRef ann, std::string &dir, bool &recognised);
  std::optional<std::vector<int64_t>> read_dims(htp::NodeRef ann, const std::vector<htp::NodeRef> &dims);
  std::optional<std::string> read_dtype(htp::NodeRef n);
  std::vector<int64_t> local_shape_of(const Param &p, htp::NodeRef ann);
  ojson read_mapping();
  ojson params_json() const;

  const Binding *lookup(const std::string &name) const;
  std::string binding_kind_text(const Binding &b) const;
  /// The register an intrinsic result of `type` goes to: `hint` when it can hold it, else a temporary.
  std::string result_register(const std::string *hint, const Type &type, htp::NodeRef at);
  void declare_tile(const std::string &name, const Type &type, htp::NodeRef at);
  void declare_scalar(const std::string &name, const std::string &dtype, htp::NodeRef at);
  ojson &emit(ojson op, htp::NodeRef at);
  void record(htp::NodeRef n, const Value &v);

  void error(htp::NodeRef at, const std::string &code, const std::string &message);
  void warning(htp::NodeRef at, const std::string &code, const std::string &message);

  // ---- check_stmt.cpp: statements, control flow, Out discipline
  struct Flow {
    std::set<std::string> must;     ///< Out params written on every path
    std::set<std::string> if_loops; ///< ... assuming every loop runs at least once
    std::set<std::string> defined;  ///< names assigned on every path (registers read after an `if` or a loop)
    bool returned = false;
  };
  std::set<std::string> warned_unassigned_;  ///< registers already warned about as maybe unassigned
  std::map<std::string, int64_t> ended_loops_;  ///< loop variables past their loop -> the loop's line
  void block(htp::NodeRef owner, const char *field);
  void statement(htp::NodeRef s);
  void assign(const std::string &name, htp::NodeRef value, htp::NodeRef at);
  void bind_value(const std::string &name, const Value &v, htp::NodeRef at);
  void ann_assign(htp::NodeRef s);
  void aug_assign(htp::NodeRef s);
  void for_loop(htp::NodeRef s);
  void if_stmt(htp::NodeRef s);
  void return_stmt(htp::NodeRef s);
  void expression_statement(htp::NodeRef s);
  void check_outs_written(const Flow &flow, htp::NodeRef at, const std::string &where);
  void report_unwritten_outs();
  void unsupported_statement(htp::NodeRef s);
  void count_assignments();

  // ---- check_expr.cpp: expressions
  Value eval(htp::NodeRef e, const std::string *hint = nullptr);
  Value eval_uncached(htp::NodeRef e, const std::string *hint);
  Value name(htp::NodeRef e);
  Value constant(htp::NodeRef e);
  Value attribute(htp::NodeRef e);
  Value binop(htp::NodeRef e);
  Value unaryop(htp::NodeRef e);
  Value boolop(htp::NodeRef e);
  Value compare(htp::NodeRef e);
  Value ifexp(htp::NodeRef e);
  Value tuple(htp::NodeRef e);
  Value call(htp::NodeRef e, const std::string *hint);
  Value subscript(htp::NodeRef e);
  Value tile_view_method(htp::NodeRef call, const Value &base);
  Value slice_view(htp::NodeRef at, const Value &base, htp::NodeRef slice);
  bool check_view_bounds(htp::NodeRef at, const Value &base, const std::vector<Expr> &lo,
                         const std::vector<int64_t> &extent);
  Value foreign_call(htp::NodeRef call, const ojson &mark, const std::string *hint);
  Value unsupported_expression(htp::NodeRef e);
  /// A scalar operand (Scalar or Const holding a number) as an Expr, or an error naming `what`.
  std::optional<Expr> scalar_operand(htp::NodeRef at, const Value &v, const std::string &what);
  /// The same, moving a scalar's expression out of `v`.
  std::optional<Expr> scalar_operand(htp::NodeRef at, Value &&v, const std::string &what);
  /// A scalar operand that must be an integer (indices, offsets, loop bounds).
  std::optional<Expr> index_operand(htp::NodeRef at, const Value &v, const std::string &what);
  std::optional<int64_t> static_int(htp::NodeRef at, const Value &v, const std::string &what);
  std::string scalar_dtype(const Value &a, const Value &b) const;
  Value scalar_value(Expr e, const std::string &dtype) const;
  std::string describe(htp::NodeRef e, const Value &v) const;

  // ---- check_intrinsics.cpp: intrinsic contracts
  Value intrinsic(const Intrinsic &op, htp::NodeRef call, const std::string *hint);
  /// How calls read in this function (kernels: `S.op(...)` is a vendor intrinsic).
  CallRules call_rules() const;
  std::optional<std::vector<htp::NodeRef>> bind_args(const Intrinsic &op, htp::NodeRef call,
                                                     const std::vector<std::string> &names, size_t required);
  bool expect_tile(htp::NodeRef at, const Value &v, const Intrinsic &op, const std::string &role);
  Value elementwise(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                    const std::string *hint);
  Value scalar_form(const std::string &op, htp::NodeRef call, htp::NodeRef tile_node, const Value &t,
                    const Value &s, htp::NodeRef s_node, const std::string *hint);
  Value unary(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
              const std::string *hint);
  Value reduce(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
               const std::string *hint);
  Value expand(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
               const std::string *hint);
  Value expand_binary(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                      const std::string *hint);
  Value matmul(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
               const std::string *hint);
  Value cast(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
             const std::string *hint);
  Value load(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
             const std::string *hint);
  Value store(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args);
  Value full(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
             const std::string *hint);
  Value alloc(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
              const std::string *hint);
  /// A `(R, C)` tuple of positive compile-time integers, or an error naming `what`.
  std::optional<std::vector<int64_t>> static_shape(htp::NodeRef at, const Value &v, const std::string &what);
  /// The dtype argument `at` (absent: f32), or an error naming `what`.
  std::optional<std::string> dtype_argument(htp::NodeRef at, const std::string &what);

  // ---- check_vendor.cpp: intrinsics of vendor sets (`pto.exp(...)`, docs/intrinsics.md)
  Value vendor_intrinsic(const IntrinsicCall &c, htp::NodeRef call, const std::string *hint);
  /// The contract `c` is typed by: the portable op of the same name, or the class the set's plugin
  /// publishes (module attribute tile.intrinsics.<set>); the set's restrictions (float_only) apply on top.
  std::optional<Intrinsic> vendor_contract(const IntrinsicCall &c, htp::NodeRef call);
  /// The published table of `set` (null when the set's plugin publishes none; reported when malformed).
  const nlohmann::json *published_set(const std::string &set, htp::NodeRef at);
  Value tile_result(const std::string &op, htp::NodeRef call, const Type &type, std::vector<std::string> args,
                    const std::string *hint);
  std::optional<std::vector<int64_t>> view_tile_shape(htp::NodeRef at, const Value &view,
                                                      const std::string &op);

  // ---- state
  htp::PassContext &ctx_;
  TileFunction f_;
  CheckOptions options_;
  std::string fn_name_;
  CapturedGlobals globals_;                ///< htp.capture: constants and module-valued globals
  std::set<std::string> bound_;            ///< names bound in the function (intrinsic spelling)
  std::set<std::string> module_functions_; ///< other functions of the module (calls are errors)
  std::map<std::string, int> assign_count_;
  std::vector<Param> params_;
  std::map<std::string, Binding> env_;
  ojson locals_ = ojson::array();
  std::map<std::string, Type> local_types_;
  std::map<std::string, htp::NodeRef> local_defs_;
  ojson body_ = ojson::array();
  std::vector<ojson *> blocks_; ///< where ops go (the innermost loop / branch body)
  int temporaries_ = 0;
  VarRanges ranges_; ///< loop variables with static bounds
  /// Narrows ranges_ by `cond` holding (`taken`) or not: a loop variable compared with an integer constant.
  void narrow_ranges(const ojson &cond, bool taken);
  Flow flow_;
  std::set<std::string> stored_;                         ///< every Out/InOut param some store writes
  std::map<std::string, htp::NodeRef> first_loop_store_; ///< Out written only in a maybe-empty loop
  std::vector<htp::NodeRef> open_loops_;                 ///< enclosing loops without a static trip count
  int loop_depth_ = 0;                                   ///< enclosing loops (an early return in one is refused)
  struct PendingReturn {
    Flow flow;
    htp::NodeRef at;
    std::string where;
  };
  std::vector<PendingReturn> pending_returns_; ///< Out checks at each return, made at the end
  std::optional<std::string> accumulate_into_; ///< `acc += matmul(a, b)`: the accumulator
  /// The vendor calls being typed, innermost last: ops emitted at one of them record its set.
  std::vector<std::pair<htp::NodeRef, std::string>> vendor_calls_;
  std::map<std::string, nlohmann::json> published_; ///< tables read so far, by set (null: none)
  std::set<std::string> vendor_op_names_;           ///< storage of vendor-only op names (Intrinsic::name)
  CheckResult result_;
  bool recording_ = true;
};

} // namespace tile
