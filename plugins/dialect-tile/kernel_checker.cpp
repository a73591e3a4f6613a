// The kernel checker's driver: parameters and their annotations (the signature), bindings and registers.
#include "kernel_checker.hpp"

#include <algorithm>

namespace tile {

namespace {

bool has_return(const ojson &ops);

/// Whether statement `op` is a return marker or holds one.
bool returns(const ojson &op) {
  if (op.value("op", "") == "return") return true;
  for (const char *key : {"body", "then", "else"})
    if (op.contains(key) && has_return(op[key])) return true;
  return false;
}

/// Whether statements `ops` (or those nested in them) hold a return marker.
bool has_return(const ojson &ops) {
  return std::any_of(ops.begin(), ops.end(), returns);
}

/// Statements `ops` followed by `rest`, each `return` ending its path: the statements after an `if` that
/// returns on some path run in its branches, where no return came before them. (Returns inside loops are
/// refused where they are written.)
ojson without_returns(const ojson &ops, const ojson &rest) {
  ojson out = ojson::array();
  for (size_t i = 0; i < ops.size(); ++i) {
    const ojson &op = ops[i];
    const std::string name = op.value("op", "");
    if (name == "return") return out;
    if (name == "if" && returns(op)) {
      ojson after = ojson::array();
      for (size_t j = i + 1; j < ops.size(); ++j) after.push_back(ops[j]);
      for (const ojson &r : rest) after.push_back(r);
      ojson branch = op;
      branch["then"] = without_returns(op["then"], after);
      branch["else"] = without_returns(op["else"], after);
      out.push_back(std::move(branch));
      return out;
    }
    out.push_back(op);
  }
  for (const ojson &r : rest) out.push_back(r);
  return out;
}

}  // namespace

CheckResult check_tile_function(htp::PassContext &ctx, const TileFunction &f, const CheckOptions &options) {
  return KernelChecker(ctx, f, options).run();
}

KernelChecker::KernelChecker(htp::PassContext &ctx, const TileFunction &f, const CheckOptions &options)
    : ctx_(ctx), f_(f), options_(options) {
  fn_name_ = f.fn.text("name").value_or("?");
  globals_ = captured_globals(ctx.module());
  bound_ = bound_names(f.fn);
  for (auto stmt : ctx.module().root().items("body"))
    if (stmt.is("FunctionDef") || stmt.is("AsyncFunctionDef") || stmt.is("ClassDef"))
      module_functions_.insert(stmt.text("name").value_or(""));
  recording_ = options.record_types;
  blocks_.push_back(&body_);
}

CheckResult KernelChecker::run() {
  read_signature();
  count_assignments();
  block(f_.fn, "body");
  // (after an error the body was not all read — an unsupported loop form is not entered — so whether an Out
  // parameter is written is not known: no "never written" that only follows from the first error)
  if (result_.ok) {
    report_unwritten_outs();
    for (const auto &r : pending_returns_)
      check_outs_written(r.flow, r.at, r.where);
    if (!flow_.returned) check_outs_written(flow_, f_.fn, "");
  }
  result_.signature = ojson::object();
  result_.signature["name"] = fn_name_;
  result_.signature["kind"] = f_.kind;
  result_.signature["mapping"] = read_mapping();
  result_.signature["params"] = params_json();
  ojson k;
  k["name"] = fn_name_;
  k["kind"] = f_.kind;
  k["span"] = span_json(f_.fn);
  k["mapping"] = result_.signature["mapping"];
  k["params"] = result_.signature["params"];
  k["locals"] = locals_;
  k["body"] = has_return(body_) ? without_returns(body_, ojson::array()) : body_;
  result_.kernel = std::move(k);
  return std::move(result_);
}

// ---- diagnostics

void KernelChecker::error(htp::NodeRef at, const std::string &code, const std::string &message) {
  result_.ok = false;
  ctx_.error(at, code, message);
}

void KernelChecker::warning(htp::NodeRef at, const std::string &code, const std::string &message) {
  if (options_.warnings) ctx_.warning(at, code, message);
}

// ---- signature

void KernelChecker::read_signature() {
  auto args = f_.fn.child("args");
  for (const char *field : {"vararg", "kwarg"})
    if (auto a = args.child(field))
      error(a, "tile.param",
            "'" + fn_name_ + "' has *" + std::string(field == std::string("kwarg") ? "*" : "") +
                a.text("arg").value_or("") + ": tile bodies take a fixed list of parameters");
  std::vector<htp::NodeRef> positional = args.items("posonlyargs");
  for (auto a : args.items("args"))
    positional.push_back(a);
  auto defaults = args.items("defaults");
  size_t first_default = positional.size() - std::min(positional.size(), defaults.size());
  std::vector<std::pair<htp::NodeRef, htp::NodeRef>> all;
  for (size_t i = 0; i < positional.size(); ++i)
    all.emplace_back(positional[i], i >= first_default ? defaults[i - first_default] : htp::NodeRef());
  auto kwonly = args.items("kwonlyargs");
  for (size_t i = 0; i < kwonly.size(); ++i)
    all.emplace_back(kwonly[i], args.item("kw_defaults", i));
  for (auto [arg, def] : all) {
    std::string name = arg.text("arg").value_or("");
    auto p = read_param(arg, def);
    if (!p) {
      env_[name] = Binding{Binding::Kind::Opaque, Value{Value::Kind::Opaque, {}, name, {}, {}}, arg};
      continue;
    }
    Value v;
    switch (p->type.kind) {
    case Type::Kind::Tensor:
      v = Value{Value::Kind::View,
                Type::tensor(p->local_shape, p->type.dtype),
                name,
                {},
                std::vector<Expr>(p->local_shape.size(), Expr(0))};
      break;
    case Type::Kind::Tile:
      v = Value{Value::Kind::Tile, p->type, name, {}, {}};
      declare_tile(name, p->type, arg);
      break;
    case Type::Kind::Scalar: v = scalar_value(param_expr(name), p->type.dtype); break;
    case Type::Kind::Constexpr:
      v = p->type.value.is_null() ? scalar_value(param_expr(name), "i64")
                                  : Value{Value::Kind::Const, p->type, "", Expr(p->type.value), {}};
      break;
    case Type::Kind::None: break;
    }
    env_[name] = Binding{Binding::Kind::Param, v, arg};
    params_.push_back(std::move(*p));
  }
}

std::optional<Param> KernelChecker::read_param(htp::NodeRef arg, htp::NodeRef default_value) {
  std::string name = arg.text("arg").value_or("");
  auto ann = arg.child("annotation");
  if (!ann) {
    // Parameters of other dialects' functions (channels, ...) are theirs; a kernel's must be typed.
    if (f_.kind == "kernel")
      error(arg, "tile.untyped-param",
            "parameter '" + name + "' of kernel '" + fn_name_ +
                "' has no type: annotate it, e.g. In[Tensor[128, 256, f32]], Out[...], Scalar[i32] or "
                "Constexpr");
    return std::nullopt;
  }
  std::string dir = "in";
  bool recognised = true;
  recording_ = false;
  auto type = read_type(ann, dir, recognised);
  recording_ = options_.record_types;
  if (!recognised) {
    if (f_.kind == "kernel")
      error(ann, "tile.param-type",
            "parameter '" + name + "' of kernel '" + fn_name_ +
                "': unknown type annotation; kernel parameters are In/Out/InOut[Tensor[...]], Tensor[...], "
                "Tile[R, C, dtype], Scalar[dtype] (or int, float, bool) or Constexpr");
    return std::nullopt;
  }
  if (!type) return std::nullopt; // reported
  if (type->is(Type::Kind::Constexpr) && default_value) {
    recording_ = false;
    Value d = eval(default_value);
    recording_ = options_.record_types;
    std::string declared = ann.is("Subscript") ? ann.child("slice").dotted_name() : "";
    bool fits = declared.empty() || (declared == "int" && d.expr.is_number_integer()) ||
                (declared == "float" && d.expr.is_number()) || (declared == "bool" && d.expr.is_boolean());
    if (!d.is(Value::Kind::Const))
      error(default_value, "tile.constexpr",
            "the default of Constexpr parameter '" + name + "' must be a compile-time constant");
    else if (!fits)
      error(default_value, "tile.constexpr",
            "Constexpr parameter '" + name + "' is declared Constexpr[" + declared + "] but its default is " +
                d.expr.dump());
    else
      type->value = d.expr;
  }
  if (dir != "in" && !type->is(Type::Kind::Tensor)) {
    error(ann, "tile.param-dir",
          "parameter '" + name + "': only tensors can be " + (dir == "out" ? "Out" : "InOut") + ", not " +
              type->str());
    dir = "in";
  }
  Param p{name, dir, *type, {}, arg};
  if (type->is(Type::Kind::Tensor)) p.local_shape = local_shape_of(p, ann);
  return p;
}

namespace {

/// The Subscript's elements: `X[a, b]` -> {a, b}; `X[a]` -> {a}.
std::vector<htp::NodeRef> subscript_elements(htp::NodeRef sub) {
  auto slice = sub.child("slice");
  if (slice.is("Tuple")) return slice.items("elts");
  return {slice};
}

std::string head_name(htp::NodeRef n) {
  return std::string(last_component(n.dotted_name()));
}

} // namespace

std::optional<Type> KernelChecker::read_type(htp::NodeRef ann, std::string &dir, bool &recognised) {
  if (ann.is("BinOp") && ann.child("op").is("MatMult")) return read_type(ann.child("left"), dir, recognised);
  std::string head = head_name(ann.is("Subscript") ? ann.child("value") : ann);
  if (ann.is("Subscript") && (head == "In" || head == "Out" || head == "InOut")) {
    dir = head == "In" ? "in" : head == "Out" ? "out" : "inout";
    auto elems = subscript_elements(ann);
    if (elems.size() != 1) {
      error(ann, "tile.param-type", head + "[...] takes one type, e.g. " + head + "[Tensor[128, 256, f32]]");
      return std::nullopt;
    }
    std::string inner_dir;
    return read_type(elems[0], inner_dir, recognised);
  }
  if (head == "Constexpr") return Type::constexpr_(nullptr);
  if (head == "Tensor" || head == "Tile") {
    if (!ann.is("Subscript")) {
      error(ann, "tile.param-type",
            head + " needs its shape and dtype: " + head +
                (head == "Tile" ? "[R, C, dtype]" : "[d0, ..., dtype]") + " (kernel shapes are static)");
      return std::nullopt;
    }
    auto elems = subscript_elements(ann);
    std::optional<std::string> dtype;
    if (!elems.empty()) dtype = read_dtype(elems.back());
    if (!dtype) {
      error(
          ann, "tile.param-type", head + "[...] must end with a dtype (" + [] {
            std::string s;
            for (const auto &d : dtypes())
              s += (s.empty() ? "" : ", ") + d;
            return s;
          }() + ")");
      return std::nullopt;
    }
    elems.pop_back();
    auto dims = read_dims(ann, elems);
    if (!dims) return std::nullopt;
    if (head == "Tile" && dims->size() != 2) {
      error(ann, "tile.param-type",
            "a Tile is 2-D: Tile[R, C, dtype], got " + std::to_string(dims->size()) + " dims");
      return std::nullopt;
    }
    if (dims->empty()) {
      error(ann, "tile.param-type", "Tensor[...] needs at least one dim before its dtype");
      return std::nullopt;
    }
    return head == "Tile" ? Type::tile(*dims, *dtype) : Type::tensor(*dims, *dtype);
  }
  if (head == "Scalar") {
    std::optional<std::string> dtype;
    if (ann.is("Subscript")) {
      auto elems = subscript_elements(ann);
      if (elems.size() == 1) dtype = read_dtype(elems[0]);
    }
    if (!dtype) {
      error(ann, "tile.param-type", "a scalar parameter is Scalar[dtype], e.g. Scalar[i32]");
      return std::nullopt;
    }
    return Type::scalar(*dtype);
  }
  // Python's own scalar types, as workload and CSP parameters take them.
  if (ann.is("Name")) {
    if (head == "int") return Type::scalar("i64");
    if (head == "float") return Type::scalar("f32");
    if (head == "bool") return Type::scalar("i8");
  }
  recognised = false;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> KernelChecker::read_dims(htp::NodeRef ann,
                                                             const std::vector<htp::NodeRef> &dims) {
  std::vector<int64_t> out;
  for (auto d : dims) {
    Value v = eval(d);
    if (v.is(Value::Kind::None)) return std::nullopt;
    auto i = v.is(Value::Kind::Const) ? int_literal(v.expr) : std::nullopt;
    if (!i) {
      error(d, "tile.param-type",
            "the dims of " + head_name(ann.child("value")) +
                "[...] must be compile-time integers (captured constants or literals), got '" +
                describe(d, v) + "'");
      return std::nullopt;
    }
    if (*i <= 0) {
      error(d, "tile.param-type", "dims must be positive, got " + std::to_string(*i));
      return std::nullopt;
    }
    out.push_back(*i);
  }
  // Every later size computation (bytes, strides, offsets) stays far inside int64.
  int64_t elements = 1;
  for (int64_t d : out)
    if (__builtin_mul_overflow(elements, d, &elements) || elements > kMaxTensorElements) {
      std::string shape;
      for (int64_t d2 : out) shape += (shape.empty() ? "" : ", ") + std::to_string(d2);
      error(ann, "tile.param-type",
            head_name(ann.child("value")) + "[" + shape + ", ...] has more than 2**45 elements; HTP addresses a tensor's bytes "
            "with 48-bit offsets");
      return std::nullopt;
    }
  return out;
}

std::optional<std::string> KernelChecker::read_dtype(htp::NodeRef n) {
  std::string name = n.dotted_name();
  if (name.empty()) return std::nullopt;
  std::string last(last_component(name));
  if (!is_dtype(last)) return std::nullopt;
  auto dot = name.rfind('.');
  if (dot != std::string::npos && bound_.count(name.substr(0, name.find('.')))) return std::nullopt;
  return last;
}

std::vector<int64_t> KernelChecker::local_shape_of(const Param &p, htp::NodeRef ann) {
  // layout-axe sets layout.local_shape on the parameter or its annotation (analyze stage).
  std::vector<htp::NodeRef> carriers = {p.node, ann};
  if (ann.is("Subscript")) carriers.push_back(ann.child("slice"));
  for (auto n : carriers) {
    auto j = node_attr_json(n, "layout.local_shape");
    if (j.is_null()) continue;
    bool valid = j.is_array() && j.size() == p.type.shape.size();
    std::vector<int64_t> shape;
    for (size_t i = 0; valid && i < j.size(); ++i) {
      valid = j[i].is_number_integer() && j[i].get<int64_t>() > 0 && j[i].get<int64_t>() <= p.type.shape[i];
      if (valid) shape.push_back(j[i].get<int64_t>());
    }
    if (!valid) {
      error(p.node, "tile.local-shape",
            "parameter '" + p.name + "' (" + p.type.str() + ") has an invalid layout.local_shape " +
                j.dump() + ": expected " + std::to_string(p.type.shape.size()) +
                " positive dims within its shape");
      return p.type.shape;
    }
    return shape;
  }
  return p.type.shape;
}

ojson KernelChecker::read_mapping() {
  for (auto d : f_.fn.items("decorator_list")) {
    if (!d.is("Call")) continue;
    for (auto kw : d.items("keywords")) {
      if (kw.text("arg").value_or("") != "mapping") continue;
      auto v = kw.child("value");
      ojson out = ojson::array();
      bool valid = v.is("List") || v.is("Tuple");
      for (auto e : valid ? v.items("elts") : std::vector<htp::NodeRef>{}) {
        recording_ = false;
        Value x = eval(e);
        recording_ = options_.record_types;
        auto i = x.is(Value::Kind::Const) ? int_literal(x.expr) : std::nullopt;
        if (!i || *i <= 0)
          valid = false;
        else
          out.push_back(*i);
      }
      if (!valid) {
        error(v, "tile.mapping",
              "mapping= takes a list of positive compile-time integers, e.g. mapping=[2, 2]");
        return nullptr;
      }
      // A mesh point is a core: bounded before any backend builds something per point.
      int64_t points = 1;
      for (const auto &e : out)
        if (__builtin_mul_overflow(points, e.get<int64_t>(), &points) || points > kMaxMeshPoints) {
          error(v, "tile.mapping",
                "mapping=" + out.dump() + " has more than " + std::to_string(kMaxMeshPoints) +
                    " points (cores); a kernel's mesh is at most that large");
          return nullptr;
        }
      return out;
    }
  }
  return nullptr;
}

ojson KernelChecker::params_json() const {
  ojson out = ojson::array();
  for (const auto &p : params_) {
    ojson j;
    j["name"] = p.name;
    j["dir"] = p.dir;
    j["type"] = p.type.to_json();
    if (p.type.is(Type::Kind::Tensor)) j["local_shape"] = p.local_shape;
    out.push_back(std::move(j));
  }
  return out;
}

// ---- bindings and registers

const KernelChecker::Binding *KernelChecker::lookup(const std::string &name) const {
  auto it = env_.find(name);
  return it == env_.end() ? nullptr : &it->second;
}

std::string KernelChecker::binding_kind_text(const Binding &b) const {
  switch (b.kind) {
  case Binding::Kind::Param: return "a parameter";
  case Binding::Kind::TileReg: return "a tile (" + b.value.type.str() + ")";
  case Binding::Kind::ScalarReg: return "a scalar";
  case Binding::Kind::ConstLocal: return "a constant";
  case Binding::Kind::LoopVar: return "a loop variable";
  case Binding::Kind::ViewAlias: return "a tensor view";
  case Binding::Kind::Opaque: return "a value of another dialect";
  }
  return "a name";
}

void KernelChecker::declare_tile(const std::string &name, const Type &type, htp::NodeRef at) {
  if (local_types_.count(name)) return;
  local_types_[name] = type;
  local_defs_[name] = at;
  ojson l;
  l["name"] = name;
  l["kind"] = "tile";
  l["shape"] = type.shape;
  l["dtype"] = type.dtype;
  locals_.push_back(std::move(l));
}

void KernelChecker::declare_scalar(const std::string &name, const std::string &dtype, htp::NodeRef at) {
  if (local_types_.count(name)) return;
  local_types_[name] = Type::scalar(dtype);
  local_defs_[name] = at;
  ojson l;
  l["name"] = name;
  l["kind"] = "scalar";
  l["dtype"] = dtype;
  locals_.push_back(std::move(l));
}

std::string KernelChecker::result_register(const std::string *hint, const Type &type, htp::NodeRef at) {
  if (hint) {
    const Binding *b = lookup(*hint);
    if (!b) {
      declare_tile(*hint, type, at);
      env_[*hint] = Binding{Binding::Kind::TileReg, Value{Value::Kind::Tile, type, *hint, {}, {}}, at};
      return *hint;
    }
    if (b->kind == Binding::Kind::TileReg ||
        (b->kind == Binding::Kind::Param && b->value.is(Value::Kind::Tile))) {
      if (!(b->value.type == type)) {
        auto line = b->def.span().line;
        error(at, "tile.retype",
              "'" + *hint + "' is " + b->value.type.str() + " (line " + std::to_string(line) +
                  ") but is assigned a " + type.str() + " here: a name keeps one tile type; use a new name");
      }
      return *hint;
    }
    // Anything else (a parameter tensor, a loop variable, a scalar) cannot hold a tile: the caller of
    // bind_value reports it; the result goes to a temporary meanwhile.
  }
  std::string t = "_t" + std::to_string(temporaries_++);
  while (lookup(t) || local_types_.count(t))
    t = "_t" + std::to_string(temporaries_++);
  declare_tile(t, type, at);
  return t;
}

ojson &KernelChecker::emit(ojson op, htp::NodeRef at) {
  if (!vendor_calls_.empty() && vendor_calls_.back().first == at) op["set"] = vendor_calls_.back().second;
  op["span"] = span_json(at);
  blocks_.back()->push_back(std::move(op));
  return blocks_.back()->back();
}

void KernelChecker::record(htp::NodeRef n, const Value &v) {
  if (!recording_) return;
  if (v.is(Value::Kind::None) || v.is(Value::Kind::DType) || v.is(Value::Kind::Opaque)) return;
  result_.types.emplace_back(n, v.type.to_json());
}

} // namespace tile
