#include "simulator.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "../access_pattern.hpp"
#include "sim_fifo.hpp"

namespace htp::aie::sim {

namespace {

using Clock = std::chrono::steady_clock;

class Simulation {
public:
  Simulation(const Design &d, const std::map<std::string, KernelEntry> &kernels,
             const std::map<std::string, HostBuffer> &buffers, const SimOptions &opt)
      : d_(d), kernels_(kernels), buffers_(buffers), opt_(opt), start_(Clock::now()) {
    flag_.deadline = start_ + std::chrono::milliseconds(static_cast<int64_t>(opt.timeout_seconds * 1000));
  }

  SimResult run() {
    check_inputs();
    build_fifos();
    if (runs_sequentially()) {
      run_sequentially();
      return {trace(), summary()};
    }
    std::vector<std::thread> workers;
    start_links(workers);
    std::vector<std::thread> cores;
    for (size_t i = 0; i < d_.cores.size(); ++i) cores.emplace_back([this, i] { guarded([&] { run_core(i); }); });
    guarded([&] { run_sequence(workers); });
    for (auto &t : cores) t.join();
    stop();
    for (auto &t : workers) t.join();
    if (!error_.empty()) throw SimError(error_);
    return {trace(), summary()};
  }

private:
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
                                                 producers, consumers, flag_);
      stream_order(f);
    }
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

  // ---- mem tile links: one thread per link channel ----
  void start_links(std::vector<std::thread> &workers) {
    for (const auto &l : d_.links) {
      if (l.srcs.size() == 1) {
        for (size_t i = 0; i < l.dsts.size(); ++i) {
          const int64_t off = i < l.dst_offsets.size() ? l.dst_offsets[i] : 0;
          workers.emplace_back([this, &l, i, off] {
            guarded([&] {
              forward(fifo(l.srcs[0]), static_cast<int>(i), off, fifo(l.dsts[i]), 0, 0, order_of(l.dsts[i]), "link @" + l.dsts[i]);
            });
          });
        }
      } else {
        for (size_t i = 0; i < l.srcs.size(); ++i) {
          const int64_t off = i < l.src_offsets.size() ? l.src_offsets[i] : 0;
          workers.emplace_back([this, &l, i, off] {
            guarded([&] {
              forward(fifo(l.srcs[i]), 0, 0, fifo(l.dsts[0]), static_cast<int>(i), off, order_of(l.srcs[i]), "link @" + l.srcs[i]);
            });
          });
        }
      }
    }
  }

  int64_t elem_bytes(const std::string &fifo_name) const {
    const ObjectFifo *f = d_.fifo(fifo_name);
    return f ? dtype_bytes(f->dtype) : 1;
  }

  /// Copies objects from `in` (read at element offset in_off) to `out` (written at out_off) until stopped;
  /// with `order` (the dimensionsToStream of the DMA that streams them), stream element k is read from
  /// in_off + order[k].
  void forward(SimFifo &in, int reader, int64_t in_off, SimFifo &out, int part, int64_t out_off,
               const std::vector<int64_t> *order, const std::string &who) {
    const int64_t eb = elem_bytes(in.name());
    const size_t bytes = std::min(in.object_bytes(), out.object_bytes());
    for (;;) {
      char *src = in.acquire_consume(reader, 1, who);
      char *dst = out.acquire_produce(part, 1, who);
      if (!order) std::memcpy(dst + out_off * eb, src + in_off * eb, bytes);
      else
        for (size_t k = 0; k < order->size() && static_cast<size_t>((k + 1) * eb) <= bytes; ++k)
          std::memcpy(dst + (out_off + static_cast<int64_t>(k)) * eb, src + (in_off + (*order)[k]) * eb, static_cast<size_t>(eb));
      out.release_produce(part, 1);
      in.release_consume(reader, 1);
    }
  }

  // ---- cores ----
  void run_core(size_t index) {
    const Core &c = d_.cores[index];
    CoreState st{c, static_cast<int>(index), {}, 0, 0, 0};
    run_ops(st, c.body, 0);
    std::lock_guard<std::mutex> l(m_);
    core_stats_.push_back({{"name", c.name}, {"tile", {c.tile.col, c.tile.row}}, {"calls", st.calls},
                           {"busy_us", st.busy_us}, {"blocked_us", st.blocked_us}});
  }

  struct CoreState {
    const Core &core;
    int tid;
    std::map<std::string, char *> held;
    int64_t calls;
    double busy_us, blocked_us;
  };

  int consumer_index(const std::string &name, const Core &core) {
    const TileCoord &t = core.tile;
    const ObjectFifo *f = d_.fifo(name);
    if (!f) throw SimError("@" + name + " is not an object FIFO of the design");
    for (size_t i = 0; i < f->consumers.size(); ++i)
      if (f->consumers[i] == t) return static_cast<int>(i);
    throw SimError("core '" + core.name + "' on " + t.text() + " consumes @" + name + " but is not its consumer");
  }

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }

  void run_ops(CoreState &st, const std::vector<CoreOp> &ops, int64_t iteration) {
    const std::string who = "core '" + st.core.name + "' on " + st.core.tile.text();
    for (const auto &op : ops) {
      switch (op.kind) {
        case CoreOp::Kind::Loop:
          for (int64_t t = 0; t < op.trip; ++t) run_ops(st, op.body, t);
          break;
        case CoreOp::Kind::Acquire: {
          const double t0 = now_us();
          SimFifo &f = fifo(op.fifo);
          st.held[op.fifo] = op.port == "Produce" ? f.acquire_produce(0, op.count, who)
                                                  : f.acquire_consume(consumer_index(op.fifo, st.core), op.count, who);
          const double t1 = now_us();
          st.blocked_us += t1 - t0;
          if (t1 - t0 > 1.0) event("acquire @" + op.fifo, "wait", t0, t1 - t0, st.tid);
          break;
        }
        case CoreOp::Kind::Release: {
          SimFifo &f = fifo(op.fifo);
          if (op.port == "Produce") f.release_produce(0, op.count);
          else f.release_consume(consumer_index(op.fifo, st.core), op.count);
          st.held.erase(op.fifo);
          break;
        }
        case CoreOp::Kind::Call:
          call(st, op, iteration);
          break;
      }
    }
  }

  void call(CoreState &st, const CoreOp &op, int64_t iteration) {
    std::vector<void *> args;
    std::vector<int64_t> ints(op.args.size());
    std::vector<double> reals(op.args.size());
    std::vector<float> floats(op.args.size());
    std::vector<int32_t> i32(op.args.size());
    for (size_t i = 0; i < op.args.size(); ++i) {
      const CallArg &a = op.args[i];
      if (a.kind == CallArg::Kind::Fifo) {
        auto it = st.held.find(a.fifo);
        if (it == st.held.end()) throw SimError("core '" + st.core.name + "' calls @" + op.callee + " with @" + a.fifo + " not acquired");
        args.push_back(it->second);
        continue;
      }
      const double v = a.kind == CallArg::Kind::Const ? a.value.get<double>() : double(a.start + a.step * iteration);
      if (a.dtype == "f32") { floats[i] = static_cast<float>(v); args.push_back(&floats[i]); }
      else if (a.dtype == "i64") { ints[i] = static_cast<int64_t>(v); args.push_back(&ints[i]); }
      else if (a.dtype == "f64") { reals[i] = v; args.push_back(&reals[i]); }
      else { i32[i] = static_cast<int32_t>(v); args.push_back(&i32[i]); }
    }
    const double t0 = now_us();
    kernels_.at(op.callee)(args.data());
    const double t1 = now_us();
    st.busy_us += t1 - t0;
    st.calls++;
    event(op.callee, "kernel", t0, t1 - t0, st.tid);
  }

  // ---- shim DMA and the runtime sequence ----
  struct ShimChannel {
    std::mutex m;
    std::condition_variable cv;
    std::deque<const DmaOp *> queue;
    int64_t issued = 0, done = 0;
  };

  ShimChannel &channel(const std::string &name, std::vector<std::thread> &workers) {
    std::lock_guard<std::mutex> l(m_);
    auto &c = shim_[name];
    if (!c) {
      c = std::make_unique<ShimChannel>();
      ShimChannel *ch = c.get();
      const int tid = 100 + static_cast<int>(shim_.size());
      workers.emplace_back([this, ch, name, tid] { guarded([&] { run_shim(*ch, name, tid); }); });
    }
    return *c;
  }

  /// Where a shim channel is within its FIFO's current object (a transfer may end inside one).
  struct ShimCursor {
    char *obj = nullptr;
    int64_t filled = 0;
  };

  /// Moves the elements of `op` between its runtime parameter and FIFO @name, object by object, in the
  /// pattern's order (an innermost contiguous row at a time, in pieces that end where an object ends).
  void transfer(const DmaOp &op, const std::string &name, ShimCursor &cur, int tid) {
    const ObjectFifo *f = d_.fifo(name);
    if (!f) throw SimError("dma_memcpy_nd names @" + name + ", which is not an object FIFO");
    const bool to_array = f->producer.row == 0;
    SimFifo &sf = fifo(name);
    const int64_t eb = dtype_bytes(f->dtype);
    const int64_t per_object = f->elements();
    const std::vector<int64_t> *order = to_array ? nullptr : order_of(name);  // the producer streams in this order
    const std::string who = "shim DMA of @" + name;
    const double t0 = now_us();
    const HostBuffer &buf = buffers_.at(op.param);
    const int64_t limit = static_cast<int64_t>(buf.bytes) / eb;
    const std::array<int64_t, 4> &sz = op.sizes, &st = op.strides;
    const int64_t row = sz[3];
    const bool unit = st[3] == 1;
    for (int64_t i0 = 0; i0 < sz[0]; ++i0)
      for (int64_t i1 = 0; i1 < sz[1]; ++i1)
        for (int64_t i2 = 0; i2 < sz[2]; ++i2) {
          const int64_t start = op.base() + i0 * st[0] + i1 * st[1] + i2 * st[2];
          for (int64_t k = 0; k < row;) {
            const int64_t a = start + k * st[3];
            const int64_t last = start + (unit ? std::min(row, k + per_object - cur.filled) - 1 : k) * st[3];
            for (int64_t x : {a, last})
              if (x < 0 || x >= limit)
                throw SimError("aiex.npu.dma_memcpy_nd (id " + std::to_string(op.id) + ", @" + name + ") touches element " +
                               std::to_string(x) + " outside %" + op.param + " (" + std::to_string(limit) + " elements)");
            if (!cur.obj) cur.obj = to_array ? sf.acquire_produce(0, 1, who) : sf.acquire_consume(0, 1, who);
            const int64_t n = last - a + 1;  // elements in this piece (1 unless the row is contiguous)
            char *host = static_cast<char *>(buf.data) + a * eb;
            if (to_array) std::memcpy(cur.obj + cur.filled * eb, host, static_cast<size_t>(n * eb));
            else if (!order) std::memcpy(host, cur.obj + cur.filled * eb, static_cast<size_t>(n * eb));
            else
              for (int64_t e = 0; e < n; ++e)
                std::memcpy(host + e * eb, cur.obj + (*order)[static_cast<size_t>(cur.filled + e)] * eb, static_cast<size_t>(eb));
            cur.filled += n;
            k += unit ? n : 1;
            if (cur.filled == per_object) {
              if (to_array) sf.release_produce(0, 1);
              else sf.release_consume(0, 1);
              cur.obj = nullptr;
              cur.filled = 0;
            }
          }
        }
    event("dma " + op.param + " -> @" + name, "dma", t0, now_us() - t0, tid);
  }

  void run_shim(ShimChannel &ch, const std::string &name, int tid) {
    ShimCursor cur;
    for (;;) {
      const DmaOp *op = nullptr;
      {
        std::unique_lock<std::mutex> l(ch.m);
        while (ch.queue.empty()) {
          if (flag_.stop) return;
          ch.cv.wait_for(l, std::chrono::milliseconds(20));
        }
        op = ch.queue.front();
      }
      transfer(*op, name, cur, tid);
      {
        std::lock_guard<std::mutex> l(ch.m);
        ch.queue.pop_front();
        ch.done++;
      }
      ch.cv.notify_all();
    }
  }

  // ---- one thread, when nothing would wait ----
  /// Whether the design runs the same on one thread: one core whose program has no loop, no links, every
  /// FIFO between a shim and the core (no reordering producer dims), and no FIFO asked to hold more
  /// objects than its depth — then every input can be moved in, the core run, and every output moved out,
  /// in that order, without an acquire ever waiting (a host-orchestrated task's design is like this).
  bool runs_sequentially() const {
    if (d_.cores.size() != 1 || !d_.links.empty()) return false;
    for (const auto &op : d_.cores[0].body)
      if (op.kind == CoreOp::Kind::Loop) return false;
    std::map<std::string, int64_t> elements;
    for (const auto &op : d_.sequence)
      if (op.kind == DmaOp::Kind::Memcpy) elements[op.fifo] += op.elements();
    for (const auto &f : d_.fifos) {
      const bool shim_in = f.producer.row == 0, shim_out = f.consumers.size() == 1 && f.consumers[0].row == 0;
      if (!f.producer_dims.empty() || !(shim_in || shim_out) || f.elements() < 1) return false;
      const int64_t depth = f.depth.empty() ? 1 : *std::min_element(f.depth.begin(), f.depth.end());
      if (elements[f.name] > depth * f.elements()) return false;
    }
    return true;
  }

  void run_sequentially() {
    std::map<std::string, ShimCursor> cursors;
    int tid = 100;
    for (bool in : {true, false}) {
      if (!in) run_core(0);
      for (const auto &op : d_.sequence) {
        if (op.kind != DmaOp::Kind::Memcpy) continue;
        const ObjectFifo *f = d_.fifo(op.fifo);
        if (f && (f->producer.row == 0) == in) transfer(op, op.fifo, cursors[op.fifo], tid++);
      }
    }
  }

  void run_sequence(std::vector<std::thread> &workers) {
    for (const auto &op : d_.sequence) {
      ShimChannel &ch = channel(op.fifo, workers);
      std::unique_lock<std::mutex> l(ch.m);
      if (op.kind == DmaOp::Kind::Memcpy) {
        ch.queue.push_back(&op);
        ch.issued++;
        l.unlock();
        ch.cv.notify_all();
        continue;
      }
      while (ch.done < ch.issued) {
        if (flag_.stop) return;
        if (Clock::now() > flag_.deadline)
          throw Deadlock("aiex.npu.dma_wait {symbol = @" + op.fifo + "} waited past the deadline (" +
                         std::to_string(ch.done) + " of " + std::to_string(ch.issued) + " transfers done)");
        ch.cv.wait_for(l, std::chrono::milliseconds(20));
      }
    }
  }

  // ---- errors, stop, trace ----
  template <class F> void guarded(F &&f) {
    try {
      f();
    } catch (const Stopped &) {
    } catch (const std::exception &e) {
      {
        std::lock_guard<std::mutex> l(m_);
        if (error_.empty()) error_ = e.what();
      }
      stop();
    }
  }

  void stop() {
    flag_.stop = true;
    for (auto &[n, f] : fifos_) f->wake();
    std::lock_guard<std::mutex> l(m_);
    for (auto &[n, c] : shim_) c->cv.notify_all();
  }

  /// A complete trace event, kept plain while the simulation runs (JSON is built once, in trace()).
  struct Event {
    std::string name;
    const char *cat;
    double ts, dur;
    int tid;
  };
  void event(std::string name, const char *cat, double ts, double dur, int tid) {
    std::lock_guard<std::mutex> l(m_);
    events_.push_back(Event{std::move(name), cat, ts, dur, tid});
  }

  Json trace() {
    Json ev = Json::array();
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
  Clock::time_point start_;
  StopFlag flag_;
  std::map<std::string, std::unique_ptr<SimFifo>> fifos_;
  std::map<std::string, std::unique_ptr<ShimChannel>> shim_;
  std::map<std::string, std::vector<int64_t>> order_;  // FIFO -> dimensionsToStream offsets
  std::mutex m_;
  std::string error_;
  std::vector<Event> events_;
  Json core_stats_ = Json::array();
};

}  // namespace

SimResult simulate(const Design &design, const std::map<std::string, KernelEntry> &kernels,
                   const std::map<std::string, HostBuffer> &buffers, const SimOptions &options) {
  return Simulation(design, kernels, buffers, options).run();
}

}  // namespace htp::aie::sim
