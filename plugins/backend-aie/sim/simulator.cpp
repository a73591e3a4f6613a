#include "simulator.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>

#include <htp/run.hpp>

#include "../access_pattern.hpp"
#include "sim_fifo.hpp"

namespace htp::aie::sim {

namespace {

using Clock = std::chrono::steady_clock;

/// What one step of an actor did: moved something, could not (it waits on a FIFO or a transfer), or
/// finished its program.
enum class Step { Progress, Waiting, Done };

/// One thing that runs in the design — a core's program, a mem-tile link channel, a shim DMA channel, the
/// runtime sequence — as a resumable state machine: step() runs it until it waits or ends, and waits()
/// says on what (for a deadlock's message; spelled only then, from the state the actor stopped in, which a
/// round in which nothing moved leaves as it was).
struct Actor {
  virtual ~Actor() = default;
  virtual Step step() = 0;
  /// Whether the run is over only when this actor is done (cores, the runtime sequence); links and shim
  /// channels serve them and wait for more work forever.
  virtual bool required() const { return false; }
  /// What the actor waits on after a step that returned Waiting or Progress, or "" when it waits on nothing.
  virtual std::string waits() const = 0;
  bool done = false;
};

class Simulation {
public:
  Simulation(const Design &d, const std::map<std::string, KernelEntry> &kernels,
             const std::map<std::string, HostBuffer> &buffers, const SimOptions &opt)
      : d_(d), kernels_(kernels), buffers_(buffers), opt_(opt), start_(Clock::now()),
        deadline_(start_ + std::chrono::milliseconds(static_cast<int64_t>(opt.timeout_seconds * 1000))) {}

  SimResult run() {
    check_inputs();
    build_fifos();
    for (size_t i = 0; i < d_.cores.size(); ++i) actors_.push_back(std::make_unique<CoreActor>(*this, i));
    start_links();
    actors_.push_back(std::make_unique<SequenceActor>(*this));
    schedule();
    return {trace(), summary()};
  }

private:
  /// Steps every actor in turn until the required ones are done. A round in which nothing moves while a
  /// required actor is not done is a deadlock: every waiter is named.
  void schedule() {
    for (;;) {
      bool moved = false, pending = false;
      for (size_t i = 0; i < actors_.size(); ++i) {  // (the sequence adds shim channels as it goes)
        Actor &a = *actors_[i];
        if (a.done) continue;
        const Step s = a.step();
        if (s == Step::Done) a.done = true;
        moved = moved || s != Step::Waiting;
        pending = pending || (a.required() && !a.done);
      }
      if (!pending) return;
      if (!moved) {
        std::string waiting;
        for (const auto &a : actors_)
          if (!a->done)
            if (std::string w = a->waits(); !w.empty()) waiting += "; " + w;
        throw SimError("deadlock: nothing in the design can move" + waiting);
      }
      if (opt_.limit ? opt_.limit->expired() : Clock::now() > deadline_)
        throw SimError(htp::RunTimeLimit::message(opt_.limit ? opt_.limit->seconds() : opt_.timeout_seconds));
    }
  }

  // ---- setup ----
  void check_inputs() {
    for (const auto &k : d_.kernels)
      if (!kernels_.count(k.name)) throw SimError("kernel @" + k.name + " was not compiled for the simulator");
    for (const auto &p : d_.params) {
      auto it = buffers_.find(p.name);
      if (it == buffers_.end()) throw SimError("no host buffer for runtime parameter %" + p.name);
      int64_t bytes = dtype_bytes(p.dtype);
      for (auto s : p.shape) bytes *= s;
      if (static_cast<int64_t>(it->second.bytes) != bytes)
        throw SimError("host buffer of %" + p.name + " has " + std::to_string(it->second.bytes) + " bytes, the design expects " + std::to_string(bytes));
    }
  }

  void build_fifos() {
    std::map<std::string, int> parts, readers;
    for (const auto &l : d_.links) {
      if (l.srcs.size() == 1) readers[l.srcs[0]] = static_cast<int>(l.dsts.size());
      else if (l.dsts.size() == 1) parts[l.dsts[0]] = static_cast<int>(l.srcs.size());
    }
    for (const auto &f : d_.fifos) {
      int64_t depth = f.depth.empty() ? 1 : *std::min_element(f.depth.begin(), f.depth.end());
      const int producers = parts.count(f.name) ? parts[f.name] : 1;
      const int consumers = readers.count(f.name) ? readers[f.name] : static_cast<int>(f.consumers.size());
      fifos_[f.name] = std::make_unique<SimFifo>(f.name, static_cast<size_t>(f.elements() * dtype_bytes(f.dtype)), depth,
                                                 producers, consumers);
      stream_order(f);
    }
    for (const auto &b : d_.buffers) tile_buffers_[b.name].assign(static_cast<size_t>(b.elements() * dtype_bytes(b.dtype)), 0);
  }

  /// The memory of tile buffer `name`.
  char *buffer(const std::string &name) {
    auto it = tile_buffers_.find(name);
    if (it == tile_buffers_.end()) throw SimError("no tile buffer @" + name + " in the design");
    return it->second.data();
  }

  /// The element order in which the producer's DMA streams an object out (dimensionsToStream).
  void stream_order(const ObjectFifo &f) {
    if (f.producer_dims.empty()) return;
    const std::string op = "dimensionsToStream of @" + f.name;
    if (f.producer.row == 0) throw SimError(op + " on a shim producer (a shim transfer is ordered by its dma_memcpy_nd)");
    bool core_to_core = f.producer.row >= 2;
    for (const auto &c : f.consumers) core_to_core = core_to_core && c.row >= 2;
    if (core_to_core) throw SimError(op + " between cores is not simulated (the simulator shares the object buffers of core-to-core FIFOs)");
    auto order = enumerate(f.producer_dims);
    if (static_cast<int64_t>(order.size()) != f.elements())
      throw SimError(op + " visits " + std::to_string(order.size()) + " elements; the object has " + std::to_string(f.elements()));
    for (int64_t e : order)
      if (e < 0 || e >= f.elements()) throw SimError(op + " reaches element " + std::to_string(e) + " outside the object");
    order_[f.name] = std::move(order);
  }

  const std::vector<int64_t> *order_of(const std::string &name) const {
    auto it = order_.find(name);
    return it == order_.end() ? nullptr : &it->second;
  }

  SimFifo &fifo(const std::string &name) {
    auto it = fifos_.find(name);
    if (it == fifos_.end()) throw SimError("@" + name + " is not an object FIFO of the design");
    return *it->second;
  }

  int64_t elem_bytes(const std::string &fifo_name) const {
    const ObjectFifo *f = d_.fifo(fifo_name);
    return f ? dtype_bytes(f->dtype) : 1;
  }

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }

  // ---- mem tile links: one actor per link channel ----
  /// Copies objects from `in` (read at element offset in_off) to `out` (written at out_off); with `order`
  /// (the dimensionsToStream of the DMA that streams them), stream element k is read from in_off + order[k].
  struct LinkActor : Actor {
    LinkActor(Simulation &s, SimFifo &in, int reader, int64_t in_off, SimFifo &out, int part, int64_t out_off,
              const std::vector<int64_t> *order)
        : in(in), out(out), reader(reader), part(part), in_off(in_off), out_off(out_off), order(order),
          eb(s.elem_bytes(in.name())), bytes(std::min(in.object_bytes(), out.object_bytes())) {}
    Step step() override {
      bool moved = false;
      for (;;) {
        if (!src && !(src = in.try_acquire_consume(reader, 1))) return moved ? Step::Progress : Step::Waiting;
        if (!dst && !(dst = out.try_acquire_produce(part, 1))) return moved ? Step::Progress : Step::Waiting;
        if (!order) std::memcpy(dst + out_off * eb, src + in_off * eb, bytes);
        else
          for (size_t k = 0; k < order->size() && static_cast<size_t>((k + 1) * eb) <= bytes; ++k)
            std::memcpy(dst + (out_off + static_cast<int64_t>(k)) * eb, src + (in_off + (*order)[k]) * eb, static_cast<size_t>(eb));
        out.release_produce(part, 1);
        in.release_consume(reader, 1);
        src = dst = nullptr;
        moved = true;
      }
    }
    std::string waits() const override {
      const std::string what = !src ? "an object of @" + in.name() + " " + in.state()
                                    : "a free object of @" + out.name() + " " + out.state();
      return "link @" + in.name() + " -> @" + out.name() + " waits for " + what;
    }
    SimFifo &in, &out;
    int reader, part;
    int64_t in_off, out_off;
    const std::vector<int64_t> *order;
    int64_t eb;
    size_t bytes;
    char *src = nullptr, *dst = nullptr;
  };

  void start_links() {
    for (const auto &l : d_.links) {
      if (l.srcs.size() == 1) {
        for (size_t i = 0; i < l.dsts.size(); ++i) {
          const int64_t off = i < l.dst_offsets.size() ? l.dst_offsets[i] : 0;
          actors_.push_back(std::make_unique<LinkActor>(*this, fifo(l.srcs[0]), static_cast<int>(i), off, fifo(l.dsts[i]),
                                                        0, 0, order_of(l.dsts[i])));
        }
      } else {
        for (size_t i = 0; i < l.srcs.size(); ++i) {
          const int64_t off = i < l.src_offsets.size() ? l.src_offsets[i] : 0;
          actors_.push_back(std::make_unique<LinkActor>(*this, fifo(l.srcs[i]), 0, 0, fifo(l.dsts[0]), static_cast<int>(i),
                                                        off, order_of(l.srcs[i])));
        }
      }
    }
  }

  // ---- cores ----
  int consumer_index(const std::string &name, const Core &core) {
    const TileCoord &t = core.tile;
    const ObjectFifo *f = d_.fifo(name);
    if (!f) throw SimError("@" + name + " is not an object FIFO of the design");
    for (size_t i = 0; i < f->consumers.size(); ++i)
      if (f->consumers[i] == t) return static_cast<int>(i);
    throw SimError("core '" + core.name + "' on " + t.text() + " consumes @" + name + " but is not its consumer");
  }

  /// A core's program: a stack of (ops, next op, loop iteration) frames, run until an acquire waits.
  /// Each op's FIFO, port, consumer index and kernel are looked up by name the first time it runs (failing
  /// as before when they do not exist), then kept beside it: an iteration touches no map.
  struct CoreActor : Actor {
    /// What an op refers to, found once.
    struct Resolved {
      bool ready = false;
      SimFifo *fifo = nullptr;      ///< Acquire / Release
      bool produce = false;         ///< Acquire / Release: the Produce port
      int consumer = 0;             ///< Acquire / Release on the Consume port: this core's index
      size_t slot = 0;              ///< Acquire / Release: the held object's slot (one per FIFO name)
      KernelEntry kernel = nullptr; ///< Call
      std::vector<size_t> arg_slots; ///< Call: per Fifo argument, its held slot
      std::vector<Resolved> body;   ///< Loop: its body's ops
    };
    struct Frame {
      const std::vector<CoreOp> *ops;
      std::vector<Resolved> *resolved;
      size_t pc;
      int64_t iteration, trip;
    };
    CoreActor(Simulation &s, size_t index)
        : sim(s), core(s.d_.cores[index]), tid(static_cast<int>(index)),
          who("core '" + core.name + "' on " + core.tile.text()), top(core.body.size()),
          stack{{&core.body, &top, 0, 0, 1}} {}
    bool required() const override { return true; }

    /// The held-object slot of FIFO `name`.
    size_t slot_of(const std::string &name) {
      auto [it, added] = slots.emplace(name, held.size());
      if (added) held.push_back(nullptr);
      return it->second;
    }

    void resolve(const CoreOp &op, Resolved &r) {
      switch (op.kind) {
        case CoreOp::Kind::Acquire:
        case CoreOp::Kind::Release:
          r.fifo = &sim.fifo(op.fifo);
          r.produce = op.port == "Produce";
          if (!r.produce) r.consumer = sim.consumer_index(op.fifo, core);
          r.slot = slot_of(op.fifo);
          break;
        case CoreOp::Kind::Call:
          r.kernel = sim.kernels_.at(op.callee);
          for (const CallArg &a : op.args) {
            const bool memory = a.kind == CallArg::Kind::Fifo || a.kind == CallArg::Kind::Buffer;
            r.arg_slots.push_back(memory ? slot_of(a.fifo) : 0);
            if (a.kind == CallArg::Kind::Buffer) held[r.arg_slots.back()] = sim.buffer(a.fifo);  // always there
          }
          break;
        case CoreOp::Kind::Loop: r.body.resize(op.body.size()); break;
      }
      r.ready = true;
    }

    Step step() override {
      bool moved = false;
      while (!stack.empty()) {
        Frame &f = stack.back();
        if (f.pc == f.ops->size()) {
          if (++f.iteration < f.trip) f.pc = 0;
          else stack.pop_back();
          continue;
        }
        const CoreOp &op = (*f.ops)[f.pc];
        Resolved &r = (*f.resolved)[f.pc];
        if (!r.ready) resolve(op, r);
        switch (op.kind) {
          case CoreOp::Kind::Loop:
            ++f.pc;
            if (op.trip > 0) stack.push_back({&op.body, &r.body, 0, 0, op.trip});
            break;
          case CoreOp::Kind::Acquire: {
            char *obj = r.produce ? r.fifo->try_acquire_produce(0, op.count)
                                  : r.fifo->try_acquire_consume(r.consumer, op.count);
            if (!obj) {
              if (blocked_since < 0) blocked_since = sim.now_us();
              blocked_on = &op;
              return moved ? Step::Progress : Step::Waiting;
            }
            blocked_on = nullptr;
            if (blocked_since >= 0) {
              const double t1 = sim.now_us();
              blocked_us += t1 - blocked_since;
              if (t1 - blocked_since > 1.0) sim.event("acquire @" + op.fifo, "wait", blocked_since, t1 - blocked_since, tid);
              blocked_since = -1;
            }
            held[r.slot] = obj;
            ++f.pc;
            break;
          }
          case CoreOp::Kind::Release: {
            if (r.produce) r.fifo->release_produce(0, op.count);
            else r.fifo->release_consume(r.consumer, op.count);
            held[r.slot] = nullptr;
            ++f.pc;
            break;
          }
          case CoreOp::Kind::Call:
            call(op, r, f.iteration);
            ++f.pc;
            break;
        }
        moved = true;
      }
      blocked_on = nullptr;
      sim.core_stats_.push_back({{"name", core.name}, {"tile", {core.tile.col, core.tile.row}}, {"calls", calls},
                                 {"busy_us", busy_us}, {"blocked_us", blocked_us}});
      return Step::Done;
    }

    std::string waits() const override {
      if (!blocked_on) return {};
      const CoreOp &op = *blocked_on;
      return who + " waits to acquire " + std::to_string(op.count) + " object(s) to " +
             (op.port == "Produce" ? "produce" : "consume") + " of @" + op.fifo + " " + sim.fifo(op.fifo).state();
    }

    void call(const CoreOp &op, const Resolved &r, int64_t iteration) {
      // The argument buffers are the actor's, sized once: a call allocates nothing.
      const size_t n = op.args.size();
      args.assign(n, nullptr);
      ints.resize(n);
      reals.resize(n);
      floats.resize(n);
      i32.resize(n);
      for (size_t i = 0; i < n; ++i) {
        const CallArg &a = op.args[i];
        if (a.kind == CallArg::Kind::Fifo || a.kind == CallArg::Kind::Buffer) {
          args[i] = held[r.arg_slots[i]];
          if (!args[i]) throw SimError("core '" + core.name + "' calls @" + op.callee + " with @" + a.fifo + " not acquired");
          continue;
        }
        const double v = a.kind == CallArg::Kind::Const ? a.value.get<double>() : double(a.start + a.step * iteration);
        if (a.dtype == "f32") { floats[i] = static_cast<float>(v); args[i] = &floats[i]; }
        else if (a.dtype == "i64") { ints[i] = static_cast<int64_t>(v); args[i] = &ints[i]; }
        else if (a.dtype == "f64") { reals[i] = v; args[i] = &reals[i]; }
        else { i32[i] = static_cast<int32_t>(v); args[i] = &i32[i]; }
      }
      const double t0 = sim.now_us();
      try {
        r.kernel(args.data());
      } catch (const std::exception &e) {  // a kernel's runtime check (HTP_CHECK_VIEW), or its time limit
        if (sim.opt_.limit && sim.opt_.limit->expired())
          throw SimError(sim.opt_.limit->message() + ", stopped in core '" + core.name + "', @" + op.callee);
        // (a check's message names the program's line first: kept first, so the run error is placed there)
        const std::string who = "core '" + core.name + "', @" + op.callee, what = e.what();
        throw SimError(htp::located_message(what).first.line ? what + " (" + who + ")" : who + ": " + what);
      }
      const double t1 = sim.now_us();
      busy_us += t1 - t0;
      calls++;
      sim.event(op.callee, "kernel", t0, t1 - t0, tid);
    }

    Simulation &sim;
    const Core &core;
    int tid;
    std::string who;
    std::vector<Resolved> top;  ///< The core body's ops.
    std::vector<Frame> stack;
    std::map<std::string, size_t> slots;  ///< FIFO name -> its held slot
    std::vector<char *> held;             ///< Per slot: the acquired object, or null
    const CoreOp *blocked_on = nullptr;   ///< The acquire the last step stopped at
    std::vector<void *> args;
    std::vector<int64_t> ints;
    std::vector<double> reals;
    std::vector<float> floats;
    std::vector<int32_t> i32;
    int64_t calls = 0;
    double busy_us = 0, blocked_us = 0, blocked_since = -1;
  };

  // ---- shim DMA channels and the runtime sequence ----
  /// A shim DMA channel: the transfers the sequence queued on its FIFO, in order, each resumable where an
  /// acquire waited (a transfer may end inside an object; the next one continues it).
  struct ShimActor : Actor {
    ShimActor(Simulation &s, const std::string &name, int tid) : sim(s), name(name), tid(tid) {}
    Step step() override {
      bool moved = false;
      while (!queue.empty()) {
        if (t0 < 0) t0 = sim.now_us();
        if (!sim.transfer(*queue.front(), name, *this, moved)) return moved ? Step::Progress : Step::Waiting;
        sim.event("dma " + queue.front()->param + " -> @" + name, "dma", t0, sim.now_us() - t0, tid);
        queue.pop_front();
        ++finished;
        i0 = i1 = i2 = k = 0;
        t0 = -1;
        moved = true;
      }
      return moved ? Step::Progress : Step::Waiting;
    }
    std::string waits() const override {
      if (queue.empty()) return {};
      const ObjectFifo *f = sim.d_.fifo(name);  // (transfer() checked it exists)
      return "shim DMA of @" + name + " waits for " + (f->producer.row == 0 ? "a free object " : "an object ") +
             sim.fifo(name).state();
    }
    Simulation &sim;
    std::string name;
    int tid;
    std::deque<const DmaOp *> queue;
    int64_t issued = 0, finished = 0;
    int64_t i0 = 0, i1 = 0, i2 = 0, k = 0;  // where the front transfer is in its pattern
    char *obj = nullptr;                    // the FIFO's current object and how much of it is moved
    int64_t filled = 0;
    double t0 = -1;
  };

  /// Moves the elements of `op` between its runtime parameter and FIFO @name, object by object, in the
  /// pattern's order (an innermost contiguous row at a time, in pieces that end where an object ends), from
  /// where `ch` stopped; false when an acquire waits (resume later), true when the transfer is complete.
  bool transfer(const DmaOp &op, const std::string &name, ShimActor &ch, bool &moved) {
    const ObjectFifo *f = d_.fifo(name);
    if (!f) throw SimError("dma_memcpy_nd names @" + name + ", which is not an object FIFO");
    const bool to_array = f->producer.row == 0;
    SimFifo &sf = fifo(name);
    const int64_t eb = dtype_bytes(f->dtype);
    const int64_t per_object = f->elements();
    const std::vector<int64_t> *order = to_array ? nullptr : order_of(name);  // the producer streams in this order
    const HostBuffer &buf = buffers_.at(op.param);
    const int64_t limit = static_cast<int64_t>(buf.bytes) / eb;
    const std::array<int64_t, 4> &sz = op.sizes, &st = op.strides;
    const int64_t row = sz[3];
    const bool unit = st[3] == 1;
    for (; ch.i0 < sz[0]; ++ch.i0, ch.i1 = 0)
      for (; ch.i1 < sz[1]; ++ch.i1, ch.i2 = 0)
        for (; ch.i2 < sz[2]; ++ch.i2, ch.k = 0) {
          const int64_t start = op.base() + ch.i0 * st[0] + ch.i1 * st[1] + ch.i2 * st[2];
          while (ch.k < row) {
            const int64_t a = start + ch.k * st[3];
            const int64_t last = start + (unit ? std::min(row, ch.k + per_object - ch.filled) - 1 : ch.k) * st[3];
            for (int64_t x : {a, last})
              if (x < 0 || x >= limit)
                throw SimError("aiex.npu.dma_memcpy_nd (id " + std::to_string(op.id) + ", @" + name + ") touches element " +
                               std::to_string(x) + " outside %" + op.param + " (" + std::to_string(limit) + " elements)");
            if (!ch.obj && !(ch.obj = to_array ? sf.try_acquire_produce(0, 1) : sf.try_acquire_consume(0, 1))) return false;
            const int64_t n = last - a + 1;  // elements in this piece (1 unless the row is contiguous)
            char *host = static_cast<char *>(buf.data) + a * eb;
            if (to_array) std::memcpy(ch.obj + ch.filled * eb, host, static_cast<size_t>(n * eb));
            else if (!order) std::memcpy(host, ch.obj + ch.filled * eb, static_cast<size_t>(n * eb));
            else
              for (int64_t e = 0; e < n; ++e)
                std::memcpy(host + e * eb, ch.obj + (*order)[static_cast<size_t>(ch.filled + e)] * eb, static_cast<size_t>(eb));
            ch.filled += n;
            ch.k += unit ? n : 1;
            moved = true;
            if (ch.filled == per_object) {
              if (to_array) sf.release_produce(0, 1);
              else sf.release_consume(0, 1);
              ch.obj = nullptr;
              ch.filled = 0;
            }
          }
        }
    return true;
  }

  ShimActor &channel(const std::string &name) {
    auto &c = shim_[name];
    if (!c) {
      auto a = std::make_unique<ShimActor>(*this, name, 100 + static_cast<int>(shim_.size()));
      c = a.get();
      actors_.push_back(std::move(a));
    }
    return *c;
  }

  /// The runtime sequence: queues each transfer on its channel; a dma_wait waits until every transfer
  /// queued on that channel is complete.
  struct SequenceActor : Actor {
    explicit SequenceActor(Simulation &s) : sim(s) {}
    bool required() const override { return true; }
    Step step() override {
      bool moved = false;
      for (; pc < sim.d_.sequence.size(); ++pc) {
        const DmaOp &op = sim.d_.sequence[pc];
        ShimActor &ch = sim.channel(op.fifo);
        if (op.kind == DmaOp::Kind::Memcpy) {
          ch.queue.push_back(&op);
          ch.issued++;
        } else if (ch.finished < ch.issued) {
          return moved ? Step::Progress : Step::Waiting;
        }
        moved = true;
      }
      return Step::Done;
    }
    std::string waits() const override {
      if (pc >= sim.d_.sequence.size()) return {};
      const DmaOp &op = sim.d_.sequence[pc];
      const ShimActor &ch = *sim.shim_.at(op.fifo);
      return "aiex.npu.dma_wait {symbol = @" + op.fifo + "} waits (" + std::to_string(ch.finished) + " of " +
             std::to_string(ch.issued) + " transfers done)";
    }
    Simulation &sim;
    size_t pc = 0;
  };

  // ---- trace ----
  /// A complete trace event, kept plain while the simulation runs (JSON is built once, in trace()).
  struct Event {
    std::string name;
    const char *cat;
    double ts, dur;
    int tid;
  };
  void event(std::string name, const char *cat, double ts, double dur, int tid) {
    events_.push_back(Event{std::move(name), cat, ts, dur, tid});
  }

  Json trace() {
    Json ev = Json::array();
    ev.get_ref<Json::array_t &>().reserve(1 + d_.cores.size() + events_.size());
    ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "aie-sim " + d_.entry + " (" + d_.device + ")"}}}});
    for (size_t i = 0; i < d_.cores.size(); ++i)
      ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", static_cast<int>(i)},
                    {"args", {{"name", "core " + d_.cores[i].tile.text() + " " + d_.cores[i].name}}}});
    for (const Event &e : events_)
      ev.push_back({{"name", e.name}, {"cat", e.cat}, {"ph", "X"}, {"ts", e.ts}, {"dur", e.dur}, {"pid", 1}, {"tid", e.tid}});
    return {{"traceEvents", ev}, {"displayTimeUnit", "ms"}};
  }

  Json summary() {
    Json fifos = Json::object();
    for (const auto &[n, f] : fifos_) fifos[n] = f->committed();
    return {{"cores", core_stats_}, {"fifo_objects", fifos}};
  }

  const Design &d_;
  const std::map<std::string, KernelEntry> &kernels_;
  const std::map<std::string, HostBuffer> &buffers_;
  SimOptions opt_;
  Clock::time_point start_, deadline_;
  std::map<std::string, std::unique_ptr<SimFifo>> fifos_;
  std::map<std::string, std::vector<char>> tile_buffers_;  ///< tile buffers (aie.buffer) by name
  std::vector<std::unique_ptr<Actor>> actors_;
  std::map<std::string, ShimActor *> shim_;              // FIFO -> its shim channel (owned by actors_)
  std::map<std::string, std::vector<int64_t>> order_;  // FIFO -> dimensionsToStream offsets
  std::vector<Event> events_;
  Json core_stats_ = Json::array();
};

}  // namespace

SimResult simulate(const Design &design, const std::map<std::string, KernelEntry> &kernels,
                   const std::map<std::string, HostBuffer> &buffers, const SimOptions &options) {
  return Simulation(design, kernels, buffers, options).run();
}

}  // namespace htp::aie::sim
