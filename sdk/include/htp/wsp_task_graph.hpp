// htp/wsp_task_graph.hpp — the module attribute wsp.task_graph (htp.wsp.task_graph.v1) as C++ types: the
// task templates dialect-wsp's pass wsp.build-task-graph writes and the backends lower to orchestration
// (docs/ir-contracts.md §5, docs/dialects/wsp.md; schema docs/schemas/wsp-task-graph.schema.json). One
// reader for every consumer:
//
//   std::optional<htp::WspTaskGraph> graph = htp::wsp_task_graph(ctx.module());  // throws IrDocumentError
//   for (const htp::WspWorkload &w : graph->workloads)
//     htp::for_each_node(w.body, [&](const htp::WspNode &n) {
//       if (n.is_task()) launch(n.kernel, n.args);
//     });
//
// Workloads, parameters, nodes (loop / when / group / task), domains, launch arguments and the schedule
// are typed; scalar expressions (Expr, §2) stay nlohmann::json, validated. The reader accepts v1 and its
// minor revisions and ignores keys it does not know; `to_json` writes what dialect-wsp writes
// (to_json(read(doc)) == doc for it).
#pragma once

#include <htp/ast.hpp>
#include <htp/ir_document.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace htp {

inline constexpr std::string_view kWspTaskGraphAttribute = "wsp.task_graph";
inline constexpr std::string_view kWspTaskGraphSchema = "htp.wsp.task_graph.v1";

/// The type of a workload parameter or intermediate: a tensor (shape, dtype) or a runtime scalar (dtype).
struct WspType {
  std::string kind;  ///< tensor | scalar
  std::vector<IrDim> shape;
  std::string dtype;

  bool is_tensor() const { return kind == "tensor"; }
  bool is_scalar() const { return kind == "scalar"; }
  friend bool operator==(const WspType &, const WspType &) = default;
};

struct WspParam {
  std::string name;
  std::string dir;  ///< in | out | inout
  WspType type;
  friend bool operator==(const WspParam &, const WspParam &) = default;
};

/// A tensor the workload allocates (a tensor type).
struct WspIntermediate {
  std::string name;
  WspType type;
  friend bool operator==(const WspIntermediate &, const WspIntermediate &) = default;
};

/// The iteration domain of a loop.
struct WspDomain {
  std::string type;                   ///< dense | seq | ragged | sparse
  std::vector<nlohmann::json> extents;  ///< dense: one Expr per loop variable
  nlohmann::json extent;              ///< seq, ragged: an Expr (null otherwise)
  std::string lengths;                ///< ragged: the tensor of inner extents, indexed by the outer variable
  nlohmann::json rows, row;           ///< sparse: the row count and the row iterated (Exprs; null otherwise)
  std::string indptr, indices;        ///< sparse: the CSR tensors; the variable runs over indices[indptr[row]:indptr[row+1]]
  friend bool operator==(const WspDomain &, const WspDomain &) = default;
};

/// How a kernel parameter is bound at a launch: a view of a workload tensor (tensor, dir, offset, shape),
/// a scalar Expr, or — in the stages of a CSP pipe (csp.graph) only — a channel's slot or item (channel,
/// dir, shape).
struct WspArg {
  std::string param;
  std::optional<std::string> tensor;          ///< a view
  std::optional<std::string> channel;         ///< a channel (csp.graph stages)
  std::string dir;                            ///< view: in | out | inout; channel: out (sent) | in (received)
  std::vector<nlohmann::json> offset;         ///< view: element offsets, one Expr per tensor dim
  std::vector<int64_t> shape;                 ///< view, channel: the extents
  std::optional<nlohmann::json> scalar;       ///< a scalar Expr
  /// channel in: the consume-loop variable naming the item (`for t in consume(ch)`); the arguments of one
  /// iteration naming the same item share one received item (absent for `recv(ch)`: an item each)
  std::optional<std::string> item;

  bool is_view() const { return tensor.has_value(); }
  bool is_channel() const { return channel.has_value(); }
  bool is_scalar() const { return scalar.has_value(); }
  friend bool operator==(const WspArg &, const WspArg &) = default;
};

/// A node of a task template. Which members a node has depends on its kind: loop `vars`, `domain`,
/// `dep` (independent | sequential | selected), `body`; when `dep` (conditional), `cond`, `then_body`,
/// `else_body`; group `order` (unordered | ordered | pipeline), `body`; task `id`, `kernel`, `index`?,
/// `args`, `reads`, `writes`. Every node has a span (in the module's file).
struct WspNode {
  std::string kind;  ///< loop | when | group | task
  IrSpan span;
  std::vector<std::string> vars;  ///< loop
  WspDomain domain;               ///< loop
  std::string dep;                ///< loop, when
  nlohmann::json cond;            ///< when: an Expr
  std::vector<WspNode> then_body, else_body;  ///< when
  std::string order;              ///< group
  std::vector<WspNode> body;      ///< loop, group
  std::string id;                 ///< task: "t0", "t1", ...
  std::string kernel;             ///< task: the tile kernel launched
  std::optional<std::vector<nlohmann::json>> index;  ///< task: the launch index k[b, h] (Exprs), when given
  std::vector<WspArg> args;       ///< task
  std::vector<std::string> reads, writes;  ///< task: workload tensors

  bool is_loop() const { return kind == "loop"; }
  bool is_when() const { return kind == "when"; }
  bool is_group() const { return kind == "group"; }
  bool is_task() const { return kind == "task"; }
  friend bool operator==(const WspNode &, const WspNode &) = default;
};

struct WspDispatch {
  std::string policy;               ///< round_robin | affinity | hash | work_steal
  std::optional<int64_t> n;         ///< round_robin
  std::optional<std::string> axis;  ///< affinity, hash
  friend bool operator==(const WspDispatch &, const WspDispatch &) = default;
};

struct WspTiming {
  std::string mode;          ///< immediate | batched
  std::optional<int64_t> n;  ///< batched
  friend bool operator==(const WspTiming &, const WspTiming &) = default;
};

struct WspTileFactor {
  std::string axis;
  int64_t factor = 1;
  friend bool operator==(const WspTileFactor &, const WspTileFactor &) = default;
};

struct WspBuffer {
  std::string tensor, space;
  std::optional<IrSpan> span;  ///< the directive's call, for messages about it
  friend bool operator==(const WspBuffer &, const WspBuffer &) = default;
};

/// The workload's @schedule; every directive is optional (absent: the backend's default).
struct WspSchedule {
  std::optional<std::string> name;  ///< the @schedule function; none when the workload has no schedule
  std::optional<IrSpan> span;
  std::optional<WspDispatch> dispatch;
  std::optional<int64_t> streams;
  std::optional<nlohmann::json> stream_by;  ///< an Expr over the task's loop variables
  std::optional<WspTiming> timing;
  std::optional<std::vector<WspTileFactor>> tile;
  std::optional<int64_t> pipeline_depth;    ///< pipeline(depth)
  std::optional<std::vector<WspBuffer>> buffer;
  std::optional<int64_t> task_window;
  friend bool operator==(const WspSchedule &, const WspSchedule &) = default;
};

struct WspWorkload {
  std::string name;
  IrSpan span;
  std::vector<WspParam> params;
  std::vector<WspIntermediate> intermediates;
  std::vector<std::string> axes;
  std::vector<WspNode> body;
  WspSchedule schedule;
  friend bool operator==(const WspWorkload &, const WspWorkload &) = default;
};

struct WspTaskGraph {
  std::string schema = std::string(kWspTaskGraphSchema);  ///< as read (v1 or a minor revision)
  std::vector<WspWorkload> workloads;
  friend bool operator==(const WspTaskGraph &, const WspTaskGraph &) = default;
};

/// Calls f(node) on every node of `nodes` and the nodes nested in them (body, then, else), pre-order.
template <class F> void for_each_node(const std::vector<WspNode> &nodes, F &&f) {
  for (const WspNode &n : nodes) {
    f(n);
    for_each_node(n.body, f);
    for_each_node(n.then_body, f);
    for_each_node(n.else_body, f);
  }
}

/// The kernels the tasks of `graph`'s workloads launch.
inline std::set<std::string> launched_kernels(const WspTaskGraph &graph) {
  std::set<std::string> launched;
  for (const WspWorkload &w : graph.workloads)
    for_each_node(w.body, [&](const WspNode &n) {
      if (n.is_task()) launched.insert(n.kernel);
    });
  return launched;
}

// ---- reading ------------------------------------------------------------------------------------------

namespace wsp_task_graph_reader {

template <class J> using Reader = ir_reader::Reader<J>;

template <class J>
std::vector<nlohmann::json> exprs(const Reader<J> &r, const J &v, const std::string &path, size_t min_size = 0) {
  r.array(v, path);
  if (v.size() < min_size) r.fail(path, "expected at least " + std::to_string(min_size) + " expression");
  std::vector<nlohmann::json> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(r.expr(v[i], Reader<J>::at(path, i)));
  return out;
}

template <class J> std::optional<int64_t> positive(const Reader<J> &r, const J &obj, const char *key, const std::string &path) {
  const J *x = r.find(obj, key);
  if (!x) return std::nullopt;
  return r.integer(*x, Reader<J>::at(path, key), 1);
}

template <class J> WspType read_type(const Reader<J> &r, const J &v, const std::string &path, bool tensor_only) {
  using R = Reader<J>;
  r.object(v, path);
  WspType t;
  t.kind = tensor_only ? r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"tensor"})
                       : r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"tensor", "scalar"});
  if (t.is_tensor()) t.shape = r.dims(r.need(v, "shape", path), R::at(path, "shape"));
  t.dtype = r.dtype(r.need(v, "dtype", path), R::at(path, "dtype"));
  return t;
}

template <class J> WspDomain read_domain(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  WspDomain d;
  d.type = r.one_of(r.need(v, "type", path), R::at(path, "type"), {"dense", "seq", "ragged", "sparse"});
  if (d.type == "dense") {
    d.extents = exprs(r, r.need(v, "extents", path), R::at(path, "extents"), 1);
  } else if (d.type == "seq" || d.type == "ragged") {
    d.extent = r.expr(r.need(v, "extent", path), R::at(path, "extent"));
    if (d.type == "ragged") d.lengths = r.identifier(r.need(v, "lengths", path), R::at(path, "lengths"));
  } else {
    d.rows = r.expr(r.need(v, "rows", path), R::at(path, "rows"));
    d.indptr = r.identifier(r.need(v, "indptr", path), R::at(path, "indptr"));
    d.indices = r.identifier(r.need(v, "indices", path), R::at(path, "indices"));
    d.row = r.expr(r.need(v, "row", path), R::at(path, "row"));
  }
  return d;
}

/// What the node readers accept beyond wsp.task_graph: csp.graph stages bind channels.
struct NodeOptions {
  bool channels = false;
};

template <class J> WspArg read_arg(const Reader<J> &r, const J &v, const std::string &path, const NodeOptions &o) {
  using R = Reader<J>;
  r.object(v, path);
  WspArg a;
  a.param = r.identifier(r.need(v, "param", path), R::at(path, "param"));
  if (const J *s = r.find(v, "scalar")) {
    a.scalar = r.expr(*s, R::at(path, "scalar"));
    return a;
  }
  const J *ch = o.channels ? r.find(v, "channel") : nullptr;
  if (ch) {
    a.channel = r.identifier(*ch, R::at(path, "channel"));
    a.dir = r.one_of(r.need(v, "dir", path), R::at(path, "dir"), {"in", "out"});
    if (const J *item = r.find(v, "item")) a.item = r.identifier(*item, R::at(path, "item"));
  } else {
    if (!r.find(v, "tensor"))
      r.fail(R::at(path, "tensor"), o.channels ? "required key is missing (an argument has tensor, scalar or channel)"
                                               : "required key is missing (an argument has tensor or scalar)");
    a.tensor = r.identifier(r.need(v, "tensor", path), R::at(path, "tensor"));
    a.dir = r.one_of(r.need(v, "dir", path), R::at(path, "dir"), {"in", "out", "inout"});
    a.offset = exprs(r, r.need(v, "offset", path), R::at(path, "offset"), 1);
  }
  a.shape = r.shape(r.need(v, "shape", path), R::at(path, "shape"));
  return a;
}

template <class J>
std::vector<WspNode> read_body(Reader<J> &r, const J &v, const std::string &path, const NodeOptions &o);

template <class J> WspNode read_node(Reader<J> &r, const J &v, const std::string &path, const NodeOptions &o = {}) {
  using R = Reader<J>;
  r.object(v, path);
  const std::optional<IrSpan> outer = r.span();
  WspNode n;
  n.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  r.set_span(n.span);
  n.kind = r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"loop", "when", "group", "task"});
  if (n.is_loop()) {
    n.vars = r.identifiers(r.need(v, "vars", path), R::at(path, "vars"), 1);
    n.domain = read_domain(r, r.need(v, "domain", path), R::at(path, "domain"));
    n.dep = r.one_of(r.need(v, "dep", path), R::at(path, "dep"), {"independent", "sequential", "selected"});
    n.body = read_body(r, r.need(v, "body", path), R::at(path, "body"), o);
  } else if (n.is_when()) {
    n.dep = r.one_of(r.need(v, "dep", path), R::at(path, "dep"), {"conditional"});
    n.cond = r.expr(r.need(v, "cond", path), R::at(path, "cond"));
    n.then_body = read_body(r, r.need(v, "then", path), R::at(path, "then"), o);
    n.else_body = read_body(r, r.need(v, "else", path), R::at(path, "else"), o);
  } else if (n.is_group()) {
    n.order = r.one_of(r.need(v, "order", path), R::at(path, "order"), {"unordered", "ordered", "pipeline"});
    n.body = read_body(r, r.need(v, "body", path), R::at(path, "body"), o);
  } else {
    const std::string ip = R::at(path, "id");
    n.id = r.name(r.need(v, "id", path), ip);
    if (n.id.size() < 2 || n.id[0] != 't' || n.id.find_first_not_of("0123456789", 1) != std::string::npos)
      r.fail(ip, "expected t<number>, found \"" + n.id + "\"");
    n.kernel = r.identifier(r.need(v, "kernel", path), R::at(path, "kernel"));
    if (const J *x = r.find(v, "index")) n.index = exprs(r, *x, R::at(path, "index"));
    n.args = r.list(v, "args", path, [&](const J &a, const std::string &at) { return read_arg(r, a, at, o); });
    n.reads = r.identifiers(r.need(v, "reads", path), R::at(path, "reads"));
    n.writes = r.identifiers(r.need(v, "writes", path), R::at(path, "writes"));
  }
  r.set_span(outer);
  return n;
}

template <class J>
std::vector<WspNode> read_body(Reader<J> &r, const J &v, const std::string &path, const NodeOptions &o) {
  r.array(v, path);
  std::vector<WspNode> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) out.push_back(read_node(r, v[i], Reader<J>::at(path, i), o));
  return out;
}

template <class J> WspSchedule read_schedule(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  WspSchedule s;
  const J &name = r.need(v, "name", path);
  if (!name.is_null()) s.name = r.identifier(name, R::at(path, "name"));
  const J &span = r.need(v, "span", path);
  if (!span.is_null()) s.span = r.span(span, R::at(path, "span"));
  if (const J *d = r.find(v, "dispatch")) {
    const std::string dp = R::at(path, "dispatch");
    r.object(*d, dp);
    WspDispatch x;
    x.policy = r.one_of(r.need(*d, "policy", dp), R::at(dp, "policy"), {"round_robin", "affinity", "hash", "work_steal"});
    if (x.policy == "round_robin") x.n = r.integer(r.need(*d, "n", dp), R::at(dp, "n"), 1);
    if (x.policy == "affinity" || x.policy == "hash") x.axis = r.identifier(r.need(*d, "axis", dp), R::at(dp, "axis"));
    s.dispatch = x;
  }
  s.streams = positive(r, v, "streams", path);
  if (const J *x = r.find(v, "stream_by")) s.stream_by = r.expr(*x, R::at(path, "stream_by"));
  if (const J *t = r.find(v, "timing")) {
    const std::string tp = R::at(path, "timing");
    r.object(*t, tp);
    WspTiming x;
    x.mode = r.one_of(r.need(*t, "mode", tp), R::at(tp, "mode"), {"immediate", "batched"});
    if (x.mode == "batched") x.n = r.integer(r.need(*t, "n", tp), R::at(tp, "n"), 1);
    s.timing = x;
  }
  if (r.find(v, "tile"))
    s.tile = r.list(v, "tile", path, [&](const J &e, const std::string &ep) {
      r.object(e, ep);
      return WspTileFactor{r.identifier(r.need(e, "axis", ep), R::at(ep, "axis")),
                           r.integer(r.need(e, "factor", ep), R::at(ep, "factor"), 1)};
    });
  if (const J *p = r.find(v, "pipeline")) {
    const std::string pp = R::at(path, "pipeline");
    r.object(*p, pp);
    s.pipeline_depth = r.integer(r.need(*p, "depth", pp), R::at(pp, "depth"), 1);
  }
  if (r.find(v, "buffer"))
    s.buffer = r.list(v, "buffer", path, [&](const J &e, const std::string &ep) {
      r.object(e, ep);
      WspBuffer b{r.identifier(r.need(e, "tensor", ep), R::at(ep, "tensor")),
                  r.name(r.need(e, "space", ep), R::at(ep, "space")), std::nullopt};
      if (const J *sp = r.find(e, "span")) b.span = r.span(*sp, R::at(ep, "span"));
      return b;
    });
  s.task_window = positive(r, v, "task_window", path);
  return s;
}

template <class J> WspParam read_param(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  WspParam p;
  p.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  p.dir = r.one_of(r.need(v, "dir", path), R::at(path, "dir"), {"in", "out", "inout"});
  p.type = read_type(r, r.need(v, "type", path), R::at(path, "type"), false);
  return p;
}

template <class J> WspWorkload read_workload(Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  WspWorkload w;
  r.set_span(std::nullopt);
  w.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  r.set_span(w.span);
  w.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  w.params = r.list(v, "params", path, [&](const J &p, const std::string &at) { return read_param(r, p, at); });
  w.intermediates = r.list(v, "intermediates", path, [&](const J &e, const std::string &ep) {
    r.object(e, ep);
    return WspIntermediate{r.identifier(r.need(e, "name", ep), R::at(ep, "name")),
                           read_type(r, r.need(e, "type", ep), R::at(ep, "type"), true)};
  });
  w.axes = r.identifiers(r.need(v, "axes", path), R::at(path, "axes"));
  w.body = read_body(r, r.need(v, "body", path), R::at(path, "body"), NodeOptions{});
  w.schedule = read_schedule(r, r.need(v, "schedule", path), R::at(path, "schedule"));
  r.set_span(std::nullopt);
  return w;
}

} // namespace wsp_task_graph_reader

/// Reads and validates a wsp.task_graph document (nlohmann::json or ordered_json); throws IrDocumentError
/// naming the JSON pointer of the first problem (and the span of the workload or node around it).
template <class J> WspTaskGraph read_wsp_task_graph(const J &doc) {
  wsp_task_graph_reader::Reader<J> r{std::string(kWspTaskGraphAttribute)};
  WspTaskGraph out;
  out.schema = r.document(doc, kWspTaskGraphSchema);
  out.workloads = r.list(doc, "workloads", "", [&](const J &w, const std::string &at) {
    return wsp_task_graph_reader::read_workload(r, w, at);
  });
  return out;
}

/// The module's wsp.task_graph, read and validated; nullopt when the module has none. Throws
/// IrDocumentError when it is malformed and PassError when it is not JSON.
inline std::optional<WspTaskGraph> wsp_task_graph(const ModuleRef &m) {
  auto doc = m.attr_json<nlohmann::json>(kWspTaskGraphAttribute);
  if (!doc) return std::nullopt;
  return read_wsp_task_graph(*doc);
}

// ---- writing ------------------------------------------------------------------------------------------

template <class J> void to_json(J &j, const WspType &t) {
  j = J::object();
  j["kind"] = t.kind;
  if (t.is_tensor()) {
    J &shape = j["shape"] = J::array();
    for (const IrDim &d : t.shape) to_json(shape.emplace_back(), d);
  }
  j["dtype"] = t.dtype;
}

template <class J> void to_json(J &j, const WspParam &p) {
  j = J::object();
  j["name"] = p.name;
  j["dir"] = p.dir;
  to_json(j["type"], p.type);
}

template <class J> void to_json(J &j, const WspIntermediate &i) {
  j = J::object();
  j["name"] = i.name;
  to_json(j["type"], i.type);
}

template <class J> void to_json(J &j, const WspDomain &d) {
  j = J::object();
  j["type"] = d.type;
  if (d.type == "dense") {
    J &extents = j["extents"] = J::array();
    for (const nlohmann::json &e : d.extents) extents.push_back(J(e));
  } else if (d.type == "seq" || d.type == "ragged") {
    j["extent"] = J(d.extent);
    if (d.type == "ragged") j["lengths"] = d.lengths;
  } else {
    j["rows"] = J(d.rows);
    j["indptr"] = d.indptr;
    j["indices"] = d.indices;
    j["row"] = J(d.row);
  }
}

template <class J> void to_json(J &j, const WspArg &a) {
  j = J::object();
  j["param"] = a.param;
  if (a.scalar) {
    j["scalar"] = J(*a.scalar);
    return;
  }
  if (a.channel) j["channel"] = *a.channel;
  if (a.item) j["item"] = *a.item;
  if (a.tensor) j["tensor"] = *a.tensor;
  j["dir"] = a.dir;
  if (a.tensor) {
    J &offset = j["offset"] = J::array();
    for (const nlohmann::json &e : a.offset) offset.push_back(J(e));
  }
  j["shape"] = a.shape;
}

template <class J> void to_json(J &j, const WspNode &n) {
  auto body = [](J &out, const std::vector<WspNode> &nodes) {
    out = J::array();
    for (const WspNode &x : nodes) to_json(out.emplace_back(), x);
  };
  j = J::object();
  j["kind"] = n.kind;
  if (n.is_loop()) {
    j["vars"] = n.vars;
    to_json(j["span"], n.span);
    to_json(j["domain"], n.domain);
    j["dep"] = n.dep;
    body(j["body"], n.body);
  } else if (n.is_when()) {
    to_json(j["span"], n.span);
    j["dep"] = n.dep;
    j["cond"] = J(n.cond);
    body(j["then"], n.then_body);
    body(j["else"], n.else_body);
  } else if (n.is_group()) {
    j["order"] = n.order;
    to_json(j["span"], n.span);
    body(j["body"], n.body);
  } else {
    j["id"] = n.id;
    j["kernel"] = n.kernel;
    to_json(j["span"], n.span);
    if (n.index) {
      J &index = j["index"] = J::array();
      for (const nlohmann::json &e : *n.index) index.push_back(J(e));
    }
    J &args = j["args"] = J::array();
    for (const WspArg &a : n.args) to_json(args.emplace_back(), a);
    j["reads"] = n.reads;
    j["writes"] = n.writes;
  }
}

template <class J> void to_json(J &j, const WspSchedule &s) {
  j = J::object();
  j["name"] = s.name ? J(*s.name) : J();
  if (s.span) to_json(j["span"], *s.span);
  else j["span"] = J();
  if (s.dispatch) {
    J &d = j["dispatch"] = J::object();
    d["policy"] = s.dispatch->policy;
    if (s.dispatch->n) d["n"] = *s.dispatch->n;
    if (s.dispatch->axis) d["axis"] = *s.dispatch->axis;
  }
  if (s.streams) j["streams"] = *s.streams;
  if (s.stream_by) j["stream_by"] = J(*s.stream_by);
  if (s.timing) {
    J &t = j["timing"] = J::object();
    t["mode"] = s.timing->mode;
    if (s.timing->n) t["n"] = *s.timing->n;
  }
  if (s.tile) {
    J &t = j["tile"] = J::array();
    for (const WspTileFactor &f : *s.tile) t.push_back(J{{"axis", f.axis}, {"factor", f.factor}});
  }
  if (s.pipeline_depth) j["pipeline"] = J{{"depth", *s.pipeline_depth}};
  if (s.buffer) {
    J &b = j["buffer"] = J::array();
    for (const WspBuffer &x : *s.buffer) {
      b.push_back(J{{"tensor", x.tensor}, {"space", x.space}});
      if (x.span) b.back()["span"] = J(*x.span);
    }
  }
  if (s.task_window) j["task_window"] = *s.task_window;
}

template <class J> void to_json(J &j, const WspWorkload &w) {
  j = J::object();
  j["name"] = w.name;
  to_json(j["span"], w.span);
  J &params = j["params"] = J::array();
  for (const WspParam &p : w.params) to_json(params.emplace_back(), p);
  J &inter = j["intermediates"] = J::array();
  for (const WspIntermediate &i : w.intermediates) to_json(inter.emplace_back(), i);
  j["axes"] = w.axes;
  J &body = j["body"] = J::array();
  for (const WspNode &n : w.body) to_json(body.emplace_back(), n);
  to_json(j["schedule"], w.schedule);
}

template <class J> void to_json(J &j, const WspTaskGraph &g) {
  j = J::object();
  j["schema"] = g.schema;
  J &workloads = j["workloads"] = J::array();
  for (const WspWorkload &w : g.workloads) to_json(workloads.emplace_back(), w);
}

/// `from_json` for nlohmann's `get<htp::WspTaskGraph>()`: the validating reader.
template <class J> void from_json(const J &j, WspTaskGraph &g) { g = read_wsp_task_graph(j); }

} // namespace htp
