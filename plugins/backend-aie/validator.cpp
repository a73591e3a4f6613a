#include "validator.hpp"

#include <algorithm>

#include <map>
#include <set>

#include "access_pattern.hpp"

namespace htp::aie {

const std::vector<std::string> &validator_rules() {
  static const std::vector<std::string> rules = {
      "aie.validate.core-row",     "aie.validate.coords",        "aie.validate.depth-arity",
      "aie.validate.acquire-port", "aie.validate.acquire-count", "aie.validate.dma-dims",
      "aie.validate.symbol",       "aie.validate.shim-bd",       "aie.validate.memory",
      "aie.validate.dma-channels", "aie.validate.metadata",      "aie.validate.transfer-size",
      "aie.validate.link",         "aie.validate.call"};
  return rules;
}

bool shares_memory(const ObjectFifo &f, const DeviceProfile &dev) {
  if (f.consumers.size() != 1) return false;
  const TileCoord &p = f.producer, &c = f.consumers[0];
  return dev.kind_of(p.row) == TileKind::Compute && dev.kind_of(c.row) == TileKind::Compute && p.col == c.col &&
         (p.row - c.row == 1 || c.row - p.row == 1);
}

std::map<TileCoord, int64_t> tile_memory(const Design &d, const DeviceProfile &dev,
                                         std::map<TileCoord, std::vector<std::string>> *users) {
  std::map<TileCoord, int64_t> bytes;
  for (const auto &f : d.fifos) {
    const int64_t obj = f.elements() * dtype_bytes(f.dtype);
    const bool shared = shares_memory(f, dev);
    // What each buffer costs, so that a message says what to shrink: "@ch_a 2 x 16384".
    auto use = [&](const TileCoord &t, int64_t depth) {
      bytes[t] += obj * depth;
      if (users) (*users)[t].push_back("@" + f.name + " " + std::to_string(depth) + " x " + std::to_string(obj));
    };
    use(f.producer, f.depth_at(0));
    if (shared) continue;  // the consumer reads the producer's buffers
    for (size_t i = 0; i < f.consumers.size(); ++i) use(f.consumers[i], f.depth_at(i + 1));
  }
  for (const auto &b : d.buffers) {
    const int64_t obj = b.elements() * dtype_bytes(b.dtype);
    bytes[b.tile] += obj;
    if (users) (*users)[b.tile].push_back("@" + b.name + " " + std::to_string(obj));
  }
  for (const auto &c : d.cores) {
    bytes[c.tile] += c.stack_size;
    if (users) (*users)[c.tile].push_back("the core stack " + std::to_string(c.stack_size));
  }
  return bytes;
}

namespace {

std::string fifo_op(const std::string &name) { return "aie.objectfifo @" + name; }
std::string core_op(const Core &c) { return "aie.core(%" + c.tile.ssa() + ") '" + c.name + "'"; }
std::string tile_op(const TileCoord &t) { return "aie.tile" + t.text(); }

class Validator {
public:
  Validator(const Design &d, const DeviceProfile &dev) : d_(d), dev_(dev) {}

  std::vector<Violation> run() {
    symbols();
    coords_and_rows();
    fifos();
    links();
    cores();
    memory_and_channels();
    sequence();
    return out_;
  }

private:
  void report(const char *rule, std::string op, std::string message, const Json &span = Json()) {
    out_.push_back({std::string("aie.validate.") + rule, std::move(op), std::move(message), span});
  }

  void symbols() {
    std::map<std::string, std::string> seen;  // symbol -> what
    auto add = [&](const std::string &sym, const std::string &what, const std::string &op, const Json &span) {
      auto [it, fresh] = seen.emplace(sym, what);
      if (!fresh) report("symbol", op, "symbol @" + sym + " is defined twice (as " + it->second + " and " + what + ")", span);
    };
    for (const auto &f : d_.fifos) add(f.name, "an object FIFO", fifo_op(f.name), f.span);
    for (const auto &b : d_.buffers) add(b.name, "a tile buffer", "aie.buffer @" + b.name, b.span);
    for (const auto &k : d_.kernels) add(k.name, "a kernel function", "func.func @" + k.name, Json());
  }

  void coords_and_rows() {
    std::set<TileCoord> bad;
    auto check = [&](const TileCoord &t, const std::string &user, const Json &span) {
      if (dev_.contains(t.col, t.row) || bad.count(t)) return;
      bad.insert(t);
      report("coords", tile_op(t), "tile is outside device " + dev_.name + " (columns 0-" + std::to_string(dev_.columns - 1) +
                                       ", rows 0-" + std::to_string(dev_.rows - 1) + "), used by " + user, span);
    };
    for (const auto &f : d_.fifos) {
      check(f.producer, fifo_op(f.name), f.span);
      for (const auto &c : f.consumers) check(c, fifo_op(f.name), f.span);
    }
    for (const auto &c : d_.cores) {
      check(c.tile, core_op(c), c.span);
      if (dev_.contains(c.tile.col, c.tile.row) && dev_.kind_of(c.tile.row) != TileKind::Compute)
        report("core-row", core_op(c), "a core cannot run on row " + std::to_string(c.tile.row) + " (a " +
                                           std::string(tile_kind_name(dev_.kind_of(c.tile.row))) +
                                           "); cores go on compute rows 2-" + std::to_string(dev_.rows - 1), c.span);
    }
  }

  void fifos() {
    for (const auto &f : d_.fifos) {
      const std::string op = fifo_op(f.name);
      if (f.depth.size() != 1 && f.depth.size() != f.consumers.size() + 1)
        report("depth-arity", op, "depth list has " + std::to_string(f.depth.size()) + " entries; it needs 1 or 1 + " +
                                      std::to_string(f.consumers.size()) + " consumers = " + std::to_string(f.consumers.size() + 1), f.span);
      for (int64_t x : f.depth)
        if (x < 1) report("depth-arity", op, "depth " + std::to_string(x) + " is below 1", f.span);
      if (f.consumers.empty()) report("depth-arity", op, "object FIFO has no consumer", f.span);
      const int64_t bytes = f.elements() * dtype_bytes(f.dtype);
      if (dtype_bytes(f.dtype) == 0) report("transfer-size", op, "element type '" + f.dtype + "' is not supported", f.span);
      else if (bytes % 4 != 0) report("transfer-size", op, "object of " + std::to_string(bytes) + " bytes is not a whole number of 32-bit words", f.span);
      stream_dims(f, op);
    }
  }

  /// dimensionsToStream of a FIFO: where it may be, how many dims, the innermost stride, the limits of
  /// the producer's address generator, and that it visits exactly the object's elements.
  void stream_dims(const ObjectFifo &f, const std::string &op) {
    if (f.producer_dims.empty()) return;
    const TileKind kind = dev_.kind_of(f.producer.row);
    const std::string where = "a " + std::string(tile_kind_name(kind)) + " producer";
    if (kind == TileKind::Shim) {
      report("dma-dims", op, "dimensionsToStream is not supported on shim tile producers (the runtime sequence's "
                             "dma_memcpy_nd pattern orders a shim transfer)", f.span);
      return;
    }
    if (kind == TileKind::Invalid) return;  // coords reports the tile
    const DmaAddressing &a = dev_.dma.of(kind);
    const size_t n = f.producer_dims.size();
    if (n > static_cast<size_t>(a.dims))
      report("dma-dims", op, "dimensionsToStream has " + std::to_string(n) + " dimensions; " + where + " allows " +
                                 std::to_string(a.dims), f.span);
    const int64_t eb = std::max<int64_t>(1, dtype_bytes(f.dtype));
    const int64_t g = dev_.dma.granule_bytes;
    for (size_t i = 0; i < n; ++i) {
      const StreamDim &d = f.producer_dims[i];
      const bool inner = i + 1 == n;
      const std::string dim = "dimension " + std::to_string(n - 1 - i) + " <size = " + std::to_string(d.size) +
                              ", stride = " + std::to_string(d.stride) + ">";
      if (d.size < 1) report("dma-dims", op, dim + ": the size is below 1", f.span);
      const int64_t wrap = inner ? d.size * eb / g : d.size;
      if (wrap > a.max_wrap)
        report("dma-dims", op, dim + ": the size is " + std::to_string(wrap) + (inner ? " 32-bit words" : "") + "; " +
                                   where + " allows " + std::to_string(a.max_wrap), f.span);
      if (inner && !innermost_stride_ok(d.stride, eb, g))
        report("dma-dims", op, dim + ": the innermost stride must be 1 (any positive stride only for elements of 32 bits or more; this is " + f.dtype + ")", f.span);
      else if (d.size > 1 && (d.stride < 1 || (d.stride != 1 && (d.stride * eb) % g != 0)))
        report("dma-dims", op, dim + ": the stride is not a positive whole number of 32-bit words", f.span);
      if (d.stride * eb / g > a.max_stride_words)
        report("dma-dims", op, dim + ": the stride exceeds " + std::to_string(a.max_stride_words) + " words, the limit of " + where, f.span);
    }
    int64_t visits = 1;
    for (const auto &d : f.producer_dims) visits *= std::max<int64_t>(1, d.size);
    if (visits != f.elements()) {
      report("dma-dims", op, "dimensionsToStream visits " + std::to_string(visits) + " elements; the object has " +
                                 std::to_string(f.elements()), f.span);
      return;
    }
    for (int64_t e : enumerate(f.producer_dims))
      if (e < 0 || e >= f.elements()) {
        report("dma-dims", op, "dimensionsToStream reaches element " + std::to_string(e) + ", outside the object of " +
                                   std::to_string(f.elements()) + " elements", f.span);
        return;
      }
  }

  void links() {
    for (const auto &l : d_.links) {
      std::string op = "aie.objectfifo.link [";
      for (size_t i = 0; i < l.srcs.size(); ++i) op += (i ? ", @" : "@") + l.srcs[i];
      op += "] -> [";
      for (size_t i = 0; i < l.dsts.size(); ++i) op += (i ? ", @" : "@") + l.dsts[i];
      op += "]";
      std::vector<const ObjectFifo *> srcs, dsts;
      bool ok = true;
      for (const auto &n : l.srcs) srcs.push_back(d_.fifo(n));
      for (const auto &n : l.dsts) dsts.push_back(d_.fifo(n));
      for (size_t i = 0; i < srcs.size(); ++i)
        if (!srcs[i]) { report("link", op, "@" + l.srcs[i] + " is not an object FIFO"); ok = false; }
      for (size_t i = 0; i < dsts.size(); ++i)
        if (!dsts[i]) { report("link", op, "@" + l.dsts[i] + " is not an object FIFO"); ok = false; }
      if (!ok || srcs.empty() || dsts.empty()) continue;
      if (srcs.size() > 1 && dsts.size() > 1) report("link", op, "a link is a distribute (one source) or a join (one destination)");
      const TileCoord hub = srcs[0]->consumers.empty() ? TileCoord{-1, -1} : srcs[0]->consumers[0];
      for (const auto *s : srcs)
        if (s->consumers.size() != 1 || s->consumers[0] != hub) report("link", op, "@" + s->name + " must end on the link's tile " + hub.text());
      for (const auto *t : dsts)
        if (t->producer != hub) report("link", op, "@" + t->name + " must start on the link's tile " + hub.text());
      if (dev_.kind_of(hub.row) != TileKind::Mem && (srcs.size() > 1 || dsts.size() > 1))
        report("link", op, "distribute and join go through a mem tile, not tile " + hub.text());
      auto check_offsets = [&](const std::vector<const ObjectFifo *> &parts, const std::vector<int64_t> &offs,
                               const ObjectFifo *whole) {
        if (parts.size() == 1 && offs.empty()) return;
        if (offs.size() != parts.size()) {
          report("link", op, "it has " + std::to_string(offs.size()) + " offsets for " + std::to_string(parts.size()) + " FIFOs");
          return;
        }
        for (size_t i = 0; i < parts.size(); ++i)
          if (offs[i] < 0 || offs[i] + parts[i]->elements() > whole->elements())
            report("link", op, "@" + parts[i]->name + " at offset " + std::to_string(offs[i]) + " leaves @" + whole->name +
                                   " (" + std::to_string(whole->elements()) + " elements)");
      };
      if (srcs.size() == 1) check_offsets(dsts, l.dst_offsets, srcs[0]);
      else check_offsets(srcs, l.src_offsets, dsts[0]);
    }
  }

  void core_ops(const Core &c, const std::vector<CoreOp> &ops, std::set<std::string> &held) {
    for (const auto &op : ops) {
      if (op.kind == CoreOp::Kind::Loop) {
        core_ops(c, op.body, held);
        continue;
      }
      if (op.kind == CoreOp::Kind::Call) {
        call(c, op, held);
        continue;
      }
      const std::string what = op.kind == CoreOp::Kind::Acquire ? "aie.objectfifo.acquire" : "aie.objectfifo.release";
      const std::string opn = what + " @" + op.fifo + "(" + op.port + ", " + std::to_string(op.count) + ") in " + core_op(c);
      const ObjectFifo *f = d_.fifo(op.fifo);
      if (!f) {
        report("acquire-port", opn, "@" + op.fifo + " is not an object FIFO", c.span);
        continue;
      }
      size_t end = 0;
      if (op.port == "Produce") {
        if (f->producer != c.tile) report("acquire-port", opn, "the core on " + c.tile.text() + " is not the producer of @" + f->name + " (" + f->producer.text() + ")", c.span);
      } else if (op.port == "Consume") {
        auto it = std::find(f->consumers.begin(), f->consumers.end(), c.tile);
        if (it == f->consumers.end()) report("acquire-port", opn, "the core on " + c.tile.text() + " is not a consumer of @" + f->name, c.span);
        else end = 1 + static_cast<size_t>(it - f->consumers.begin());
      } else {
        report("acquire-port", opn, "port '" + op.port + "' is neither Produce nor Consume", c.span);
      }
      const int64_t depth = f->depth_at(end);
      if (op.count < 1 || (depth > 0 && op.count > depth))
        report("acquire-count", opn, "count " + std::to_string(op.count) + " must be between 1 and the depth " + std::to_string(depth) + " of this end", c.span);
      if (op.kind == CoreOp::Kind::Acquire) held.insert(op.fifo);
      else held.erase(op.fifo);
    }
  }

  void call(const Core &c, const CoreOp &op, const std::set<std::string> &held) {
    const std::string opn = "func.call @" + op.callee + " in " + core_op(c);
    const KernelFunc *k = nullptr;
    for (const auto &x : d_.kernels)
      if (x.name == op.callee) k = &x;
    if (!k) {
      report("call", opn, "@" + op.callee + " is not a declared kernel function", c.span);
      return;
    }
    if (k->args.size() != op.args.size()) {
      report("call", opn, "it passes " + std::to_string(op.args.size()) + " arguments; @" + k->name + " takes " + std::to_string(k->args.size()), c.span);
      return;
    }
    for (size_t i = 0; i < op.args.size(); ++i) {
      const CallArg &a = op.args[i];
      // An object (acquired from a FIFO, or a tile buffer) of the size and dtype the kernel's argument takes.
      auto check_object = [&](int64_t elements, const std::string &dtype) {
        if (elements != product(k->args[i].shape) || dtype != k->args[i].dtype)
          report("call", opn, "argument " + std::to_string(i) + ": @" + a.fifo + " holds " + std::to_string(elements) + " x " +
                                  dtype + ", the kernel expects " + std::to_string(product(k->args[i].shape)) + " x " +
                                  k->args[i].dtype, c.span);
      };
      if (k->args[i].memref != (a.kind == CallArg::Kind::Fifo || a.kind == CallArg::Kind::Buffer)) {
        report("call", opn, "argument " + std::to_string(i) + " must be " + (k->args[i].memref ? "an object FIFO element" : "a scalar"), c.span);
        continue;
      }
      if (a.kind == CallArg::Kind::Buffer) {
        const TileBuffer *b = d_.buffer(a.fifo);
        if (!b) report("call", opn, "argument " + std::to_string(i) + " uses @" + a.fifo + ", which is no buffer of the design", c.span);
        else if (b->tile != c.tile)
          report("call", opn, "argument " + std::to_string(i) + ": @" + a.fifo + " is in the memory of " + tile_op(b->tile) +
                                  ", not of the core's tile", c.span);
        else check_object(b->elements(), b->dtype);
        continue;
      }
      if (a.kind != CallArg::Kind::Fifo) continue;
      const ObjectFifo *f = d_.fifo(a.fifo);
      if (!held.count(a.fifo)) report("call", opn, "argument " + std::to_string(i) + " uses @" + a.fifo + " without acquiring it first", c.span);
      else if (f) check_object(f->elements(), f->dtype);
    }
  }

  void cores() {
    std::set<TileCoord> seen;
    for (const auto &c : d_.cores) {
      if (!seen.insert(c.tile).second) report("coords", core_op(c), "tile " + c.tile.text() + " already has a core", c.span);
      std::set<std::string> held;
      core_ops(c, c.body, held);
    }
  }

  /// Where a tile-level violation points: the core on the tile, else the entry.
  Json tile_span(const TileCoord &t) const {
    for (const auto &c : d_.cores)
      if (c.tile == t && !c.span.is_null()) return c.span;
    return d_.span;
  }

  void memory_and_channels() {
    std::map<TileCoord, std::pair<int, int>> dma;  // in (S2MM), out (MM2S)
    std::map<TileCoord, std::vector<std::string>> users;
    const std::map<TileCoord, int64_t> bytes = tile_memory(d_, dev_, &users);
    for (const auto &f : d_.fifos) {
      if (shares_memory(f, dev_)) continue;
      dma[f.producer].second++;
      for (const TileCoord &c : f.consumers) dma[c].first++;
    }
    for (const auto &[t, b] : bytes) {
      const TileKind k = dev_.kind_of(t.row);
      if (k == TileKind::Shim || k == TileKind::Invalid) continue;
      const int64_t cap = dev_.resources(k).memory_bytes;
      if (b > cap) {
        std::string list;
        for (const auto &u : users[t]) list += (list.empty() ? "" : ", ") + u;
        report("memory", tile_op(t), std::string(tile_kind_name(k)) + " needs " + std::to_string(b) + " bytes (" + list +
                                         ") but has " + std::to_string(cap), tile_span(t));
      }
    }
    for (const auto &[t, io] : dma) {
      const TileKind k = dev_.kind_of(t.row);
      if (k == TileKind::Invalid) continue;
      const TileResources &r = dev_.resources(k);
      if (io.first > r.dma_in || io.second > r.dma_out)
        report("dma-channels", tile_op(t), std::string(tile_kind_name(k)) + " needs " + std::to_string(io.first) + " input and " +
                                               std::to_string(io.second) + " output DMA channels but has " + std::to_string(r.dma_in) +
                                               " and " + std::to_string(r.dma_out), tile_span(t));
    }
  }

  void sequence() {
    std::map<int, std::map<int64_t, std::string>> in_flight;  // shim column -> bd id -> fifo
    for (size_t i = 0; i < d_.sequence.size(); ++i) {
      const DmaOp &op = d_.sequence[i];
      const ObjectFifo *f = d_.fifo(op.fifo);
      if (op.kind == DmaOp::Kind::Wait) {
        const std::string opn = "aiex.npu.dma_wait {symbol = @" + op.fifo + "}";
        if (!f) report("metadata", opn, "@" + op.fifo + " is not an object FIFO");
        for (auto &[col, ids] : in_flight)
          for (auto it = ids.begin(); it != ids.end();) it = it->second == op.fifo ? ids.erase(it) : std::next(it);
        continue;
      }
      const std::string opn = "aiex.npu.dma_memcpy_nd #" + std::to_string(i) + " (id " + std::to_string(op.id) + ", @" + op.fifo + ")";
      const RuntimeParam *p = d_.param(op.param);
      if (!p) report("metadata", opn, "%" + op.param + " is not a runtime sequence parameter");
      if (!f) {
        report("metadata", opn, "metadata @" + op.fifo + " is not an object FIFO");
        continue;
      }
      const bool from_shim = dev_.kind_of(f->producer.row) == TileKind::Shim;
      const bool to_shim = f->consumers.size() == 1 && dev_.kind_of(f->consumers[0].row) == TileKind::Shim;
      if (!from_shim && !to_shim) {
        report("metadata", opn, "@" + op.fifo + " has no end on a shim tile");
        continue;
      }
      const int col = from_shim ? f->producer.col : f->consumers[0].col;
      if (op.id < 0 || op.id >= dev_.dma.shim_bds)
        report("shim-bd", opn, "buffer descriptor id " + std::to_string(op.id) + " is outside 0-" + std::to_string(dev_.dma.shim_bds - 1));
      else if (auto it = in_flight[col].find(op.id); it != in_flight[col].end())
        report("shim-bd", opn, "buffer descriptor id " + std::to_string(op.id) + " of shim column " + std::to_string(col) +
                                   " is still in flight for @" + it->second + " (no dma_wait since)");
      else in_flight[col][op.id] = op.fifo;
      dims(opn, op, p ? dtype_bytes(p->dtype) : 4);
    }
  }

  void dims(const std::string &opn, const DmaOp &op, int64_t eb) {
    const DmaAddressing &a = dev_.dma.shim;
    const int64_t g = dev_.dma.granule_bytes;
    if (!innermost_stride_ok(op.strides[3], eb, g))
      report("dma-dims", opn, "the innermost stride is " + std::to_string(op.strides[3]) + "; it must be 1 (any positive stride only for elements of 32 bits or more)");
    for (size_t k = 0; k < 4; ++k)
      if (op.sizes[k] < 1) report("dma-dims", opn, "size " + std::to_string(op.sizes[k]) + " of dimension " + std::to_string(3 - k) + " is below 1");
    const int64_t inner_words = op.sizes[3] * eb / g;
    if (inner_words > a.max_wrap)
      report("dma-dims", opn, "the innermost size is " + std::to_string(inner_words) + " 32-bit words; the limit is " + std::to_string(a.max_wrap));
    for (size_t k = 1; k <= 2; ++k)
      if (op.sizes[k] > a.max_wrap)
        report("dma-dims", opn, "size " + std::to_string(op.sizes[k]) + " of dimension " + std::to_string(3 - k) + " exceeds " + std::to_string(a.max_wrap));
    if (op.sizes[0] > dev_.dma.max_repeat)
      report("dma-dims", opn, "the repeat count " + std::to_string(op.sizes[0]) + " exceeds " + std::to_string(dev_.dma.max_repeat));
    for (size_t k = 0; k < 4; ++k) {
      if (op.strides[k] * eb / g > a.max_stride_words)
        report("dma-dims", opn, "stride " + std::to_string(op.strides[k]) + " exceeds " + std::to_string(a.max_stride_words) + " words");
      if (op.sizes[k] > 1 && op.strides[k] != 1 && (op.strides[k] * eb) % g != 0)
        report("dma-dims", opn, "stride " + std::to_string(op.strides[k]) + " of dimension " + std::to_string(3 - k) + " is not a whole number of 32-bit words");
    }
    if (op.elements() * eb < g) report("transfer-size", opn, "the transfer is smaller than 32 bits");
    else if ((op.sizes[3] * eb) % g != 0) report("transfer-size", opn, "the innermost size is not a whole number of 32-bit words");
  }

  const Design &d_;
  const DeviceProfile &dev_;
  std::vector<Violation> out_;
};

}  // namespace

std::vector<Violation> validate(const Design &design, const DeviceProfile &device) {
  return Validator(design, device).run();
}

}  // namespace htp::aie
