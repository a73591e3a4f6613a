#include "workload_lowering.hpp"

#include "kernel_call.hpp"
#include "signature.hpp"

#include <set>

namespace wsp {

namespace {

const std::map<std::string, std::string> kStatementWords = {{"If", "if"},
                                                            {"Return", "return"},
                                                            {"Break", "break"},
                                                            {"Continue", "continue"},
                                                            {"Raise", "raise"},
                                                            {"Import", "import"},
                                                            {"ImportFrom", "import"},
                                                            {"FunctionDef", "def"},
                                                            {"AsyncFunctionDef", "async def"},
                                                            {"ClassDef", "class"},
                                                            {"Global", "global"},
                                                            {"Nonlocal", "nonlocal"},
                                                            {"Delete", "del"},
                                                            {"AugAssign", "augmented assignment"},
                                                            {"Assert", "assert"},
                                                            {"Match", "match"},
                                                            {"AsyncFor", "async for"},
                                                            {"AsyncWith", "async with"}};

[[noreturn]] void unsupported(htp::NodeRef at, const std::string &message) {
  throw WspError(at, "wsp.unsupported", message);
}

std::string unsupported_statement_message(htp::NodeRef stmt) {
  std::string type(stmt.type());
  if (type == "While")
    return "`while` is not accepted in a workload: its condition would be evaluated while the tasks run, so "
           "the "
           "task graph would depend on data; iterate with `for i in P.seq(n)` (n may be symbolic) and guard "
           "tasks with `with P.when(pred):`";
  if (type == "Try" || type == "TryStar")
    return "`try` is not accepted in a workload: a workload describes tasks, it runs no code that could "
           "raise";
  auto it = kStatementWords.find(type);
  std::string word = it == kStatementWords.end() ? type : it->second;
  return "`" + word +
         "` is not accepted in a workload: a workload holds loops over P(...), P.seq(...) and "
         "P.sel(...), P.when/P.otherwise blocks, combine/sequential/P.pipe blocks, kernel launches, scalar "
         "lets and intermediate tensors";
}

/// The variables a `for` target binds: a name or a tuple of names.
std::vector<std::string> loop_vars(htp::NodeRef target) {
  std::vector<htp::NodeRef> names =
      target.is("Tuple") ? target.items("elts") : std::vector<htp::NodeRef>{target};
  std::vector<std::string> out;
  for (auto n : names) {
    if (!n.is("Name"))
      unsupported(n, "a workload loop binds plain names (`for b, h in P(B, H)`), got " + describe(n));
    out.push_back(*n.text("id"));
  }
  return out;
}

class WorkloadLowering {
public:
  WorkloadLowering(htp::NodeRef fn, htp::PassContext &ctx) : fn_(fn), ctx_(ctx), module_(ctx.module()) {
    env_.constants = captured_constants(module_);
  }

  std::optional<json> run() {
    json params = json::array();
    guarded([&] { params = lower_params(); });
    json channels = json::array();
    for (auto stmt : fn_.items("body"))
      if (htp::NodeRef elem = channel_declaration(stmt)) {
        channels.push_back(*stmt.item("targets", 0).text("id"));
        guarded([&] { env_.channels[channels.back()] = parse_tensor_type(elem, env_.constants); });
      }
    json body = lower_block(fn_.items("body"), env_);
    if (failed_) return std::nullopt;
    json out = {{"name", *fn_.text("name")},       {"span", span_json(fn_)}, {"params", params},
                {"intermediates", intermediates_}, {"axes", axes_},          {"body", body}};
    if (!channels.empty()) out["channels"] = channels; // a CSP network: published in csp.graph
    return out;
  }

  /// The element type node of `name = Channel[T](...)`, or an empty view (Events carry no tensor; the
  /// csp dialect rejects them in pipes).
  static htp::NodeRef channel_declaration(htp::NodeRef stmt) {
    if (!stmt.is("Assign") || stmt.size("targets") != 1 || !stmt.item("targets", 0).is("Name")) return {};
    htp::NodeRef v = stmt.child("value");
    return channel_kind(v) == "fifo" ? v.child("func").child("slice") : htp::NodeRef();
  }

  /// The channel a `send` / `recv` / `consume` call names as its first argument, or empty; such a call
  /// belongs in a stage of a `with P.pipe():` scope.
  std::string channel_operation(htp::NodeRef call, const std::string &op) const {
    if (!call.is("Call") || surface_name(call.child("func")) != op || !call.size("args") ||
        !call.item("args", 0).is("Name") || !env_.channels.count(*call.item("args", 0).text("id")))
      return "";
    if (pipe_depth_ == 0)
      unsupported(call, op + "(" + *call.item("args", 0).text("id") +
                            ", ...) moves items between the stages of a `with P.pipe():` scope; it is "
                            "not accepted outside one");
    return *call.item("args", 0).text("id");
  }

  /// `for t in consume(ch):` / `with consume(ch) as t:`: the stage runs `body` once per item of `ch`, `t`
  /// bound to the item; the csp dialect gives the stream its length.
  json stream_loop(htp::NodeRef at, htp::NodeRef target, const std::string &channel,
                   const std::vector<htp::NodeRef> &body, const Env &outer) {
    if (!target || !target.is("Name"))
      unsupported(at, "a consume loop binds the received item to one name: `for t in consume(ch):`");
    std::string var = *target.text("id");
    Env inner = outer;
    if (inner.values.count(var) || inner.tensors.count(var))
      throw WspError(target, "wsp.axis", "'" + var + "' shadows a name already bound in the workload");
    inner.items[var] = channel;
    return json{{"kind", "loop"},        {"vars", json::array({var})},
                {"span", span_json(at)}, {"domain", {{"type", "stream"}, {"channel", channel}}},
                {"dep", "sequential"},   {"body", lower_block(body, inner)}};
  }

private:
  template <class F> void guarded(F &&f) {
    try {
      f();
    } catch (const WspError &e) {
      report(ctx_, e);
      failed_ = true;
    }
  }

  json lower_params() {
    htp::NodeRef a = fn_.child("args");
    if (a.child("vararg") || a.child("kwarg"))
      unsupported(
          a.child("vararg") ? a.child("vararg") : a.child("kwarg"),
          "a workload's parameters are named tensors and scalars; *args and **kwargs are not accepted");
    json params = json::array();
    for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
      for (auto arg : a.items(field)) {
        std::vector<WspError> layouts;
        json p = parse_workload_param(arg, env_.constants, &layouts);
        for (const WspError &e : layouts) {
          report(ctx_, e);
          failed_ = true;
        }
        if (p["type"]["kind"] == "tensor")
          env_.tensors[p["name"]] = tensor_decl(p, false);
        else
          env_.values[p["name"]] = json{{"param", p["name"]}};
        if (p["type"]["kind"] == "scalar" && !is_integer_dtype(p["type"].value("dtype", "")))
          env_.float_params.insert(p["name"].get<std::string>());
        params.push_back(p);
      }
    return params;
  }

  json lower_block(const std::vector<htp::NodeRef> &stmts, Env &env) {
    json out = json::array();
    for (size_t i = 0; i < stmts.size(); ++i) {
      guarded([&] {
        htp::NodeRef next = i + 1 < stmts.size() ? stmts[i + 1] : htp::NodeRef();
        if (is_with(next, "P.otherwise") && is_with(stmts[i], "P.when")) {
          append(out, lower_when(stmts[i], next, env));
          ++i;
          return;
        }
        if (auto node = lower_statement(stmts[i], env)) append(out, *node);
      });
    }
    return out;
  }

  /// Appends a node; a condition known at compile time (captured constants: `if HEADS > 8:`) is
  /// replaced by the branch it takes.
  static void append(json &out, json node) {
    if (node["kind"] == "inline") {
      for (auto &n : node["body"])
        out.push_back(std::move(n));
      return;
    }
    if (node["kind"] == "when" && node["cond"].is_boolean()) {
      for (auto &n : node[node["cond"].get<bool>() ? "then" : "else"])
        out.push_back(std::move(n));
      return;
    }
    out.push_back(std::move(node));
  }

  static bool is_with(htp::NodeRef stmt, const std::string &name) {
    return stmt.is("With") && stmt.size("items") == 1 &&
           surface_name(stmt.item("items", 0).child("context_expr").child("func")) == name;
  }

  std::optional<json> lower_statement(htp::NodeRef s, Env &env) {
    std::string_view type = s.type();
    if (type == "For") return lower_loop(s, env);
    if (type == "With") return lower_with(s, env);
    if (type == "Expr") return lower_expr_statement(s, env);
    if (type == "AnnAssign") return declare_intermediate(s, env);
    if (type == "Assign") return bind_local(s, env);
    if (type == "Pass") return std::nullopt;
    unsupported(s, unsupported_statement_message(s));
  }

  std::optional<json> lower_expr_statement(htp::NodeRef s, Env &env) {
    htp::NodeRef v = s.child("value");
    if (is_docstring(s)) return std::nullopt;
    if (v.is("Call") && v.child("func").is("Name"))
      if (htp::NodeRef inner = function_named(module_, *v.child("func").text("id"));
          is_captured(inner, "wsp", "workload"))
        return inline_workload(v, inner, env);
    if (std::string ch = channel_operation(v, "send"); !ch.empty()) {
      htp::NodeRef launch = v.size("args") == 2 ? v.item("args", 1) : htp::NodeRef();
      htp::NodeRef kernel = launch && launch.is("Call") ? launched_kernel(launch, module_) : htp::NodeRef();
      if (!kernel)
        unsupported(v, "a stage sends what a kernel launch writes: send(" + ch +
                           ", k[i](...)), the launch "
                           "leaving one Out tensor parameter for the channel's slot");
      return lower_kernel_call(launch, kernel, env, "t" + std::to_string(next_task_++), ch);
    }
    if (std::string ch = channel_operation(v, "recv"); !ch.empty())
      unsupported(v, "a stage passes a received item to a kernel: k(recv(" + ch + "), ...)");
    if (v.is("Call"))
      if (htp::NodeRef kernel = launched_kernel(v, module_))
        return lower_kernel_call(v, kernel, env, "t" + std::to_string(next_task_++));
    unsupported(s, "a workload statement is a kernel launch such as `k[i](A.tile(i, 0), ...)`; " +
                       describe(v) + " is not a @kernel of this program");
  }

  // ---- loops

  struct Axis {
    json extent;
    std::string lengths; ///< set for Ragged(n, lengths)
  };

  Axis axis_of(htp::NodeRef arg, const Env &env) {
    std::string kind = arg.is("Call")        ? surface_name(arg.child("func"))
                       : arg.is("Subscript") ? surface_name(arg.child("value"))
                                             : "";
    if (kind == "Dense" && arg.is("Subscript")) {
      json extent = positive_extent(arg.child("slice"), env);
      if (!int_of(extent))
        throw WspError(arg, "wsp.axis",
                       "Dense[N] takes an extent known at compile time; use DenseDyn(n) for one "
                       "known at run time");
      return Axis{extent, ""};
    }
    if (kind == "DenseDyn" && arg.is("Call") && arg.size("args") == 1)
      return Axis{lower_expr(arg.item("args", 0), env), ""};
    if (kind == "Ragged") {
      if (arg.size("args") != 2)
        throw WspError(
            arg, "wsp.ragged-lengths",
            "a Ragged axis needs its lengths: Ragged(n, lengths) names the integer tensor holding the "
            "extent of each of its n rows");
      return Axis{lower_expr(arg.item("args", 0), env),
                  index_tensor(arg.item("args", 1), env, "Ragged lengths")};
    }
    if (kind == "Sparse")
      unsupported(arg, "a Sparse axis is iterated with P.sel(sparse, row), not with P(...) or P.seq(...)");
    if (kind == "Dense" || kind == "DenseDyn") unsupported(arg, "write Dense[N] or DenseDyn(n)");
    return Axis{positive_extent(arg, env), ""};
  }

  json positive_extent(htp::NodeRef n, const Env &env) {
    json e = lower_expr(n, env);
    if (auto v = int_of(e); v && *v <= 0)
      throw WspError(n, "wsp.expr", "a loop extent must be positive, got " + std::to_string(*v));
    return e;
  }

  /// The name of a 1-D integer tensor parameter (ragged lengths, CSR indptr / indices).
  std::string index_tensor(htp::NodeRef n, const Env &env, const std::string &role) {
    const TensorDecl *t = tensor_of(n, env);
    if (!t)
      throw WspError(n, "wsp.axis",
                     role + " must name a tensor parameter of the workload, got " + describe(n));
    if (!is_integer_dtype(t->dtype) || t->shape.size() != 1)
      throw WspError(n, "wsp.axis",
                     role + " '" + t->name + "' must be a 1-D integer tensor, but it is " +
                         std::to_string(t->shape.size()) + "-D " + t->dtype);
    return t->name;
  }

  json lower_loop(htp::NodeRef loop, const Env &outer) {
    if (loop.size("orelse")) unsupported(loop.item("orelse", 0), "a workload loop has no `else` block");
    std::vector<std::string> vars = loop_vars(loop.child("target"));
    htp::NodeRef iter = loop.child("iter");
    std::string ctor = iter.is("Call") ? surface_name(iter.child("func")) : "";
    if (std::string ch = channel_operation(iter, "consume"); !ch.empty())
      return stream_loop(loop, loop.child("target"), ch, loop.items("body"), outer);
    json domain, dep;
    if (ctor == "P") {
      domain = dense_domain(iter, vars, outer);
      dep = "independent";
    } else if (ctor == "P.seq") {
      if (iter.size("args") != 1)
        unsupported(iter, "P.seq(n) takes one axis: an extent or Ragged(n, lengths)");
      domain = single_axis_domain(iter.item("args", 0), "seq", vars, outer);
      dep = "sequential";
    } else if (ctor == "P.sel") {
      domain = sparse_domain(iter, vars, outer);
      dep = "selected";
    } else {
      unsupported(iter,
                  "a workload loop iterates over P(...), P.seq(n) or P.sel(sparse, row); got " +
                      describe(iter) +
                      (ctor == "range" ? " (range with a start or step has no task-graph meaning)" : ""));
    }
    Env inner = outer;
    for (const auto &v : vars) {
      if (inner.values.count(v) || inner.tensors.count(v))
        throw WspError(loop.child("target"), "wsp.axis",
                       "loop variable '" + v + "' shadows a name already bound in the workload");
      if (std::find(active_vars_.begin(), active_vars_.end(), v) != active_vars_.end())
        throw WspError(loop.child("target"), "wsp.axis",
                       "loop variable '" + v + "' of the inlined workload '" +
                           (inlining_.empty() ? std::string("?") : inlining_.back()) +
                           "' is also a variable of an enclosing loop; rename one of them");
      inner.values[v] = json{{"var", v}};
      if (std::find(axes_.begin(), axes_.end(), v) == axes_.end()) axes_.push_back(v);
    }
    // Variables over compile-time extents have known ranges: views indexed by them are bounds-checked
    // here, for every target, before any backend runs.
    auto known_range = [&](const std::string &v, const json &extent) {
      if (auto n = int_of(extent); n && *n > 0) inner.ranges[v] = htp::Interval{0, *n - 1};
    };
    const std::string type = domain.value("type", "");
    if (type == "dense")
      for (size_t k = 0; k < vars.size() && k < domain["extents"].size(); ++k) known_range(vars[k], domain["extents"][k]);
    else if ((type == "seq" || type == "ragged") && !vars.empty())
      known_range(vars[0], domain["extent"]);
    active_vars_.insert(active_vars_.end(), vars.begin(), vars.end());
    json body = lower_block(loop.items("body"), inner);
    active_vars_.resize(active_vars_.size() - vars.size());
    return json{{"kind", "loop"},   {"vars", vars}, {"span", span_json(loop)},
                {"domain", domain}, {"dep", dep},   {"body", body}};
  }

  json dense_domain(htp::NodeRef iter, const std::vector<std::string> &vars, const Env &env) {
    if (iter.size("args") == 0 || iter.size("keywords")) unsupported(iter, "P(...) takes one or more axes");
    if (iter.size("args") == 1) return single_axis_domain(iter.item("args", 0), "dense", vars, env);
    json extents = json::array();
    for (auto a : iter.items("args")) {
      Axis axis = axis_of(a, env);
      if (!axis.lengths.empty())
        unsupported(a, "a Ragged axis binds two variables and must be the only axis of its loop");
      extents.push_back(axis.extent);
    }
    check_var_count(iter, vars, extents.size());
    return json{{"type", "dense"}, {"extents", extents}};
  }

  /// A loop over one axis: dense (or seq) over an extent, or ragged over (row, position).
  json single_axis_domain(htp::NodeRef arg, const std::string &type, const std::vector<std::string> &vars,
                          const Env &env) {
    Axis axis = axis_of(arg, env);
    if (!axis.lengths.empty()) {
      check_var_count(arg, vars, 2, true);
      return json{{"type", "ragged"}, {"extent", axis.extent}, {"lengths", axis.lengths}};
    }
    check_var_count(arg, vars, 1);
    if (type == "dense") return json{{"type", "dense"}, {"extents", json::array({axis.extent})}};
    return json{{"type", type}, {"extent", axis.extent}};
  }

  static void check_var_count(htp::NodeRef at, const std::vector<std::string> &vars, size_t n,
                              bool ragged = false) {
    if (vars.size() != n)
      throw WspError(at, "wsp.axis",
                     "this loop binds " + std::to_string(vars.size()) + " variable(s) but iterates " +
                         std::to_string(n) + " axis variable(s)" +
                         (ragged ? " (a Ragged axis binds its row and the position in the row)" : ""));
  }

  json sparse_domain(htp::NodeRef iter, const std::vector<std::string> &vars, const Env &env) {
    htp::NodeRef sparse = iter.size("args") >= 1 ? iter.item("args", 0) : htp::NodeRef();
    if (iter.size("args") != 2 || !sparse.is("Call") || surface_name(sparse.child("func")) != "Sparse")
      unsupported(iter, "P.sel iterates the selected indices of one row of a Sparse axis: P.sel(S[row]) or "
                        "P.sel(Sparse(n, indptr, indices), row)");
    if (sparse.size("args") != 3)
      throw WspError(sparse, "wsp.axis",
                     "Sparse(n, indptr, indices) takes the row count and the CSR indptr and indices tensors");
    check_var_count(iter, vars, 1);
    return json{{"type", "sparse"},
                {"rows", positive_extent(sparse.item("args", 0), env)},
                {"indptr", index_tensor(sparse.item("args", 1), env, "Sparse indptr")},
                {"indices", index_tensor(sparse.item("args", 2), env, "Sparse indices")},
                {"row", lower_expr(iter.item("args", 1), env)}};
  }

  // ---- blocks

  json lower_when(htp::NodeRef when, htp::NodeRef otherwise, const Env &env) {
    htp::NodeRef call = when.item("items", 0).child("context_expr");
    if (call.size("args") != 1 || call.size("keywords"))
      unsupported(call, "P.when(pred) takes one predicate");
    Env then_env = env, else_env = env;
    json node = {{"kind", "when"},
                 {"span", span_json(when)},
                 {"dep", "conditional"},
                 {"cond", lower_expr(call.item("args", 0), env)},
                 {"then", lower_block(when.items("body"), then_env)},
                 {"else", json::array()}};
    if (otherwise) node["else"] = lower_block(otherwise.items("body"), else_env);
    return node;
  }

  json lower_with(htp::NodeRef w, const Env &env) {
    if (w.size("items") != 1)
      unsupported(w, "a workload `with` opens one block: P.when, P.otherwise, P.pipe, combine or sequential");
    htp::NodeRef item = w.item("items", 0), call = item.child("context_expr");
    if (std::string ch = channel_operation(call, "consume"); !ch.empty())
      return stream_loop(w, item.child("optional_vars"), ch, w.items("body"), env);
    if (item.child("optional_vars"))
      unsupported(item.child("optional_vars"), "workload blocks bind no name (`with P.when(p):`)");
    std::string name = call.is("Call") ? surface_name(call.child("func")) : "";
    if (name == "P.when") return lower_when(w, htp::NodeRef(), env);
    if (name == "P.otherwise")
      unsupported(w, "`with P.otherwise():` must directly follow a `with P.when(pred):` block");
    static const std::map<std::string, std::string> orders = {
        {"combine", "unordered"}, {"sequential", "ordered"}, {"P.pipe", "pipeline"}};
    auto it = orders.find(name);
    if (it == orders.end())
      unsupported(w, "a workload `with` opens P.when, P.otherwise, P.pipe, combine or sequential; got " +
                         describe(call));
    if (call.size("args") || call.size("keywords"))
      unsupported(call, name + "() takes no arguments as a block");
    Env inner = env;
    pipe_depth_ += name == "P.pipe";
    json body = lower_block(w.items("body"), inner);
    pipe_depth_ -= name == "P.pipe";
    return json{{"kind", "group"}, {"order", it->second}, {"span", span_json(w)}, {"body", body}};
  }

  // ---- workloads launched from workloads

  /// `inner(A, n)`: the body of workload `inner` spliced here, its parameters bound to the caller's
  /// tensors (whole tensors: names, dims and directions must agree) and scalar expressions.
  json inline_workload(htp::NodeRef call, htp::NodeRef callee, const Env &env) {
    std::string name = *callee.text("name");
    if (std::find(inlining_.begin(), inlining_.end(), name) != inlining_.end() || name == *fn_.text("name")) {
      std::string chain = *fn_.text("name");
      for (const auto &w : inlining_)
        chain += " -> " + w;
      throw WspError(call, "wsp.call",
                     "workload '" + name + "' launches itself (" + chain + " -> " + name +
                         "); a task graph is finite, so workloads cannot recurse");
    }
    json sig = {{"params", json::array()}};
    for (auto arg : callee.child("args").items("args"))
      sig["params"].push_back(parse_workload_param(arg, env.constants));
    Env inner;
    inner.constants = env.constants;
    for (const auto &[param, arg] : bind_arguments(call, sig, "workload '" + name + "'")) {
      const std::string pname = param["name"];
      if (param["type"]["kind"] == "tensor") {
        const TensorDecl &t = inner.tensors[pname] = bound_tensor(arg, param, name, env);
        // The callee's dimension symbols stand for the caller's dims they are bound to (its intermediates'
        // shapes name them).
        const json &shape = param["type"]["shape"];
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d].is_string()) inner.dims.emplace(shape[d].get<std::string>(), t.shape[d]);
      } else
        inner.values[pname] = lower_expr(arg, env);
    }
    inlining_.push_back(name);
    json body = lower_block(callee.items("body"), inner);
    inlining_.pop_back();
    return json{{"kind", "inline"}, {"body", body}};
  }

  static TensorDecl bound_tensor(htp::NodeRef arg, const json &param, const std::string &callee,
                                 const Env &env) {
    const std::string what =
        "parameter '" + param["name"].get<std::string>() + "' of workload '" + callee + "'";
    const TensorDecl *t = tensor_of(arg, env);
    if (!t)
      throw WspError(arg, "wsp.argument",
                     what + " is a tensor: pass a whole tensor of the caller, got " + describe(arg));
    const json &type = param["type"];
    bool same = type["dtype"] == t->dtype && type["shape"].size() == t->shape.size();
    for (size_t d = 0; same && d < t->shape.size(); ++d)
      same = type["shape"][d].is_string() || t->shape[d].is_string() || type["shape"][d] == t->shape[d];
    if (!same)
      throw WspError(arg, "wsp.argument",
                     what + " is " + type["dtype"].get<std::string>() + " " + type["shape"].dump() +
                         ", but '" + t->name + "' is " + t->dtype + " " + t->shape.dump());
    if (param["dir"] != "in" && t->dir == "in")
      throw WspError(arg, "wsp.direction",
                     "workload '" + callee + "' writes its parameter '" + param["name"].get<std::string>() +
                         "', but '" + t->name + "' is an input of the caller (In)");
    return *t; // the caller's tensor: the inlined tasks name it
  }

  // ---- declarations

  std::optional<json> declare_intermediate(htp::NodeRef s, Env &env) {
    htp::NodeRef target = s.child("target");
    if (!target.is("Name") || s.child("value"))
      unsupported(s, "an intermediate tensor is declared as `name: Tensor[d0, ..., dtype]`, without a value");
    std::string name = *target.text("id");
    auto taken = [&](const std::string &n) {  // a name of the task graph's workload: its own or an intermediate
      if (env_.tensors.count(n) || env_.values.count(n)) return true;
      for (const auto &i : intermediates_)
        if (i["name"] == n) return true;
      return false;
    };
    if (env.tensors.count(name) || env.values.count(name) || (inlining_.empty() && taken(name)))
      throw WspError(target, "wsp.axis", "intermediate '" + name + "' redeclares a name of the workload");
    // An inlined workload's intermediate is its own: under another name when the caller has that name, or when
    // the workload is launched twice (a layer called once per layer of a model).
    std::string global = name;
    for (int k = 2; !inlining_.empty() && taken(global); ++k)
      global = name + "__" + inlining_.back() + (k > 2 ? "_" + std::to_string(k - 1) : "");
    json entry = {{"name", global}, {"type", parse_tensor_type(s.child("annotation"), env.constants)}};
    // A symbolic dimension is allocated at the extent a parameter's shape binds at run time.
    for (json &dim : entry["type"]["shape"]) {
      if (!dim.is_string()) continue;
      if (auto bound = env.dims.find(dim.get<std::string>()); bound != env.dims.end()) dim = bound->second;
      if (dim.is_string() && !bound_by_a_parameter(dim.get<std::string>()))
        guarded([&] {  // reported; the name stays declared, so its uses raise nothing more
          throw WspError(s.child("annotation"), "wsp.type",
                         "intermediate '" + name + "' of workload '" +
                             (inlining_.empty() ? *fn_.text("name") : inlining_.back()) + "' has the dimension " +
                             dim.dump() + ", which no parameter's shape binds: name it in a parameter's shape, or "
                             "give a number");
        });
    }
    env.tensors[name] = tensor_decl(entry, true);
    intermediates_.push_back(entry);
    return std::nullopt;
  }

  /// True when a tensor parameter of the workload has the dimension symbol `symbol`.
  bool bound_by_a_parameter(const std::string &symbol) const {
    for (const auto &[_, t] : env_.tensors)
      if (!t.intermediate)
        for (const json &d : t.shape)
          if (d == symbol) return true;
    return false;
  }

  std::optional<json> bind_local(htp::NodeRef s, Env &env) {
    if (s.size("targets") != 1 || !s.item("targets", 0).is("Name"))
      unsupported(
          s, "a workload local is bound once to one name: `n = expr` or `S = Sparse(n, indptr, indices)`");
    if (!channel_kind(s.child("value")).empty())
      return std::nullopt; // a channel: read in run(), checked by the csp dialect
    std::string name = *s.item("targets", 0).text("id");
    auto bound = env.values.find(name);
    bool fixed = bound != env.values.end() && bound->second.is_object() &&
                 (bound->second.value("var", "") == name || bound->second.value("param", "") == name);
    if (env.tensors.count(name) || fixed)
      throw WspError(s.item("targets", 0), "wsp.axis",
                     "'" + name + "' is a parameter or loop variable; bind the value to a new name");
    // (a local is a name for its expression, not a variable: `s = s + i` in a loop would not accumulate)
    if (bound != env.values.end())
      throw WspError(s.item("targets", 0), "wsp.axis",
                     "'" + name + "' is already bound to a value; a workload local is bound once: bind the new value "
                     "to a new name");
    htp::NodeRef value = s.child("value");
    if (value.is("Call") && surface_name(value.child("func")) == "Sparse") {
      env.sparse[name] = value; // its uses P.sel(S[row]) were rewritten to P.sel(Sparse(...), row)
      return std::nullopt;
    }
    env.values[name] = lower_expr(value, env);
    return std::nullopt;
  }

  htp::NodeRef fn_;
  htp::PassContext &ctx_;
  htp::ModuleRef module_;
  Env env_;
  json intermediates_ = json::array();
  std::vector<std::string> axes_;
  std::vector<std::string> active_vars_; ///< variables of the loops being lowered, outermost first
  std::vector<std::string> inlining_;    ///< workloads being inlined, outermost first
  int next_task_ = 0;
  int pipe_depth_ = 0; ///< nesting of `with P.pipe():` scopes around the statement being lowered
  bool failed_ = false;
};

} // namespace

std::optional<json> lower_workload(htp::NodeRef fn, htp::PassContext &ctx) {
  return WorkloadLowering(fn, ctx).run();
}

} // namespace wsp
