// From an entry plan to a design: placement of the cores, object FIFOs for every tensor stream
// (broadcast when cores share a view, distribute / join through a mem tile when they split a tensor)
// and every CSP channel, the core programs (acquire / call / release), and the runtime sequence whose
// 4-D DMA patterns visit exactly the elements the FIFOs carry.
#include <algorithm>
#include <map>
#include <set>

#include "access_pattern.hpp"
#include "entry_plan.hpp"
#include "validator.hpp"

namespace htp::aie {

namespace {

struct Channels {
  int in = 0;   // S2MM: into the tile
  int out = 0;  // MM2S: out of the tile
};

class Builder {
public:
  Builder(const EntryPlan &plan, const DeviceProfile &dev, std::vector<Problem> &problems)
      : plan_(plan), dev_(dev), problems_(problems) {}

  std::optional<Design> run() {
    d_.entry = plan_.name;
    d_.kind = plan_.kind;
    d_.device = dev_.name;
    d_.span = plan_.span;
    d_.params = plan_.params;
    d_.kernels = plan_.kernels;
    d_.sources = plan_.sources;
    place();
    if (!streams() || !channels()) return std::nullopt;
    programs();
    single_buffer_to_fit();
    if (!sequence()) return std::nullopt;
    return d_;
  }

  /// A compute tile whose memory the default double buffering of the FIFOs between it and the host (the
  /// builder's choice, not a program's declared channel depth) overflows gets them single-buffered when
  /// that makes it fit: the transfers then wait for the core, but the design runs. (A workload's
  /// pipeline(n) is a depth the program asked for and stays.)
  void single_buffer_to_fit() {
    if (plan_.fifo_depth) return;
    const std::map<TileCoord, int64_t> bytes = tile_memory(d_, dev_);
    for (const auto &[t, b] : bytes) {
      const TileKind k = dev_.kind_of(t.row);
      if (k != TileKind::Compute || b <= dev_.resources(k).memory_bytes) continue;
      std::vector<std::pair<ObjectFifo *, std::vector<int64_t>>> changed;
      int64_t saved = 0;
      for (ObjectFifo &f : d_.fifos) {
        const bool channel = std::any_of(channel_fifo_.begin(), channel_fifo_.end(),
                                         [&](const auto &c) { return c.second == f.name; });
        if (channel || shares_memory(f, dev_)) continue;  // a declared channel depth stays
        const bool ends_here = f.producer == t || std::find(f.consumers.begin(), f.consumers.end(), t) != f.consumers.end();
        if (!ends_here || f.depth_at(0) <= 1) continue;
        saved += (f.depth_at(0) - 1) * f.elements() * dtype_bytes(f.dtype);
        changed.push_back({&f, f.depth});
        f.depth = {1};
      }
      if (b - saved > dev_.resources(k).memory_bytes)  // it would not fit either: leave the design as it was
        for (auto &[f, depth] : changed) f->depth = depth;
    }
  }

private:
  bool fail(const std::string &code, const std::string &message, const Json &span) {
    problems_.push_back({code, message, span.is_null() ? plan_.span : span});
    return false;
  }

  void place() {
    const int rows = dev_.compute_rows();
    for (size_t i = 0; i < plan_.cores.size(); ++i) {
      const int l = static_cast<int>(i);
      tiles_.push_back(plan_.chain_placement ? TileCoord{l / rows, 2 + l % rows}
                                             : TileCoord{l % dev_.columns, 2 + l / dev_.columns});
    }
  }

  /// A shim (row 0) or mem tile (row 1) with `in`/`out` free channels, preferring column `col`.
  std::optional<TileCoord> allocate(int row, int col, int in, int out) {
    const TileResources &r = dev_.resources(dev_.kind_of(row));
    for (int k = 0; k < dev_.columns; ++k) {
      TileCoord t{(col + k) % dev_.columns, row};
      Channels &u = used_[t];
      if (u.in + in <= r.dma_in && u.out + out <= r.dma_out) {
        u.in += in;
        u.out += out;
        return t;
      }
    }
    return std::nullopt;
  }

  int64_t depth_for(int64_t iterations) const {
    return iterations > 1 ? std::min(iterations, plan_.fifo_depth.value_or(2)) : 1;
  }

  ObjectFifo fifo(std::string name, TileCoord producer, std::vector<TileCoord> consumers, int64_t depth,
                  std::vector<int64_t> shape, std::string dtype, Json span) {
    return ObjectFifo{std::move(name), producer, std::move(consumers), {depth}, std::move(shape), std::move(dtype), {},
                      std::move(span)};
  }

  struct Group {
    std::vector<size_t> streams;  // indices into plan_.streams
    std::vector<TileCoord> tiles;
  };

  bool streams() {
    // Cores and ports of every stream.
    for (size_t c = 0; c < plan_.cores.size(); ++c)
      for (const auto &p : plan_.cores[c].ports)
        if (p.kind == PortPlan::Kind::Stream) stream_core_[p.stream] = c;
    std::vector<std::pair<std::string, bool>> keys;
    for (const auto &s : plan_.streams)
      if (std::find(keys.begin(), keys.end(), std::make_pair(s.tensor, s.in)) == keys.end()) keys.emplace_back(s.tensor, s.in);
    for (const auto &[tensor, in] : keys)
      if (!tensor_fifos(tensor, in)) return false;
    return true;
  }

  bool tensor_fifos(const std::string &tensor, bool in) {
    const RuntimeParam *rp = d_.param(tensor);
    if (!rp) return fail("aie.param", "tensor '" + tensor + "' is not a parameter of entry '" + plan_.name + "'", Json());
    std::vector<Group> groups;
    for (size_t i = 0; i < plan_.streams.size(); ++i) {
      const auto &s = plan_.streams[i];
      if (s.tensor != tensor || s.in != in) continue;
      const TileCoord tile = tiles_[stream_core_[i]];
      Group *g = nullptr;
      for (auto &x : groups)
        if (plan_.streams[x.streams[0]].views == s.views && plan_.streams[x.streams[0]].order == s.order &&
            std::find(x.tiles.begin(), x.tiles.end(), tile) == x.tiles.end())
          g = &x;
      if (g && !in) {
        // A mapped kernel's output replicated over a mesh axis (N @ S(0)R on a 2 x 2 mesh): layout-axe
        // checked that every replica holds the same values, so the first core of the group sends them and
        // the others write their copy into a buffer of their own tile. A workload's grid points are no
        // replicas: two of them writing one view is a race in the program. (A "task" is the kernel design
        // of a host-orchestrated workload's launch.)
        if (plan_.kind != "kernel" && plan_.kind != "task")
          return fail("aie.replicated-output", "output '" + tensor + "' is written at the same elements by the cores of " +
                                                   plan_.cores[stream_core_[g->streams[0]]].name + " and " +
                                                   plan_.cores[stream_core_[i]].name +
                                                   "; an AIE design needs one writer per element (shard the output)", s.span);
        const std::string name = "copy_" + tensor + "_" + std::to_string(stream_core_[i]);
        d_.buffers.push_back({name, tile, s.views[0].shape, rp->dtype, s.span});
        stream_buffer_[i] = name;
        continue;
      }
      if (!g) g = &groups.emplace_back();
      g->streams.push_back(i);
      g->tiles.push_back(tile);
    }
    // Cores moving it different numbers of times (a scalar a process reads in each of its 16 iterations and
    // another once, after its loop) take it through FIFO trees of their own, a shim transfer each.
    std::vector<std::vector<Group>> by_count;
    for (const Group &g : groups) {
      auto same = std::find_if(by_count.begin(), by_count.end(), [&](const std::vector<Group> &c) {
        return plan_.streams[c[0].streams[0]].views.size() == plan_.streams[g.streams[0]].views.size();
      });
      (same == by_count.end() ? by_count.emplace_back() : *same).push_back(g);
    }
    const std::string base = (in ? "in_" : "out_") + tensor;
    for (size_t k = 0; k < by_count.size(); ++k)
      if (!fifo_tree(tensor, rp, in, by_count[k], by_count.size() == 1 ? base : base + "_n" + std::to_string(k)))
        return false;
    return true;
  }

  /// The FIFOs carrying `tensor` between the shim and the cores of `groups`, which move it equally often
  /// (through a mem tile when there are several groups), and its shim transfer.
  bool fifo_tree(const std::string &tensor, const RuntimeParam *rp, bool in, const std::vector<Group> &groups,
                 const std::string &base) {
    const StreamPlan &first = plan_.streams[groups[0].streams[0]];
    const size_t iterations = first.views.size();
    for (const auto &g : groups) {
      const auto &s = plan_.streams[g.streams[0]];
      if (s.views.size() != iterations)
        return fail("aie.csp-balance", "the cores moving '" + tensor + "' run different iteration counts (" +
                                           std::to_string(iterations) + " and " + std::to_string(s.views.size()) + ")", s.span);
      for (const auto &v : s.views) {
        if (v.shape != s.views[0].shape)
          return fail("aie.dynamic-view", "the views of '" + tensor + "' change shape between iterations", s.span);
        if (v.offset.size() != rp->shape.size() || v.shape.size() != rp->shape.size())
          return fail("aie.view", "a view of '" + tensor + "' does not match its rank " + std::to_string(rp->shape.size()), s.span);
        for (size_t k = 0; k < v.shape.size(); ++k)
          if (v.offset[k] < 0 || v.offset[k] + v.shape[k] > rp->shape[k])
            return fail("aie.view", "a view of '" + tensor + "' at " + Json(v.offset).dump() + " of shape " +
                                        Json(v.shape).dump() + " leaves the tensor " + Json(rp->shape).dump(), s.span);
      }
    }
    const int64_t depth = depth_for(static_cast<int64_t>(iterations));
    const int col = groups[0].tiles[0].col;
    auto shim = allocate(0, col, in ? 0 : 1, in ? 1 : 0);
    if (!shim)
      return fail("aie.route", "no shim DMA channel is left for " + std::string(in ? "input '" : "output '") + tensor +
                                   "' (each shim tile has " + std::to_string(dev_.shim.dma_out) + " channels each way)", first.span);
    std::vector<std::string> names;
    std::string shim_fifo = base;  // the FIFO with its end on the shim
    if (groups.size() == 1) {
      const auto &g = groups[0];
      d_.fifos.push_back(in ? fifo(base, *shim, g.tiles, depth, first.views[0].shape, rp->dtype, first.span)
                            : fifo(base, g.tiles[0], {*shim}, depth, first.views[0].shape, rp->dtype, first.span));
      names.push_back(base);
    } else {
      const int k = static_cast<int>(groups.size());
      auto mem = allocate(1, shim->col, in ? 1 : k, in ? k : 1);
      if (!mem)
        return fail("aie.route", "no mem tile has " + std::to_string(k + 1) + " free DMA channels to " +
                                     (in ? "distribute '" : "join '") + tensor + "' over " + std::to_string(k) + " core groups", first.span);
      FifoLink link;
      int64_t offset = 0;
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        const auto &s = plan_.streams[groups[gi].streams[0]];
        const std::string name = base + "_" + std::to_string(gi);
        d_.fifos.push_back(in ? fifo(name, *mem, groups[gi].tiles, depth, s.views[0].shape, rp->dtype, s.span)
                              : fifo(name, groups[gi].tiles[0], {*mem}, depth, s.views[0].shape, rp->dtype, s.span));
        if (!layout_dims(d_.fifos.back(), s, in)) return false;
        names.push_back(name);
        (in ? link.dsts : link.srcs).push_back(name);
        (in ? link.dst_offsets : link.src_offsets).push_back(offset);
        offset += product(s.views[0].shape);
      }
      const std::string l2 = base + "_L2";
      d_.fifos.push_back(in ? fifo(l2, *shim, {*mem}, depth, {offset}, rp->dtype, first.span)
                            : fifo(l2, *mem, {*shim}, depth, {offset}, rp->dtype, first.span));
      (in ? link.srcs : link.dsts).push_back(l2);
      d_.links.push_back(link);
      shim_fifo = l2;
    }
    for (size_t gi = 0; gi < groups.size(); ++gi)
      for (size_t s : groups[gi].streams) stream_fifo_[s] = names[gi];
    // Addresses the shim transfer visits: per iteration, the groups' views in link order — in the
    // objects' memory order when the shim talks to the cores directly (a mem tile reorders otherwise).
    std::vector<std::vector<int64_t>> chunks;
    for (size_t t = 0; t < iterations; ++t) {
      std::vector<int64_t> chunk;
      for (const auto &g : groups) {
        const StreamPlan &s = plan_.streams[g.streams[0]];
        view_addresses(s.views[t], rp->shape, groups.size() == 1 ? s.order : std::vector<int64_t>{}, chunk);
      }
      chunks.push_back(std::move(chunk));
    }
    transfers_.push_back({tensor, shim_fifo, in, std::move(chunks), first.span});
    return true;
  }

  /// The element addresses of view `v` of a tensor of `shape`, row-major, or in `order` (row-major
  /// indices within the view) when it is not empty.
  static void view_addresses(const View &v, const std::vector<int64_t> &shape, const std::vector<int64_t> &order,
                             std::vector<int64_t> &out) {
    const size_t n = shape.size();
    std::vector<int64_t> stride(n, 1);
    for (size_t k = n; k-- > 1;) stride[k - 1] = stride[k] * shape[k];
    std::vector<int64_t> idx(n, 0);
    const int64_t total = product(v.shape);
    std::vector<int64_t> rows;
    rows.reserve(static_cast<size_t>(total));
    for (int64_t e = 0; e < total; ++e) {
      int64_t a = 0;
      for (size_t k = 0; k < n; ++k) a += (v.offset[k] + idx[k]) * stride[k];
      rows.push_back(a);
      for (size_t k = n; k-- > 0;) {
        if (++idx[k] < v.shape[k]) break;
        idx[k] = 0;
      }
    }
    if (order.empty()) out.insert(out.end(), rows.begin(), rows.end());
    else
      for (int64_t e : order) out.push_back(rows[static_cast<size_t>(e)]);
  }

  /// dimensionsToStream of a mem tile -> core FIFO (inputs: the mem tile reads the row-major view in the
  /// object's memory order) or of a core -> mem tile FIFO (outputs: the core streams its object back in
  /// row-major order), for a stream whose object has a memory layout.
  bool layout_dims(ObjectFifo &f, const StreamPlan &s, bool in) {
    if (s.order.empty()) return true;
    std::vector<int64_t> addrs = s.order;
    if (!in)
      for (size_t k = 0; k < s.order.size(); ++k) addrs[static_cast<size_t>(s.order[k])] = static_cast<int64_t>(k);
    const TileKind kind = dev_.kind_of(f.producer.row);
    auto p = fit_pattern(addrs, dtype_bytes(f.dtype), stream_limits(dev_.dma, kind));
    if (!p)
      return fail("aie.dma-pattern", "the memory layout of '" + s.tensor + "' (" + s.layout + ") on the cores is not a " +
                                         std::to_string(dev_.dma.of(kind).dims) + "-D dimensionsToStream pattern of the " +
                                         std::string(tile_kind_name(kind)) + " of @" + f.name +
                                         " (innermost stride 1, or whole 32-bit elements; sizes within " +
                                         std::to_string(dev_.dma.of(kind).max_wrap) + ")", s.span);
    f.producer_dims = stream_dims(*p);
    return true;
  }

  /// The channels a channel port uses: its rotation, or its one channel.
  static std::vector<std::string> port_channels(const PortPlan &p) {
    return p.rotation.empty() ? std::vector<std::string>{p.channel} : p.rotation;
  }

  /// How many objects core `c` moves through `channel` (a rotation spreads its iterations).
  int64_t moves(size_t c, const std::string &channel) const {
    int64_t n = 0;  // every port of it: a step's each iteration, a port around the loop once
    for (const auto &p : plan_.cores[c].ports) {
      auto chs = port_channels(p);
      if (std::find(chs.begin(), chs.end(), channel) != chs.end())
        n += p.once ? 1 : plan_.cores[c].iterations / static_cast<int64_t>(chs.size());
    }
    return n;
  }

  bool channels() {
    for (const auto &ch : plan_.channels) {
      std::vector<size_t> producers, consumers;
      for (size_t c = 0; c < plan_.cores.size(); ++c)
        for (const auto &p : plan_.cores[c].ports) {
          auto chs = port_channels(p);
          if (std::find(chs.begin(), chs.end(), ch.name) == chs.end()) continue;
          if (p.kind == PortPlan::Kind::ChannelOut) producers.push_back(c);
          if (p.kind == PortPlan::Kind::ChannelIn) consumers.push_back(c);
        }
      auto names = [&](const std::vector<size_t> &v) {
        std::string s;
        for (size_t c : v) s += (s.empty() ? "'" : ", '") + plan_.cores[c].name + "'";
        return s;
      };
      if (producers.size() != 1)
        return fail("aie.csp-route", "channel '" + ch.name + "' has " + std::to_string(producers.size()) + " producers" +
                                         (producers.empty() ? "" : " (" + names(producers) + ")") +
                                         "; an AIE object FIFO has exactly one producer core", ch.span);
      if (consumers.empty())
        return fail("aie.csp-route", "channel '" + ch.name + "' has no consumer; an AIE object FIFO needs at least one", ch.span);
      std::vector<TileCoord> ctiles;
      const size_t prod = producers[0];
      for (size_t c : consumers) {
        if (moves(c, ch.name) != moves(prod, ch.name))
          return fail("aie.csp-balance", "channel '" + ch.name + "': '" + plan_.cores[prod].name + "' sends " +
                                             std::to_string(moves(prod, ch.name)) + " times but '" + plan_.cores[c].name +
                                             "' receives " + std::to_string(moves(c, ch.name)) + " times", ch.span);
        ctiles.push_back(tiles_[c]);
      }
      d_.fifos.push_back(fifo("ch_" + ch.name, tiles_[prod], ctiles, ch.depth, ch.shape, ch.dtype, ch.span));
      channel_fifo_[ch.name] = "ch_" + ch.name;
    }
    return true;
  }

  /// One call of core `core`'s kernel with its acquires and releases: the `slot`-th call of a loop
  /// iteration that makes `unroll` calls.
  std::vector<CoreOp> call_block(size_t core, const std::string &kernel, const std::vector<PortPlan> &ports,
                                 int64_t slot, int64_t unroll) {
    std::vector<CoreOp> acquires, releases;
    CoreOp call;
    call.kind = CoreOp::Kind::Call;
    call.callee = kernel;
    for (const auto &p : ports) {
      CallArg a;
      std::string fifo, port;
      switch (p.kind) {
        case PortPlan::Kind::Stream:
          if (auto b = stream_buffer_.find(p.stream); b != stream_buffer_.end()) {
            a.kind = CallArg::Kind::Buffer;
            a.fifo = b->second;
            break;
          }
          fifo = stream_fifo_[p.stream];
          port = plan_.streams[p.stream].in ? "Consume" : "Produce";
          break;
        case PortPlan::Kind::ChannelIn:
        case PortPlan::Kind::ChannelOut: {
          auto chs = port_channels(p);
          fifo = channel_fifo_[chs[static_cast<size_t>(slot) % chs.size()]];
          port = p.kind == PortPlan::Kind::ChannelIn ? "Consume" : "Produce";
          break;
        }
        case PortPlan::Kind::Const:
          a.kind = CallArg::Kind::Const;
          a.value = p.value;
          a.dtype = p.dtype;
          break;
        case PortPlan::Kind::Handoff:  // the calling core's buffer of that register (programs() made it)
          a.kind = CallArg::Kind::Buffer;
          a.fifo = handoff_buffer(core, p.channel);
          break;
        case PortPlan::Kind::Iteration:
          a.kind = CallArg::Kind::Iteration;
          a.start = p.start + p.step * slot;
          a.step = p.step * unroll;
          a.dtype = p.dtype;
          break;
      }
      if (!fifo.empty()) {
        a.fifo = fifo;
        acquires.push_back({CoreOp::Kind::Acquire, fifo, port, 1});
        releases.push_back({CoreOp::Kind::Release, fifo, port, 1});
      }
      call.args.push_back(a);
    }
    std::vector<CoreOp> body = acquires;
    body.push_back(call);
    body.insert(body.end(), releases.begin(), releases.end());
    return body;
  }

  /// The buffer of core c holding the tile register `reg` its process hands from step to step.
  static std::string handoff_buffer(size_t c, const std::string &reg) { return "step" + std::to_string(c) + "_" + reg; }

  void programs() {
    std::map<std::string, int64_t> locals;
    for (const auto &k : plan_.kernels) locals[k.name] = k.locals_bytes;
    for (size_t c = 0; c < plan_.cores.size(); ++c) {
      const CorePlan &cp = plan_.cores[c];
      for (const PortPlan &p : cp.ports)
        if (p.kind == PortPlan::Kind::Handoff && !d_.buffer(handoff_buffer(c, p.channel)))
          d_.buffers.push_back({handoff_buffer(c, p.channel), tiles_[c], p.value.get<std::vector<int64_t>>(), p.dtype,
                                cp.span});
      const int64_t unroll = std::max<int64_t>(1, cp.unroll);
      std::vector<CoreOp> body;
      int64_t stack = locals[cp.kernel];
      for (int64_t j = 0; j < unroll; ++j) {
        if (cp.steps.empty()) {
          auto block = call_block(c, cp.kernel, cp.ports, j, unroll);
          body.insert(body.end(), block.begin(), block.end());
        }
        for (const CorePlan::Step &st : cp.steps) {  // each step acquires, calls and releases its own ports
          const std::vector<PortPlan> ports(cp.ports.begin() + static_cast<long>(st.first),
                                            cp.ports.begin() + static_cast<long>(st.first + st.count));
          auto block = call_block(c, st.kernel, ports, j, unroll);
          body.insert(body.end(), block.begin(), block.end());
          stack = std::max(stack, locals[st.kernel]);
        }
      }
      // The kernels a process cut around its loop calls once, before and after it.
      auto once = [&](const std::optional<CorePlan::Step> &st) {
        if (!st) return std::vector<CoreOp>{};
        stack = std::max(stack, locals[st->kernel]);
        return call_block(c, st->kernel, std::vector<PortPlan>(cp.ports.begin() + static_cast<long>(st->first),
                                                             cp.ports.begin() + static_cast<long>(st->first + st->count)),
                          0, 1);
      };
      std::vector<CoreOp> before = once(cp.before), after = once(cp.after);
      Core core{cp.name, tiles_[c], 1024 + ((stack + 15) / 16) * 16, std::move(before), cp.span};
      const int64_t trip = cp.iterations / unroll;
      if (trip > 1) {
        CoreOp loop;
        loop.kind = CoreOp::Kind::Loop;
        loop.trip = trip;
        loop.body = std::move(body);
        core.body.push_back(std::move(loop));
      } else if (trip == 1) {
        core.body.insert(core.body.end(), body.begin(), body.end());
      }
      core.body.insert(core.body.end(), after.begin(), after.end());
      d_.cores.push_back(std::move(core));
    }
  }

  struct Transfer {
    std::string tensor, fifo;
    bool in;
    std::vector<std::vector<int64_t>> chunks;  // per iteration
    Json span;
  };

  bool sequence() {
    std::map<int, int64_t> next_bd;
    std::vector<std::string> waits;
    for (const auto &t : transfers_) {
      const ObjectFifo *f = d_.fifo(t.fifo);
      const int col = t.in ? f->producer.col : f->consumers[0].col;
      const int64_t eb = dtype_bytes(f->dtype);
      std::vector<int64_t> all;
      for (const auto &c : t.chunks) all.insert(all.end(), c.begin(), c.end());
      std::vector<AccessPattern> patterns;
      const PatternLimits lim = shim_transfer_limits(dev_.dma);
      if (auto p = fit_pattern(all, eb, lim)) {
        patterns.push_back(*p);
      } else {
        // Runs of consecutive iterations, each about as long as one pattern covers (halving from what is left
        // until one fits, then growing it by bisection), so a transfer past one pattern's limits (a repeat count
        // over 64) takes a few descriptors, not one per iteration.
        auto fit_run = [&](size_t first, size_t count) {
          std::vector<int64_t> run;
          for (size_t i = first; i < first + count; ++i) run.insert(run.end(), t.chunks[i].begin(), t.chunks[i].end());
          return fit_pattern(run, eb, lim);
        };
        for (size_t first = 0; first < t.chunks.size();) {
          std::optional<AccessPattern> q;
          size_t count = t.chunks.size() - first, fails = count + 1;
          for (; count > 0 && !(q = fit_run(first, count)); count /= 2) fails = count;
          for (size_t lo = count, hi = fails; q && hi - lo > 1;) {  // count fits, fails does not
            const size_t mid = lo + (hi - lo) / 2;
            if (auto m = fit_run(first, mid)) lo = count = mid, q = m;
            else hi = mid;
          }
          if (!q)
            return fail("aie.dma-pattern", "the transfer of '" + t.tensor + "' through @" + t.fifo +
                                               " is not a 4-D DMA access pattern (innermost stride 1, or whole 32-bit elements; sizes within " +
                                               std::to_string(lim.max_wrap) + " / repeat " + std::to_string(lim.max_repeat) + ")", t.span);
          patterns.push_back(*q);
          first += count;
        }
      }
      for (const auto &p : patterns) {
        DmaOp op;
        op.param = t.tensor;
        op.fifo = t.fifo;
        op.id = next_bd[col]++;
        op.sizes = p.sizes;
        op.strides = p.strides;
        auto offsets = offsets_for(p);
        if (!offsets)
          return fail("aie.dma-pattern", "the transfer of '" + t.tensor + "' through @" + t.fifo + " starts at element " +
                                             std::to_string(p.base) + ", which its strides cannot reach", t.span);
        op.offsets = *offsets;
        op.issue_token = !t.in;
        if (op.id >= dev_.dma.shim_bds)
          return fail("aie.route", "the runtime sequence needs more than " + std::to_string(dev_.dma.shim_bds) +
                                       " buffer descriptors on the shim of column " + std::to_string(col), t.span);
        d_.sequence.push_back(op);
      }
      if (!t.in) waits.push_back(t.fifo);
    }
    for (const auto &w : waits) {
      DmaOp op;
      op.kind = DmaOp::Kind::Wait;
      op.fifo = w;
      d_.sequence.push_back(op);
    }
    return true;
  }

  const EntryPlan &plan_;
  const DeviceProfile &dev_;
  std::vector<Problem> &problems_;
  Design d_;
  std::vector<TileCoord> tiles_;
  std::map<TileCoord, Channels> used_;
  std::map<size_t, size_t> stream_core_;
  std::map<size_t, std::string> stream_fifo_;
  std::map<size_t, std::string> stream_buffer_;  ///< a replica's output stream -> the tile buffer it writes
  std::map<std::string, std::string> channel_fifo_;
  std::vector<Transfer> transfers_;
};

}  // namespace

std::optional<Design> build_design(const EntryPlan &plan, const DeviceProfile &device, std::vector<Problem> &problems) {
  return Builder(plan, device, problems).run();
}

}  // namespace htp::aie
