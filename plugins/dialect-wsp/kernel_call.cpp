#include "kernel_call.hpp"

#include "signature.hpp"

#include <functional>
#include <set>

namespace wsp {

namespace {

/// A view of a tensor passed to a kernel: per tensor dimension its offset and extent, and which
/// dimensions the view keeps (an integer index drops its dimension).
struct View {
  const TensorDecl *tensor = nullptr;
  json offset = json::array();
  json extent = json::array();
  std::vector<bool> kept;
};

std::string shape_text(const json &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].is_string() ? shape[i].get<std::string>() : shape[i].dump();
  }
  return s + "]";
}

std::string join_names(const json &params) {
  std::string s;
  for (const auto &p : params)
    s += (s.empty() ? "" : ", ") + p["name"].get<std::string>();
  return s;
}

bool is_constexpr(const json &p) {
  return p["type"]["kind"] == "constexpr";
}

/// The kernel parameters a call must bind (constexpr parameters are fixed by the kernel).
json bindable(const json &sig) {
  json out = json::array();
  for (const auto &p : sig["params"])
    if (!is_constexpr(p)) out.push_back(p);
  return out;
}

} // namespace

std::vector<std::pair<json, htp::NodeRef>> bind_arguments(htp::NodeRef call, const json &sig,
                                                          const std::string &callee, bool leaves_slot) {
  json params = bindable(sig);
  size_t given = call.size("args") + call.size("keywords");
  auto arity = [&](const std::string &detail) {
    return WspError(call, "wsp.arity",
                    callee + " takes " + std::to_string(params.size()) + " argument(s) (" +
                        join_names(params) + "), but " + std::to_string(given) + " were given" + detail);
  };
  if (call.size("args") > params.size()) throw arity("");
  std::vector<htp::NodeRef> bound(params.size());
  for (size_t i = 0; i < call.size("args"); ++i) {
    if (call.item("args", i).is("Starred"))
      throw WspError(call.item("args", i), "wsp.argument",
                     "*args cannot be bound statically; pass each argument");
    bound[i] = call.item("args", i);
  }
  for (auto kw : call.items("keywords")) {
    auto name = kw.text("arg");
    if (!name) throw WspError(kw, "wsp.argument", "**kwargs cannot be bound statically; pass each argument");
    size_t i = 0;
    while (i < params.size() && params[i]["name"] != *name)
      ++i;
    if (i == params.size()) {
      bool fixed = false;
      for (const auto &p : sig["params"])
        fixed |= p["name"] == *name;
      throw WspError(kw, "wsp.argument",
                     fixed
                         ? "parameter '" + *name + "' of " + callee +
                               " is a Constexpr: its value is its default in the kernel, not passed by a launch; "
                               "a value the launch passes is a Scalar parameter (" + *name + ": Scalar[i32])"
                         : callee + " has no parameter '" + *name + "' (it has " + join_names(params) + ")");
    }
    if (bound[i])
      throw WspError(kw, "wsp.argument", "parameter '" + *name + "' of " + callee + " is given twice");
    bound[i] = kw.child("value");
  }
  std::string missing;
  size_t unbound = 0;
  for (size_t i = 0; i < params.size(); ++i)
    if (!bound[i]) missing += (missing.empty() ? "" : ", ") + params[i]["name"].get<std::string>(), ++unbound;
  if (leaves_slot && unbound != 1)
    throw WspError(
        call, "wsp.arity",
        "a launch sent on a channel leaves exactly one Out tensor parameter of " + callee +
            " unbound, for the channel's slot; " +
            (unbound ? "this one leaves " + missing : std::string("this one binds every parameter")));
  if (!leaves_slot && !missing.empty()) throw arity(": missing " + missing);
  std::vector<std::pair<json, htp::NodeRef>> out;
  for (size_t i = 0; i < params.size(); ++i)
    out.emplace_back(params[i], bound[i]);
  return out;
}

namespace {

/// An index or slice bound: an integer Expr (a float literal has no element offset).
json index_expr(htp::NodeRef n, const Env &env) {
  json e = lower_expr(n, env);
  if (e.is_number_float())
    throw WspError(n, "wsp.expr", "an index into a tensor is an integer, got " + e.dump());
  return e;
}

View view_over(const TensorDecl &t) {
  View v;
  v.tensor = &t;
  return v;
}

void full_dim(View &v, size_t d) {
  v.offset.push_back(0);
  v.extent.push_back(v.tensor->shape[d]);
  v.kept.push_back(true);
}

View tile_view(htp::NodeRef arg, const TensorDecl &t, const json &pshape, const Env &env) {
  View v = view_over(t);
  size_t rank = t.shape.size();
  for (htp::NodeRef k : arg.items("keywords")) {
    // shape= restating the parameter's shape is allowed (a kernel body's tile views take it); another is not
    const std::optional<std::string> keyword = k.text("arg");  // (none: **kwargs)
    const bool shape = keyword == "shape";
    json given = json::array();
    htp::NodeRef value = k.child("value");
    if (shape && value.is("Tuple"))
      for (htp::NodeRef e : value.items("elts")) given.push_back(lower_expr(e, env));
    if (given == pshape) continue;
    throw WspError(shape ? value : arg, "wsp.tile-shape",
                   t.name + ".tile(...) of a launch moves the shape of the kernel parameter it binds, " +
                       shape_text(pshape) +
                       (shape ? ", not " + (given.size() == value.size("elts") ? shape_text(given) : describe(value)) +
                                    ": drop shape=, or pass a slice of the shape the parameter takes"
                              : "; it takes tile indices and shape= only, got " + keyword.value_or("**") + "="));
  }
  if (arg.size("args") != rank)
    throw WspError(arg, "wsp.tile-shape",
                   "'" + t.name + "' is " + std::to_string(rank) + "-D, so " + t.name + ".tile(...) takes " +
                       std::to_string(rank) + " tile index(es), got " + std::to_string(arg.size("args")));
  if (pshape.size() != rank)
    throw WspError(arg, "wsp.tile-shape",
                   "the kernel parameter is a " + std::to_string(pshape.size()) + "-D tile " +
                       shape_text(pshape) + ", but '" + t.name + "' is " + std::to_string(rank) + "-D " +
                       shape_text(t.shape) + "; slice it instead of tiling it");
  for (size_t d = 0; d < rank; ++d) {
    int64_t r = pshape[d].get<int64_t>();
    if (t.shape[d].is_number_integer() && t.shape[d].get<int64_t>() % r != 0)
      throw WspError(arg, "wsp.tile-shape",
                     "tiles " + shape_text(pshape) + " do not divide '" + t.name + "' " +
                         shape_text(t.shape) + ": dimension " + std::to_string(d) + " (" + t.shape[d].dump() +
                         ") is not a multiple of " + std::to_string(r));
    v.offset.push_back(make_op("mul", {index_expr(arg.item("args", d), env), r}));
    v.extent.push_back(r);
    v.kept.push_back(true);
  }
  return v;
}

View slice_view(htp::NodeRef arg, const TensorDecl &t, const Env &env) {
  View v = view_over(t);
  htp::NodeRef slice = arg.child("slice");
  std::vector<htp::NodeRef> parts =
      slice.is("Tuple") ? slice.items("elts") : std::vector<htp::NodeRef>{slice};
  if (parts.size() > t.shape.size())
    throw WspError(arg, "wsp.tile-shape",
                   "'" + t.name + "' has " + std::to_string(t.shape.size()) +
                       " dimension(s) but is indexed with " + std::to_string(parts.size()));
  // A constant negative index or bound of a dim of static size counts from its end, as in Python (A[-16:, :]).
  auto from_end = [&](json e, size_t d) {
    if (e.is_number_integer() && e.get<int64_t>() < 0 && t.shape[d].is_number_integer() &&
        e.get<int64_t>() >= -t.shape[d].get<int64_t>())
      return json(t.shape[d].get<int64_t>() + e.get<int64_t>());
    return e;
  };
  for (size_t d = 0; d < parts.size(); ++d) {
    htp::NodeRef p = parts[d];
    if (!p.is("Slice")) {
      v.offset.push_back(from_end(index_expr(p, env), d));
      v.extent.push_back(1);
      v.kept.push_back(false);
      continue;
    }
    if (p.child("step"))
      throw WspError(p, "wsp.tile-shape", "strided slices are not supported in kernel arguments");
    json lo = p.child("lower") ? from_end(index_expr(p.child("lower"), env), d) : json(0);
    json hi = p.child("upper") ? from_end(index_expr(p.child("upper"), env), d) : dim_expr(t.shape[d]);
    auto extent = constant_difference(hi, lo);
    bool whole = !p.child("lower") && !p.child("upper");
    if (!extent && !whole)
      throw WspError(p, "wsp.tile-shape",
                     "the extent of this slice of '" + t.name +
                         "' is not a compile-time constant; a kernel tile has a static shape");
    if (extent && *extent <= 0)
      throw WspError(p, "wsp.tile-shape",
                     "this slice of '" + t.name + "' is empty (extent " + std::to_string(*extent) + ")");
    v.offset.push_back(lo);
    v.extent.push_back(extent ? json(*extent) : t.shape[d]);
    v.kept.push_back(true);
  }
  for (size_t d = parts.size(); d < t.shape.size(); ++d)
    full_dim(v, d);
  return v;
}

View view_of(htp::NodeRef arg, const json &pshape, const Env &env, const std::string &what) {
  if (const TensorDecl *t = tensor_of(arg, env)) {
    View v = view_over(*t);
    for (size_t d = 0; d < t->shape.size(); ++d)
      full_dim(v, d);
    return v;
  }
  if (arg.is("Call") && arg.child("func").is("Attribute") && arg.child("func").text("attr") == "tile")
    if (const TensorDecl *t = tensor_of(arg.child("func").child("value"), env))
      return tile_view(arg, *t, pshape, env);
  if (arg.is("Subscript"))
    if (const TensorDecl *t = tensor_of(arg.child("value"), env)) return slice_view(arg, *t, env);
  throw WspError(arg, "wsp.argument",
                 what +
                     " is a tensor, so pass a workload tensor or a view of one (A, A.tile(i, j), "
                     "A[i, a:b]); got " +
                     describe(arg));
}

/// Whether the view's shape is the kernel parameter's: its kept dimensions, or all of them with the
/// dropped ones as 1. A symbolic extent matches any size (checked at run time).
bool shape_matches(const View &v, const json &pshape) {
  auto same = [&](const json &dims) {
    if (dims.size() != pshape.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i)
      if (!dims[i].is_string() && dims[i] != pshape[i]) return false;
    return true;
  };
  json kept = json::array();
  for (size_t d = 0; d < v.kept.size(); ++d)
    if (v.kept[d]) kept.push_back(v.extent[d]);
  return same(kept) || same(v.extent);
}

/// A view stays inside its tensor for every value its loop variables take (a target-independent check, so
/// every backend gets the same error at the same span).
void check_bounds(htp::NodeRef arg, const View &v, const Env &env) {
  for (size_t d = 0; d < v.offset.size(); ++d) {
    auto ext = int_of(v.extent[d]), dim = int_of(v.tensor->shape[d]);
    if (!ext || !dim) continue;
    const htp::ExprRange off = htp::expr_range(v.offset[d], env.ranges);
    std::string reach;
    if (off.overflow) {
      reach = "offsets beyond 64 bits";
    } else if (off.interval) {
      const htp::Interval r = *off.interval;
      int64_t end = 0;
      if (r.lo >= 0 && !__builtin_add_overflow(r.hi, *ext, &end) && end <= *dim) continue;
      const int64_t bad = r.lo < 0 ? r.lo : r.hi;
      int64_t bad_end = 0;
      reach = __builtin_add_overflow(bad, *ext, &bad_end)
                  ? "offset " + std::to_string(bad)
                  : "[" + std::to_string(bad) + ", " + std::to_string(bad_end) + ")";
    } else {
      continue;  // a runtime offset: the bindings check it
    }
    const std::string over = htp::ranges_text(v.offset[d], env.ranges);
    throw WspError(arg, "wsp.tile-shape",
                   "this view of '" + v.tensor->name + "' " + shape_text(v.tensor->shape) + " covers " + reach +
                       " in dimension " + std::to_string(d) + (over.empty() ? "" : " over " + over) +
                       ", out of bounds");
  }
}

json tensor_arg(htp::NodeRef arg, const json &param, const Env &env, const std::string &kernel,
                std::set<std::string> &reads, std::set<std::string> &writes) {
  const std::string pname = param["name"], pdir = param.value("dir", "in");
  const json &ptype = param["type"];
  const json &pshape = ptype["shape"];
  std::string what = "parameter '" + pname + "' of kernel '" + kernel + "'";
  View v = view_of(arg, pshape, env, what);
  const TensorDecl &t = *v.tensor;
  if (ptype.value("dtype", t.dtype) != t.dtype)
    throw WspError(arg, "wsp.dtype",
                   what + " holds " + ptype["dtype"].get<std::string>() + ", but '" + t.name + "' holds " +
                       t.dtype);
  if (pdir != "in" && t.dir == "in")
    throw WspError(arg, "wsp.direction",
                   "kernel '" + kernel + "' writes its parameter '" + pname + "' (" +
                       (pdir == "out" ? "Out" : "InOut") + "), but '" + t.name +
                       "' is an input of the workload (In); declare it Out[...] or InOut[...]");
  if (!shape_matches(v, pshape)) {
    json shown = json::array();
    for (size_t d = 0; d < v.kept.size(); ++d)
      if (v.kept[d]) shown.push_back(v.extent[d]);
    throw WspError(arg, "wsp.tile-shape",
                   what + " is a " + shape_text(pshape) + " tile, but the argument is a " +
                       shape_text(shown) + " view of '" + t.name + "' " + shape_text(t.shape));
  }
  // Symbolic extents take the kernel's static size (the only size that matches at run time).
  json shape = json::array();
  for (size_t d = 0, k = 0; d < v.extent.size(); ++d) {
    json e = v.extent[d];
    if (e.is_string()) e = pshape[pshape.size() == v.extent.size() ? d : k];
    if (v.kept[d]) ++k;
    shape.push_back(e);
  }
  v.extent = shape;
  check_bounds(arg, v, env);
  if (pdir != "out") reads.insert(t.name);
  if (pdir != "in") writes.insert(t.name);
  return json{{"param", pname}, {"tensor", t.name}, {"dir", pdir}, {"offset", v.offset}, {"shape", shape}};
}

/// A tensor parameter bound to a channel: the slot a sent item is written to (`dir` out) or the item a
/// stage received (`dir` in). The parameter's type is the channel's element type.
json channel_arg(htp::NodeRef at, const json &param, const std::string &channel, const Env &env,
                 const std::string &kernel, const std::string &dir) {
  const std::string pname = param["name"], pdir = param.value("dir", "in");
  const json &elem = env.channels.at(channel);
  std::string what = "parameter '" + pname + "' of kernel '" + kernel + "'";
  if (pdir != dir)
    throw WspError(at, "wsp.direction",
                   dir == "out" ? what + " is the one left for the slot of channel '" + channel +
                                      "', so it must be Out[...], not " + (pdir == "in" ? "In" : "InOut")
                                : what + " receives an item of channel '" + channel +
                                      "', so it must be In[...]" + " (a received item is read, not written)");
  if (param["type"]["shape"] != elem["shape"] || param["type"].value("dtype", "") != elem["dtype"])
    throw WspError(at, "wsp.tile-shape",
                   what + " is " + param["type"]["dtype"].get<std::string>() + " " +
                       shape_text(param["type"]["shape"]) + ", but channel '" + channel + "' carries " +
                       elem["dtype"].get<std::string>() + " " + shape_text(elem["shape"]));
  return json{{"param", pname}, {"channel", channel}, {"dir", dir}, {"shape", elem["shape"]}};
}

json scalar_arg(htp::NodeRef arg, const json &param, const Env &env, const std::string &kernel) {
  if (const TensorDecl *t = tensor_of(arg, env))
    throw WspError(arg, "wsp.argument",
                   "parameter '" + param["name"].get<std::string>() + "' of kernel '" + kernel +
                       "' is a scalar, but '" + t->name + "' is a tensor");
  json value = lower_expr(arg, env);
  // A float given to an integer parameter: pto-a2a3sim truncated it, aie-npu1 refused it at run time.
  const std::string dtype = param["type"].value("dtype", "");
  if (is_integer_dtype(dtype)) {
    std::function<std::optional<std::string>(const json &)> floating = [&](const json &e) -> std::optional<std::string> {
      if (e.is_number_float()) return e.dump();
      if (e.is_object() && e.contains("param") && e["param"].is_string() && env.float_params.count(e["param"]))
        return "'" + e["param"].get<std::string>() + "'";
      if (e.is_object() || e.is_array())
        for (const json &x : e)
          if (auto f = floating(x)) return f;
      return std::nullopt;
    };
    if (auto f = floating(value))
      throw WspError(arg, "wsp.argument",
                     "parameter '" + param["name"].get<std::string>() + "' of kernel '" + kernel + "' is Scalar[" +
                         dtype + "], but the value passed reads " + *f +
                         ", a float: pass an integer (declare the workload's parameter int), or make the kernel's "
                         "parameter a float Scalar");
  }
  return json{{"param", param["name"]}, {"scalar", std::move(value)}};
}

} // namespace

htp::NodeRef launched_kernel(htp::NodeRef call, const htp::ModuleRef &m) {
  htp::NodeRef callee = call.child("func");
  if (callee.is("Subscript")) callee = callee.child("value");
  if (!callee.is("Name")) return {};
  htp::NodeRef fn = function_named(m, *callee.text("id"));
  if (!fn) return {};
  std::string dialect = dialect_of(fn), decorator = decorator_of(fn);
  if (dialect == "tile" && decorator == "kernel") return fn;
  throw WspError(call, "wsp.call",
                 "'" + *callee.text("id") + "' is a @" + dialect + "." + decorator +
                     " function, not a kernel: a workload launches @kernel functions");
}

std::string channel_item(htp::NodeRef n, const Env &env) {
  if (n.is("Name"))
    if (auto it = env.items.find(*n.text("id")); it != env.items.end()) return it->second;
  if (n.is("Call") && surface_name(n.child("func")) == "recv" && n.size("args") == 1 &&
      n.item("args", 0).is("Name") && env.channels.count(*n.item("args", 0).text("id")))
    return *n.item("args", 0).text("id");
  return "";
}

json lower_kernel_call(htp::NodeRef call, htp::NodeRef kernel, const Env &env, const std::string &id,
                       const std::string &slot) {
  std::string name = *kernel.text("name");
  json sig = kernel_signature(kernel, call);
  json task = {{"kind", "task"}, {"id", id}, {"kernel", name}, {"span", span_json(call)}};
  if (htp::NodeRef func = call.child("func"); func.is("Subscript")) {
    htp::NodeRef s = func.child("slice");
    json index = json::array();
    for (auto e : s.is("Tuple") ? s.items("elts") : std::vector<htp::NodeRef>{s})
      index.push_back(lower_expr(e, env));
    task["index"] = index;
  }
  std::set<std::string> reads, writes;
  json args = json::array();
  for (const auto &[param, arg] : bind_arguments(call, sig, "kernel '" + name + "'", !slot.empty())) {
    bool tensor = param["type"]["kind"] == "tensor";
    if (!arg && !tensor)
      throw WspError(call, "wsp.arity",
                     "send(" + slot + ", " + name + "(...)) leaves parameter '" +
                         param["name"].get<std::string>() +
                         "' unbound, but it is a scalar; the channel's slot binds an Out tensor parameter");
    std::string item = arg ? channel_item(arg, env) : "";
    if (!arg)
      args.push_back(channel_arg(call, param, slot, env, name, "out"));
    else if (!item.empty() && tensor) {
      json a = channel_arg(arg, param, item, env, name, "in");
      if (arg.is("Name")) a["item"] = *arg.text("id");  // a consume item: one receive per iteration
      args.push_back(std::move(a));
    }
    else if (!item.empty())
      throw WspError(arg, "wsp.argument",
                     "parameter '" + param["name"].get<std::string>() + "' of kernel '" + name +
                         "' is a scalar, but this is an item of channel '" + item + "'");
    else
      args.push_back(tensor ? tensor_arg(arg, param, env, name, reads, writes)
                            : scalar_arg(arg, param, env, name));
  }
  task["args"] = args;
  task["reads"] = reads;
  task["writes"] = writes;
  return task;
}

} // namespace wsp
