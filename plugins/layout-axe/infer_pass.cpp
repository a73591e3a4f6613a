// axe.infer: layouts of parameters, then of every value of a function body through the tile intrinsics,
// applying the rules of layout_rules.hpp. Records facts as node attributes for axe.check, the tile
// plugin (local shapes) and the backends; judges only what the rules themselves reject (joins,
// contractions, effects through operations).
#include <htp/layout_signatures.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "layout_rules.hpp"
#include "layout_surface.hpp"
#include "passes.hpp"

namespace htp::axe {

namespace {

using Env = std::map<std::string, AxeLayout>;

const std::set<std::string> kElementwise = {"add", "sub", "mul", "div", "max", "min"};
const std::set<std::string> kScalarForms = {"adds", "subs", "muls", "divs", "maxs", "mins"};
const std::set<std::string> kUnary = {"exp",  "log",     "sqrt", "rsqrt", "abs", "neg",
                                      "relu", "sigmoid", "tanh", "cast",  "copy"};
const std::map<std::string, std::pair<std::string, int>> kReductions = {
    // name -> (reduction, dim counted from the end: 1 = last dim)
    {"rowsum", {"sum", 1}}, {"rowmax", {"max", 1}}, {"rowmin", {"min", 1}},
    {"colsum", {"sum", 2}}, {"colmax", {"max", 2}}, {"colmin", {"min", 2}}};

std::string op_name(htp::NodeRef binop_op) {
  static const std::map<std::string, std::string> kOps = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"}, {"Div", "div"}, {"MatMult", "matmul"}};
  auto it = kOps.find(std::string(binop_op.type()));
  return it == kOps.end() ? std::string(binop_op.type()) : it->second;
}

std::string scalar_form(const std::string &op) {
  static const std::map<std::string, std::string> kForms = {
      {"add", "adds"}, {"sub", "subs"}, {"mul", "muls"}, {"div", "divs"}, {"max", "maxs"}, {"min", "mins"}};
  auto it = kForms.find(op);
  return it == kForms.end() ? op : it->second;
}

nlohmann::ordered_json span_json(htp::NodeRef n) {
  HtpSpan s = n.span();
  return {{"line", s.line}, {"col", s.col}, {"end_line", s.end_line}, {"end_col", s.end_col}};
}

/// One parameter with a layout.
struct Param {
  std::string dir;
  AxeLayout layout;
};

/// A view of a parameter (`x`, `x[0:32, :]`, `x.tile(i, j, shape=(R, C))`, or a name for one): the
/// parameter and the per-core shape it selects.
struct View {
  std::string param;
  std::vector<int64_t> dims;
};

/// Tiles are 2-D: leading dims of extent 1 are dropped, a 1-D view [N] is the tile [1, N].
std::vector<int64_t> as_tile(std::vector<int64_t> dims) {
  while (dims.size() > 2 && dims.front() == 1)
    dims.erase(dims.begin());
  if (dims.size() == 1) dims.insert(dims.begin(), 1);
  return dims.size() == 2 ? dims : std::vector<int64_t>{};
}

/// Infers the layouts of one function.
class FunctionInference {
public:
  FunctionInference(htp::NodeRef fn, const Mesh &mesh, const Constants &c, Reporter &r)
      : fn_(fn), mesh_(mesh), c_(c), r_(r) {}

  /// Runs over parameters and body; returns the function's entry of layout.signatures.
  nlohmann::ordered_json run(const std::vector<int64_t> &mapping) {
    read_params();
    block(fn_.items("body"));
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto &name : order_) {
      auto j = to_json(params_.at(name).layout, mesh_);
      j["dir"] = params_.at(name).dir;
      params[name] = std::move(j);
    }
    nlohmann::ordered_json mesh = nlohmann::ordered_json::object();
    for (size_t i = 0; i < mesh_.rank(); ++i)
      mesh[Mesh::axis_name(i)] = mesh_.extents()[i];
    nlohmann::ordered_json mapping_json =
        mapping.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mapping);
    return {{"mapping", mapping_json}, {"mesh", mesh}, {"params", params}, {"collectives", collectives_}};
  }

private:
  // ---- parameters ----

  void read_params() {
    htp::NodeRef args = fn_.child("args");
    for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
      for (auto a : args.items(field))
        read_param(a);
  }

  void read_param(htp::NodeRef arg) {
    htp::NodeRef ann = arg.child("annotation");
    if (!ann) return;
    ParamAnnotation pa = read_annotation(ann, c_);
    if (!pa.layout_expr) return;
    std::string name = arg.text("arg").value_or("");
    if (!pa.tensor) {
      r_.error(pa.type_node ? pa.type_node : ann, "layout.shape",
               "parameter '" + name +
                   "' has a layout but no Tensor[d0, ..., dtype] or Tile[R, C, dtype] type with "
                   "constant dims");
      return;
    }
    for (size_t d = 0; d < pa.tensor->shape.size(); ++d)
      if (pa.tensor->shape[d] < 1) {
        r_.error(pa.type_node ? pa.type_node : ann, "layout.shape",
                 "parameter '" + name + "' has a layout but dimension " + std::to_string(d) + " of its type is " +
                     std::to_string(pa.tensor->shape[d]) + "; a tensor's dims are positive");
        return;
      }
    if (!dtype_size(pa.tensor->dtype)) {
      r_.error(pa.type_node ? pa.type_node : ann, "layout.dtype",
               "parameter '" + name + "' has a layout but its dtype '" + pa.tensor->dtype +
                   "' is not one of f16, bf16, f32, i8, i16, i32, i64, u8");
      return;
    }
    auto l = read_layout(pa.layout_expr, *pa.tensor, mesh_, c_, r_);
    if (!l) return;
    arg.set_attr("layout.type", to_json(*l, mesh_).dump());
    arg.set_attr("layout.local_shape", nlohmann::json(*local_shape(*l)).dump());
    record_alloc(arg, name, *l);
    params_[name] = Param{pa.dir, *l};
    order_.push_back(name);
    env_[name] = *l;
  }

  /// A buffer in an explicit memory space, for the footprint check.
  void record_alloc(htp::NodeRef at, const std::string &name, const AxeLayout &l) {
    if (!l.hw.space) return;
    auto local = local_shape(l);
    auto size = dtype_size(l.dtype);
    if (!local || !size) return;
    int64_t bytes = *size;
    for (int64_t d : *local)
      bytes *= d;
    at.set_attr("layout.alloc", nlohmann::json{{"name", name},
                                               {"space", *l.hw.space},
                                               {"bytes", bytes},
                                               {"local_shape", *local},
                                               {"dtype", l.dtype}}
                                    .dump());
  }

  // ---- statements ----

  void block(const std::vector<htp::NodeRef> &stmts) {
    for (auto s : stmts)
      stmt(s);
  }

  /// Runs a loop body until the layouts it assigns stop changing (they only grow more sharded).
  void loop(const std::vector<htp::NodeRef> &body) {
    for (int i = 0; i < 4; ++i) {
      Env before = env_;
      block(body);
      if (same_env(before, env_)) break;
    }
  }

  static bool same_env(const Env &a, const Env &b) {
    if (a.size() != b.size()) return false;
    for (const auto &[k, v] : a) {
      auto it = b.find(k);
      if (it == b.end() || !it->second.same_distribution(v) || !(it->second.pending == v.pending))
        return false;
    }
    return true;
  }

  void stmt(htp::NodeRef s) {
    if (s.is("Assign")) {
      auto v = expr(s.child("value"));
      for (auto t : s.items("targets"))
        assign(t, v, s);
    } else if (s.is("AugAssign")) {
      htp::NodeRef target = s.child("target");
      auto left = expr(target);
      auto right = expr(s.child("value"));
      assign(target, binary(s, op_name(s.child("op")), left, right), s);
    } else if (s.is("AnnAssign")) {
      ann_assign(s);
    } else if (s.is("Expr")) {
      expr(s.child("value"));
    } else if (s.is("Return")) {
      if (auto v = expr(s.child("value"))) s.set_attr("layout.return", to_json(*v, mesh_).dump());
    } else if (s.is("For") || s.is("While")) {
      expr(s.is("For") ? s.child("iter") : s.child("test"));
      loop(s.items("body"));
      block(s.items("orelse"));
    } else if (s.is("If")) {
      if_stmt(s);
    } else if (s.is("With")) {
      block(s.items("body"));
    }
  }

  void if_stmt(htp::NodeRef s) {
    expr(s.child("test"));
    Env start = env_;
    block(s.items("body"));
    Env then_env = std::move(env_);
    env_ = start;
    block(s.items("orelse"));
    // A name assigned on both paths takes the join of both layouts.
    for (auto &[name, layout] : then_env) {
      auto it = env_.find(name);
      if (it == env_.end()) {
        env_[name] = layout;
      } else if (!it->second.same_distribution(layout) || !(it->second.pending == layout.pending)) {
        auto joined = join(layout, it->second, "if/else merge", mesh_);
        if (joined)
          it->second = *joined;
        else
          r_.error(s, joined.error());
      }
    }
  }

  void ann_assign(htp::NodeRef s) {
    auto v = expr(s.child("value"));
    ParamAnnotation pa = read_annotation(s.child("annotation"), c_);
    htp::NodeRef target = s.child("target");
    if (!pa.layout_expr || !pa.tensor) {
      assign(target, v, s);
      return;
    }
    auto declared = read_layout(pa.layout_expr, *pa.tensor, mesh_, c_, r_);
    if (!declared) return;
    if (v && !v->same_distribution(*declared) && !v->zero) {
      r_.error(s, "layout.join",
               "'" + target.dotted_name() + "' is declared " + describe(*declared, mesh_) +
                   " but the value is " + describe(*v, mesh_) + "; write relayout(x, to=...)");
      return;
    }
    AxeLayout l = *declared;
    if (v) l.pending = v->pending;
    record_alloc(s, target.dotted_name(), l);
    assign(target, l, s);
  }

  void assign(htp::NodeRef target, const std::optional<AxeLayout> &v, htp::NodeRef stmt) {
    if (target.is("Name")) {
      std::string name = target.text("id").value_or("");
      if (params_.count(name)) return; // rebinding a parameter: the parameter keeps its layout
      if (stmt.is("Assign"))
        if (auto view = view_of(stmt.child("value"))) views_[name] = *view;
      if (v) {
        env_[name] = *v;
        target.set_attr("layout.type", to_json(*v, mesh_).dump());
      } else {
        env_.erase(name);
      }
    } else if (target.is("Subscript")) {
      record_store(stmt, tensor_param(target.child("value")), v);
    } else if (target.is("Tuple") || target.is("List")) {
      for (auto e : target.items("elts"))
        assign(e, std::nullopt, stmt);
    }
  }

  // ---- stores ----

  /// The view an expression denotes, or nullopt.
  std::optional<View> view_of(htp::NodeRef n) const {
    if (n.is("Name")) {
      std::string name = n.text("id").value_or("");
      if (auto it = views_.find(name); it != views_.end()) return it->second;
      if (!params_.count(name)) return std::nullopt;
      auto local = local_shape(params_.at(name).layout);
      return View{name, local ? *local : std::vector<int64_t>{}};
    }
    if (n.is("Subscript")) {
      auto base = view_of(n.child("value"));
      if (base) base->dims = slice_dims(n.child("slice"), base->dims);
      return base;
    }
    htp::NodeRef func = n.is("Call") ? n.child("func") : htp::NodeRef();
    if (func.is("Attribute") && func.text("attr").value_or("") == "tile") {
      auto base = view_of(func.child("value"));
      auto shape = c_.eval(keyword(n, "shape"));
      if (base)
        base->dims = shape && shape->is_array() ? shape->get<std::vector<int64_t>>() : std::vector<int64_t>{};
      return base;
    }
    return std::nullopt;
  }

  /// The extents a subscript selects from `dims`: constant slices and indices (extent 1), else unknown.
  std::vector<int64_t> slice_dims(htp::NodeRef slice, const std::vector<int64_t> &dims) const {
    std::vector<htp::NodeRef> parts =
        slice.is("Tuple") ? slice.items("elts") : std::vector<htp::NodeRef>{slice};
    if (parts.size() > dims.size()) return {};
    std::vector<int64_t> out = dims;
    for (size_t d = 0; d < parts.size(); ++d) {
      if (!parts[d].is("Slice")) {
        out[d] = 1;
        continue;
      }
      auto lower = parts[d].child("lower") ? c_.eval_int(parts[d].child("lower")) : std::optional<int64_t>(0);
      auto upper =
          parts[d].child("upper") ? c_.eval_int(parts[d].child("upper")) : std::optional<int64_t>(dims[d]);
      if (!lower || !upper) return {};
      out[d] = *upper - *lower;
    }
    return out;
  }

  /// The parameter a destination expression names: `C`, `C[...]`, `C.tile(i, j)`, a named view.
  std::string tensor_param(htp::NodeRef n) const {
    auto v = view_of(n);
    return v ? v->param : std::string();
  }

  /// The layout of a loaded view: its parameter's, with the tile shape it selects.
  std::optional<AxeLayout> view_layout(htp::NodeRef n) const {
    auto v = view_of(n);
    if (!v) return std::nullopt;
    AxeLayout l = params_.at(v->param).layout;
    l.tile = as_tile(v->dims);
    return l;
  }

  void record_store(htp::NodeRef at, const std::string &dst, const std::optional<AxeLayout> &value) {
    if (dst.empty() || !value) return;
    nlohmann::ordered_json j = {{"target", dst}, {"value", to_json(*value, mesh_)}};
    j["dst"] = to_json(params_.at(dst).layout, mesh_);
    at.set_attr("layout.store", j.dump());
  }

  std::optional<AxeLayout> store_call(htp::NodeRef call) {
    std::string dst;
    std::optional<AxeLayout> value;
    for (const char *k : {"dst", "out", "target"})
      if (htp::NodeRef n = keyword(call, k)) dst = tensor_param(n);
    for (const char *k : {"value", "src"})
      if (htp::NodeRef n = keyword(call, k)) value = expr(n);
    for (auto a : call.items("args")) {
      std::string p = tensor_param(a);
      if (dst.empty() && !p.empty()) {
        dst = p;
        continue;
      }
      auto l = expr(a);
      if (!value && l) value = l;
    }
    record_store(call, dst, value);
    return std::nullopt;
  }

  // ---- expressions ----

  std::optional<AxeLayout> expr(htp::NodeRef e) {
    if (!e) return std::nullopt;
    auto l = eval(e);
    if (l && !e.is("Name")) e.set_attr("layout.type", to_json(*l, mesh_).dump());
    return l;
  }

  std::optional<AxeLayout> eval(htp::NodeRef e) {
    if (e.is("Name")) {
      auto it = env_.find(e.text("id").value_or(""));
      return it == env_.end() ? std::nullopt : std::optional<AxeLayout>(it->second);
    }
    if (e.is("Subscript")) {
      expr(e.child("slice"));
      return view_layout(e);
    }
    if (e.is("BinOp")) {
      auto left = expr(e.child("left"));
      auto right = expr(e.child("right"));
      return binary(e, op_name(e.child("op")), left, right);
    }
    if (e.is("UnaryOp")) {
      auto x = expr(e.child("operand"));
      if (!x || !e.child("op").is("USub")) return x;
      return apply(e, unary(*x, "neg", mesh_));
    }
    if (e.is("Call")) return call(e);
    return std::nullopt;
  }

  /// The result of a rule, or nullopt after reporting its error at `at`.
  std::optional<AxeLayout> apply(htp::NodeRef at, const Result<AxeLayout> &r) {
    if (r) return *r;
    r_.error(at, r.error());
    return std::nullopt;
  }

  std::optional<AxeLayout> binary(htp::NodeRef at, const std::string &op, const std::optional<AxeLayout> &a,
                                  const std::optional<AxeLayout> &b) {
    if (op == "matmul") return a && b ? apply(at, contract(*a, *b, mesh_)) : std::nullopt;
    if (a && b) return apply(at, join(*a, *b, op, mesh_));
    // One operand without a layout (a scalar or an unconstrained value): the scalar form of the op.
    if (a || b) return apply(at, unary(a ? *a : *b, scalar_form(op), mesh_));
    return std::nullopt;
  }

  std::optional<AxeLayout> arg(htp::NodeRef call, size_t i, const char *kw = nullptr) {
    if (kw)
      if (htp::NodeRef k = keyword(call, kw)) return expr(k);
    return i < call.size("args") ? expr(call.item("args", i)) : std::nullopt;
  }

  htp::NodeRef arg_node(htp::NodeRef call, size_t i, const char *kw) {
    if (htp::NodeRef k = keyword(call, kw)) return k;
    return i < call.size("args") ? call.item("args", i) : htp::NodeRef();
  }

  std::optional<AxeLayout> call(htp::NodeRef e) {
    std::string name = callee_name(e);
    htp::NodeRef func = e.child("func");
    // A view of a parameter: A.tile(i, j, shape=(R, C)).
    if (func.is("Attribute") && view_of(func.child("value"))) {
      for (auto a : e.items("args"))
        expr(a);
      return view_layout(e);
    }
    if (name == "load") {
      htp::NodeRef src = arg_node(e, 0, "src");
      for (size_t i = 1; i < e.size("args"); ++i)
        expr(e.item("args", i));
      return view_of(src) ? view_layout(src) : expr(src);
    }
    if (name == "store") return store_call(e);
    if (kElementwise.count(name)) return binary(e, name, arg(e, 0), arg(e, 1));
    if (kScalarForms.count(name) || kUnary.count(name)) {
      auto x = arg(e, 0);
      for (size_t i = 1; i < e.size("args"); ++i)
        expr(e.item("args", i));
      auto r = x ? apply(e, unary(*x, name, mesh_)) : std::nullopt;
      if (r && name == "cast") r->dtype = dtype_name(arg_node(e, 1, "dtype"));
      return r;
    }
    if (auto it = kReductions.find(name); it != kReductions.end()) {
      auto x = arg(e, 0);
      if (!x) return std::nullopt;
      return apply(e, reduce(*x, x->rank - it->second.second, it->second.first, name, mesh_));
    }
    if (name.rfind("rowexpand", 0) == 0) {
      std::string op = name == "rowexpand" ? "copy" : name;
      return binary(e, op, arg(e, 0), arg(e, 1));
    }
    if (name == "matmul") {
      auto product = binary(e, "matmul", arg(e, 0), arg(e, 1));
      auto acc = arg(e, 2, "acc");
      return product && acc ? apply(e, join(*acc, *product, "add", mesh_)) : product;
    }
    if (name == "full") return full(e);
    if (is_collective(name)) return collective(e, name);
    for (auto a : e.items("args"))
      expr(a);
    for (auto k : e.items("keywords"))
      expr(k.child("value"));
    return std::nullopt;
  }

  /// full(...): a replicated constant tile (zero when its value is 0, neutral for pending sums).
  std::optional<AxeLayout> full(htp::NodeRef e) {
    AxeLayout l;
    l.rank = 2;
    for (size_t i = 0; i < mesh_.rank(); ++i)
      l.replica.push_back({mesh_.extents()[i], 1, Mesh::axis_name(i), -1});
    auto value = c_.eval(arg_node(e, 1, "value"));
    l.zero = value && value->is_number() && value->get<double>() == 0.0;
    auto shape = c_.eval(arg_node(e, 0, "shape"));
    if (shape && shape->is_array() && shape->size() == 2 && (*shape)[0].is_number_integer() &&
        (*shape)[1].is_number_integer())
      l.tile = shape->get<std::vector<int64_t>>();
    htp::NodeRef dtype = arg_node(e, 2, "dtype");
    l.dtype = dtype ? dtype_name(dtype) : "f32";
    return l;
  }

  /// The dtype an expression names (`f32`, `tile.f16`), or "".
  static std::string dtype_name(htp::NodeRef n) {
    std::string d = n.dotted_name();
    auto dot = d.rfind('.');
    return dot == std::string::npos ? d : d.substr(dot + 1);
  }

  // ---- collectives ----

  std::optional<std::string> axis_of(htp::NodeRef call, size_t position) {
    htp::NodeRef n = arg_node(call, position, "axis");
    if (!n) return std::nullopt;
    auto v = c_.eval(n);
    std::string spelled = !v                       ? ""
                          : v->is_string()         ? v->get<std::string>()
                          : v->is_number_integer() ? v->dump()
                                                   : "";
    auto axis = spelled.empty() ? std::nullopt : mesh_axis_argument(spelled, mesh_);
    if (!axis)
      r_.error(n, "layout.mesh-axis",
               mesh_.rank() == 0 ? "axis must name a mesh axis of the kernel, which has none (no mapping=[...])"
                                 : "axis must name a mesh axis of the kernel (" + mesh_.describe() + "): an index 0.." +
                                       std::to_string(mesh_.rank() - 1) + " or mesh.x, mesh.y, ...");
    return axis ? axis : std::optional<std::string>("?");
  }

  std::optional<int> dim_of(htp::NodeRef call, size_t position, const AxeLayout &x, bool want_sharded) {
    if (htp::NodeRef n = arg_node(call, position, "dim")) {
      auto d = c_.eval_int(n);
      if (d && *d >= 0 && *d < x.rank) return static_cast<int>(*d);
      r_.error(n, "layout.collective", "dim must be a constant dim index below " + std::to_string(x.rank));
      return std::nullopt;
    }
    std::vector<int> candidates;
    for (int d = 0; d < x.rank; ++d)
      if (x.dim_iters(d).empty() != want_sharded) candidates.push_back(d);
    if (candidates.size() == 1) return candidates[0];
    r_.error(call, "layout.collective",
             callee_name(call) + " needs dim=...: the value is " + describe(x, mesh_));
    return std::nullopt;
  }

  std::string reduction_of(htp::NodeRef call) {
    auto v = c_.eval(keyword(call, "op"));
    return v && v->is_string() ? v->get<std::string>() : "sum";
  }

  std::optional<AxeLayout> collective(htp::NodeRef e, const std::string &name) {
    auto x = arg(e, 0, "x");
    if (!x) return std::nullopt; // an unconstrained value (or one whose error was reported)
    std::optional<AxeLayout> out;
    nlohmann::ordered_json attrs = {{"from", to_json(*x, mesh_)}};
    if (name == "relayout") {
      htp::NodeRef to = arg_node(e, 1, "to");
      if (!to) {
        r_.error(e, "layout.collective", "relayout needs to=Layout(...)");
        return std::nullopt;
      }
      auto target = read_layout(to, TensorInfo{x->shape, x->dtype}, mesh_, c_, r_);
      if (!target) return std::nullopt;
      out = apply(e, relayout(*x, *target, mesh_));
      if (out) record_alloc(e, "relayout", *out);
    } else if (name == "allreduce") {
      auto axis = axis_of(e, 1);
      if (axis && *axis == "?") return std::nullopt;
      attrs["reduce"] = reduction_of(e);
      out = apply(e, allreduce(*x, axis, reduction_of(e), mesh_));
    } else {
      auto dim = dim_of(e, 1, *x, name == "allgather");
      if (!dim) return std::nullopt;
      attrs["dim"] = *dim;
      if (name == "allgather") {
        out = apply(e, allgather(*x, *dim, mesh_));
      } else {
        auto axis = axis_of(e, 2);
        if (axis && *axis == "?") return std::nullopt;
        attrs["reduce"] = reduction_of(e);
        out = apply(e, reduce_scatter(*x, *dim, axis, reduction_of(e), mesh_));
      }
    }
    if (!out) return std::nullopt;
    attrs["to"] = to_json(*out, mesh_);
    nlohmann::ordered_json axes = nlohmann::ordered_json::array(); // the axes whose reductions it discharges
    for (const auto &p : x->pending)
      if (std::find(out->pending.begin(), out->pending.end(), p) == out->pending.end())
        axes.push_back(p.iter.axis);
    if (!axes.empty()) attrs["axes"] = axes;
    // The result's tile type, so the tile dialect can type it (null when the tile shape is unknown).
    nlohmann::ordered_json type = nullptr;
    if (out->tile.size() == 2 && dtype_size(out->dtype))
      type = {{"kind", "tile"}, {"shape", out->tile}, {"dtype", out->dtype}};
    e.set_attr("tile.foreign",
               nlohmann::ordered_json{{"op", "layout." + name}, {"type", type}, {"attrs", attrs}}.dump());
    nlohmann::ordered_json entry = {
        {"op", name}, {"from", describe(*x, mesh_)}, {"to", describe(*out, mesh_)}};
    for (const char *k : {"axes", "reduce", "dim"})
      if (attrs.contains(k)) entry[k] = attrs[k];
    entry["span"] = span_json(e);
    collectives_.push_back(std::move(entry));
    return out;
  }

  htp::NodeRef fn_;
  const Mesh &mesh_;
  const Constants &c_;
  Reporter &r_;
  std::map<std::string, Param> params_;
  std::map<std::string, View> views_;
  std::vector<std::string> order_;
  Env env_;
  nlohmann::ordered_json collectives_ = nlohmann::ordered_json::array();
};

/// Whether a function takes part in layout typing: a layout on a parameter or a collective in its body.
bool uses_layouts(htp::NodeRef fn) {
  bool found = false;
  fn.walk([&](htp::NodeRef n) {
    if (found) return false;
    found = is_layout_expr(n) || (n.is("Call") && is_collective(callee_name(n)));
    return !found;
  });
  return found;
}

} // namespace

void infer(htp::PassContext &ctx) {
  Reporter r(ctx);
  auto module = ctx.module();
  Constants constants(module);
  nlohmann::ordered_json functions = nlohmann::ordered_json::object();
  for (auto fn : module.root().items("body")) {
    if (!fn.is("FunctionDef") || !uses_layouts(fn)) continue;
    auto mesh = mesh_of(fn, constants, r);
    if (!mesh) continue;
    std::vector<int64_t> mapping = mesh->extents();
    FunctionInference inference(fn, *mesh, constants, r);
    functions[fn.text("name").value_or("")] = inference.run(mapping);
  }
  publish_signatures(ctx, r, nlohmann::ordered_json{{"schema", htp::kLayoutSchema}, {"functions", functions}});
}

void publish_signatures(htp::PassContext &ctx, Reporter &r, const nlohmann::ordered_json &doc) {
  try {
    (void)htp::read_layout_signatures(doc);
  } catch (const htp::IrDocumentError &e) {
    r.error(ctx.module().root(), "layout.internal",
            std::string("layout-axe built an invalid layout.signatures (a layout-axe bug): ") + e.what());
    return;
  }
  ctx.module().set_attr(htp::kLayoutSignaturesAttribute, doc.dump());
}

} // namespace htp::axe
