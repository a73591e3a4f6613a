// htp/layout_signatures.hpp — the module attribute layout.signatures (htp.layout.v1) as C++ types: the
// layout of every tensor parameter of each function that uses layouts, the mesh it is laid over, the
// collectives the function performs, and (after axe.check) its local-memory footprint. layout-axe's
// axe.infer writes it, axe.check completes it, and backends read it (docs/ir-contracts.md §7,
// docs/dialects/layout-axe.md; schema docs/schemas/layout-signatures.schema.json). One reader for every
// consumer:
//
//   std::optional<htp::LayoutSignatures> s = htp::layout_signatures(ctx.module());  // throws IrDocumentError
//   if (const htp::LayoutFunction *f = s ? s->function("gemm") : nullptr)
//     for (const auto &[name, layout] : f->params)
//       for (const htp::LayoutIter &it : layout.shard) split(name, it.dim.value(), it.axis, it.extent);
//
// A layout's facets are typed: dist (shard / replica / offset over mesh axes), mem (strides, order, banks;
// swizzle and pack are kept as the JSON values layout-axe writes), hw (the memory space) and the pending
// collective effects. The reader accepts v1 and its minor revisions and ignores keys it does not know;
// `to_json` writes what layout-axe writes (to_json(read(doc)) == doc for it).
#pragma once

#include <htp/ast.hpp>
#include <htp/ir_document.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace htp {

inline constexpr std::string_view kLayoutSignaturesAttribute = "layout.signatures";
inline constexpr std::string_view kLayoutSchema = "htp.layout.v1";

/// One iter of a layout facet: `extent` elements of a mesh axis (or, for mem banks, a bank axis) at
/// `stride`; shard and bank iters name the tensor dimension they split.
struct LayoutIter {
  int64_t extent = 1;
  int64_t stride = 1;
  std::string axis;
  std::optional<int64_t> dim;
  friend bool operator==(const LayoutIter &, const LayoutIter &) = default;
};

/// The mem facet: local strides and dimension order (absent: row-major, contiguous), banks, and the
/// swizzle and pack values as layout-axe states them (null when unset).
struct LayoutMem {
  std::optional<std::vector<int64_t>> strides;
  std::optional<std::vector<int64_t>> order;
  nlohmann::json swizzle;
  nlohmann::json pack;
  std::vector<LayoutIter> banks;
  /// A tiled local layout: the local `m` iters (extent, stride, dim) when some dim has several, each dim's
  /// iters major first and the dims in order. The local element whose row-major index splits into the
  /// digits d_k over these extents is at sum(d_k * stride_k); `strides` is then absent.
  std::vector<LayoutIter> iters;

  bool is_default() const {
    return !strides && !order && swizzle.is_null() && pack.is_null() && banks.empty() && iters.empty();
  }
  /// True when the facet says no more than an absent one would for a part of `local_shape`: row-major
  /// contiguous strides (as `Layout.axe` writes `(32, 32, "m"), (32, 1, "m")`), the identity order, no
  /// swizzle, pack, banks or tiling.
  bool is_row_major(const std::vector<int64_t> &local_shape) const {
    if (!swizzle.is_null() || !(pack.is_null() || pack == nlohmann::json(1)) || !banks.empty() || !iters.empty())
      return false;
    if (order)
      for (size_t i = 0; i < order->size(); ++i)
        if ((*order)[i] != static_cast<int64_t>(i)) return false;
    if (!strides) return true;
    if (strides->size() != local_shape.size()) return false;
    int64_t expect = 1;
    for (size_t i = local_shape.size(); i-- > 0;) {
      if (local_shape[i] != 1 && (*strides)[i] != expect) return false;
      expect *= local_shape[i];
    }
    return true;
  }
  friend bool operator==(const LayoutMem &, const LayoutMem &) = default;
};

/// A reduction a value still owes over a mesh axis (e.g. partial sums before an allreduce).
struct LayoutPending {
  std::string op;  ///< sum | max | ...
  std::string axis;
  int64_t extent = 1;
  std::string source;
  friend bool operator==(const LayoutPending &, const LayoutPending &) = default;
};

/// One layout (a parameter's, with its direction).
struct Layout {
  std::string kind = "axe";
  std::optional<std::string> source_kind;  ///< the notation it was written in, when not axe
  std::string text;                        ///< for messages: "S(0)R"
  std::optional<std::string> dist;         ///< the dist facet in S/R notation; none when it has no such view
  int64_t rank = 0;
  std::vector<int64_t> shape;                     ///< the global shape (empty when unknown)
  std::optional<std::vector<int64_t>> local_shape;  ///< one core's part
  std::string dtype;                              ///< empty when unknown
  std::vector<int64_t> tile;                      ///< the tile shape (empty when none)
  std::vector<LayoutIter> shard;
  std::vector<LayoutIter> replica;
  std::vector<std::pair<std::string, int64_t>> offset;  ///< mesh axis -> offset
  LayoutMem mem;
  std::string space = "GM";  ///< the hw facet's memory space
  std::vector<LayoutPending> pending;
  std::string dir;  ///< in | out | inout (parameters)

  friend bool operator==(const Layout &, const Layout &) = default;
};

/// A collective a function performs (allreduce, allgather, reduce_scatter, relayout).
struct LayoutCollective {
  std::string op;
  std::string from, to;  ///< the layouts before and after, as text
  std::vector<std::string> axes;
  std::optional<std::string> reduce;
  std::optional<int64_t> dim;
  IrSpan span;
  friend bool operator==(const LayoutCollective &, const LayoutCollective &) = default;
};

/// The layouts of one function.
struct LayoutFunction {
  std::optional<std::vector<int64_t>> mapping;            ///< the mesh extents it is mapped over
  std::vector<std::pair<std::string, int64_t>> mesh;      ///< axis -> extent ("mesh.x": 2)
  std::vector<std::pair<std::string, Layout>> params;     ///< in parameter order
  std::vector<LayoutCollective> collectives;
  std::optional<std::vector<std::pair<std::string, int64_t>>> footprint;  ///< space -> bytes (axe.check)

  const Layout *param(std::string_view name) const {
    for (const auto &[n, l] : params)
      if (n == name) return &l;
    return nullptr;
  }
  friend bool operator==(const LayoutFunction &, const LayoutFunction &) = default;
};

struct LayoutSignatures {
  std::string schema{kLayoutSchema};
  std::vector<std::pair<std::string, LayoutFunction>> functions;
  bool checked = false;  ///< axe.check ran (footprints present)

  const LayoutFunction *function(std::string_view name) const {
    for (const auto &[n, f] : functions)
      if (n == name) return &f;
    return nullptr;
  }
  LayoutFunction *function(std::string_view name) {
    for (auto &[n, f] : functions)
      if (n == name) return &f;
    return nullptr;
  }
  friend bool operator==(const LayoutSignatures &, const LayoutSignatures &) = default;
};

// ---- reading ------------------------------------------------------------------------------------------

/// The layout of a tensor that holds one `tile` (2-D) per core of `f`'s mesh, for handing values between
/// the parts of a mapped kernel cut in two: dimension d holds the tiles of the cores along mesh axis axes[d]
/// (an empty name: none), sharded over that axis so that each core reads and writes its own tile — or, for
/// the axes in `whole`, replicated, so that each core sees the tiles of all its peers along them. `shape`
/// is the whole tensor's, `local_shape` one core's view.
inline Layout core_slots(const LayoutFunction &f, const std::vector<int64_t> &tile, const std::string &dtype,
                         const std::vector<std::string> &axes, const std::set<std::string> &whole = {}) {
  Layout l;
  l.rank = static_cast<int64_t>(tile.size());
  l.dtype = dtype;
  l.shape = tile;
  std::vector<int64_t> local = tile;
  for (size_t d = 0; d < tile.size(); ++d) {
    if (d >= axes.size() || axes[d].empty()) {
      l.text += "R";
      continue;
    }
    size_t index = 0;
    int64_t extent = 1;
    for (size_t a = 0; a < f.mesh.size(); ++a)
      if (f.mesh[a].first == axes[d]) index = a, extent = f.mesh[a].second;
    l.shape[d] *= extent;
    if (whole.count(axes[d])) {
      l.replica.push_back(LayoutIter{extent, 1, axes[d], std::nullopt});
      local[d] *= extent;
      l.text += "R";
    } else {
      l.shard.push_back(LayoutIter{extent, 1, axes[d], static_cast<int64_t>(d)});
      l.text += "S(" + std::to_string(index) + ")";
    }
  }
  l.dist = l.text;
  l.local_shape = local;
  return l;
}

namespace layout_reader {

template <class J> using Reader = ir_reader::Reader<J>;

template <class J> LayoutIter read_iter(const Reader<J> &r, const J &v, const std::string &at, bool with_dim) {
  r.object(v, at);
  LayoutIter it;
  it.extent = r.integer(r.need(v, "extent", at), r.at(at, "extent"), 1);
  if (const J *s = r.find(v, "stride")) it.stride = r.integer(*s, r.at(at, "stride"), 0);
  it.axis = r.name(r.need(v, "axis", at), r.at(at, "axis"));
  if (with_dim) it.dim = r.integer(r.need(v, "dim", at), r.at(at, "dim"), 0);
  else if (const J *d = r.find(v, "dim")) it.dim = r.integer(*d, r.at(at, "dim"), 0);
  return it;
}

template <class J>
std::vector<LayoutIter> read_iters(const Reader<J> &r, const J &obj, std::string_view key, const std::string &at,
                                   bool with_dim) {
  return r.list(obj, key, at, [&](const J &e, const std::string &p) { return read_iter(r, e, p, with_dim); });
}

template <class J> std::vector<int64_t> read_ints(const Reader<J> &r, const J &v, const std::string &at, int64_t min) {
  r.array(v, at);
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(r.integer(v[i], r.at(at, i), min));
  return out;
}

/// {key: integer} in document order.
template <class J>
std::vector<std::pair<std::string, int64_t>> read_int_map(const Reader<J> &r, const J &v, const std::string &at,
                                                          int64_t min) {
  r.object(v, at);
  std::vector<std::pair<std::string, int64_t>> out;
  for (auto it = v.begin(); it != v.end(); ++it)
    out.emplace_back(it.key(), r.integer(it.value(), r.at(at, it.key()), min));
  return out;
}

template <class J> Layout read_layout(const Reader<J> &r, const J &v, const std::string &at) {
  r.object(v, at);
  Layout l;
  l.kind = r.one_of(r.need(v, "kind", at), r.at(at, "kind"), {"axe"});
  if (const J *s = r.find(v, "source_kind")) l.source_kind = r.name(*s, r.at(at, "source_kind"));
  l.text = r.string(r.need(v, "text", at), r.at(at, "text"));
  const J &dist = r.need(v, "dist", at);
  if (!dist.is_null()) l.dist = r.string(dist, r.at(at, "dist"));
  l.rank = r.integer(r.need(v, "rank", at), r.at(at, "rank"), 0);
  if (const J *s = r.find(v, "shape")) l.shape = read_ints(r, *s, r.at(at, "shape"), 1);
  if (const J *s = r.find(v, "local_shape")) l.local_shape = read_ints(r, *s, r.at(at, "local_shape"), 0);
  if (const J *s = r.find(v, "dtype")) l.dtype = r.dtype(*s, r.at(at, "dtype"));
  if (const J *s = r.find(v, "tile")) l.tile = read_ints(r, *s, r.at(at, "tile"), 1);
  l.shard = read_iters(r, v, "shard", at, true);
  l.replica = read_iters(r, v, "replica", at, false);
  l.offset = read_int_map(r, r.need(v, "offset", at), r.at(at, "offset"), 0);
  const std::string mp = r.at(at, "mem");
  const J &mem = r.object(r.need(v, "mem", at), mp);
  for (auto [key, field] : {std::pair{"strides", &l.mem.strides}, std::pair{"order", &l.mem.order}}) {
    const J &x = r.need(mem, key, mp);
    if (!x.is_null()) *field = read_ints(r, x, r.at(mp, key), 0);
  }
  l.mem.swizzle = nlohmann::json(r.need(mem, "swizzle", mp));
  l.mem.pack = nlohmann::json(r.need(mem, "pack", mp));
  if (r.find(mem, "banks")) l.mem.banks = read_iters(r, mem, "banks", mp, true);
  if (r.find(mem, "iters")) l.mem.iters = read_iters(r, mem, "iters", mp, true);
  const std::string hp = r.at(at, "hw");
  l.space = r.name(r.need(r.object(r.need(v, "hw", at), hp), "space", hp), r.at(hp, "space"));
  l.pending = r.list(v, "pending", at, [&](const J &e, const std::string &p) {
    r.object(e, p);
    LayoutPending x;
    x.op = r.name(r.need(e, "op", p), r.at(p, "op"));
    x.axis = r.name(r.need(e, "axis", p), r.at(p, "axis"));
    x.extent = r.integer(r.need(e, "extent", p), r.at(p, "extent"), 1);
    x.source = r.string(r.need(e, "source", p), r.at(p, "source"));
    return x;
  });
  if (const J *d = r.find(v, "dir")) l.dir = r.one_of(*d, r.at(at, "dir"), {"in", "out", "inout"});
  return l;
}

template <class J> LayoutCollective read_collective(const Reader<J> &r, const J &v, const std::string &at) {
  r.object(v, at);
  LayoutCollective c;
  c.op = r.name(r.need(v, "op", at), r.at(at, "op"));
  c.from = r.string(r.need(v, "from", at), r.at(at, "from"));
  c.to = r.string(r.need(v, "to", at), r.at(at, "to"));
  if (const J *a = r.find(v, "axes")) {
    r.array(*a, r.at(at, "axes"));
    for (size_t i = 0; i < a->size(); ++i) c.axes.push_back(r.name((*a)[i], r.at(r.at(at, "axes"), i)));
  }
  if (const J *x = r.find(v, "reduce")) c.reduce = r.name(*x, r.at(at, "reduce"));
  if (const J *x = r.find(v, "dim")) c.dim = r.integer(*x, r.at(at, "dim"), 0);
  c.span = r.span(r.need(v, "span", at), r.at(at, "span"));
  return c;
}

template <class J> LayoutFunction read_function(const Reader<J> &r, const J &v, const std::string &at) {
  r.object(v, at);
  LayoutFunction f;
  const J &mapping = r.need(v, "mapping", at);
  if (!mapping.is_null()) f.mapping = read_ints(r, mapping, r.at(at, "mapping"), 1);
  f.mesh = read_int_map(r, r.need(v, "mesh", at), r.at(at, "mesh"), 1);
  const std::string pp = r.at(at, "params");
  const J &params = r.object(r.need(v, "params", at), pp);
  for (auto it = params.begin(); it != params.end(); ++it)
    f.params.emplace_back(it.key(), read_layout(r, it.value(), r.at(pp, it.key())));
  f.collectives = r.list(v, "collectives", at,
                         [&](const J &e, const std::string &p) { return read_collective(r, e, p); });
  if (const J *fp = r.find(v, "footprint")) f.footprint = read_int_map(r, *fp, r.at(at, "footprint"), 0);
  return f;
}

} // namespace layout_reader

/// Reads and validates a layout.signatures document (nlohmann::json or ordered_json): its version, every
/// required key, every type and range the schema states. Throws IrDocumentError naming the JSON pointer of
/// the first problem.
template <class J> LayoutSignatures read_layout_signatures(const J &doc) {
  layout_reader::Reader<J> r{std::string(kLayoutSignaturesAttribute)};
  LayoutSignatures out;
  out.schema = r.document(doc, kLayoutSchema);
  const J &functions = r.object(r.need(doc, "functions", ""), "/functions");
  for (auto it = functions.begin(); it != functions.end(); ++it)
    out.functions.emplace_back(it.key(), layout_reader::read_function(r, it.value(), r.at("/functions", it.key())));
  if (const J *c = r.find(doc, "checked")) out.checked = r.boolean(*c, "/checked");
  return out;
}

/// The module's layout.signatures, read and validated; nullopt when the module has none. Throws
/// IrDocumentError when it is malformed and PassError when it is not JSON.
inline std::optional<LayoutSignatures> layout_signatures(const ModuleRef &m) {
  auto doc = m.attr_json<nlohmann::ordered_json>(kLayoutSignaturesAttribute);
  if (!doc) return std::nullopt;
  return read_layout_signatures(*doc);
}

// ---- writing ------------------------------------------------------------------------------------------

template <class J> void to_json(J &j, const LayoutIter &it) {
  j = J::object();
  j["extent"] = it.extent;
  j["stride"] = it.stride;
  j["axis"] = it.axis;
  if (it.dim) j["dim"] = *it.dim;
}

namespace layout_writer {
template <class J> J iters(const std::vector<LayoutIter> &v) {
  J a = J::array();
  for (const LayoutIter &it : v) to_json(a.emplace_back(), it);
  return a;
}
template <class J> J int_map(const std::vector<std::pair<std::string, int64_t>> &v) {
  J o = J::object();
  for (const auto &[k, x] : v) o[k] = x;
  return o;
}
} // namespace layout_writer

/// A layout as layout-axe writes it; `dir` only when set (parameters).
template <class J> void to_json(J &j, const Layout &l) {
  j = J::object();
  j["kind"] = l.kind;
  if (l.source_kind) j["source_kind"] = *l.source_kind;
  j["text"] = l.text;
  j["dist"] = l.dist ? J(*l.dist) : J();
  j["rank"] = l.rank;
  if (!l.shape.empty()) j["shape"] = l.shape;
  if (l.local_shape) j["local_shape"] = *l.local_shape;
  if (!l.dtype.empty()) j["dtype"] = l.dtype;
  if (!l.tile.empty()) j["tile"] = l.tile;
  j["shard"] = layout_writer::iters<J>(l.shard);
  j["replica"] = layout_writer::iters<J>(l.replica);
  j["offset"] = layout_writer::int_map<J>(l.offset);
  J &mem = j["mem"] = J::object();
  mem["strides"] = l.mem.strides ? J(*l.mem.strides) : J();
  mem["order"] = l.mem.order ? J(*l.mem.order) : J();
  mem["swizzle"] = J(l.mem.swizzle);
  mem["pack"] = J(l.mem.pack);
  if (!l.mem.banks.empty()) mem["banks"] = layout_writer::iters<J>(l.mem.banks);
  if (!l.mem.iters.empty()) mem["iters"] = layout_writer::iters<J>(l.mem.iters);
  j["hw"] = J::object();
  j["hw"]["space"] = l.space;
  J &pending = j["pending"] = J::array();
  for (const LayoutPending &p : l.pending) {
    J &e = pending.emplace_back(J::object());
    e["op"] = p.op;
    e["axis"] = p.axis;
    e["extent"] = p.extent;
    e["source"] = p.source;
  }
  if (!l.dir.empty()) j["dir"] = l.dir;
}

template <class J> void to_json(J &j, const LayoutCollective &c) {
  j = J::object();
  j["op"] = c.op;
  j["from"] = c.from;
  j["to"] = c.to;
  if (!c.axes.empty()) j["axes"] = c.axes;
  if (c.reduce) j["reduce"] = *c.reduce;
  if (c.dim) j["dim"] = *c.dim;
  to_json(j["span"], c.span);
}

template <class J> void to_json(J &j, const LayoutFunction &f) {
  j = J::object();
  j["mapping"] = f.mapping ? J(*f.mapping) : J();
  j["mesh"] = layout_writer::int_map<J>(f.mesh);
  J &params = j["params"] = J::object();
  for (const auto &[name, l] : f.params) to_json(params[name], l);
  J &collectives = j["collectives"] = J::array();
  for (const LayoutCollective &c : f.collectives) to_json(collectives.emplace_back(), c);
  if (f.footprint) j["footprint"] = layout_writer::int_map<J>(*f.footprint);
}

template <class J> void to_json(J &j, const LayoutSignatures &s) {
  j = J::object();
  j["schema"] = s.schema;
  J &functions = j["functions"] = J::object();
  for (const auto &[name, f] : s.functions) to_json(functions[name], f);
  if (s.checked) j["checked"] = true;
}

/// `from_json` for nlohmann's `get<htp::LayoutSignatures>()`: the validating reader.
template <class J> void from_json(const J &j, LayoutSignatures &s) { s = read_layout_signatures(j); }

} // namespace htp
