// Statements of tile bodies: assignments, `for ... in range(...)`, `if`, `return`, expression statements,
// and the Out discipline (every Out parameter written on every path).
#include "kernel_checker.hpp"

#include <map>

namespace tile {

namespace {

const char *unsupported_statement_text(std::string_view type) {
  if (type == "While") return "'while' loops are not supported in tile bodies: use 'for ... in range(...)'";
  if (type == "Try" || type == "TryStar")
    return "'try' is not supported in tile bodies (kernels cannot raise)";
  if (type == "With" || type == "AsyncWith") return "'with' is not supported in tile bodies";
  if (type == "FunctionDef" || type == "AsyncFunctionDef")
    return "nested functions are not supported in tile bodies: define a separate kernel";
  if (type == "ClassDef") return "classes are not supported in tile bodies";
  if (type == "Import" || type == "ImportFrom")
    return "imports are not supported in tile bodies: import at module level";
  if (type == "Global" || type == "Nonlocal") return "'global' / 'nonlocal' are not supported in tile bodies";
  if (type == "Delete") return "'del' is not supported in tile bodies";
  if (type == "Raise") return "'raise' is not supported in tile bodies (kernels cannot raise)";
  if (type == "Assert") return "'assert' is not supported in tile bodies";
  if (type == "Match") return "'match' is not supported in tile bodies: use 'if'";
  if (type == "Break" || type == "Continue")
    return "'break' / 'continue' are not supported in tile bodies: loops run their whole range";
  if (type == "AsyncFor") return "'async for' is not supported in tile bodies";
  return nullptr;
}

struct AugOp {
  std::string_view py, symbol, intrinsic, scalar_op;
};
constexpr AugOp kAugOps[] = {{"Add", "+=", "add", "add"},         {"Sub", "-=", "sub", "sub"},
                             {"Mult", "*=", "mul", "mul"},        {"Div", "/=", "div", ""},
                             {"FloorDiv", "//=", "", "floordiv"}, {"Mod", "%=", "", "mod"}};

const AugOp *aug_op(std::string_view py) {
  for (const auto &a : kAugOps)
    if (a.py == py) return &a;
  return nullptr;
}

} // namespace

void KernelChecker::count_assignments() {
  for (auto stmt : f_.fn.items("body"))
    stmt.walk([&](htp::NodeRef n) {
      if (n.is("Name") && n.child("ctx").is("Store")) ++assign_count_[n.text("id").value_or("")];
      if (n.is("AugAssign") && n.child("target").is("Name"))
        ++assign_count_[n.child("target").text("id").value_or("")];
    });
}

void KernelChecker::block(htp::NodeRef owner, const char *field) {
  for (auto s : owner.items(field)) {
    if (flow_.returned) {
      warning(s, "tile.unreachable", "statement after 'return' is never executed");
      return;
    }
    statement(s);
  }
}

void KernelChecker::statement(htp::NodeRef s) {
  std::string_view type = s.type();
  if (type == "Assign") {
    auto targets = s.items("targets");
    if (targets.size() != 1 || !targets[0].is("Name")) {
      auto t = targets.empty() ? s : targets[0];
      if (t.is("Subscript"))
        error(t, "tile.unsupported",
              "assigning to a tensor view is not supported: write store(" + t.child("value").dotted_name() +
                  "[...], value)");
      else
        error(t, "tile.unsupported",
              "only single-name assignments are supported in tile bodies ('a = ...'), not tuple or chained "
              "targets");
      return;
    }
    assign(targets[0].text("id").value_or(""), s.child("value"), targets[0]);
  } else if (type == "AnnAssign") {
    ann_assign(s);
  } else if (type == "AugAssign") {
    aug_assign(s);
  } else if (type == "For") {
    for_loop(s);
  } else if (type == "If") {
    if_stmt(s);
  } else if (type == "Return") {
    return_stmt(s);
  } else if (type == "Expr") {
    expression_statement(s);
  } else if (type == "Pass") {
  } else {
    unsupported_statement(s);
  }
}

void KernelChecker::unsupported_statement(htp::NodeRef s) {
  const char *text = unsupported_statement_text(s.type());
  error(s, "tile.unsupported",
        text ? std::string(text)
             : "'" + std::string(s.type()) + "' statements are not supported in tile bodies");
}

void KernelChecker::assign(const std::string &name, htp::NodeRef value, htp::NodeRef at) {
  flow_.defined.insert(name);
  const Binding *b = lookup(name);
  if (b && (b->kind == Binding::Kind::Param || b->kind == Binding::Kind::LoopVar)) {
    error(at, "tile.assign",
          "cannot assign to '" + name + "', which is " + binding_kind_text(*b) + " of '" + fn_name_ + "'");
    eval(value);
    return;
  }
  Value v = eval(value, &name);
  bind_value(name, v, at);
  if (const Binding *bound = lookup(name)) record(at, bound->value); // the target: the type it now holds
}

void KernelChecker::bind_value(const std::string &name, const Value &v, htp::NodeRef at) {
  const Binding *b = lookup(name);
  auto retype = [&](const std::string &what) {
    error(at, "tile.retype",
          "'" + name + "' is " + binding_kind_text(*b) + " (line " + std::to_string(b->def.span().line) +
              ") and cannot also hold " + what + ": use a new name");
  };
  switch (v.kind) {
  case Value::Kind::None:
    if (b == nullptr) // keep later uses quiet: the failure is reported
      env_[name] = Binding{Binding::Kind::Opaque, Value{}, at};
    return;
  case Value::Kind::Tile:
    if (v.reg == name) return; // the intrinsic wrote `name` itself
    if (b && b->kind != Binding::Kind::TileReg) return retype("a tile (" + v.type.str() + ")");
    if (b && !(b->value.type == v.type)) return retype("a " + v.type.str());
    declare_tile(name, v.type, at);
    env_[name] =
        Binding{Binding::Kind::TileReg, Value{Value::Kind::Tile, v.type, name, {}, {}}, b ? b->def : at};
    emit(ojson{{"op", "copy"}, {"dst", name}, {"args", {v.reg}}}, at);
    return;
  case Value::Kind::View:
    if (b && b->kind != Binding::Kind::ViewAlias) return retype("a tensor view");
    env_[name] = Binding{Binding::Kind::ViewAlias, v, at};
    return;
  case Value::Kind::Const:
    if (!b && assign_count_[name] <= 1) {
      env_[name] = Binding{Binding::Kind::ConstLocal, v, at};
      return;
    }
    [[fallthrough]];
  case Value::Kind::Scalar: {
    if (b && b->kind != Binding::Kind::ScalarReg) return retype("a scalar");
    std::string dtype = v.is(Value::Kind::Scalar)  ? v.type.dtype
                        : v.expr.is_number_float() ? "f32"
                        : v.expr.is_boolean()      ? "i8"
                                                   : "i64";
    if (b && b->value.type.dtype != dtype && !(is_float_dtype(dtype) == is_float_dtype(b->value.type.dtype)))
      return retype("a " + Type::scalar(dtype).str());
    std::string reg_dtype = b ? b->value.type.dtype : dtype;
    declare_scalar(name, reg_dtype, at);
    emit(ojson{{"op", "scalar"}, {"dst", name}, {"value", v.expr}}, at);
    if (!b) env_[name] = Binding{Binding::Kind::ScalarReg, scalar_value(var_expr(name), reg_dtype), at};
    return;
  }
  case Value::Kind::DType:
    error(at, "tile.unsupported",
          "a dtype cannot be stored in a variable; pass it to cast(...) or full(...)");
    return;
  case Value::Kind::Opaque: env_[name] = Binding{Binding::Kind::Opaque, v, at}; return;
  }
}

void KernelChecker::ann_assign(htp::NodeRef s) {
  auto target = s.child("target");
  if (!target.is("Name") || !s.child("value")) {
    error(s, "tile.unsupported",
          "annotated assignments in tile bodies are 'name: Tile[R, C, dtype] = value'");
    return;
  }
  std::string name = target.text("id").value_or("");
  std::string dir;
  bool recognised = true;
  recording_ = false;
  auto declared = read_type(s.child("annotation"), dir, recognised);
  recording_ = options_.record_types;
  if (!recognised)
    error(s.child("annotation"), "tile.unsupported", "unknown type annotation for '" + name + "'");
  assign(name, s.child("value"), target);
  const Binding *b = lookup(name);
  if (declared && b && b->value.kind != Value::Kind::None && b->value.kind != Value::Kind::Opaque) {
    bool same = declared->is(Type::Kind::Scalar) ? b->value.scalar_like() : b->value.type == *declared;
    if (!same)
      error(s.child("annotation"), "tile.type-mismatch",
            "'" + name + "' is declared " + declared->str() + " but its value is " + b->value.type.str());
  }
}

void KernelChecker::aug_assign(htp::NodeRef s) {
  auto target = s.child("target");
  if (!target.is("Name")) {
    error(s, "tile.unsupported", "augmented assignment needs a name target ('acc += ...')");
    return;
  }
  std::string name = target.text("id").value_or("");
  const Binding *b = lookup(name);
  auto value = s.child("value");
  std::string_view op = s.child("op").type();
  if (b && b->kind == Binding::Kind::TileReg) {
    // `acc += matmul(a, b)`: the accumulating matmul (no separate add).
    auto callee = intrinsic_call(value, bound_, globals_, call_rules());
    if (op == "Add" && callee && callee->op == "matmul") {
      accumulate_into_ = name;
      Value v = eval(value, &name);
      accumulate_into_.reset();
      // (`acc += matmul(acc, b)`: the product accumulated in a register of its own, acc being an operand,
      // then copied to acc)
      if (v.is(Value::Kind::Tile) && v.reg != name) bind_value(name, v, s);
      return;
    }
    const AugOp *info = aug_op(op);
    std::string symbol = info ? std::string(info->symbol) : "op=";
    std::string intr = info && !info->intrinsic.empty() ? std::string(info->intrinsic) : "<intrinsic>";
    error(s, "tile.operator",
          "operator '" + symbol + "' does not apply to tiles: write '" + name + " = " + intr + "(" + name +
              ", ...)'");
    return;
  }
  if (b && b->kind != Binding::Kind::ScalarReg) { // (a name updated later is never a ConstLocal)
    error(target, "tile.assign", "cannot update '" + name + "', which is " + binding_kind_text(*b));
    return;
  }
  if (!b) {
    error(target, "tile.unknown-name", "'" + name + "' is used before it is assigned");
    return;
  }
  // scalar: name = name <op> value (BinOp semantics), evaluated by building the expression.
  Value rhs = eval(value);
  if (rhs.is(Value::Kind::None)) return;
  const AugOp *info = aug_op(op);
  if (!info || info->scalar_op.empty()) {
    error(s, "tile.unsupported",
          "operator '" + (info ? std::string(info->symbol) : std::string(op)) +
              "' is not supported on scalars");
    return;
  }
  auto r = scalar_operand(value, rhs, "the right-hand side of '" + std::string(info->symbol) + "'");
  if (!r) return;
  bind_value(
      name,
      scalar_value(make_op(std::string(info->scalar_op), {b->value.expr, *r}), scalar_dtype(b->value, rhs)),
      target);
}

void KernelChecker::for_loop(htp::NodeRef s) {
  auto target = s.child("target");
  auto iter = s.child("iter");
  if (s.size("orelse")) {
    error(s.item("orelse", 0), "tile.unsupported", "'for ... else' is not supported in tile bodies");
    return;
  }
  if (!target.is("Name")) {
    error(target, "tile.unsupported", "the loop variable must be a single name");
    return;
  }
  if (!iter.is("Call") || iter.child("func").dotted_name() != "range" || bound_.count("range")) {
    error(iter, "tile.unsupported",
          "tile loops iterate over range(start, stop, step) with scalar bounds, not '" +
              std::string(iter.is("Call") ? iter.child("func").dotted_name() : std::string(iter.type())) +
              "'");
    return;
  }
  auto args = iter.items("args");
  if (args.empty() || args.size() > 3 || iter.size("keywords")) {
    error(iter, "tile.arity", "range() takes 1 to 3 positional arguments");
    return;
  }
  std::vector<Expr> bounds; // start, stop, step
  for (auto a : args) {
    Value v = eval(a);
    auto e = index_operand(a, v, "a range() bound");
    if (!e) return;
    bounds.push_back(*e);
  }
  if (bounds.size() == 1) bounds.insert(bounds.begin(), Expr(0));
  if (bounds.size() == 2) bounds.push_back(Expr(1));
  auto step = int_literal(bounds[2]);
  if (step == std::optional<int64_t>(0)) {
    error(args.back(), "tile.range", "range() step must not be zero");
    return;
  }
  std::string var = target.text("id").value_or("");
  const Binding *prev = lookup(var);
  if (prev && prev->kind != Binding::Kind::LoopVar) {
    error(target, "tile.retype", "loop variable '" + var + "' is already " + binding_kind_text(*prev));
    return;
  }
  // The static trip count and the variable's range, when the bounds are known.
  std::optional<int64_t> trips;
  auto lo = int_literal(bounds[0]), hi = int_literal(bounds[1]);
  if (lo && hi && step) {
    // In 128 bits: bounds near the int64 limits must not overflow.
    __int128 a = *lo, b = *hi, st = *step;
    __int128 n = st > 0 ? (b - a + st - 1) / st : (a - b - st - 1) / -st;
    trips = static_cast<int64_t>(std::max<__int128>(0, std::min<__int128>(n, INT64_MAX)));
    if (*trips > 0) {
      int64_t last = static_cast<int64_t>(a + (static_cast<__int128>(*trips) - 1) * st);
      ranges_[var] = htp::Interval{std::min(*lo, last), std::max(*lo, last)};
    }
  } else if (step && *step > 0) {
    auto rlo = htp::expr_range(bounds[0], ranges_).interval, rhi = htp::expr_range(bounds[1], ranges_).interval;
    if (rlo && rhi && rhi->hi > INT64_MIN) ranges_[var] = htp::Interval{rlo->lo, rhi->hi - 1};
  }
  if (trips == std::optional<int64_t>(0)) warning(iter, "tile.empty-loop", "this loop runs zero times");
  env_[var] = Binding{Binding::Kind::LoopVar, scalar_value(var_expr(var), "i64"), target};
  record(target, env_[var].value);
  ojson &op = emit(ojson{{"op", "for"},
                         {"var", var},
                         {"start", bounds[0]},
                         {"stop", bounds[1]},
                         {"step", bounds[2]},
                         {"body", ojson::array()}},
                   s);
  ojson *body = &op["body"];
  Flow before = flow_;
  const auto stored_before = stored_;
  bool maybe_empty = !trips || *trips == 0;
  if (maybe_empty) open_loops_.push_back(s);
  blocks_.push_back(body);
  ++loop_depth_;
  block(s, "body");
  --loop_depth_;
  blocks_.pop_back();
  if (maybe_empty) {
    open_loops_.pop_back();
    if (trips) {
      stored_ = stored_before;  // zero iterations, surely (tile.empty-loop): its stores write nothing
    } else {
      before.if_loops = flow_.returned ? before.if_loops : flow_.if_loops;
    }
    flow_ = before; // zero iterations are possible: only what held before is certain
  }
  ranges_.erase(var);
  env_.erase(var); // the variable is not used after its loop in tile bodies
  ended_loops_[var] = s.span().line;
}

namespace {

/// Narrows `ranges` by `cond` holding (`taken`) or not, where it compares a loop variable with an integer
/// constant (or combines such comparisons with and / or); false when no value in the ranges satisfies it
/// (`ranges` then unchanged).
bool narrow(const nlohmann::ordered_json &cond, bool taken, VarRanges &ranges) {
  if (!cond.is_object() || !cond.contains("op") || !cond.contains("args") || cond["args"].size() != 2) return true;
  std::string op = cond["op"].get<std::string>();
  const auto &args = cond["args"];
  if (op == "and" || op == "or") {
    if ((op == "and") == taken) {  // both sides hold (and) / neither does (not or)
      VarRanges both = ranges;
      if (!narrow(args[0], taken, both) || !narrow(args[1], taken, both)) return false;
      ranges = std::move(both);
      return true;
    }
    // One side or the other: each narrowed alone, then the hull of those that some value satisfies.
    VarRanges a = ranges, b = ranges;
    const bool fa = narrow(args[0], taken, a), fb = narrow(args[1], taken, b);
    if (!fa && !fb) return false;
    if (!fa || !fb) {
      ranges = fa ? std::move(a) : std::move(b);
      return true;
    }
    for (auto &[var, r] : ranges)
      if (a.count(var) && b.count(var)) r = {std::min(a[var].lo, b[var].lo), std::max(a[var].hi, b[var].hi)};
    return true;
  }
  const nlohmann::ordered_json *var = &args[0], *constant = &args[1];
  static const std::map<std::string, std::string> mirrored = {{"lt", "gt"}, {"gt", "lt"}, {"le", "ge"}, {"ge", "le"},
                                                              {"eq", "eq"}, {"ne", "ne"}};
  if (!mirrored.count(op)) return true;
  if (constant->is_object() && var->is_number_integer()) {  // `0 < i`
    std::swap(var, constant);
    op = mirrored.at(op);
  }
  // `i % m == c` / `!=` with a constant m > 0: the residue the loop variable takes (or does not).
  int64_t modulus = 0;
  if (var->is_object() && var->value("op", "") == "mod" && var->contains("args") && (*var)["args"].size() == 2 &&
      (*var)["args"][1].is_number_integer() && (*var)["args"][1].get<int64_t>() > 0 && (op == "eq" || op == "ne")) {
    modulus = (*var)["args"][1].get<int64_t>();
    var = &(*var)["args"][0];
  }
  if (!var->is_object() || !var->contains("var") || !(*var)["var"].is_string() || !constant->is_number_integer())
    return true;
  auto it = ranges.find((*var)["var"].get<std::string>());
  if (it == ranges.end()) return true;
  if (!taken) {
    static const std::map<std::string, std::string> negated = {{"lt", "ge"}, {"ge", "lt"}, {"gt", "le"},
                                                               {"le", "gt"}, {"eq", "ne"}, {"ne", "eq"}};
    op = negated.at(op);
  }
  const int64_t c = constant->get<int64_t>();
  htp::Interval r = it->second;
  if (modulus > 0) {
    // Python's %: the residue of x is in [0, m). Only the ends move (the range holds no stride): to the first
    // and last values of the residue (==), or off an end that has it (!=).
    auto residue = [&](__int128 x) { return static_cast<int64_t>((x % modulus + modulus) % modulus); };
    if (op == "eq") {
      if (c < 0 || c >= modulus) return false;
      const __int128 lo = __int128{r.lo} + residue(__int128{c} - r.lo), hi = __int128{r.hi} - residue(__int128{r.hi} - c);
      if (lo > hi) return false;
      r = {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
    } else {
      if (residue(r.lo) == c) {
        if (r.lo == r.hi) return false;
        ++r.lo;
      }
      if (residue(r.hi) == c) --r.hi;  // (r.lo < r.hi here, or r.lo's residue is not c)
      if (r.lo > r.hi) return false;
    }
    it->second = r;
    return true;
  }
  if (op == "eq") r = {std::max(r.lo, c), std::min(r.hi, c)};
  else if (op == "ne" && r.lo == c) r.lo = c == INT64_MAX ? c : c + 1;
  else if (op == "ne" && r.hi == c) r.hi = c == INT64_MIN ? c : c - 1;
  else if (op == "lt") r.hi = std::min(r.hi, c == INT64_MIN ? c : c - 1);
  else if (op == "le") r.hi = std::min(r.hi, c);
  else if (op == "gt") r.lo = std::max(r.lo, c == INT64_MAX ? c : c + 1);
  else if (op == "ge") r.lo = std::max(r.lo, c);
  if (r.lo > r.hi) return false;
  it->second = r;
  return true;
}

}  // namespace

void KernelChecker::narrow_ranges(const ojson &cond, bool taken) { narrow(cond, taken, ranges_); }

void KernelChecker::if_stmt(htp::NodeRef s) {
  auto test = s.child("test");
  Value c = eval(test);
  if (c.is(Value::Kind::None)) return;
  auto cond = scalar_operand(test, c, "an if condition");
  if (!cond) return;
  if (is_literal(*cond)) {
    // A compile-time condition selects its branch (like `if constexpr`): only that one is typed.
    bool taken = cond->is_boolean() ? cond->get<bool>() : cond->get<double>() != 0.0;
    block(s, taken ? "body" : "orelse");
    return;
  }
  ojson &op =
      emit(ojson{{"op", "if"}, {"cond", *cond}, {"then", ojson::array()}, {"else", ojson::array()}}, s);
  ojson *then_body = &op["then"];
  ojson *else_body = &op["else"];
  Flow before = flow_;
  const VarRanges ranges_before = ranges_;
  // Each branch sees its loop variable's range narrowed by a comparison with a constant (`if i == 0: ... else:
  // load(Y.tile(i - 1, ...))` reads row tile -1 in no iteration).
  narrow_ranges(*cond, true);
  blocks_.push_back(then_body);
  block(s, "body");
  blocks_.pop_back();
  ranges_ = ranges_before;
  Flow after_then = flow_;
  flow_ = before;
  narrow_ranges(*cond, false);
  blocks_.push_back(else_body);
  block(s, "orelse");
  blocks_.pop_back();
  ranges_ = ranges_before;
  Flow after_else = flow_;
  auto meet = [](const Flow &a, const Flow &b) {
    if (a.returned) return b;
    if (b.returned) return a;
    Flow m;
    for (const auto &x : a.must)
      if (b.must.count(x)) m.must.insert(x);
    for (const auto &x : a.if_loops)
      if (b.if_loops.count(x)) m.if_loops.insert(x);
    for (const auto &x : a.defined)
      if (b.defined.count(x)) m.defined.insert(x);
    return m;
  };
  flow_ = meet(after_then, after_else);
  flow_.returned = after_then.returned && after_else.returned;
}

void KernelChecker::return_stmt(htp::NodeRef s) {
  auto v = s.child("value");
  if (v && !(v.is("Constant") && v.constant() && v.constant()->kind == HTP_CONST_NONE)) {
    error(v, "tile.return-value",
          "tile bodies return nothing: write results to Out parameters with store(out, tile)");
    return;
  }
  if (loop_depth_ > 0) {
    error(s, "tile.return-in-loop",
          "an early 'return' inside a loop is not lowered: guard the rest of the loop body with an 'if' and let the "
          "loop end, or move the condition to the caller");
    return;
  }
  // Checked at the end of the body, once every store of the function is known.
  pending_returns_.push_back(
      {flow_, s, blocks_.size() > 1 ? " before the 'return' at line " + std::to_string(s.span().line) : ""});
  flow_.returned = true;
  // A marker where the return is: the statements after the `if` around it move into the branches that do not
  // return (without_returns, once the body is complete).
  emit(ojson{{"op", "return"}}, s);
}

void KernelChecker::expression_statement(htp::NodeRef s) {
  auto v = s.child("value");
  if (v.is("Constant")) return; // docstrings, `...`
  Value r = eval(v);
  if (r.is(Value::Kind::Tile))
    warning(v, "tile.unused-result", "the result of this call is not used: assign it to a name");
}

void KernelChecker::report_unwritten_outs() {
  if (f_.kind != "kernel") return;
  for (const auto &p : params_)
    if (p.dir == "out" && !stored_.count(p.name))
      error(p.node, "tile.out-not-written",
            "Out parameter '" + p.name + "' of kernel '" + fn_name_ +
                "' is never written: store a tile to it with "
                "store(" +
                p.name + ", ...)");
}

void KernelChecker::check_outs_written(const Flow &flow, htp::NodeRef at, const std::string &where) {
  if (f_.kind != "kernel") return; // processes of other dialects may write their outputs elsewhere
  for (const auto &p : params_) {
    if (p.dir != "out") continue;
    std::string head = "Out parameter '" + p.name + "' of kernel '" + fn_name_ + "'";
    if (!stored_.count(p.name) || flow.must.count(p.name)) continue; // never written: reported once by run()
    if (flow.if_loops.count(p.name)) {
      auto loop = first_loop_store_.count(p.name) ? first_loop_store_[p.name] : at;
      warning(p.node, "tile.out-maybe-unwritten",
              head + " is written only inside a loop whose trip count is not known statically (line " +
                  std::to_string(loop.span().line) + ")" + where +
                  "; it stays unwritten if that loop runs zero times");
      continue;
    }
    error(p.node, "tile.out-not-written",
          head + " is not written on every path" +
              (where.empty() ? std::string(" through the kernel") : where) +
              ": some branch of an 'if' does not store it (each 'if' counts as possibly not taken, even one a loop "
              "variable makes true in some iteration, such as 'if k == 0:'; store it in every branch, or outside "
              "the 'if')");
  }
}

} // namespace tile
