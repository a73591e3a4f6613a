// Intrinsic contracts: operand kinds, shapes and dtypes of every portable intrinsic, and the register op
// each one lowers to (docs/dialects/tile.md has the table).
#include "kernel_checker.hpp"

#include <cmath>

#include <htp/dtype_range.hpp>

namespace tile {

namespace {

struct ParamList {
  std::vector<std::string> names;
  size_t required;
};

ParamList params_of(OpClass c) {
  switch (c) {
  case OpClass::Elementwise: return {{"a", "b"}, 2};
  case OpClass::ScalarForm: return {{"a", "s"}, 2};
  case OpClass::Unary:
  case OpClass::RowReduce:
  case OpClass::ColReduce: return {{"a"}, 1};
  case OpClass::RowExpand: return {{"s", "cols"}, 2};
  case OpClass::RowExpandBinary: return {{"a", "s"}, 2};
  case OpClass::Matmul: return {{"a", "b", "acc"}, 2};
  case OpClass::Cast: return {{"a", "dtype"}, 2};
  case OpClass::Load: return {{"view"}, 1};
  case OpClass::Store: return {{"view", "value"}, 2};
  case OpClass::Full: return {{"shape", "value", "dtype"}, 2};
  case OpClass::ColExpand: return {{"s", "rows"}, 2};
  case OpClass::ColExpandBinary: return {{"a", "s"}, 2};
  case OpClass::Copy: return {{"a"}, 1};
  case OpClass::Alloc: return {{"shape", "dtype"}, 1};
  case OpClass::Transpose: return {{"a"}, 1};
  }
  return {{}, 0};
}

std::string usage(const Intrinsic &op, const ParamList &p) {
  std::string s = std::string(op.name) + "(";
  for (size_t i = 0; i < p.names.size(); ++i)
    s += (i ? ", " : "") + p.names[i] + (i >= p.required ? "=..." : "");
  return s + ")";
}

bool commutative(std::string_view op) {
  return op == "add" || op == "mul" || op == "max" || op == "min";
}

} // namespace

Value KernelChecker::intrinsic(const Intrinsic &op, htp::NodeRef call, const std::string *hint) {
  ParamList p = params_of(op.cls);
  auto args = bind_args(op, call, p.names, p.required);
  if (!args) return {};
  switch (op.cls) {
  case OpClass::Elementwise: return elementwise(op, call, *args, hint);
  case OpClass::ScalarForm: {
    Value t = eval((*args)[0]), s = eval((*args)[1]);
    if (t.is(Value::Kind::None) || s.is(Value::Kind::None)) return {};
    return scalar_form(std::string(op.name), call, (*args)[0], t, s, (*args)[1], hint);
  }
  case OpClass::Unary:
  case OpClass::Copy: return unary(op, call, *args, hint);
  case OpClass::RowReduce:
  case OpClass::ColReduce: return reduce(op, call, *args, hint);
  case OpClass::RowExpand:
  case OpClass::ColExpand: return expand(op, call, *args, hint);
  case OpClass::RowExpandBinary:
  case OpClass::ColExpandBinary: return expand_binary(op, call, *args, hint);
  case OpClass::Matmul: return matmul(op, call, *args, hint);
  case OpClass::Cast: return cast(op, call, *args, hint);
  case OpClass::Load: return load(op, call, *args, hint);
  case OpClass::Store: return store(op, call, *args);
  case OpClass::Full: return full(op, call, *args, hint);
  case OpClass::Alloc: return alloc(op, call, *args, hint);
  case OpClass::Transpose: {
    Value x = eval((*args)[0]);
    if (!expect_tile((*args)[0], x, op, "a")) return {};
    // (`t = transpose(t)`: the result goes to a register of its own, then to t; written in place, the
    // transpose would read elements it had already overwritten)
    return tile_result(std::string(op.name), call, Type::tile({x.type.shape[1], x.type.shape[0]}, x.type.dtype),
                       {x.reg}, hint && *hint == x.reg ? nullptr : hint);
  }
  }
  return {};
}

CallRules KernelChecker::call_rules() const {
  CallRules rules = f_.kind == "kernel" ? CallRules::kernel() : CallRules::other_dialect();
  rules.python_builtins = false; // in tile bodies abs / max / min are the intrinsics (tiles) or fold (scalars)
  return rules;
}

std::optional<std::vector<htp::NodeRef>> KernelChecker::bind_args(const Intrinsic &op, htp::NodeRef call,
                                                                  const std::vector<std::string> &names,
                                                                  size_t required) {
  ParamList p{names, required};
  std::vector<htp::NodeRef> out(names.size());
  auto positional = call.items("args");
  for (auto a : positional)
    if (a.is("Starred")) {
      error(a, "tile.arity", "'*' arguments are not supported: " + usage(op, p));
      return std::nullopt;
    }
  if (positional.size() > names.size()) {
    error(call, "tile.arity",
          std::string(op.name) + " takes " + std::to_string(names.size()) + " argument" +
              (names.size() > 1 ? "s" : "") + ", got " + std::to_string(positional.size()) + ": " +
              usage(op, p));
    return std::nullopt;
  }
  for (size_t i = 0; i < positional.size(); ++i)
    out[i] = positional[i];
  for (auto kw : call.items("keywords")) {
    auto key = kw.text("arg");
    auto it = key ? std::find(names.begin(), names.end(), *key) : names.end();
    if (it == names.end()) {
      error(kw, "tile.arity",
            std::string(op.name) + " has no parameter '" + key.value_or("**") + "': " + usage(op, p));
      return std::nullopt;
    }
    size_t i = static_cast<size_t>(it - names.begin());
    if (out[i]) {
      error(kw, "tile.arity", std::string(op.name) + " got '" + *key + "' twice: " + usage(op, p));
      return std::nullopt;
    }
    out[i] = kw.child("value");
  }
  for (size_t i = 0; i < required; ++i)
    if (!out[i]) {
      error(call, "tile.arity",
            std::string(op.name) + " is missing its argument '" + names[i] + "': " + usage(op, p));
      return std::nullopt;
    }
  return out;
}

bool KernelChecker::expect_tile(htp::NodeRef at, const Value &v, const Intrinsic &op,
                                const std::string &role) {
  if (v.is(Value::Kind::Tile)) return true;
  if (v.is(Value::Kind::None)) return false;
  if (v.is(Value::Kind::View))
    error(at, "tile.type-mismatch",
          std::string(op.name) + ": '" + role + "' is " + describe(at, v) +
              "; load it into a tile first: load(...)");
  else
    error(at, "tile.type-mismatch",
          std::string(op.name) + ": '" + role + "' must be a tile, got " + describe(at, v));
  return false;
}

Value KernelChecker::tile_result(const std::string &op, htp::NodeRef call, const Type &type,
                                 std::vector<std::string> args, const std::string *hint) {
  std::string dst = result_register(hint, type, call);
  emit(ojson{{"op", op}, {"dst", dst}, {"args", std::move(args)}}, call);
  return Value{Value::Kind::Tile, type, dst, {}, {}};
}

Value KernelChecker::elementwise(const Intrinsic &op, htp::NodeRef call,
                                 const std::vector<htp::NodeRef> &args, const std::string *hint) {
  Value x = eval(args[0]), y = eval(args[1]);
  if (x.is(Value::Kind::None) || y.is(Value::Kind::None)) return {};
  if (x.scalar_like() && y.scalar_like() && (op.name == "max" || op.name == "min")) {
    auto a = scalar_operand(args[0], x, "an operand"), b = scalar_operand(args[1], y, "an operand");
    if (!a || !b) return {};
    return scalar_value(make_op(std::string(op.name), {*a, *b}), scalar_dtype(x, y)); // Python's builtin
  }
  if ((x.scalar_like() || y.scalar_like()) && op.scalar_form.empty()) {
    error(call, "tile.type-mismatch", std::string(op.name) + " takes two tiles: it has no scalar form");
    return {};
  }
  if (x.is(Value::Kind::Tile) && y.scalar_like())
    return scalar_form(std::string(op.scalar_form), call, args[0], x, y, args[1], hint);
  if (x.scalar_like() && y.is(Value::Kind::Tile)) {
    if (commutative(op.name))
      return scalar_form(std::string(op.scalar_form), call, args[1], y, x, args[0], hint);
    error(call, "tile.type-mismatch",
          std::string(op.name) + "(scalar, tile) is not supported: the scalar forms take the tile first (" +
              std::string(op.scalar_form) + "(tile, scalar))");
    return {};
  }
  if (!expect_tile(args[0], x, op, "a") || !expect_tile(args[1], y, op, "b")) return {};
  if (x.type.shape != y.type.shape) {
    std::string hint_text;
    if (y.type.shape.size() == 2 && y.type.shape[1] == 1 && y.type.shape[0] == x.type.shape[0])
      hint_text =
          "; to broadcast a [R, 1] tile over the columns use rowexpand_" + std::string(op.name) + "(a, b)";
    error(call, "tile.shape-mismatch",
          std::string(op.name) + ": operand shapes differ: " + describe(args[0], x) + " and " +
              describe(args[1], y) + " (elementwise operands have the same shape" + hint_text + ")");
    return {};
  }
  if (x.type.dtype != y.type.dtype) {
    error(call, "tile.dtype-mismatch",
          std::string(op.name) + ": operand dtypes differ: " + describe(args[0], x) + " and " +
              describe(args[1], y) + "; convert one with cast(x, " + x.type.dtype + ")");
    return {};
  }
  return tile_result(std::string(op.name), call, x.type, {x.reg, y.reg}, hint);
}

Value KernelChecker::scalar_form(const std::string &op, htp::NodeRef call, htp::NodeRef tile_node,
                                 const Value &t, const Value &s, htp::NodeRef s_node,
                                 const std::string *hint) {
  const Intrinsic *portable = find_intrinsic(op);
  const Intrinsic info = portable ? *portable : Intrinsic{op, OpClass::ScalarForm};
  if (!expect_tile(tile_node, t, info, "a")) return {};
  auto e = scalar_operand(s_node, s, op + ": the scalar operand");
  if (!e) return {};
  if (!is_float_dtype(t.type.dtype) &&
      (e->is_number_float() || (s.is(Value::Kind::Scalar) && is_float_dtype(s.type.dtype)))) {
    error(s_node, "tile.dtype-mismatch",
          op + ": a floating-point scalar with the integer tile " + describe(tile_node, t) +
              "; cast the tile first");
    return {};
  }
  std::string dst = result_register(hint, t.type, call);
  emit(ojson{{"op", op}, {"dst", dst}, {"args", {t.reg}}, {"scalar", *e}}, call);
  return Value{Value::Kind::Tile, t.type, dst, {}, {}};
}

Value KernelChecker::unary(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                           const std::string *hint) {
  Value x = eval(args[0]);
  if (x.scalar_like() && (op.name == "abs" || op.name == "neg")) {
    auto a = scalar_operand(args[0], x, "the operand");
    if (!a) return {};
    Expr neg = make_op("neg", {*a});
    Expr e = op.name == "neg" ? neg : make_op("select", {make_op("lt", {*a, Expr(0)}), neg, *a});
    return scalar_value(e, x.is(Value::Kind::Scalar) ? x.type.dtype : "i64"); // Python's abs / unary minus
  }
  if (!expect_tile(args[0], x, op, "a")) return {};
  if (op.float_only && !is_float_dtype(x.type.dtype)) {
    error(call, "tile.dtype-mismatch",
          std::string(op.name) + " needs a floating-point tile (f16, bf16, f32); " + describe(args[0], x) +
              " is not: cast it first");
    return {};
  }
  return tile_result(std::string(op.name), call, x.type, {x.reg}, hint);
}

Value KernelChecker::reduce(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                            const std::string *hint) {
  Value x = eval(args[0]);
  if (!expect_tile(args[0], x, op, "a")) return {};
  bool rows = op.cls == OpClass::RowReduce;
  Type t =
      Type::tile(rows ? std::vector<int64_t>{x.type.shape[0], 1} : std::vector<int64_t>{1, x.type.shape[1]},
                 x.type.dtype);
  return tile_result(std::string(op.name), call, t, {x.reg}, hint);
}

Value KernelChecker::expand(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                            const std::string *hint) {
  // rowexpand: [R, 1] over C columns; colexpand: [1, C] over R rows. `d` is the dim that grows.
  const bool rows = op.cls == OpClass::RowExpand;
  const size_t d = rows ? 1 : 0, keep = 1 - d;
  const std::string name(op.name), what = rows ? "column" : "row";
  Value s = eval(args[0]);
  if (!expect_tile(args[0], s, op, "s")) return {};
  if (s.type.shape[d] != 1) {
    error(args[0], "tile.shape-mismatch",
          name + " expands a " + (rows ? "[R, 1] tile (e.g. a rowsum) over columns" : "[1, C] tile (e.g. a colsum) over rows") +
              "; " + describe(args[0], s) + " is not " + (rows ? "[R, 1]" : "[1, C]"));
    return {};
  }
  Value c = eval(args[1]);
  if (c.is(Value::Kind::None)) return {};
  int64_t n = 0;
  if (c.is(Value::Kind::Const) && c.expr.is_array() && c.expr.size() == 2 && int_literal(c.expr[0]) &&
      int_literal(c.expr[1])) {
    if (*int_literal(c.expr[keep]) != s.type.shape[keep]) {
      error(args[1], "tile.shape-mismatch",
            name + ": the target shape " + c.expr.dump() + " must keep the " + std::to_string(s.type.shape[keep]) +
                (rows ? " rows" : " columns") + " of " + describe(args[0], s));
      return {};
    }
    n = *int_literal(c.expr[d]);
  } else {
    auto i = static_int(args[1], c, name + "'s " + what + " count");
    if (!i) return {};
    n = *i;
  }
  if (n <= 0) {
    error(args[1], "tile.shape-mismatch", name + ": the " + what + " count must be positive");
    return {};
  }
  std::vector<int64_t> shape = s.type.shape;
  shape[d] = n;
  return tile_result(name, call, Type::tile(shape, s.type.dtype), {s.reg}, hint);
}

Value KernelChecker::expand_binary(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                                   const std::string *hint) {
  const bool rows = op.cls == OpClass::RowExpandBinary;
  Value a = eval(args[0]), s = eval(args[1]);
  if (!expect_tile(args[0], a, op, "a") || !expect_tile(args[1], s, op, "s")) return {};
  std::vector<int64_t> want = rows ? std::vector<int64_t>{a.type.shape[0], 1} : std::vector<int64_t>{1, a.type.shape[1]};
  if (s.type.shape != want) {
    error(call, "tile.shape-mismatch",
          std::string(op.name) + " combines a [R, C] tile with a " + (rows ? "[R, 1]" : "[1, C]") + " tile: " +
              describe(args[0], a) + " needs 's' of shape " + shape_str(want) + ", got " + describe(args[1], s));
    return {};
  }
  if (a.type.dtype != s.type.dtype) {
    error(call, "tile.dtype-mismatch",
          std::string(op.name) + ": operand dtypes differ: " + describe(args[0], a) + " and " +
              describe(args[1], s));
    return {};
  }
  return tile_result(std::string(op.name), call, a.type, {a.reg, s.reg}, hint);
}

Value KernelChecker::matmul(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                            const std::string *hint) {
  Value a = eval(args[0]), b = eval(args[1]);
  if (!expect_tile(args[0], a, op, "a") || !expect_tile(args[1], b, op, "b")) return {};
  const auto &sa = a.type.shape, &sb = b.type.shape;
  if (sa[1] != sb[0]) {
    error(call, "tile.shape-mismatch",
          "matmul: inner dimensions differ: " + describe(args[0], a) +
              " is [M, K] with K = " + std::to_string(sa[1]) + " but " + describe(args[1], b) +
              " is [K, N] with K = " + std::to_string(sb[0]));
    return {};
  }
  if (a.type.dtype != b.type.dtype) {
    error(call, "tile.dtype-mismatch",
          "matmul: operand dtypes differ: " + describe(args[0], a) + " and " + describe(args[1], b));
    return {};
  }
  const std::string &dt = a.type.dtype;
  if (!(is_float_dtype(dt) || dt == "i8")) {
    error(call, "tile.dtype-mismatch", "matmul takes f16, bf16, f32 or i8 operands, got " + dt);
    return {};
  }
  Type result = Type::tile({sa[0], sb[1]}, dt == "i8" ? "i32" : "f32");
  // `a = matmul(a, b)`: the product goes to a register of its own, then to a (written in place, the matmul
  // would read an operand it is overwriting).
  if (hint && (*hint == a.reg || *hint == b.reg)) hint = nullptr;
  // The accumulator: `acc=` / third argument, or the target of `acc += matmul(a, b)`.
  std::optional<Value> acc;
  htp::NodeRef acc_node = args[2];
  if (acc_node) {
    acc = eval(acc_node);
  } else if (accumulate_into_) {
    acc = lookup(*accumulate_into_)->value;
    acc_node = call;
  }
  if (acc) {
    if (!expect_tile(acc_node, *acc, op, "acc")) return {};
    if (!(acc->type == result)) {
      error(acc_node, "tile.shape-mismatch",
            "matmul: the accumulator must be " + result.str() + " (the product's shape and dtype), got " +
                describe(acc_node, *acc));
      return {};
    }
    std::string dst = (hint && *hint == acc->reg) ? acc->reg : result_register(hint, result, call);
    if (dst != acc->reg) emit(ojson{{"op", "copy"}, {"dst", dst}, {"args", {acc->reg}}}, call);
    emit(ojson{{"op", "matmul"}, {"dst", dst}, {"args", {a.reg, b.reg}}, {"accumulate", true}}, call);
    return Value{Value::Kind::Tile, result, dst, {}, {}};
  }
  std::string dst = result_register(hint, result, call);
  emit(ojson{{"op", "matmul"}, {"dst", dst}, {"args", {a.reg, b.reg}}, {"accumulate", false}}, call);
  return Value{Value::Kind::Tile, result, dst, {}, {}};
}

Value KernelChecker::cast(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                          const std::string *hint) {
  Value x = eval(args[0]), d = eval(args[1]);
  if (!expect_tile(args[0], x, op, "a")) return {};
  if (!d.is(Value::Kind::DType)) {
    if (!d.is(Value::Kind::None))
      error(args[1], "tile.type-mismatch",
            "cast: 'dtype' must be a dtype (f16, bf16, f32, ...), got " + describe(args[1], d));
    return {};
  }
  return tile_result("cast", call, Type::tile(x.type.shape, d.reg), {x.reg}, hint);
}

std::optional<std::vector<int64_t>> KernelChecker::view_tile_shape(htp::NodeRef at, const Value &view,
                                                                   const std::string &op) {
  const auto &s = view.type.shape;
  if (s.size() == 1) return std::vector<int64_t>{1, s[0]};
  for (size_t d = 0; d + 2 < s.size(); ++d)
    if (s[d] != 1) {
      error(at, "tile.view",
            op + ": tiles are 2-D but this view of '" + view.reg + "' is " + shape_str(s) +
                "; index the leading dims (x[b, r0:r1, c0:c1])");
      return std::nullopt;
    }
  return std::vector<int64_t>{s[s.size() - 2], s[s.size() - 1]};
}

namespace {

const Param *param_named(const std::vector<Param> &params, const std::string &name) {
  for (const auto &p : params)
    if (p.name == name) return &p;
  return nullptr;
}

} // namespace

Value KernelChecker::load(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                          const std::string *hint) {
  Value v = eval(args[0]);
  if (v.is(Value::Kind::None)) return {};
  if (!v.is(Value::Kind::View)) {
    error(args[0], "tile.type-mismatch",
          "load takes a view of a tensor parameter (x, x[r0:r1, c0:c1] or x.tile(i, j, shape=(R, C))), got " +
              describe(args[0], v));
    return {};
  }
  const Param *p = param_named(params_, v.reg);
  if (p && p->dir == "out") {
    error(args[0], "tile.load-from-out",
          "load from '" + v.reg + "', which is an Out parameter of '" + fn_name_ +
              "': declare it InOut[...] to read it");
    return {};
  }
  auto shape = view_tile_shape(args[0], v, "load");
  if (!shape) return {};
  Type t = Type::tile(*shape, v.type.dtype);
  std::string dst = result_register(hint, t, call);
  emit(ojson{{"op", "load"}, {"dst", dst}, {"src", v.reg}, {"offset", v.offset}}, call);
  return Value{Value::Kind::Tile, t, dst, {}, {}};
}

Value KernelChecker::store(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args) {
  Value view = eval(args[0]), value = eval(args[1]);
  if (view.is(Value::Kind::None)) return {};
  if (!view.is(Value::Kind::View)) {
    error(args[0], "tile.type-mismatch",
          "store writes to a view of a tensor parameter (y, y[r0:r1, c0:c1] or y.tile(i, j, shape=(R, C))), "
          "got " +
              describe(args[0], view));
    return {};
  }
  const Param *p = param_named(params_, view.reg);
  if (p && p->dir == "in") {
    error(args[0], "tile.store-to-in",
          "store to '" + view.reg + "', which is an In parameter of '" + fn_name_ +
              "': declare it Out[...] or InOut[...]");
    return {};
  }
  // The body stores to the view: what is wrong with the value is reported once, not again as an Out
  // parameter never written.
  stored_.insert(view.reg);
  flow_.must.insert(view.reg);
  flow_.if_loops.insert(view.reg);
  if (!open_loops_.empty() && !first_loop_store_.count(view.reg))
    first_loop_store_[view.reg] = open_loops_.front();
  if (value.is(Value::Kind::None) || !expect_tile(args[1], value, op, "value")) return {};
  auto shape = view_tile_shape(args[0], view, "store");
  if (!shape) return {};
  if (*shape != value.type.shape) {
    error(call, "tile.shape-mismatch",
          "store: the view of '" + view.reg + "' is " + shape_str(view.type.shape) + " but " +
              describe(args[1], value) + " is " + shape_str(value.type.shape));
    return {};
  }
  if (view.type.dtype != value.type.dtype) {
    error(call, "tile.dtype-mismatch",
          "store: '" + view.reg + "' holds " + view.type.dtype + " but " + describe(args[1], value) + " is " +
              value.type.dtype + "; convert it with cast(" +
              (args[1].is("Name") ? args[1].text("id").value_or("x") : std::string("x")) + ", " +
              view.type.dtype + ")");
    return {};
  }
  emit(ojson{{"op", "store"}, {"dst", view.reg}, {"offset", view.offset}, {"value", value.reg}}, call);
  return {};
}

std::optional<std::vector<int64_t>> KernelChecker::static_shape(htp::NodeRef at, const Value &v,
                                                                 const std::string &what) {
  bool valid = v.is(Value::Kind::Const) && v.expr.is_array() && v.expr.size() == 2;
  std::vector<int64_t> dims;
  for (size_t i = 0; valid && i < 2; ++i) {
    auto d = int_literal(v.expr[i]);
    valid = d && *d > 0;
    if (valid) dims.push_back(*d);
  }
  if (!valid) {
    error(at, "tile.static", what + " must be a tuple (R, C) of positive compile-time integers, got " + describe(at, v));
    return std::nullopt;
  }
  return dims;
}

std::optional<std::string> KernelChecker::dtype_argument(htp::NodeRef at, const std::string &what) {
  if (!at) return std::string("f32");
  Value d = eval(at);
  if (d.is(Value::Kind::DType)) return d.reg;
  if (!d.is(Value::Kind::None))
    error(at, "tile.type-mismatch", what + " must be a dtype (f16, bf16, f32, ...), got " + describe(at, d));
  return std::nullopt;
}

Value KernelChecker::full(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                          const std::string *hint) {
  Value shape = eval(args[0]), value = eval(args[1]);
  if (shape.is(Value::Kind::None) || value.is(Value::Kind::None)) return {};
  auto dims = static_shape(args[0], shape, std::string(op.name) + ": 'shape'");
  if (!dims) return {};
  auto e = scalar_operand(args[1], value, std::string(op.name) + ": 'value'");
  if (!e) return {};
  auto dtype = dtype_argument(args[2], std::string(op.name) + ": 'dtype'");
  if (!dtype) return {};
  // An integer tile holds the value as it is: a fraction or a constant outside the dtype's range would be
  // truncated or wrapped silently (full((4, 32), 300, dtype=i8) filled 44).
  if (!is_float_dtype(*dtype)) {
    if ((e->is_number_float() && e->get<double>() != std::floor(e->get<double>())) ||
        (value.is(Value::Kind::Scalar) && is_float_dtype(value.type.dtype))) {
      error(args[1], "tile.dtype-mismatch",
            std::string(op.name) + ": a floating-point value for the integer tile " + *dtype + "; use an integer, or a "
            "float dtype and cast");
      return {};
    }
    auto r = htp::narrow_integer_range(*dtype);
    if (r && e->is_number() && (e->get<double>() < double(r->first) || e->get<double>() > double(r->second))) {
      error(args[1], "tile.value-range",
            std::string(op.name) + ": " + e->dump() + " is outside the range of " + *dtype + " [" +
                std::to_string(r->first) + ", " + std::to_string(r->second) + "]");
      return {};
    }
  }
  Type t = Type::tile(*dims, *dtype);
  std::string dst = result_register(hint, t, call);
  emit(ojson{{"op", "full"}, {"dst", dst}, {"value", *e}}, call);
  return Value{Value::Kind::Tile, t, dst, {}, {}};
}

Value KernelChecker::alloc(const Intrinsic &op, htp::NodeRef call, const std::vector<htp::NodeRef> &args,
                           const std::string *hint) {
  Value shape = eval(args[0]);
  if (shape.is(Value::Kind::None)) return {};
  auto dims = static_shape(args[0], shape, std::string(op.name) + ": 'shape'");
  if (!dims) return {};
  auto dtype = dtype_argument(args[1], std::string(op.name) + ": 'dtype'");
  if (!dtype) return {};
  Type t = Type::tile(*dims, *dtype);
  std::string dst = result_register(hint, t, call);
  emit(ojson{{"op", std::string(op.name)}, {"dst", dst}}, call);
  return Value{Value::Kind::Tile, t, dst, {}, {}};
}

} // namespace tile
