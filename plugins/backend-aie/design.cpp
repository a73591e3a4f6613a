#include "design.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace htp::aie {

/// A span as a package holds it: the source file by its name, not the build machine's path, so the same
/// program compiled in two directories gives the same package (docs/packages.md, determinism); messages
/// print the file's name only.
Json portable_span(const Json &span) {
  if (!span.is_object() || !span.contains("file") || !span["file"].is_string()) return span;
  Json out = span;
  out["file"] = std::filesystem::path(span["file"].get<std::string>()).filename().string();
  return out;
}


int64_t ObjectFifo::elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t DmaOp::base() const {
  int64_t b = 0;
  for (size_t i = 0; i < 4; ++i) b += offsets[i] * strides[i];
  return b;
}

const ObjectFifo *Design::fifo(const std::string &name) const {
  for (const auto &f : fifos)
    if (f.name == name) return &f;
  return nullptr;
}

const TileBuffer *Design::buffer(const std::string &name) const {
  for (const auto &b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

int64_t TileBuffer::elements() const { return product(shape); }

const RuntimeParam *Design::param(const std::string &name) const {
  for (const auto &p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<TileCoord> Design::tiles() const {
  std::set<TileCoord> s;
  for (const auto &f : fifos) {
    s.insert(f.producer);
    s.insert(f.consumers.begin(), f.consumers.end());
  }
  for (const auto &b : buffers) s.insert(b.tile);
  for (const auto &c : cores) s.insert(c.tile);
  return {s.begin(), s.end()};
}

std::vector<char> scalar_object(const std::string &dtype, double real, int64_t integer) {
  std::vector<char> b(static_cast<size_t>(dtype_bytes(dtype) * product(scalar_shape(dtype))));
  auto put = [&](auto v) { std::memcpy(b.data(), &v, std::min(b.size(), sizeof v)); };
  if (dtype == "f32") put(static_cast<float>(real));
  else if (dtype == "f64") put(real);
  else if (dtype == "f16") put(static_cast<_Float16>(real));
  else if (dtype == "bf16") {  // the f32's upper half, rounded to nearest even; a NaN stays a quiet NaN
    uint32_t bits;           // (the kernels' htp_bf16 rounds the same way: rounding a NaN would give inf)
    const float f = static_cast<float>(real);
    std::memcpy(&bits, &f, sizeof bits);
    put((bits & 0x7FFFFFFFu) > 0x7F800000u ? static_cast<uint16_t>((bits >> 16) | 0x40u)
                                           : static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16));
  }
  else if (dtype == "i64" || dtype == "u64") put(integer);
  else if (dtype == "i16" || dtype == "u16") put(static_cast<int16_t>(integer));
  else if (dtype == "i8" || dtype == "u8" || dtype == "bool") put(static_cast<int8_t>(integer));
  else put(static_cast<int32_t>(integer));
  return b;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t dtype_bytes(const std::string &dtype) {
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16") return 2;
  if (dtype == "i8" || dtype == "u8") return 1;
  if (dtype == "i64") return 8;
  return 0;
}

namespace {

Json tile_json(const TileCoord &t) { return Json::array({t.col, t.row}); }

TileCoord tile_from(const Json &j) {
  if (!j.is_array() || j.size() != 2) throw std::runtime_error("a tile must be [col, row], not " + j.dump());
  return {j[0].get<int>(), j[1].get<int>()};
}

const Json &at(const Json &j, const char *key) {
  if (!j.is_object() || !j.contains(key)) throw std::runtime_error(std::string("missing key '") + key + "' in " + j.dump().substr(0, 120));
  return j.at(key);
}

Json op_json(const CoreOp &op) {
  switch (op.kind) {
    case CoreOp::Kind::Acquire:
    case CoreOp::Kind::Release:
      return {{"op", op.kind == CoreOp::Kind::Acquire ? "acquire" : "release"}, {"fifo", op.fifo}, {"port", op.port},
              {"count", op.count}};
    case CoreOp::Kind::Loop: {
      Json body = Json::array();
      for (const auto &b : op.body) body.push_back(op_json(b));
      return {{"op", "for"}, {"trip", op.trip}, {"body", body}};
    }
    case CoreOp::Kind::Call: {
      Json args = Json::array();
      for (const auto &a : op.args) {
        if (a.kind == CallArg::Kind::Fifo) args.push_back({{"fifo", a.fifo}});
        else if (a.kind == CallArg::Kind::Buffer) args.push_back({{"buffer", a.fifo}});
        else if (a.kind == CallArg::Kind::Const) args.push_back({{"const", a.value}, {"dtype", a.dtype}});
        else args.push_back({{"iteration", {{"start", a.start}, {"step", a.step}}}, {"dtype", a.dtype}});
      }
      return {{"op", "call"}, {"callee", op.callee}, {"args", args}};
    }
  }
  return {};
}

CoreOp op_from(const Json &j) {
  CoreOp op;
  std::string kind = at(j, "op").get<std::string>();
  if (kind == "acquire" || kind == "release") {
    op.kind = kind == "acquire" ? CoreOp::Kind::Acquire : CoreOp::Kind::Release;
    op.fifo = at(j, "fifo").get<std::string>();
    op.port = at(j, "port").get<std::string>();
    op.count = at(j, "count").get<int64_t>();
  } else if (kind == "for") {
    op.kind = CoreOp::Kind::Loop;
    op.trip = at(j, "trip").get<int64_t>();
    for (const auto &b : at(j, "body")) op.body.push_back(op_from(b));
  } else if (kind == "call") {
    op.kind = CoreOp::Kind::Call;
    op.callee = at(j, "callee").get<std::string>();
    for (const auto &a : at(j, "args")) {
      CallArg arg;
      if (a.contains("fifo")) {
        arg.fifo = a["fifo"].get<std::string>();
      } else if (a.contains("buffer")) {
        arg.kind = CallArg::Kind::Buffer;
        arg.fifo = a["buffer"].get<std::string>();
      } else if (a.contains("const")) {
        arg.kind = CallArg::Kind::Const;
        arg.value = a["const"];
        arg.dtype = at(a, "dtype").get<std::string>();
      } else {
        arg.kind = CallArg::Kind::Iteration;
        arg.start = at(at(a, "iteration"), "start").get<int64_t>();
        arg.step = at(at(a, "iteration"), "step").get<int64_t>();
        arg.dtype = at(a, "dtype").get<std::string>();
      }
      op.args.push_back(std::move(arg));
    }
  } else {
    throw std::runtime_error("unknown core op '" + kind + "'");
  }
  return op;
}

template <class A> Json arr(const A &a) { return Json(std::vector<int64_t>(a.begin(), a.end())); }

std::array<int64_t, 4> arr4(const Json &j) {
  auto v = j.get<std::vector<int64_t>>();
  if (v.size() != 4) throw std::runtime_error("a DMA pattern needs 4 entries, not " + j.dump());
  return {v[0], v[1], v[2], v[3]};
}

}  // namespace

Json mapping_to_json(const Design &d) {
  Json params = Json::array(), kernels = Json::array(), cores = Json::array(), seq = Json::array();
  for (const auto &p : d.params)
  {
    params.push_back({{"name", p.name}, {"shape", p.shape}, {"dtype", p.dtype}, {"dir", p.dir}});
    if (p.scalar) params.back()["kind"] = "scalar";
    if (p.entry_out) params.back()["entry_dir"] = "out";
  }
  for (const auto &k : d.kernels) {
    Json args = Json::array();
    for (const auto &a : k.args)
      args.push_back(a.memref ? Json{{"memref", a.shape}, {"dtype", a.dtype}} : Json{{"scalar", a.dtype}});
    kernels.push_back({{"name", k.name}, {"source", k.source}, {"object", k.object}, {"args", args},
                       {"locals_bytes", k.locals_bytes}});
    if (!k.work.is_null()) kernels.back()["work"] = k.work;
  }
  for (const auto &c : d.cores) {
    Json body = Json::array();
    for (const auto &op : c.body) body.push_back(op_json(op));
    cores.push_back({{"name", c.name}, {"tile", tile_json(c.tile)}, {"stack_size", c.stack_size}, {"body", body},
                     {"span", portable_span(c.span)}});
  }
  for (const auto &op : d.sequence) {
    if (op.kind == DmaOp::Kind::Wait) {
      seq.push_back({{"op", "dma_wait"}, {"symbol", op.fifo}});
      continue;
    }
    seq.push_back({{"op", "dma_memcpy_nd"}, {"param", op.param}, {"metadata", op.fifo}, {"id", op.id},
                   {"offsets", arr(op.offsets)}, {"sizes", arr(op.sizes)}, {"strides", arr(op.strides)},
                   {"issue_token", op.issue_token}});
  }
  Json out = {{"schema", "htp.aie.mapping.v1"}, {"entry", d.entry}, {"kind", d.kind}, {"device", d.device},
              {"params", params}, {"kernels", kernels}, {"cores", cores}, {"runtime_sequence", seq}, {"span", portable_span(d.span)}};
  if (!d.buffers.empty()) {  // (only when there are: designs without stay as they were)
    Json buffers = Json::array();
    for (const auto &b : d.buffers)
      buffers.push_back({{"name", b.name}, {"tile", tile_json(b.tile)}, {"shape", b.shape}, {"dtype", b.dtype}, {"span", portable_span(b.span)}});
    out["buffers"] = buffers;
  }
  return out;
}

Json fifos_to_json(const Design &d) {
  Json fifos = Json::array(), links = Json::array();
  for (const auto &f : d.fifos) {
    Json consumers = Json::array(), dims = Json::array();
    for (const auto &c : f.consumers) consumers.push_back(tile_json(c));
    for (const auto &s : f.producer_dims) dims.push_back({{"size", s.size}, {"stride", s.stride}});
    fifos.push_back({{"name", f.name}, {"producer", tile_json(f.producer)}, {"consumers", consumers},
                     {"depth", f.depth}, {"shape", f.shape}, {"dtype", f.dtype}, {"producer_dims", dims},
                     {"span", portable_span(f.span)}});
  }
  for (const auto &l : d.links)
    links.push_back({{"srcs", l.srcs}, {"dsts", l.dsts}, {"src_offsets", l.src_offsets}, {"dst_offsets", l.dst_offsets}});
  return {{"schema", "htp.aie.fifos.v1"}, {"entry", d.entry}, {"fifos", fifos}, {"links", links}};
}

Design design_from_json(const Json &m, const Json &f) {
  if (at(m, "schema") != "htp.aie.mapping.v1") throw std::runtime_error("mapping schema is not htp.aie.mapping.v1");
  if (at(f, "schema") != "htp.aie.fifos.v1") throw std::runtime_error("fifos schema is not htp.aie.fifos.v1");
  Design d;
  d.entry = at(m, "entry").get<std::string>();
  d.kind = at(m, "kind").get<std::string>();
  d.device = at(m, "device").get<std::string>();
  d.span = m.value("span", Json());
  for (const auto &p : at(m, "params"))
    d.params.push_back({at(p, "name").get<std::string>(), at(p, "shape").get<std::vector<int64_t>>(),
                        at(p, "dtype").get<std::string>(), at(p, "dir").get<std::string>(),
                        p.value("kind", "tensor") == "scalar", p.value("entry_dir", "") == "out"});
  for (const auto &k : at(m, "kernels")) {
    KernelFunc kf{at(k, "name").get<std::string>(), at(k, "source").get<std::string>(),
                  at(k, "object").get<std::string>(), {}, k.value("locals_bytes", int64_t{0}), k.value("work", Json())};
    for (const auto &a : at(k, "args")) {
      if (a.contains("memref")) kf.args.push_back({true, a["memref"].get<std::vector<int64_t>>(), at(a, "dtype").get<std::string>()});
      else kf.args.push_back({false, {}, at(a, "scalar").get<std::string>()});
    }
    d.kernels.push_back(std::move(kf));
  }
  for (const auto &b : m.value("buffers", Json::array()))
    d.buffers.push_back({at(b, "name").get<std::string>(), tile_from(at(b, "tile")), at(b, "shape").get<std::vector<int64_t>>(),
                         at(b, "dtype").get<std::string>(), b.value("span", Json())});
  for (const auto &c : at(m, "cores")) {
    Core core{at(c, "name").get<std::string>(), tile_from(at(c, "tile")), c.value("stack_size", int64_t{1024}), {},
              c.value("span", Json())};
    for (const auto &op : at(c, "body")) core.body.push_back(op_from(op));
    d.cores.push_back(std::move(core));
  }
  for (const auto &s : at(m, "runtime_sequence")) {
    DmaOp op;
    if (at(s, "op") == "dma_wait") {
      op.kind = DmaOp::Kind::Wait;
      op.fifo = at(s, "symbol").get<std::string>();
    } else {
      op.param = at(s, "param").get<std::string>();
      op.fifo = at(s, "metadata").get<std::string>();
      op.id = at(s, "id").get<int64_t>();
      op.offsets = arr4(at(s, "offsets"));
      op.sizes = arr4(at(s, "sizes"));
      op.strides = arr4(at(s, "strides"));
      op.issue_token = s.value("issue_token", false);
    }
    d.sequence.push_back(op);
  }
  for (const auto &j : at(f, "fifos")) {
    ObjectFifo o;
    o.name = at(j, "name").get<std::string>();
    o.producer = tile_from(at(j, "producer"));
    for (const auto &c : at(j, "consumers")) o.consumers.push_back(tile_from(c));
    o.depth = at(j, "depth").get<std::vector<int64_t>>();
    o.shape = at(j, "shape").get<std::vector<int64_t>>();
    o.dtype = at(j, "dtype").get<std::string>();
    for (const auto &s : j.value("producer_dims", Json::array()))
      o.producer_dims.push_back({at(s, "size").get<int64_t>(), at(s, "stride").get<int64_t>()});
    o.span = j.value("span", Json());
    d.fifos.push_back(std::move(o));
  }
  for (const auto &l : at(f, "links"))
    d.links.push_back({at(l, "srcs").get<std::vector<std::string>>(), at(l, "dsts").get<std::vector<std::string>>(),
                       at(l, "src_offsets").get<std::vector<int64_t>>(), at(l, "dst_offsets").get<std::vector<int64_t>>()});
  return d;
}

Json design_to_json(const Design &d) {
  return {{"mapping", mapping_to_json(d)}, {"fifos", fifos_to_json(d)}, {"sources", d.sources}};
}

Design design_from_combined_json(const Json &j) {
  Design d = design_from_json(at(j, "mapping"), at(j, "fifos"));
  d.sources = j.value("sources", std::map<std::string, std::string>{});
  return d;
}

}  // namespace htp::aie
