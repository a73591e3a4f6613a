// htp/csp_graph.hpp — the module attribute csp.graph (htp.csp.graph.v1) as C++ types: the process /
// channel graph of every CSP program that dialect-csp's pass csp.build-graph writes and the backends lower
// (docs/ir-contracts.md §6, docs/dialects/csp.md; schema docs/schemas/csp-graph.schema.json). One reader
// for every consumer:
//
//   std::optional<htp::CspGraph> graph = htp::csp_graph(ctx.module());  // throws IrDocumentError
//   for (const htp::CspProgram &p : graph->programs)
//     for (const htp::CspProcess &proc : p.processes)
//       if (proc.stage) lower_stage(*proc.stage);        // a pipe stage of a WSP workload
//       else lower_body(proc.function);                   // a process body in tile.kernels
//
// Programs, parameters, channels, processes (with a pipe stage as a typed task-graph node,
// htp/wsp_task_graph.hpp) and links are typed; counts and scalar bindings are Exprs (nlohmann::json,
// validated). The reader accepts v1 and its minor revisions and ignores keys it does not know; `to_json`
// writes what dialect-csp writes (to_json(read(doc)) == doc for it).
#pragma once

#include <htp/ast.hpp>
#include <htp/ir_document.hpp>
#include <htp/wsp_task_graph.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace htp {

inline constexpr std::string_view kCspGraphAttribute = "csp.graph";
inline constexpr std::string_view kCspGraphSchema = "htp.csp.graph.v1";

/// A type (docs/ir-contracts.md §1): a tensor or tile (shape of static or symbolic dims, dtype), a
/// runtime scalar (dtype) or a compile-time constant (value).
struct CspType {
  std::string kind;  ///< tensor | tile | scalar | constexpr
  std::vector<IrDim> shape;
  std::string dtype;
  nlohmann::json value;  ///< constexpr

  bool is_shaped() const { return kind == "tensor" || kind == "tile"; }
  bool is_tensor() const { return kind == "tensor"; }
  bool is_scalar() const { return kind == "scalar"; }
  friend bool operator==(const CspType &, const CspType &) = default;
};

struct CspParam {
  std::string name;
  std::string dir;  ///< in | out | inout
  CspType type;
  friend bool operator==(const CspParam &, const CspParam &) = default;
};

/// A bounded channel (Channel[T](depth)) or an event (Event(): no element, depth 0).
struct CspChannel {
  std::string name;
  std::string kind;             ///< fifo | event
  std::optional<CspType> elem;  ///< fifo: the element (a tile or tensor); none for an event
  int64_t depth = 0;            ///< slots: >= 1 for a fifo, 0 for an event
  int64_t pack = 1;             ///< elements per transfer
  std::vector<std::string> producers, consumers;  ///< processes and links, by name
  IrSpan span;

  bool is_event() const { return kind == "event"; }
  friend bool operator==(const CspChannel &, const CspChannel &) = default;
};

/// How a parameter of the process function is bound: to a tensor parameter of the program, or to a
/// scalar Expr.
struct CspBinding {
  std::string param;
  std::optional<std::string> tensor;
  std::optional<nlohmann::json> scalar;
  friend bool operator==(const CspBinding &, const CspBinding &) = default;
};

/// Items one replica puts into and gets from a channel (Exprs).
struct CspCount {
  nlohmann::json put, get;
  friend bool operator==(const CspCount &, const CspCount &) = default;
};

struct CspProcess {
  std::string name;
  int64_t replicas = 1;
  std::string function;  ///< the process body (kind process in tile.kernels); a pipe stage's copy otherwise
  IrSpan span;
  std::vector<std::string> produces, consumes;
  std::vector<CspBinding> args;
  std::map<std::string, CspCount> counts;  ///< per declared channel
  /// Programs of origin wsp.pipe: the stage as dialect-wsp lowered it, a task-graph node whose launches
  /// may bind channels (WspArg::channel).
  std::optional<WspNode> stage;
  friend bool operator==(const CspProcess &, const CspProcess &) = default;
};

/// connect([from], [to]): forwards items between channels of one element type.
struct CspLink {
  std::string name;
  std::vector<std::string> from, to;
  std::string mode;  ///< forward | distribute | join
  IrSpan span;
  friend bool operator==(const CspLink &, const CspLink &) = default;
};

struct CspProgram {
  std::string name;
  std::optional<std::string> origin;  ///< program (or absent): a @program; wsp.pipe: a workload's pipe
  IrSpan span;
  std::vector<CspParam> params;
  std::vector<CspChannel> channels;
  std::vector<CspProcess> processes;
  std::vector<CspLink> links;

  const CspChannel *channel(std::string_view n) const {
    for (const CspChannel &c : channels)
      if (c.name == n) return &c;
    return nullptr;
  }
  friend bool operator==(const CspProgram &, const CspProgram &) = default;
};

struct CspGraph {
  std::string schema = std::string(kCspGraphSchema);  ///< as read (v1 or a minor revision)
  std::vector<CspProgram> programs;
  friend bool operator==(const CspGraph &, const CspGraph &) = default;
};

/// The kernels `tasks`' workloads and `csp`'s pipe stages launch (what is not an entry point of its own).
inline std::set<std::string> launched_kernels(const WspTaskGraph &tasks, const CspGraph &csp) {
  std::set<std::string> out = launched_kernels(tasks);
  for (const CspProgram &p : csp.programs)
    for (const CspProcess &proc : p.processes)
      if (proc.stage)
        for_each_node(std::vector<WspNode>{*proc.stage}, [&](const WspNode &n) {
          if (n.is_task()) out.insert(n.kernel);
        });
  return out;
}

// ---- reading ------------------------------------------------------------------------------------------

namespace csp_graph_reader {

template <class J> using Reader = ir_reader::Reader<J>;

template <class J> CspType read_type(const Reader<J> &r, const J &v, const std::string &path, bool shaped_only) {
  using R = Reader<J>;
  r.object(v, path);
  CspType t;
  t.kind = shaped_only ? r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"tile", "tensor"})
                       : r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"tensor", "tile", "scalar", "constexpr"});
  if (t.kind == "constexpr") {
    t.value = nlohmann::json(r.need(v, "value", path));
    return t;
  }
  if (t.is_shaped()) t.shape = r.dims(r.need(v, "shape", path), R::at(path, "shape"));
  t.dtype = r.dtype(r.need(v, "dtype", path), R::at(path, "dtype"));
  return t;
}

template <class J> CspChannel read_channel(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  CspChannel c;
  c.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  c.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  c.kind = r.one_of(r.need(v, "kind", path), R::at(path, "kind"), {"fifo", "event"});
  const std::string ep = R::at(path, "elem"), dp = R::at(path, "depth");
  const J &elem = r.need(v, "elem", path);
  if (c.is_event() != elem.is_null())
    r.fail(ep, c.is_event() ? "an event carries no element (null)" : "expected the element type of the fifo");
  if (!elem.is_null()) c.elem = read_type(r, elem, ep, true);
  c.depth = r.integer(r.need(v, "depth", path), dp, c.is_event() ? 0 : 1);
  if (c.is_event() && c.depth != 0) r.fail(dp, "an event has depth 0, found " + std::to_string(c.depth));
  c.pack = r.integer(r.need(v, "pack", path), R::at(path, "pack"), 1);
  c.producers = r.identifiers(r.need(v, "producers", path), R::at(path, "producers"), 1);
  c.consumers = r.identifiers(r.need(v, "consumers", path), R::at(path, "consumers"), 1);
  return c;
}

template <class J> CspBinding read_binding(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  CspBinding b;
  b.param = r.identifier(r.need(v, "param", path), R::at(path, "param"));
  if (const J *s = r.find(v, "scalar")) b.scalar = r.expr(*s, R::at(path, "scalar"));
  else b.tensor = r.identifier(r.need(v, "tensor", path), R::at(path, "tensor"));
  return b;
}

template <class J> CspProcess read_process(Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  CspProcess p;
  p.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  const std::optional<IrSpan> outer = r.span();
  r.set_span(p.span);
  p.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  p.replicas = r.integer(r.need(v, "replicas", path), R::at(path, "replicas"), 1);
  p.function = r.identifier(r.need(v, "function", path), R::at(path, "function"));
  p.produces = r.identifiers(r.need(v, "produces", path), R::at(path, "produces"));
  p.consumes = r.identifiers(r.need(v, "consumes", path), R::at(path, "consumes"));
  p.args = r.list(v, "args", path, [&](const J &b, const std::string &at) { return read_binding(r, b, at); });
  const std::string cp = R::at(path, "counts");
  const J &counts = r.object(r.need(v, "counts", path), cp);
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    const std::string ep = R::at(cp, it.key());
    const J &e = r.object(it.value(), ep);
    p.counts[it.key()] = CspCount{r.expr(r.need(e, "put", ep), R::at(ep, "put")), r.expr(r.need(e, "get", ep), R::at(ep, "get"))};
  }
  if (const J *s = r.find(v, "stage"))
    p.stage = wsp_task_graph_reader::read_node(r, *s, R::at(path, "stage"),
                                               wsp_task_graph_reader::NodeOptions{.channels = true});
  r.set_span(outer);
  return p;
}

template <class J> CspLink read_link(const Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  CspLink l;
  l.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  l.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  l.from = r.identifiers(r.need(v, "from", path), R::at(path, "from"), 1);
  l.to = r.identifiers(r.need(v, "to", path), R::at(path, "to"), 1);
  l.mode = r.one_of(r.need(v, "mode", path), R::at(path, "mode"), {"forward", "distribute", "join"});
  return l;
}

template <class J> CspProgram read_program(Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  CspProgram p;
  r.set_span(std::nullopt);
  p.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  r.set_span(p.span);
  p.name = r.identifier(r.need(v, "name", path), R::at(path, "name"));
  if (const J *o = r.find(v, "origin")) p.origin = r.one_of(*o, R::at(path, "origin"), {"program", "wsp.pipe"});
  p.params = r.list(v, "params", path, [&](const J &x, const std::string &at) {
    r.object(x, at);
    return CspParam{r.identifier(r.need(x, "name", at), R::at(at, "name")),
                    r.one_of(r.need(x, "dir", at), R::at(at, "dir"), {"in", "out", "inout"}),
                    read_type(r, r.need(x, "type", at), R::at(at, "type"), false)};
  });
  p.channels = r.list(v, "channels", path, [&](const J &c, const std::string &at) { return read_channel(r, c, at); });
  p.processes = r.list(v, "processes", path, [&](const J &c, const std::string &at) { return read_process(r, c, at); });
  p.links = r.list(v, "links", path, [&](const J &c, const std::string &at) { return read_link(r, c, at); });
  r.set_span(std::nullopt);
  return p;
}

} // namespace csp_graph_reader

/// Reads and validates a csp.graph document (nlohmann::json or ordered_json); throws IrDocumentError
/// naming the JSON pointer of the first problem (and the span of the program or process around it).
template <class J> CspGraph read_csp_graph(const J &doc) {
  csp_graph_reader::Reader<J> r{std::string(kCspGraphAttribute)};
  CspGraph out;
  out.schema = r.document(doc, kCspGraphSchema);
  out.programs = r.list(doc, "programs", "", [&](const J &p, const std::string &at) {
    return csp_graph_reader::read_program(r, p, at);
  });
  return out;
}

/// The module's csp.graph, read and validated; nullopt when the module has none. Throws IrDocumentError
/// when it is malformed and PassError when it is not JSON.
inline std::optional<CspGraph> csp_graph(const ModuleRef &m) {
  auto doc = m.attr_json<nlohmann::json>(kCspGraphAttribute);
  if (!doc) return std::nullopt;
  return read_csp_graph(*doc);
}

// ---- writing ------------------------------------------------------------------------------------------

template <class J> void to_json(J &j, const CspType &t) {
  j = J::object();
  j["kind"] = t.kind;
  if (t.kind == "constexpr") {
    j["value"] = J(t.value);
    return;
  }
  if (t.is_shaped()) {
    J &shape = j["shape"] = J::array();
    for (const IrDim &d : t.shape) to_json(shape.emplace_back(), d);
  }
  j["dtype"] = t.dtype;
}

template <class J> void to_json(J &j, const CspParam &p) {
  j = J::object();
  j["name"] = p.name;
  j["dir"] = p.dir;
  to_json(j["type"], p.type);
}

template <class J> void to_json(J &j, const CspChannel &c) {
  j = J::object();
  j["name"] = c.name;
  j["kind"] = c.kind;
  if (c.elem) to_json(j["elem"], *c.elem);
  else j["elem"] = J();
  j["depth"] = c.depth;
  j["pack"] = c.pack;
  j["producers"] = c.producers;
  j["consumers"] = c.consumers;
  to_json(j["span"], c.span);
}

template <class J> void to_json(J &j, const CspBinding &b) {
  j = J::object();
  j["param"] = b.param;
  if (b.scalar) j["scalar"] = J(*b.scalar);
  if (b.tensor) j["tensor"] = *b.tensor;
}

template <class J> void to_json(J &j, const CspProcess &p) {
  j = J::object();
  j["name"] = p.name;
  j["replicas"] = p.replicas;
  j["function"] = p.function;
  to_json(j["span"], p.span);
  j["produces"] = p.produces;
  j["consumes"] = p.consumes;
  J &args = j["args"] = J::array();
  for (const CspBinding &b : p.args) to_json(args.emplace_back(), b);
  J &counts = j["counts"] = J::object();
  for (const auto &[channel, c] : p.counts) counts[channel] = J{{"put", J(c.put)}, {"get", J(c.get)}};
  if (p.stage) to_json(j["stage"], *p.stage);
}

template <class J> void to_json(J &j, const CspLink &l) {
  j = J::object();
  j["name"] = l.name;
  j["from"] = l.from;
  j["to"] = l.to;
  j["mode"] = l.mode;
  to_json(j["span"], l.span);
}

template <class J> void to_json(J &j, const CspProgram &p) {
  j = J::object();
  j["name"] = p.name;
  if (p.origin) j["origin"] = *p.origin;
  to_json(j["span"], p.span);
  J &params = j["params"] = J::array();
  for (const CspParam &x : p.params) to_json(params.emplace_back(), x);
  J &channels = j["channels"] = J::array();
  for (const CspChannel &x : p.channels) to_json(channels.emplace_back(), x);
  J &processes = j["processes"] = J::array();
  for (const CspProcess &x : p.processes) to_json(processes.emplace_back(), x);
  J &links = j["links"] = J::array();
  for (const CspLink &x : p.links) to_json(links.emplace_back(), x);
}

template <class J> void to_json(J &j, const CspGraph &g) {
  j = J::object();
  j["schema"] = g.schema;
  J &programs = j["programs"] = J::array();
  for (const CspProgram &p : g.programs) to_json(programs.emplace_back(), p);
}

/// `from_json` for nlohmann's `get<htp::CspGraph>()`: the validating reader.
template <class J> void from_json(const J &j, CspGraph &g) { g = read_csp_graph(j); }

} // namespace htp
