// htp/tile_kernels.hpp — the module attribute tile.kernels (htp.tile.kernels.v1) as C++ types: the
// register-style kernel IR dialect-tile's pass tile.lower writes and the backends emit from
// (docs/ir-contracts.md §4; schema docs/schemas/tile-kernels.schema.json). One reader for every consumer:
//
//   void emit(htp::PassContext &ctx) {
//     std::optional<htp::TileKernels> doc = htp::tile_kernels(ctx.module());  // throws IrDocumentError
//     if (!doc) return;                                                        // no tile.kernels
//     for (const htp::TileKernel &k : doc->kernels)
//       for (const htp::TileParam &p : k.params)
//         if (p.type.is_tensor()) use(p.name, p.local_shape, p.type.dtype);
//   }
//
// Kernels, parameters, locals and statements are typed; scalar expressions (Expr, §2) and the operands
// of foreign ops stay nlohmann::json, validated. The reader accepts the major version v1 and its minor
// revisions and ignores keys it does not know (a minor revision may add some). `to_json` writes the
// canonical form, which is what dialect-tile writes: to_json(read(doc)) == doc for it, with the keys of
// kernels, parameters, locals and statements in its order (into ordered_json; the keys inside Exprs and
// operands, held as nlohmann::json, come out sorted).
#pragma once

#include <htp/ast.hpp>
#include <htp/ir_document.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace htp {

/// The module attribute's key and the version this header reads and writes.
inline constexpr std::string_view kTileKernelsAttribute = "tile.kernels";
inline constexpr std::string_view kTileKernelsSchema = "htp.tile.kernels.v1";

/// A type (docs/ir-contracts.md §1) of a kernel parameter: a tensor in global memory, a tile, a runtime
/// scalar, or a compile-time constant.
struct TileType {
  std::string kind;            ///< tensor | tile | scalar | constexpr
  std::vector<int64_t> shape;  ///< tensor, tile: static positive dims (a tile has two)
  std::string dtype;           ///< tensor, tile, scalar
  nlohmann::json value;        ///< constexpr: its value (null when only known at the call site)

  bool is_tensor() const { return kind == "tensor"; }
  bool is_tile() const { return kind == "tile"; }
  bool is_scalar() const { return kind == "scalar"; }
  bool is_constexpr() const { return kind == "constexpr"; }
  friend bool operator==(const TileType &, const TileType &) = default;
};

/// A parameter of a kernel or process, as in its tile.signature.
struct TileParam {
  std::string name;
  std::string dir = "in";                 ///< in | out | inout
  TileType type;
  /// Tensors: the per-core shape the body works on (a layout's block; the whole shape without one).
  std::optional<std::vector<int64_t>> local_shape;

  /// The shape the kernel body sees: local_shape when stated, else the type's shape.
  const std::vector<int64_t> &body_shape() const { return local_shape ? *local_shape : type.shape; }
  friend bool operator==(const TileParam &, const TileParam &) = default;
};

/// A local register: a tile of one fixed shape and dtype, or a scalar.
struct TileLocal {
  std::string name;
  std::string kind = "tile";   ///< tile | scalar
  std::vector<int64_t> shape;  ///< tile: [rows, cols]; empty for a scalar
  std::string dtype;

  bool is_scalar() const { return kind == "scalar"; }
  friend bool operator==(const TileLocal &, const TileLocal &) = default;
};

/// One statement of a body. Which keys an op has depends on the op (docs/ir-contracts.md §4):
/// compute ops `dst` + `args` (+ `scalar` for the scalar forms, `accumulate` for matmul); load `dst`,
/// `src`, `offset`; store `dst` (the tensor), `offset`, `value` (the register); full and scalar `dst`,
/// `value` (an Expr); for `var`, `start`, `stop`, `step`, `body`; if `cond`, `then`,
/// `else`; foreign ops (another dialect's, "csp.send") `dst`?, `args`, `attrs`.
struct TileOp {
  std::string op;                                     ///< "load", "add", "for", "csp.send", ...
  std::optional<std::string> dst;                     ///< destination register (store: the tensor)
  std::optional<std::string> src;                     ///< load: the tensor parameter read
  /// Operands: register names; a foreign op's also Exprs, views {"tensor", "offset", "shape"} and names.
  std::optional<std::vector<nlohmann::json>> args;
  std::optional<std::vector<nlohmann::json>> offset;  ///< load, store: element offsets (Exprs)
  std::optional<nlohmann::json> value;                ///< store: the register stored; full, scalar: an Expr
  std::optional<nlohmann::json> scalar;               ///< scalar forms (adds, muls, ...): the operand
  std::optional<bool> accumulate;                     ///< matmul: acc += a @ b
  std::optional<nlohmann::json> attrs;                ///< foreign ops: their attributes (an object)
  std::optional<std::string> var;                     ///< for: the loop variable
  std::optional<nlohmann::json> start, stop, step;    ///< for: Exprs
  std::optional<nlohmann::json> cond;                 ///< if: an Expr
  std::vector<TileOp> body;                           ///< for
  std::vector<TileOp> then_body, else_body;           ///< if
  std::optional<std::string> set;                     ///< a vendor call's intrinsic set ("pto"); absent: portable
  std::optional<IrSpan> span;

  bool is(std::string_view name) const { return op == name; }
  /// This statement without its nested ones (body, then_body, else_body): a copy that costs the statement, not
  /// its subtree (copying each level of a deep nest whole is quadratic). A field added above is added here.
  TileOp shallow() const {
    TileOp s;
    s.op = op, s.dst = dst, s.src = src, s.args = args, s.offset = offset, s.value = value, s.scalar = scalar;
    s.accumulate = accumulate, s.attrs = attrs, s.var = var, s.start = start, s.stop = stop, s.step = step;
    s.cond = cond, s.set = set, s.span = span;
    return s;
  }
  /// Operand `i` when it is a register (or other) name.
  std::optional<std::string> arg_name(size_t i) const {
    if (!args || i >= args->size() || !(*args)[i].is_string()) return std::nullopt;
    return (*args)[i].get<std::string>();
  }
  /// The register a data movement moves: the one a load or csp.recv defines, a store writes, a csp.send sends.
  std::optional<std::string> moved_register() const {
    if (op == "load" || op == "csp.recv") return dst;
    if (op == "csp.send") return arg_name(0);
    if (op == "store" && value && value->is_string()) return value->get<std::string>();
    return std::nullopt;
  }
  /// The tensor parameter a load reads or a store writes ("" for other statements).
  std::string moved_tensor() const {
    return op == "load" ? src.value_or("") : op == "store" ? dst.value_or("") : std::string();
  }
  friend bool operator==(const TileOp &, const TileOp &) = default;
};

/// A kernel, or a function of another kind another dialect had lowered (`"kind": "process"`).
struct TileKernel {
  std::string name;
  std::string kind = "kernel";                  ///< kernel | process | another dialect's kind
  IrSpan span;
  std::optional<std::vector<int64_t>> mapping;  ///< @kernel(mapping=[...]) core grid, or none
  std::vector<TileParam> params;
  std::vector<TileLocal> locals;
  std::vector<TileOp> body;

  const TileParam *param(std::string_view n) const {
    for (const TileParam &p : params)
      if (p.name == n) return &p;
    return nullptr;
  }
  const TileLocal *local(std::string_view n) const {
    for (const TileLocal &l : locals)
      if (l.name == n) return &l;
    return nullptr;
  }
  friend bool operator==(const TileKernel &, const TileKernel &) = default;
};

/// The whole attribute.
struct TileKernels {
  std::string schema = std::string(kTileKernelsSchema);  ///< as read (v1 or a minor revision)
  std::vector<TileKernel> kernels;

  /// The kernel (or process) named `name`, or null.
  const TileKernel *find(std::string_view name) const {
    for (const TileKernel &k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
  TileKernel *find(std::string_view name) {
    for (TileKernel &k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
  friend bool operator==(const TileKernels &, const TileKernels &) = default;
};

/// The extents a tile of `rows` x `cols` covers along each of the `rank` dimensions of the view it is loaded
/// from or stored to (tile.md §2): 1 along the leading dimensions of a rank-3+ view (`x[b, 0:32, :]`), `rows` and
/// `cols` along the last two; a view of a 1-D tensor covers the tile's rows * cols elements (a [1, N] tile).
inline std::vector<int64_t> view_extents(int64_t rows, int64_t cols, size_t rank) {
  if (rank == 1) return {rows * cols};
  std::vector<int64_t> out(rank, 1);
  if (rank >= 2) {
    out[rank - 2] = rows;
    out[rank - 1] = cols;
  }
  return out;
}

/// Calls f(op) on every statement of `ops` and the statements nested in them, pre-order. Any statement
/// type with the members body, then_body and else_body will do: TileOp, or a backend's own form of it.
template <class Op, class F> void for_each_op(const std::vector<Op> &ops, F &&f) {
  for (const Op &o : ops) {
    f(o);
    for_each_op(o.body, f);
    for_each_op(o.then_body, f);
    for_each_op(o.else_body, f);
  }
}

namespace tile_detail {
/// Names an Expr or operand reads ({"var": x} and bare strings).
inline void names_in(const nlohmann::json &e, std::set<std::string> &out) {
  if (e.is_string()) out.insert(e.get<std::string>());
  else if (e.is_object()) {
    if (auto v = e.find("var"); v != e.end() && v->is_string()) out.insert(v->get<std::string>());
    for (auto it = e.begin(); it != e.end(); ++it)
      if (it.key() != "var") names_in(it.value(), out);
  } else if (e.is_array())
    for (const nlohmann::json &v : e) names_in(v, out);
}
}  // namespace tile_detail

/// The registers (locals of `k`) statement `o` and the statements nested in it read (`uses`) and write
/// (`defs`); a matmul into an accumulator (`accumulate`, or a third operand) reads its destination too.
/// What a kernel split into parts hands from one part to a later one.
inline void registers_of(const TileOp &o, const TileKernel &k, std::set<std::string> &uses,
                         std::set<std::string> &defs) {
  std::set<std::string> names;
  if (o.args) tile_detail::names_in(nlohmann::json(*o.args), names);
  for (const auto *f : {&o.value, &o.scalar, &o.start, &o.stop, &o.step, &o.cond})
    if (*f) tile_detail::names_in(**f, names);
  if (o.offset) tile_detail::names_in(nlohmann::json(*o.offset), names);
  for (const std::string &n : names)
    if (k.local(n)) uses.insert(n);
  if (o.dst && k.local(*o.dst)) {
    defs.insert(*o.dst);
    const bool matmul = o.op == "matmul" || o.op == "tile.matmul" || o.op == "pto.matmul";
    if (o.accumulate.value_or(false) || (matmul && o.args && o.args->size() > 2)) uses.insert(*o.dst);
  }
  for (const auto *body : {&o.body, &o.then_body, &o.else_body})
    for (const TileOp &c : *body) registers_of(c, k, uses, defs);
}

/// The registers statements `ops` read before writing them (`inputs`: what they need from the statements
/// before them; registers already in `defs` are not) and those they write (added to `defs`), statement by
/// statement in order: a loop's or branch's body counts from what is defined when it starts, so a register
/// its first iteration defines before reading (a K-loop's tile) is not an input, and one it reads before
/// defining (an accumulator) is. `maybe`, when given, collects the registers only some branches of an `if`
/// define: on the other paths they keep their earlier value, so a part that hands one on must read it first.
inline void register_inputs(const std::vector<TileOp> &ops, const TileKernel &k, std::set<std::string> &inputs,
                            std::set<std::string> &defs, std::set<std::string> *maybe = nullptr) {
  for (const TileOp &o : ops) {
    if (o.body.empty() && o.then_body.empty() && o.else_body.empty()) {
      std::set<std::string> u, d;
      registers_of(o, k, u, d);
      for (const std::string &r : u)
        if (!defs.count(r)) inputs.insert(r);
      defs.insert(d.begin(), d.end());
      continue;
    }
    TileOp head = o;  // the statement's own expressions: bounds, condition
    head.body.clear();
    head.then_body.clear();
    head.else_body.clear();
    head.dst.reset();
    std::set<std::string> u, d;
    registers_of(head, k, u, d);
    for (const std::string &r : u)
      if (!defs.count(r)) inputs.insert(r);
    std::set<std::string> after = defs;
    std::vector<std::set<std::string>> branch;
    for (const auto *body : {&o.body, &o.then_body, &o.else_body}) {
      std::set<std::string> local = defs;
      register_inputs(*body, k, inputs, local, maybe);
      after.insert(local.begin(), local.end());
      branch.push_back(std::move(local));
    }
    if (maybe && o.is("if"))
      for (const std::string &r : after)
        if (!branch[1].count(r) || !branch[2].count(r)) maybe->insert(r);
    defs = std::move(after);
  }
}

/// For the parts of a kernel cut in pieces that run one after another (`reads[s]` / `writes[s]`: the registers
/// part s reads and writes, registers_of), what each part must be handed: per part s, each register it reads
/// that an earlier part writes, with the last such part — in register order.
inline std::vector<std::vector<std::pair<std::string, size_t>>> register_handoffs(
    const std::vector<std::set<std::string>> &reads, const std::vector<std::set<std::string>> &writes) {
  std::vector<std::vector<std::pair<std::string, size_t>>> out(reads.size());
  for (size_t s = 1; s < reads.size(); ++s)
    for (const std::string &r : reads[s]) {
      size_t from = s;
      for (size_t t = 0; t < s; ++t)
        if (writes[t].count(r)) from = t;
      if (from != s) out[s].emplace_back(r, from);
    }
  return out;
}

/// `k` with the loads before its one loop — of In tensor parameters, each defining a register nothing else
/// defines (a layernorm's gamma and beta, a process's weights read before its stream loop) — moved to the top
/// of the loop body, so that the body is one loop whose iterations are tasks or stream their tiles; `k`
/// itself when its body has no such shape. Each iteration then reads the tensors again (they do not change).
inline TileKernel sink_loads_into_loop(const TileKernel &k) {
  if (k.body.size() < 2 || !k.body.back().is("for")) return k;
  std::map<std::string, int> defs;
  for_each_op(k.body, [&](const TileOp &o) {
    if (o.dst && k.local(*o.dst)) ++defs[*o.dst];
  });
  for (auto o = k.body.begin(); o + 1 != k.body.end(); ++o) {
    const TileParam *p = o->src ? k.param(*o->src) : nullptr;
    if (!o->is("load") || !o->dst || defs[*o->dst] != 1 || !p || p->dir != "in") return k;
  }
  TileKernel out = k;
  TileOp loop = k.body.back();
  loop.body.insert(loop.body.begin(), k.body.begin(), k.body.end() - 1);
  out.body = {std::move(loop)};
  return out;
}

/// The statements of a CSP process iteration cut where a receive (`csp.recv`) follows a send (`csp.send`),
/// so that each step receives before it sends: a process that waits for the reply to what it sent (a
/// ping-pong, an event handshake) runs as these steps, one after another, and no step waits for itself.
/// `Op` is TileOp or a backend's op with the same `op` and nested bodies.
template <class Op> std::vector<std::vector<Op>> round_trip_steps(const std::vector<Op> &body) {
  std::vector<std::vector<Op>> steps(1);
  bool sent = false;
  for (const Op &o : body) {
    bool receives = false, sends = false;
    for_each_op(std::vector<Op>{o}, [&](const Op &x) {
      receives = receives || x.op == "csp.recv";
      sends = sends || x.op == "csp.send";
    });
    if (receives && sent) {
      steps.emplace_back();
      sent = false;
    }
    steps.back().push_back(o);
    sent = sent || sends;
  }
  return steps;
}

// ---- reading ------------------------------------------------------------------------------------------

namespace tile_kernels_reader {

template <class J> using Reader = ir_reader::Reader<J>;

template <class J> TileType read_type(const Reader<J> &r, const J &v, const std::string &path) {
  r.object(v, path);
  TileType t;
  t.kind = r.one_of(r.need(v, "kind", path), Reader<J>::at(path, "kind"), {"tensor", "tile", "scalar", "constexpr"});
  if (t.is_tensor() || t.is_tile()) {
    t.shape = r.shape(r.need(v, "shape", path), Reader<J>::at(path, "shape"));
    if (t.is_tile() && t.shape.size() != 2) r.fail(Reader<J>::at(path, "shape"), "a tile has two dimensions");
  }
  if (!t.is_constexpr()) t.dtype = r.dtype(r.need(v, "dtype", path), Reader<J>::at(path, "dtype"));
  else t.value = nlohmann::json(r.need(v, "value", path));
  return t;
}

template <class J> TileParam read_param(const Reader<J> &r, const J &v, const std::string &path) {
  r.object(v, path);
  TileParam p;
  p.name = r.name(r.need(v, "name", path), Reader<J>::at(path, "name"));
  p.dir = r.one_of(r.need(v, "dir", path), Reader<J>::at(path, "dir"), {"in", "out", "inout"});
  p.type = read_type(r, r.need(v, "type", path), Reader<J>::at(path, "type"));
  if (const J *ls = r.find(v, "local_shape")) {
    const std::string lp = Reader<J>::at(path, "local_shape");
    if (!p.type.is_tensor()) r.fail(lp, "only a tensor parameter has a local shape");
    p.local_shape = r.shape(*ls, lp);
    if (p.local_shape->size() != p.type.shape.size())
      r.fail(lp, "has " + std::to_string(p.local_shape->size()) + " dimensions, the tensor " +
                     std::to_string(p.type.shape.size()));
  }
  return p;
}

template <class J> TileLocal read_local(const Reader<J> &r, const J &v, const std::string &path) {
  r.object(v, path);
  TileLocal l;
  l.name = r.name(r.need(v, "name", path), Reader<J>::at(path, "name"));
  if (const J *k = r.find(v, "kind")) l.kind = r.one_of(*k, Reader<J>::at(path, "kind"), {"tile", "scalar"});
  if (!l.is_scalar()) {
    l.shape = r.shape(r.need(v, "shape", path), Reader<J>::at(path, "shape"));
    if (l.shape.size() != 2) r.fail(Reader<J>::at(path, "shape"), "a tile has two dimensions");
  }
  l.dtype = r.dtype(r.need(v, "dtype", path), Reader<J>::at(path, "dtype"));
  return l;
}

template <class J> std::vector<TileOp> read_body(Reader<J> &r, const J &v, const std::string &path);

template <class J> TileOp read_op(Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  TileOp o;
  const std::optional<IrSpan> outer = r.span();
  if (const J *s = r.find(v, "span")) {
    o.span = r.span(*s, R::at(path, "span"));
    r.set_span(o.span);
  }
  o.op = r.name(r.need(v, "op", path), R::at(path, "op"));
  auto text = [&](const char *key, bool required) -> std::optional<std::string> {
    const J *x = required ? &r.need(v, key, path) : r.find(v, key);
    if (!x) return std::nullopt;
    return r.name(*x, R::at(path, key));
  };
  auto expr = [&](const char *key, bool required) -> std::optional<nlohmann::json> {
    const J *x = required ? &r.need(v, key, path) : r.find(v, key);
    if (!x) return std::nullopt;
    return r.expr(*x, R::at(path, key));
  };
  const bool load = o.op == "load", store = o.op == "store";
  o.set = text("set", false);
  o.dst = text("dst", load || store || o.op == "full" || o.op == "scalar");
  o.src = text("src", load);
  if (const J *a = r.find(v, "args")) {
    const std::string ap = R::at(path, "args");
    r.array(*a, ap);
    o.args.emplace();
    for (size_t i = 0; i < a->size(); ++i) {
      const J &x = (*a)[i];
      if (x.is_null()) r.fail(R::at(ap, i), "expected an operand, found null");
      o.args->push_back(nlohmann::json(x));
    }
  }
  if (const J *off = load || store ? &r.need(v, "offset", path) : r.find(v, "offset")) {
    const std::string op_ = R::at(path, "offset");
    r.array(*off, op_);
    o.offset.emplace();
    for (size_t i = 0; i < off->size(); ++i) o.offset->push_back(r.expr((*off)[i], R::at(op_, i)));
  }
  if (store) {
    o.value = r.name(r.need(v, "value", path), R::at(path, "value"));
  } else {
    o.value = expr("value", o.op == "full" || o.op == "scalar");
  }
  o.scalar = expr("scalar", false);
  if (const J *x = r.find(v, "accumulate")) o.accumulate = r.boolean(*x, R::at(path, "accumulate"));
  if (const J *x = r.find(v, "attrs")) o.attrs = nlohmann::json(r.object(*x, R::at(path, "attrs")));
  if (o.op == "for") {
    o.var = text("var", true);
    o.start = expr("start", true);
    o.stop = expr("stop", true);
    o.step = expr("step", true);
    o.body = read_body(r, r.need(v, "body", path), R::at(path, "body"));
  } else if (o.op == "if") {
    o.cond = expr("cond", true);
    o.then_body = read_body(r, r.need(v, "then", path), R::at(path, "then"));
    if (const J *e = r.find(v, "else")) o.else_body = read_body(r, *e, R::at(path, "else"));
  }
  r.set_span(outer);
  return o;
}

template <class J> std::vector<TileOp> read_body(Reader<J> &r, const J &v, const std::string &path) {
  r.array(v, path);
  std::vector<TileOp> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) out.push_back(read_op(r, v[i], Reader<J>::at(path, i)));
  return out;
}

template <class J> TileKernel read_kernel(Reader<J> &r, const J &v, const std::string &path) {
  using R = Reader<J>;
  r.object(v, path);
  TileKernel k;
  r.set_span(std::nullopt);
  k.span = r.span(r.need(v, "span", path), R::at(path, "span"));
  r.set_span(k.span);
  k.name = r.name(r.need(v, "name", path), R::at(path, "name"));
  k.kind = r.name(r.need(v, "kind", path), R::at(path, "kind"));
  const J &mapping = r.need(v, "mapping", path);
  if (!mapping.is_null()) k.mapping = r.shape(mapping, R::at(path, "mapping"));
  k.params = r.list(v, "params", path, [&](const J &p, const std::string &at) { return read_param(r, p, at); });
  k.locals = r.list(v, "locals", path, [&](const J &l, const std::string &at) { return read_local(r, l, at); });
  std::set<std::string> names;  // parameters and registers share one namespace (the emitted functions' scope)
  for (size_t i = 0; i < k.params.size(); ++i)
    if (!names.insert(k.params[i].name).second)
      r.fail(R::at(R::at(R::at(path, "params"), i), "name"), "a second parameter named '" + k.params[i].name + "'");
  for (size_t i = 0; i < k.locals.size(); ++i)
    if (!names.insert(k.locals[i].name).second)
      r.fail(R::at(R::at(R::at(path, "locals"), i), "name"),
             "register '" + k.locals[i].name + "' is named like another parameter or register");
  k.body = read_body(r, r.need(v, "body", path), R::at(path, "body"));
  r.set_span(std::nullopt);
  return k;
}

} // namespace tile_kernels_reader

/// Reads and validates a tile.kernels document (nlohmann::json or ordered_json): the version, every
/// required key, every type and range the schema states. Throws IrDocumentError naming the JSON pointer
/// of the first problem (and the span of the kernel or statement around it).
template <class J> TileKernels read_tile_kernels(const J &doc) {
  tile_kernels_reader::Reader<J> r{std::string(kTileKernelsAttribute)};
  TileKernels out;
  out.schema = r.document(doc, kTileKernelsSchema);
  out.kernels = r.list(doc, "kernels", "", [&](const J &k, const std::string &at) {
    return tile_kernels_reader::read_kernel(r, k, at);
  });
  return out;
}

/// The module's tile.kernels, read and validated; nullopt when the module has none. Throws
/// IrDocumentError when it is malformed and PassError when it is not JSON.
inline std::optional<TileKernels> tile_kernels(const ModuleRef &m) {
  auto doc = m.attr_json<nlohmann::json>(kTileKernelsAttribute);
  if (!doc) return std::nullopt;
  return read_tile_kernels(*doc);
}

// ---- writing ------------------------------------------------------------------------------------------

template <class J> void to_json(J &j, const TileType &t) {
  j = J::object();
  j["kind"] = t.kind;
  if (t.is_constexpr()) {
    j["value"] = t.value;
    return;
  }
  if (t.is_tensor() || t.is_tile()) j["shape"] = t.shape;
  j["dtype"] = t.dtype;
}

template <class J> void to_json(J &j, const TileParam &p) {
  j = J::object();
  j["name"] = p.name;
  j["dir"] = p.dir;
  to_json(j["type"], p.type);
  if (p.local_shape) j["local_shape"] = *p.local_shape;
}

template <class J> void to_json(J &j, const TileLocal &l) {
  j = J::object();
  j["name"] = l.name;
  j["kind"] = l.kind;
  if (!l.is_scalar()) j["shape"] = l.shape;
  j["dtype"] = l.dtype;
}

template <class J> void to_json(J &j, const TileOp &o) {
  j = J::object();
  j["op"] = o.op;
  if (o.op == "for") {
    j["var"] = o.var.value_or("");
    j["start"] = o.start.value_or(0);
    j["stop"] = o.stop.value_or(0);
    j["step"] = o.step.value_or(1);
    J &body = j["body"] = J::array();
    for (const TileOp &s : o.body) to_json(body.emplace_back(), s);
  } else if (o.op == "if") {
    j["cond"] = o.cond.value_or(true);
    J &then_body = j["then"] = J::array();
    for (const TileOp &s : o.then_body) to_json(then_body.emplace_back(), s);
    J &else_body = j["else"] = J::array();
    for (const TileOp &s : o.else_body) to_json(else_body.emplace_back(), s);
  }
  if (o.dst) j["dst"] = *o.dst;
  if (o.src) j["src"] = *o.src;
  if (o.args) {
    J &args = j["args"] = J::array();
    for (const nlohmann::json &a : *o.args) args.push_back(J(a));
  }
  if (o.offset) {
    J &offset = j["offset"] = J::array();
    for (const nlohmann::json &e : *o.offset) offset.push_back(J(e));
  }
  if (o.value) j["value"] = J(*o.value);
  if (o.scalar) j["scalar"] = J(*o.scalar);
  if (o.accumulate) j["accumulate"] = *o.accumulate;
  if (o.attrs) j["attrs"] = J(*o.attrs);
  if (o.set) j["set"] = *o.set;
  if (o.span) to_json(j["span"], *o.span);
}

template <class J> void to_json(J &j, const TileKernel &k) {
  j = J::object();
  j["name"] = k.name;
  j["kind"] = k.kind;
  to_json(j["span"], k.span);
  j["mapping"] = k.mapping ? J(*k.mapping) : J();
  J &params = j["params"] = J::array();
  for (const TileParam &p : k.params) to_json(params.emplace_back(), p);
  J &locals = j["locals"] = J::array();
  for (const TileLocal &l : k.locals) to_json(locals.emplace_back(), l);
  J &body = j["body"] = J::array();
  for (const TileOp &o : k.body) to_json(body.emplace_back(), o);
}

template <class J> void to_json(J &j, const TileKernels &d) {
  j = J::object();
  j["schema"] = d.schema;
  J &kernels = j["kernels"] = J::array();
  for (const TileKernel &k : d.kernels) to_json(kernels.emplace_back(), k);
}

/// `from_json` for nlohmann's `get<htp::TileKernels>()`: the validating reader.
template <class J> void from_json(const J &j, TileKernels &d) { d = read_tile_kernels(j); }

} // namespace htp
