// Expressions of tile bodies: names, constants, scalar arithmetic, tensor views and calls.
#include "kernel_checker.hpp"

#include <cmath>

namespace tile {

namespace {

const char *unsupported_expression_text(std::string_view type) {
  if (type == "Lambda") return "lambda is not supported in tile bodies";
  if (type == "ListComp" || type == "SetComp" || type == "DictComp" || type == "GeneratorExp")
    return "comprehensions are not supported in tile bodies: use a for loop";
  if (type == "Dict" || type == "Set") return "dicts and sets are not supported in tile bodies";
  if (type == "JoinedStr" || type == "FormattedValue") return "f-strings are not supported in tile bodies";
  if (type == "Await" || type == "Yield" || type == "YieldFrom")
    return "generators and await are not supported in tile bodies";
  if (type == "NamedExpr") return "':=' is not supported in tile bodies";
  if (type == "Starred") return "'*' unpacking is not supported in tile bodies";
  if (type == "Slice") return "a slice is only valid inside a tensor subscript, x[r0:r1, c0:c1]";
  return nullptr;
}

struct BinOpInfo {
  std::string_view py, op, text;
};
constexpr BinOpInfo kBinOps[] = {
    {"Add", "add", "+"}, {"Sub", "sub", "-"}, {"Mult", "mul", "*"}, {"FloorDiv", "floordiv", "//"},
    {"Mod", "mod", "%"}, {"Div", "div", "/"}, {"Pow", "pow", "**"}, {"MatMult", "", "@"},
    {"BitAnd", "", "&"}, {"BitOr", "", "|"},  {"BitXor", "", "^"},  {"LShift", "", "<<"},
    {"RShift", "", ">>"}};

const BinOpInfo *binop_info(std::string_view py) {
  for (const auto &b : kBinOps)
    if (b.py == py) return &b;
  return nullptr;
}

struct CmpInfo {
  std::string_view py, op;
};
constexpr CmpInfo kCmps[] = {{"Lt", "lt"},  {"LtE", "le"}, {"Gt", "gt"},
                             {"GtE", "ge"}, {"Eq", "eq"},  {"NotEq", "ne"}};

bool surface_type_name(std::string_view n) {
  for (const char *s : {"kernel", "Tile", "Tensor", "Scalar", "In", "Out", "InOut", "Constexpr"})
    if (n == s) return true;
  return false;
}

Value const_value(Expr e) {
  return Value{Value::Kind::Const, Type::constexpr_(nlohmann::json::parse(e.dump())), "", std::move(e), {}};
}

} // namespace

Value KernelChecker::eval(htp::NodeRef e, const std::string *hint) {
  Value v = eval_uncached(e, hint);
  record(e, v);
  return v;
}

Value KernelChecker::eval_uncached(htp::NodeRef e, const std::string *hint) {
  std::string_view type = e.type();
  if (type == "Name") return name(e);
  if (type == "Constant") return constant(e);
  if (type == "Attribute") return attribute(e);
  if (type == "BinOp") return binop(e);
  if (type == "UnaryOp") return unaryop(e);
  if (type == "BoolOp") return boolop(e);
  if (type == "Compare") return compare(e);
  if (type == "IfExp") return ifexp(e);
  if (type == "Tuple" || type == "List") return tuple(e);
  if (type == "Call") return call(e, hint);
  if (type == "Subscript") return subscript(e);
  return unsupported_expression(e);
}

Value KernelChecker::unsupported_expression(htp::NodeRef e) {
  const char *text = unsupported_expression_text(e.type());
  error(e, "tile.unsupported",
        text ? std::string(text)
             : "'" + std::string(e.type()) + "' expressions are not supported in tile bodies");
  return {};
}

// ---- names and constants

Value KernelChecker::name(htp::NodeRef e) {
  std::string id = e.text("id").value_or("");
  if (const Binding *b = lookup(id)) {
    // A register assigned only inside an `if` branch or a loop that may run zero times holds nothing on the
    // other paths (Python would raise UnboundLocalError there; a kernel reads whatever the storage holds).
    if ((b->kind == Binding::Kind::TileReg || b->kind == Binding::Kind::ScalarReg) && !flow_.defined.count(id) &&
        warned_unassigned_.insert(id).second)
      warning(e, "tile.maybe-unassigned",
              "'" + id + "' is read here but assigned only on some paths before it (line " +
                  std::to_string(b->def.span().line) +
                  ", inside an 'if' or a loop that may run zero times); on the others it holds no value: assign it "
                  "before the 'if' or the loop");
    return b->value;
  }
  if (globals_.constants.contains(id)) {
    const auto &c = globals_.constants[id];
    bool tuple_of_numbers = c.is_array() && std::all_of(c.begin(), c.end(), [](const auto &x) {
                              return x.is_number() || x.is_boolean();
                            });
    if (c.is_number() || c.is_boolean() || tuple_of_numbers) return const_value(Expr::parse(c.dump()));
    error(e, "tile.constant",
          "captured constant '" + id + "' (" + c.dump() + ") is not a number, bool or tuple of numbers");
    return {};
  }
  if (is_dtype(id)) return Value{Value::Kind::DType, {}, id, {}, {}};
  if (find_intrinsic(id)) {
    error(e, "tile.unsupported", "'" + id + "' is a tile intrinsic: call it, e.g. " + id + "(...)");
    return {};
  }
  if (id == fn_name_) {
    error(e, "tile.recursion",
          "'" + fn_name_ + "' refers to itself: recursion is not supported in tile bodies");
    return {};
  }
  if (module_functions_.count(id)) {
    error(e, "tile.call",
          "'" + id + "' is another captured function: tile bodies can only use tile intrinsics");
    return {};
  }
  if (surface_type_name(id)) {
    error(e, "tile.unsupported", "'" + id + "' is a tile type: it can only annotate parameters");
    return {};
  }
  if (auto ended = ended_loops_.find(id); ended != ended_loops_.end()) {
    error(e, "tile.unknown-name",
          "'" + id + "' is the variable of the loop at line " + std::to_string(ended->second) +
              ", which tile bodies do not keep after the loop: keep the value in a scalar inside it");
    return {};
  }
  if (assign_count_.count(id)) {
    error(e, "tile.unknown-name", "'" + id + "' is used before it is assigned");
    return {};
  }
  std::vector<std::string> known;
  for (const auto &[n, b] : env_)
    known.push_back(n);
  auto near = closest_name(id, known);
  error(e, "tile.unknown-name",
        "unknown name '" + id + "' in '" + fn_name_ + "'" + (near ? "; did you mean '" + *near + "'?" : ""));
  return {};
}

Value KernelChecker::constant(htp::NodeRef e) {
  auto c = e.constant();
  if (!c) return unsupported_expression(e);
  switch (c->kind) {
  case HTP_CONST_INT: return const_value(Expr(c->i));
  case HTP_CONST_BOOL: return const_value(Expr(c->i != 0));
  case HTP_CONST_FLOAT:
    if (!std::isfinite(c->real)) {  // 1e309 is inf: the IR (JSON) carries finite floats only
      error(e, "tile.constant", "float constant " + std::string(std::isnan(c->real) ? "nan" : "inf") +
                                    " is not finite; kernels take finite float constants (e.g. -3.4e38 for a -inf start)");
      return {};
    }
    return const_value(Expr(c->real));
  case HTP_CONST_BIGINT: error(e, "tile.constant", "integer constant does not fit in 64 bits"); return {};
  case HTP_CONST_STR: error(e, "tile.unsupported", "strings are not values in tile bodies"); return {};
  case HTP_CONST_NONE: error(e, "tile.unsupported", "None is not a value in tile bodies"); return {};
  default: error(e, "tile.unsupported", "this constant is not a value in tile bodies"); return {};
  }
}

Value KernelChecker::attribute(htp::NodeRef e) {
  std::string dotted = e.dotted_name();
  if (!dotted.empty()) {
    std::string base = dotted.substr(0, dotted.find('.'));
    std::string last(last_component(dotted));
    if (!bound_.count(base) && is_dtype(last)) return Value{Value::Kind::DType, {}, last, {}, {}};
  }
  error(e, "tile.unsupported",
        "attribute access '" + (dotted.empty() ? std::string("...") : dotted) +
            "' is not supported in tile bodies");
  return {};
}

// ---- scalars

std::optional<Expr> KernelChecker::scalar_operand(htp::NodeRef at, Value &&v, const std::string &what) {
  if (v.is(Value::Kind::Scalar)) return std::move(v.expr);
  return scalar_operand(at, static_cast<const Value &>(v), what);
}

std::optional<Expr> KernelChecker::scalar_operand(htp::NodeRef at, const Value &v, const std::string &what) {
  switch (v.kind) {
  case Value::Kind::None: return std::nullopt;
  case Value::Kind::Scalar: return v.expr;
  case Value::Kind::Const:
    if (is_literal(v.expr)) return v.expr;
    error(at, "tile.type-mismatch", what + " must be a scalar, got the tuple " + v.expr.dump());
    return std::nullopt;
  default:
    error(at, "tile.type-mismatch", what + " must be a scalar, got " + describe(at, v));
    return std::nullopt;
  }
}

std::optional<Expr> KernelChecker::index_operand(htp::NodeRef at, const Value &v, const std::string &what) {
  auto e = scalar_operand(at, v, what);
  if (!e) return std::nullopt;
  bool is_float = e->is_number_float() || (v.is(Value::Kind::Scalar) && is_float_dtype(v.type.dtype));
  if (is_float) {
    error(at, "tile.dtype-mismatch", what + " must be an integer, got " + describe(at, v));
    return std::nullopt;
  }
  return e;
}

std::optional<int64_t> KernelChecker::static_int(htp::NodeRef at, const Value &v, const std::string &what) {
  if (v.is(Value::Kind::None)) return std::nullopt;
  if (v.is(Value::Kind::Const))
    if (auto i = int_literal(v.expr)) return i;
  error(at, "tile.static", what + " must be a compile-time integer, got " + describe(at, v));
  return std::nullopt;
}

std::string KernelChecker::scalar_dtype(const Value &a, const Value &b) const {
  auto dt = [](const Value &v) -> std::string {
    if (v.is(Value::Kind::Scalar)) return v.type.dtype;
    if (v.expr.is_number_float()) return "f32";
    return "";
  };
  std::string x = dt(a), y = dt(b);
  if (is_float_dtype(x)) return x;
  if (is_float_dtype(y)) return y;
  if (!x.empty()) return x;
  if (!y.empty()) return y;
  return "i64";
}

Value KernelChecker::scalar_value(Expr e, const std::string &dtype) const {
  if (is_literal(e)) return const_value(std::move(e));
  return Value{Value::Kind::Scalar, Type::scalar(dtype), "", std::move(e), {}};
}

std::string KernelChecker::describe(htp::NodeRef e, const Value &v) const {
  std::string text;
  if (e.is("Name"))
    text = "'" + e.text("id").value_or("") + "'";
  else if (e.is("Call"))
    text = "'" + e.child("func").dotted_name() + "(...)'";
  else if (e.is("Subscript"))
    text = "'" + e.child("value").dotted_name() + "[...]'";
  switch (v.kind) {
  case Value::Kind::Tile: return (text.empty() ? "a tile" : text) + " (" + v.type.str() + ")";
  case Value::Kind::View:
    return (text.empty() ? "a tensor view" : text) + " (a view " + v.type.str() + " of '" + v.reg + "')";
  case Value::Kind::Scalar:
    return (text.empty() ? "the scalar " + expr_str(v.expr) : text) + " (" + v.type.str() + ")";
  case Value::Kind::Const: return text.empty() ? v.expr.dump() : text + " (= " + v.expr.dump() + ")";
  case Value::Kind::DType: return "the dtype " + v.reg;
  case Value::Kind::Opaque: return (text.empty() ? "a value" : text) + " of another dialect";
  case Value::Kind::None: break;
  }
  return text.empty() ? "an invalid value" : text;
}

Value KernelChecker::binop(htp::NodeRef e) {
  Value l = eval(e.child("left")), r = eval(e.child("right"));
  if (l.is(Value::Kind::None) || r.is(Value::Kind::None)) return {};
  const BinOpInfo *info = binop_info(e.child("op").type());
  std::string text = info ? std::string(info->text) : std::string(e.child("op").type());
  bool tiles = l.is(Value::Kind::Tile) || r.is(Value::Kind::Tile) || l.is(Value::Kind::View) ||
               r.is(Value::Kind::View);
  if (tiles) {
    std::string intr =
        info && (info->op == "add" || info->op == "sub" || info->op == "mul" || info->op == "div")
            ? std::string(info->op)
            : std::string("an intrinsic");
    error(e, "tile.operator",
          "operator '" + text + "' does not apply to tiles (" + describe(e.child("left"), l) + ", " +
              describe(e.child("right"), r) + "): call " + intr + (intr == "an intrinsic" ? "" : "(a, b)") +
              "; Python operators work on scalars only");
    return {};
  }
  // The operands' expressions move into the result: copying them would copy every subexpression once per
  // operator above it (a sum of n terms, n**2 / 2 nodes).
  const std::string dtype = scalar_dtype(l, r);
  auto a = scalar_operand(e.child("left"), std::move(l), "the left operand of '" + text + "'");
  auto b = scalar_operand(e.child("right"), std::move(r), "the right operand of '" + text + "'");
  if (!a || !b) return {};
  if (!info || info->op.empty()) {
    error(e, "tile.unsupported", "operator '" + text + "' is not supported on scalars in tile bodies");
    return {};
  }
  std::string op(info->op);
  if ((op == "floordiv" || op == "mod" || op == "div") && is_literal(*b) && b->get<double>() == 0.0) {
    error(e, "tile.division-by-zero", "division by zero");
    return {};
  }
  if (op == "div") {
    if (is_literal(*a) && is_literal(*b)) return const_value(Expr(a->get<double>() / b->get<double>()));
    error(e, "tile.scalar-div", "'/' on runtime scalars is not supported: use '//' for integer division");
    return {};
  }
  if (op == "pow") {
    auto x = int_literal(*a), y = int_literal(*b);
    if (x && y && *y >= 0 && *y < 63) {
      int64_t acc = 1;
      bool overflow = false;
      for (int64_t i = 0; i < *y && !overflow; ++i)
        overflow = __builtin_mul_overflow(acc, *x, &acc);
      if (!overflow) return const_value(Expr(acc));
      error(e, "tile.overflow", "'**' of compile-time integers overflows 64 bits, the width HTP computes scalars in");
      return {};
    }
    error(e, "tile.unsupported", "'**' is only supported on compile-time integers");
    return {};
  }
  // Integer constants whose result leaves 64 bits stay unfolded and would wrap at run time (2**40 * 2**40 is 0).
  const bool constants = int_literal(*a) && int_literal(*b);
  const std::string texts = constants ? a->dump() + " and " + b->dump() : std::string();
  std::vector<Expr> operands;
  operands.push_back(std::move(*a));
  operands.push_back(std::move(*b));
  Expr folded = make_op(op, std::move(operands));
  if (constants && !is_literal(folded) && (op == "add" || op == "sub" || op == "mul")) {
    error(e, "tile.overflow",
          "'" + text + "' of the constants " + texts + " overflows 64 bits, the width HTP computes scalars in");
    return {};
  }
  return scalar_value(std::move(folded), dtype);
}

Value KernelChecker::unaryop(htp::NodeRef e) {
  Value v = eval(e.child("operand"));
  if (v.is(Value::Kind::None)) return {};
  std::string_view op = e.child("op").type();
  if (v.is(Value::Kind::Tile) || v.is(Value::Kind::View)) {
    error(e, "tile.operator",
          std::string("unary operators do not apply to tiles (") + describe(e.child("operand"), v) + ")" +
              (op == "USub" ? ": call neg(x)" : ""));
    return {};
  }
  auto x = scalar_operand(e.child("operand"), v, "the operand");
  if (!x) return {};
  if (op == "UAdd") return v;
  if (op == "USub")
    return scalar_value(make_op("neg", {*x}), v.is(Value::Kind::Scalar) ? v.type.dtype : "i64");
  if (op == "Not") return scalar_value(make_op("not", {*x}), "i8");
  error(e, "tile.unsupported", "operator '~' is not supported in tile bodies");
  return {};
}

Value KernelChecker::boolop(htp::NodeRef e) {
  std::string op = e.child("op").is("And") ? "and" : "or";
  std::optional<Expr> acc;
  for (auto x : e.items("values")) {
    Value v = eval(x);
    auto s = scalar_operand(x, v, "an operand of '" + op + "'");
    if (!s) return {};
    acc = acc ? make_op(op, {*acc, *s}) : *s;
  }
  return scalar_value(*acc, "i8");
}

Value KernelChecker::compare(htp::NodeRef e) {
  Value left = eval(e.child("left"));
  auto a = scalar_operand(e.child("left"), left, "a comparison operand");
  if (!a) return {};
  auto ops = e.items("ops");
  auto rights = e.items("comparators");
  std::optional<Expr> acc;
  for (size_t i = 0; i < ops.size() && i < rights.size(); ++i) {
    const CmpInfo *info = nullptr;
    for (const auto &c : kCmps)
      if (c.py == ops[i].type()) info = &c;
    if (!info) {
      error(e, "tile.unsupported",
            "'" + std::string(ops[i].type()) + "' comparisons are not supported in tile bodies");
      return {};
    }
    Value r = eval(rights[i]);
    auto b = scalar_operand(rights[i], r, "a comparison operand");
    if (!b) return {};
    Expr c = make_op(std::string(info->op), {*a, *b});
    acc = acc ? make_op("and", {*acc, c}) : c;
    a = b;
  }
  return scalar_value(*acc, "i8");
}

Value KernelChecker::ifexp(htp::NodeRef e) {
  Value c = eval(e.child("test")), x = eval(e.child("body")), y = eval(e.child("orelse"));
  auto ce = scalar_operand(e.child("test"), c, "the condition");
  auto xe = scalar_operand(e.child("body"), x, "a conditional expression branch");
  auto ye = scalar_operand(e.child("orelse"), y, "a conditional expression branch");
  if (!ce || !xe || !ye) return {};
  return scalar_value(make_op("select", {*ce, *xe, *ye}), scalar_dtype(x, y));
}

Value KernelChecker::tuple(htp::NodeRef e) {
  Expr out = Expr::array();
  for (auto x : e.items("elts")) {
    Value v = eval(x);
    if (v.is(Value::Kind::None)) return {};
    if (!v.is(Value::Kind::Const) || !is_literal(v.expr)) {
      error(x, "tile.static",
            "tuples in tile bodies are compile-time constants (shapes); got " + describe(x, v));
      return {};
    }
    out.push_back(v.expr);
  }
  return const_value(std::move(out));
}

// ---- calls

Value KernelChecker::call(htp::NodeRef e, const std::string *hint) {
  auto mark = node_attr_json(e, "tile.foreign");
  if (mark.is_object()) return foreign_call(e, ojson::parse(mark.dump()), hint);
  if (auto c = intrinsic_call(e, bound_, globals_, call_rules()))
    return c->portable() ? intrinsic(*find_intrinsic(c->op), e, hint) : vendor_intrinsic(*c, e, hint);
  auto func = e.child("func");
  if (!func.is("Name") && !func.is("Attribute")) return unsupported_expression(func); // (lambda: ...)()
  if (func.is("Attribute") && func.text("attr") == std::optional<std::string>("tile") &&
      func.child("value").is("Name") && bound_.count(func.child("value").text("id").value_or(""))) {
    Value base = eval(func.child("value"));
    if (base.is(Value::Kind::None)) return {};
    if (base.is(Value::Kind::View)) return tile_view_method(e, base);
    error(func, "tile.type-mismatch",
          ".tile(...) views a tensor; " + describe(func.child("value"), base) + " is not one");
    return {};
  }
  std::string callee = func.dotted_name();
  std::string last(last_component(callee));
  bool module_spelling = func.is("Attribute") && func.child("value").is("Name") &&
                         !bound_.count(func.child("value").text("id").value_or(""));
  if (callee == fn_name_) {
    error(e, "tile.recursion", "'" + fn_name_ + "' calls itself: recursion is not supported in tile bodies");
  } else if (callee == "range") {
    error(e, "tile.unsupported", "range() is only allowed as the iterable of a for loop");
  } else if (func.is("Name") && module_functions_.count(callee)) {
    error(e, "tile.call",
          "tile bodies can only call tile intrinsics; '" + callee +
              "' is a captured function (kernels do not call kernels: launch them from a workload)");
  } else if (func.is("Name") && lookup(callee)) {
    error(e, "tile.call", "'" + callee + "' is " + binding_kind_text(*lookup(callee)) + ", not a function");
  } else if ((func.is("Name") ||
              (module_spelling && func.child("value").text("id") == std::optional<std::string>("tile")))) {
    std::string hint_text;
    if (callee == "float" || callee == "int" || callee == "bool")  // (a Python conversion, not a misspelling)
      hint_text = ": scalars convert where they are used (a Scalar[f32] parameter, or cast(tile, dtype) for a tile)";
    else if (auto near = closest_intrinsic(last))
      hint_text = "; did you mean '" + *near + "'?";
    error(e, "tile.unknown-intrinsic",
          "'" + callee + "' is not a tile intrinsic" + hint_text +
              " (tile bodies can only call tile intrinsics)");
  } else {
    std::string how;
    if (find_intrinsic(last))
      how = " (spell them tile." + last + "(...) or import them: from htp.dialects.tile import " + last + ")";
    error(e, "tile.call",
          "call of '" + (callee.empty() ? std::string(func.type()) : callee) +
              "' is not supported in tile bodies: only tile intrinsics can be called" + how);
  }
  return {};
}

Value KernelChecker::foreign_call(htp::NodeRef call, const ojson &mark, const std::string *hint) {
  std::string op = mark.contains("op") && mark["op"].is_string() ? mark["op"].get<std::string>() : "";
  if (op.empty()) {
    error(call, "tile.foreign", "the tile.foreign mark on this call has no \"op\"");
    return {};
  }
  ojson args = ojson::array();
  for (auto a : call.items("args")) {
    if (a.is("Name") && !lookup(a.text("id").value_or("")) &&
        !globals_.constants.contains(a.text("id").value_or(""))) {
      args.push_back(a.text("id").value_or("")); // another dialect's name (a channel): by name
      continue;
    }
    Value v = eval(a);
    switch (v.kind) {
    case Value::Kind::Tile:
    case Value::Kind::Opaque:
    case Value::Kind::DType: args.push_back(v.reg); break;
    case Value::Kind::Scalar:
    case Value::Kind::Const: args.push_back(v.expr); break;
    case Value::Kind::View:
      args.push_back(ojson{{"tensor", v.reg}, {"offset", v.offset}, {"shape", v.type.shape}});
      break;
    case Value::Kind::None: return {};
    }
  }
  ojson attrs = mark.contains("attrs") && mark["attrs"].is_object() ? mark["attrs"] : ojson::object();
  const ojson type = mark.contains("type") ? mark["type"] : ojson();
  if (type.is_null()) {
    emit(ojson{{"op", op}, {"args", args}, {"attrs", attrs}}, call);
    return Value{Value::Kind::Opaque, {}, op, {}, {}};
  }
  bool valid = type.is_object() && type.value("kind", "") == "tile" && type.contains("shape") &&
               type["shape"].is_array() && type["shape"].size() == 2 && type.contains("dtype") &&
               type["dtype"].is_string() && is_dtype(type["dtype"].get<std::string>());
  if (valid)
    for (const auto &d : type["shape"])
      valid = valid && d.is_number_integer() && d.get<int64_t>() > 0;
  if (!valid) {
    error(call, "tile.foreign",
          "the tile.foreign mark of '" + op + "' has an invalid result type " + type.dump() +
              " (expected null or {\"kind\": \"tile\", \"shape\": [R, C], \"dtype\": ...})");
    return {};
  }
  Type t = Type::tile(type["shape"].get<std::vector<int64_t>>(), type["dtype"].get<std::string>());
  std::string dst = result_register(hint, t, call);
  emit(ojson{{"op", op}, {"dst", dst}, {"args", args}, {"attrs", attrs}}, call);
  return Value{Value::Kind::Tile, t, dst, {}, {}};
}

// ---- views

Value KernelChecker::subscript(htp::NodeRef e) {
  Value base = eval(e.child("value"));
  if (base.is(Value::Kind::None)) return {};
  if (base.is(Value::Kind::View)) return slice_view(e, base, e.child("slice"));
  if (base.is(Value::Kind::Const) && base.expr.is_array()) {
    Value i = eval(e.child("slice"));
    auto idx = static_int(e.child("slice"), i, "a tuple index");
    if (!idx) return {};
    int64_t n = static_cast<int64_t>(base.expr.size());
    if (*idx < -n || *idx >= n) {
      error(e, "tile.index",
            "tuple index " + std::to_string(*idx) + " out of range (size " + std::to_string(n) + ")");
      return {};
    }
    return const_value(base.expr[static_cast<size_t>(*idx < 0 ? *idx + n : *idx)]);
  }
  error(e, "tile.unsupported",
        "subscripts apply to tensor parameters (views) only; " + describe(e.child("value"), base) +
            " cannot be subscripted");
  return {};
}

Value KernelChecker::slice_view(htp::NodeRef at, const Value &base, htp::NodeRef slice) {
  std::vector<htp::NodeRef> elems =
      slice.is("Tuple") ? slice.items("elts") : std::vector<htp::NodeRef>{slice};
  const auto &shape = base.type.shape;
  if (elems.size() > shape.size()) {
    error(at, "tile.view",
          "too many indices for '" + base.reg + "': the view " + base.type.str() + " has " +
              std::to_string(shape.size()) + " dims");
    return {};
  }
  std::vector<Expr> lo(shape.size(), Expr(0));
  std::vector<int64_t> extent = shape;
  // A constant negative index or slice bound counts from the end of its dim, as in Python (x[-8:, :] is the
  // last 8 rows, x[-1, :] the last row); one known only at run time stays an offset, checked as such.
  auto from_end = [&](Expr e, size_t d) {
    auto v = int_literal(e);
    return v && *v < 0 && *v >= -shape[d] ? Expr(shape[d] + *v) : e;
  };
  for (size_t d = 0; d < elems.size(); ++d) {
    auto el = elems[d];
    if (!el.is("Slice")) {
      Value i = eval(el);
      auto e = index_operand(el, i, "an index of '" + base.reg + "'");
      if (!e) return {};
      lo[d] = from_end(*e, d);
      extent[d] = 1;
      continue;
    }
    if (auto step = el.child("step")) {
      Value s = eval(step);
      if (!(s.is(Value::Kind::Const) && int_literal(s.expr) == std::optional<int64_t>(1))) {
        error(step, "tile.view", "strided views are not supported: slice steps must be 1");
        return {};
      }
    }
    Expr l = Expr(0), u = Expr(shape[d]);
    if (auto n = el.child("lower")) {
      auto e = index_operand(n, eval(n), "a slice bound of '" + base.reg + "'");
      if (!e) return {};
      l = from_end(*e, d);
    }
    if (auto n = el.child("upper")) {
      auto e = index_operand(n, eval(n), "a slice bound of '" + base.reg + "'");
      if (!e) return {};
      u = from_end(*e, d);
    }
    auto ext = constant_difference(u, l);
    if (!ext) {
      error(el, "tile.view-extent",
            "the extent of dim " + std::to_string(d) + " of this view of '" + base.reg + "' is not static (" +
                expr_str(u) + " - (" + expr_str(l) +
                ")): tile shapes must be known at compile time; write "
                "x[i:i + R] with a constant R");
      return {};
    }
    if (*ext <= 0) {
      error(el, "tile.view-extent",
            "dim " + std::to_string(d) + " of this view of '" + base.reg + "' is empty (" + expr_str(l) +
                ":" + expr_str(u) + ")");
      return {};
    }
    lo[d] = l;
    extent[d] = *ext;
  }
  if (!check_view_bounds(at, base, lo, extent)) return {};
  Value v = base;
  v.type = Type::tensor(extent, base.type.dtype);
  for (size_t d = 0; d < shape.size(); ++d)
    v.offset[d] = make_op("add", {base.offset[d], lo[d]});
  return v;
}

Value KernelChecker::tile_view_method(htp::NodeRef call, const Value &base) {
  const auto &shape = base.type.shape;
  auto idx_nodes = call.items("args");
  htp::NodeRef shape_node;
  for (auto kw : call.items("keywords")) {
    if (kw.text("arg") == std::optional<std::string>("shape"))
      shape_node = kw.child("value");
    else {
      error(kw, "tile.view",
            ".tile() takes the block indices and shape=(...), not '" + kw.text("arg").value_or("**") + "'");
      return {};
    }
  }
  if (!shape_node) {
    error(call, "tile.view-shape",
          "'" + base.reg + ".tile(...)' needs the block shape inside a tile body: " + base.reg +
              ".tile(i, j, shape=(R, C))");
    return {};
  }
  if (idx_nodes.size() != shape.size()) {
    error(call, "tile.view",
          "'" + base.reg + "' has " + std::to_string(shape.size()) + " dims: .tile() takes " +
              std::to_string(shape.size()) + " block indices, got " + std::to_string(idx_nodes.size()));
    return {};
  }
  Value sv = eval(shape_node);
  if (sv.is(Value::Kind::None)) return {};
  std::vector<int64_t> block;
  bool valid = sv.is(Value::Kind::Const) && sv.expr.is_array() && sv.expr.size() == shape.size();
  for (size_t d = 0; valid && d < shape.size(); ++d) {
    auto i = int_literal(sv.expr[d]);
    valid = i && *i > 0;
    if (valid) block.push_back(*i);
  }
  if (!valid) {
    error(shape_node, "tile.view-shape",
          "shape= must be a tuple of " + std::to_string(shape.size()) +
              " positive compile-time integers, got " + describe(shape_node, sv));
    return {};
  }
  std::vector<Expr> lo;
  for (size_t d = 0; d < shape.size(); ++d) {
    auto e = index_operand(idx_nodes[d], eval(idx_nodes[d]), "a block index of '" + base.reg + "'");
    if (!e) return {};
    lo.push_back(make_op("mul", {*e, Expr(block[d])}));
  }
  if (!check_view_bounds(call, base, lo, block)) return {};
  Value v = base;
  v.type = Type::tensor(block, base.type.dtype);
  for (size_t d = 0; d < shape.size(); ++d)
    v.offset[d] = make_op("add", {base.offset[d], lo[d]});
  return v;
}

bool KernelChecker::check_view_bounds(htp::NodeRef at, const Value &base, const std::vector<Expr> &lo,
                                      const std::vector<int64_t> &extent) {
  for (size_t d = 0; d < lo.size(); ++d) {
    int64_t dim = base.type.shape[d];
    if (extent[d] > dim) {
      error(at, "tile.view-out-of-bounds",
            "this view of '" + base.reg + "' is " + std::to_string(extent[d]) + " long in dim " +
                std::to_string(d) + " but '" + base.reg + "' (" + base.type.str() + ") has " +
                std::to_string(dim));
      return false;
    }
    const htp::ExprRange range = htp::expr_range(lo[d], ranges_);
    const auto &r = range.interval;
    if (!range.overflow && (!r || (r->lo >= 0 && static_cast<__int128>(r->hi) + extent[d] <= dim))) continue;
    const std::string loops = htp::ranges_text(lo[d], ranges_);
    const std::string covers =
        range.overflow ? std::string("offsets beyond 64 bits")
                       : "[" + std::to_string(r->lo) + ", " +
                             std::to_string(r->hi >= INT64_MAX - extent[d] ? INT64_MAX : r->hi + extent[d]) + ")";
    error(at, "tile.view-out-of-bounds",
          "this view of '" + base.reg + "' covers " + covers + " in dim " + std::to_string(d) +
              (loops.empty() ? "" : " for " + loops) + ", outside [0, " + std::to_string(dim) + ") of '" + base.reg +
              "' (" + base.type.str() + ")");
    return false;
  }
  return true;
}

} // namespace tile
