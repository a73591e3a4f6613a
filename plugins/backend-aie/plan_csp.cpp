// Front-end for CSP programs: one core per process, placed as a chain down the columns so that
// neighbouring stages share memory; channels become core-to-core object FIFOs of their depth. A
// process body must be one counted loop whose iteration sends / receives / loads / stores each port
// once: the loop becomes the core loop, the iteration body the external kernel.
#include <functional>
#include <map>
#include <set>

#include <htp/kernel_entry.hpp>

#include "entry_plan.hpp"
#include "kernel_emitter.hpp"

namespace htp::aie {

namespace {

/// Whether a statement nested in one of `ops` moves data.
bool nested_movement(const std::vector<htp::TileOp> &ops) {
  bool found = false;
  for (const htp::TileOp &op : ops)
    for (const auto *inner : {&op.body, &op.then_body, &op.else_body})
      htp::for_each_op(*inner, [&](const htp::TileOp &s) { found = found || is_data_movement(s); });
  return found;
}

/// The name a tile register handed from one step of a process iteration to a later one moves through (a
/// buffer of the core: PortPlan::Kind::Handoff); no tensor parameter has it, since '.' cannot start a name.
std::string handoff_tensor(const std::string &reg) { return ".handoff." + reg; }

std::vector<int64_t> tile_shape(const htp::TileKernel &kernel, const std::string &local) {
  const htp::TileLocal *l = kernel.local(local);
  return l ? l->shape : std::vector<int64_t>{};
}

std::string dtype_of(const htp::TileKernel &kernel, const std::string &local) {
  const htp::TileLocal *l = kernel.local(local);
  return l ? l->dtype : "f32";
}

struct ProcessCtx {
  const htp::CspProcess &process;
  const htp::TileKernel &kernel;
  const std::string &program;
  std::vector<Problem> &problems;
  /// The carry tensors of a process cut around its loop (htp::cut_process): a buffer of the core each.
  const std::set<std::string> *carries = nullptr;
  Json span() const { return span_json(process.span); }
  /// The program tensor the process binds its parameter `param` to (the parameter itself when unbound).
  std::string tensor(const std::string &param) const {
    for (const htp::CspBinding &a : process.args)
      if (a.param == param && a.tensor) return *a.tensor;
    return param;
  }
  bool fail(const std::string &code, const std::string &msg) const {
    problems.push_back({code, "process '" + process.name + "' of CSP program '" + program + "': " + msg, span()});
    return false;
  }
};

/// The loop of a process body: var, start, step, trip count and the iteration body.
struct Loop {
  std::string var;
  int64_t start = 0, step = 1, trip = 1;
  std::vector<htp::TileOp> body;
};

bool read_loop(const ProcessCtx &c, const ExprEnv &env, Loop &loop) {
  const std::vector<htp::TileOp> &body = c.kernel.body;
  if (body.size() == 1 && body[0].is("for")) {
    const htp::TileOp &f = body[0];
    std::string why;
    auto start = eval_int(*f.start, env, &why), stop = eval_int(*f.stop, env, &why), step = eval_int(*f.step, env, &why);
    if (!start || !stop || !step || *step <= 0) return c.fail("aie.csp-shape", "the loop bounds must be static on AIE: " + why);
    int64_t span = 0, trip = 0;
    if (__builtin_sub_overflow(*stop, *start, &span) || __builtin_add_overflow(span, *step - 1, &trip))
      return c.fail("aie.csp-shape", "the loop bounds " + std::to_string(*start) + " .. " + std::to_string(*stop) +
                                         " overflow 64-bit arithmetic");
    loop = {*f.var, *start, *step, std::max<int64_t>(0, trip / *step), f.body};
  } else {
    for (const htp::TileOp &op : body)
      if (op.is("for"))
        return c.fail("aie.csp-shape", "the body must be exactly one counted loop (or straight-line code) to become a core loop");
    loop.body = body;
  }
  if (nested_movement(loop.body))
    return c.fail("aie.csp-shape", "sends, receives, loads and stores must be at the top of the loop body (once per iteration)");
  return true;
}

/// Whether an Expr of `ops` reads scalar parameter `name` ({"param": name}).
bool mentions_param(const std::vector<htp::TileOp> &ops, const std::string &name) {
  std::function<bool(const Json &)> in = [&](const Json &j) {
    if (j.is_object()) {
      if (j.contains("param") && j["param"] == name) return true;
      for (const auto &[k, v] : j.items())
        if (in(v)) return true;
    } else if (j.is_array()) {
      for (const auto &v : j)
        if (in(v)) return true;
    }
    return false;
  };
  return in(Json(ops));
}

/// Plans one step of a process iteration (its whole iteration when it has one step): the kernel `kname`
/// over `body`, its ports appended to `core` — the program's scalars it reads (all of them when
/// `all_scalars`), its channel ends and streams, the iteration variable — its streams to `plan`.
bool plan_step(const ProcessCtx &c, const htp::CspProgram &program, const Loop &loop, const ExprEnv &env,
               const std::vector<htp::TileOp> &body, const std::string &kname, bool all_scalars,
               const DeviceProfile &device, EntryPlan &plan, CorePlan &core) {
  const htp::CspProcess &proc = c.process;
  const htp::TileKernel &kernel = c.kernel;
  const std::string &pname = proc.name;
  std::vector<Problem> &problems = c.problems;
  KernelPlan kp;
  kp.function = kname;
  kp.constants = env;
  kp.body = body;
  std::vector<TensorAccess> accesses;
  std::map<std::string, int> per_port;
  // A scalar parameter bound to a scalar of the program: that one-element object every iteration (one
  // input DMA channel of the core, as for a kernel entry's scalar); the body reads *p_<param>.
  for (const htp::TileParam &kparam : kernel.params) {
    if (!kparam.type.is_scalar() || (!all_scalars && !mentions_param(body, kparam.name))) continue;
    const RuntimeParam *program_scalar = nullptr;
    for (const htp::CspBinding &b : proc.args)
      if (b.param == kparam.name && b.scalar && b.scalar->is_object() && b.scalar->contains("param"))
        for (const RuntimeParam &rp : plan.params)
          if (rp.scalar && Json(rp.name) == (*b.scalar)["param"]) program_scalar = &rp;
    if (!program_scalar) {
      c.fail("aie.runtime-scalar", "its scalar parameter '" + kparam.name + "' is not bound to a scalar parameter of "
                                   "the program");
      return false;
    }
    StreamPlan sp{program_scalar->name, true,
                  std::vector<View>(static_cast<size_t>(loop.trip), View{{0}, program_scalar->shape}), c.span()};
    core.ports.push_back({PortPlan::Kind::Stream, plan.streams.size()});
    plan.streams.push_back(std::move(sp));
    kp.params.push_back({"p_" + kparam.name, KernelArg{true, program_scalar->shape, program_scalar->dtype}});
    kp.scalars[kparam.name] = "(*p_" + kparam.name + ")";
  }
  for (const htp::TileOp &op : body) {
    if (!is_data_movement(op)) continue;
    const std::string &k = op.op;
    const std::string pn = "a" + std::to_string(accesses.size());
    if (k == "csp.send" || k == "csp.recv") {
      std::string ch = op.attrs.value_or(Json::object()).value("channel", "");
      const ChannelPlan *cp = nullptr;
      for (const auto &x : plan.channels)
        if (x.name == ch) cp = &x;
      if (!cp) {
        c.fail("aie.csp-route", "it uses channel '" + ch + "', which the program does not declare");
        return false;
      }
      const htp::CspChannel *declared = program.channel(ch);
      if (declared && declared->is_event() && (op.dst || op.arg_name(0))) {
        c.fail("aie.csp-route", std::string("it ") + (k == "csp.send" ? "sends a value on" : "receives a value from") +
                                    " event '" + ch + "', which carries none");
        return false;
      }
      if (per_port[k + ch]++) {
        c.fail("aie.csp-shape", std::string("it ") + (k == "csp.send" ? "sends to" : "receives from") + " channel '" + ch + "' more than once per iteration");
        return false;
      }
      core.ports.push_back({k == "csp.send" ? PortPlan::Kind::ChannelOut : PortPlan::Kind::ChannelIn, 0, ch});
      kp.params.push_back({pn, KernelArg{true, cp->shape, cp->dtype}});
      accesses.push_back({pn, cp->shape, false});
      continue;
    }
    const bool load = k == "load";
    const std::string local = load ? op.dst.value_or("") : op.value.value_or(Json("")).get<std::string>();
    if (const std::string moved = (load ? op.src : op.dst).value_or("");
        moved == handoff_tensor(local) || (c.carries && c.carries->count(moved))) {
      const std::vector<int64_t> shape = tile_shape(kernel, local);  // a tile handed from step to step
      core.ports.push_back({PortPlan::Kind::Handoff, 0, local, Json(shape), dtype_of(kernel, local)});
      kp.params.push_back({pn, KernelArg{true, shape, dtype_of(kernel, local)}});
      accesses.push_back({pn, shape, false});
      continue;
    }
    const std::string tensor = c.tensor((load ? op.src : op.dst).value_or(""));
    const RuntimeParam *rp = nullptr;
    for (const auto &p : plan.params)
      if (p.name == tensor) rp = &p;
    if (!rp) {
      c.fail("aie.csp-route", "it moves tensor '" + tensor + "', which is not a parameter of the program");
      return false;
    }
    std::vector<int64_t> shape = tile_shape(kernel, local);
    StreamPlan sp{tensor, load, {}, op.span ? span_json(*op.span) : c.span()};
    if (!check_stream_size("the " + k + " of '" + tensor + "' in process '" + pname + "'", shape, rp->dtype,
                           loop.trip, device, sp.span, problems))
      return false;
    for (int64_t t = 0; t < loop.trip; ++t) {
      ExprEnv e = env;
      e.vars[loop.var] = loop.start + t * loop.step;
      View v{{}, rp->shape.size() == 1 ? std::vector<int64_t>{product(shape)} : shape};
      for (const auto &o : op.offset.value_or(std::vector<Json>{})) {
        std::string why;
        auto x = eval_int(o, e, &why);
        if (!x) {
          c.fail("aie.dynamic-view", "the offset of its " + k + " of '" + tensor + "' must be static on AIE: " + why);
          return false;
        }
        v.offset.push_back(*x);
      }
      v.offset.resize(rp->shape.size(), 0);
      sp.views.push_back(std::move(v));
    }
    core.ports.push_back({PortPlan::Kind::Stream, plan.streams.size()});
    plan.streams.push_back(std::move(sp));
    kp.params.push_back({pn, KernelArg{true, shape, dtype_of(kernel, local)}});
    accesses.push_back({pn, shape, false});
  }
  if (!loop.var.empty()) {
    core.ports.push_back({PortPlan::Kind::Iteration, 0, "", Json(), "i64", loop.start, loop.step});
    kp.params.push_back({"v_" + loop.var, KernelArg{false, {}, "i64"}});
  }
  kp.access = [&](const htp::TileOp &, int index) -> std::optional<TensorAccess> {
    if (index < 0 || index >= static_cast<int>(accesses.size())) return std::nullopt;
    return accesses[index];
  };
  std::string error;
  auto emitted = emit_kernel(kernel, kp, &error);
  if (!emitted) {
    c.fail("aie.kernel", error);
    return false;
  }
  KernelFunc kf{kname, "kernels/" + kname + ".cc", kname + ".o", {}, emitted->locals_bytes, emitted->work};
  for (const auto &[n, a] : kp.params) kf.args.push_back(a);
  plan.kernels.push_back(kf);
  plan.sources[kname] = emitted->source;
  return true;
}

/// A load of a tensor that may read what a store wrote before it: a spatial design streams every load from
/// the start of the run, unordered with the stores (an InOut read back after it is written), so the load
/// would read the tensor's first contents. Streams of one process are in program order; a load is safe only
/// from elements no store writes before it — in an earlier iteration, earlier in the same one, or in
/// another process (or replica), which nothing orders against it. The load and store of the hazard, or
/// nullopt.
std::optional<std::pair<const StreamPlan *, const StreamPlan *>> read_after_write(
    const EntryPlan &plan, const std::map<size_t, std::pair<size_t, int64_t>> &stream_process) {
  constexpr int64_t kPairs = 20'000'000;  // view comparisons before assuming the worst
  int64_t budget = kPairs;
  for (size_t l = 0; l < plan.streams.size(); ++l) {
    const StreamPlan &load = plan.streams[l];
    if (!load.in) continue;
    for (size_t s = 0; s < plan.streams.size(); ++s) {
      const StreamPlan &store = plan.streams[s];
      if (store.in || store.tensor != load.tensor) continue;
      const auto lp = stream_process.at(l), sp = stream_process.at(s);
      const bool ordered = lp.first == sp.first && lp.second == 1;  // one core runs both, in program order
      for (size_t tl = 0; tl < load.views.size(); ++tl)
        for (size_t ts = 0; ts < store.views.size(); ++ts) {
          if (--budget < 0) return std::make_pair(&load, &store);
          // (a store after the load, in its iteration or a later one, writes what the load already read)
          if (ordered && (ts > tl || (ts == tl && s > l))) continue;
          if (overlap(load.views[tl], store.views[ts])) return std::make_pair(&load, &store);
        }
    }
  }
  return std::nullopt;
}

/// The view a load or store of a process moves at the loop variable's value in `env`, or nullopt.
std::optional<View> moved_view(const htp::TileKernel &k, const htp::TileOp &o, const ExprEnv &env) {
  const htp::TileLocal *l = k.local(o.moved_register().value_or(""));
  if (!l || !o.offset) return std::nullopt;
  View v;
  // (a 1-D view moves its tile's rows * cols elements; a rank-3 view has extent 1 in its leading dimension)
  const int64_t rows = l->shape.size() >= 2 ? l->shape[l->shape.size() - 2] : 1;
  const int64_t cols = l->shape.empty() ? 1 : l->shape.back();
  v.shape = htp::view_extents(rows, cols, o.offset->size());
  for (const Json &e : *o.offset) {
    auto x = eval_int(e, env);
    if (!x) return std::nullopt;
    v.offset.push_back(*x);
  }
  return v;
}

}  // namespace

std::vector<Problem> partial_reloads(const htp::TileKernels &kernels, const htp::CspGraph &csp) {
  std::vector<Problem> out;
  for (const htp::CspProgram &program : csp.programs)
    for (const htp::CspProcess &proc : program.processes) {
      const htp::TileKernel *k = proc.stage ? nullptr : kernels.find(proc.function);
      if (!k) continue;
      const ExprEnv constants = constexpr_env(*k);
      // The iteration: a loop's body at each of its (static) values, or the straight-line body once.
      const bool loop = k->body.size() == 1 && k->body[0].is("for");
      const std::vector<htp::TileOp> &body = loop ? k->body[0].body : k->body;
      std::vector<ExprEnv> values;
      if (loop) {
        const htp::TileOp &f = k->body[0];
        // (bounds known at run time only: the views of a few iterations, exact for offsets that move alike)
        const htp::loop_detail::NestLoop range =
            htp::loop_detail::static_range(f, constants).value_or(htp::loop_detail::NestLoop{"", 0, 1, 4});
        for (int64_t t = 0; t < range.trips && values.size() < 4096; ++t) {
          ExprEnv e = constants;
          e.vars[f.var.value_or("")] = range.start + t * range.step;
          values.push_back(std::move(e));
        }
      } else {
        values.push_back(constants);
      }
      bool reported = false;
      for (size_t i = 0; i < body.size() && !reported; ++i) {
        const htp::TileOp &ld = body[i];
        if (!ld.is("load") || !ld.src) continue;
        for (size_t j = 0; j < i && !reported; ++j) {
          const htp::TileOp &st = body[j];
          if (!st.is("store") || st.dst != ld.src) continue;
          for (const ExprEnv &env : values) {
            auto a = moved_view(*k, st, env), b = moved_view(*k, ld, env);
            // (a load of exactly the view stored, its register unchanged, is already a copy of the register)
            if (a && b && !overlap(*a, *b)) continue;
            // The exact view stored is still loaded here when the stored register changed since, or when a
            // channel operation between the two may let another process write it (a handshake): the stored
            // register is no copy of the view then (htp::forward_views_to_loads).
            bool channel = false;
            for (size_t m = j + 1; m < i; ++m)
              htp::for_each_op(std::vector<htp::TileOp>{body[m]}, [&](const htp::TileOp &x) {
                channel = channel || x.is("csp.send") || x.is("csp.recv");
              });
            const bool exact = a && b && *a == *b && channel;
            out.push_back({"aie.csp-reload",
                           "process '" + proc.name + "' loads " + (exact ? "the view" : "a view") + " of '" + *ld.src +
                               "' that its store earlier in the same iteration wrote (line " +
                               std::to_string(st.span ? st.span->line : 0) +
                               "); an AIE core streams its loads ahead of its stores, so it would read the earlier "
                               "contents: " +
                               (exact ? "another process may write the view between the two (a channel operation "
                                        "lies between them), so pass the value it writes through a channel instead"
                                      : "load exactly the view stored (which reads the stored tile) or compute from "
                                        "the stored tile"),
                           ld.span ? span_json(*ld.span) : span_json(k->span)});
            reported = true;
            break;
          }
        }
      }
    }
  return out;
}

namespace {

/// A process as planned once, and how many replicas run it.
struct Replicated {
  CorePlan core;
  int64_t replicas = 1;
  Json span;
};

/// The channel `name` split per replica, or null.
struct Split {
  std::vector<std::string> parts;  ///< name_r0, name_r1, ...
  int64_t replicas = 1;            ///< the replicated side's count (== parts.size())
};

/// One core per replica. A channel between a replicated process and a single one is split into one
/// channel per replica; the single side rotates over them (its iteration t goes to / comes from replica
/// t mod n: one valid schedule of the shared channel); between two groups of n replicas, replica r
/// talks to replica r.
bool expand_replicas(EntryPlan &plan, const std::vector<Replicated> &templates, std::vector<Problem> &problems) {
  auto fail = [&](const std::string &msg, const Json &span) {
    problems.push_back({"aie.csp-replicas", msg, span});
    return false;
  };
  std::map<std::string, Split> splits;
  std::vector<ChannelPlan> channels;
  for (const auto &ch : plan.channels) {
    std::vector<const Replicated *> producers, consumers;
    for (const auto &t : templates)
      for (const auto &p : t.core.ports)
        if (p.channel == ch.name) (p.kind == PortPlan::Kind::ChannelOut ? producers : consumers).push_back(&t);
    int64_t n = 1;
    for (const auto *t : producers) n = std::max(n, t->replicas);
    for (const auto *t : consumers) n = std::max(n, t->replicas);
    if (n == 1) {
      channels.push_back(ch);
      continue;
    }
    if (producers.size() != 1 || consumers.size() != 1)
      return fail("channel '" + ch.name + "' joins " + std::to_string(producers.size()) + " producing and " +
                      std::to_string(consumers.size()) + " consuming processes, some replicated; AIE lowers a replicated "
                      "process on a channel with one process at its other end", ch.span);
    const int64_t a = producers[0]->replicas, b = consumers[0]->replicas;
    if (a > 1 && b > 1 && a != b)
      return fail("channel '" + ch.name + "' joins " + std::to_string(a) + " producer replicas with " + std::to_string(b) +
                      " consumer replicas; AIE pairs replicas one to one or splits a channel round-robin", ch.span);
    Split sp{{}, n};
    for (int64_t r = 0; r < n; ++r) {
      ChannelPlan part = ch;
      part.name = ch.name + "_r" + std::to_string(r);
      sp.parts.push_back(part.name);
      channels.push_back(part);
    }
    splits[ch.name] = sp;
  }
  plan.channels = std::move(channels);
  std::vector<StreamPlan> streams;
  for (const auto &t : templates) {
    for (int64_t r = 0; r < t.replicas; ++r) {
      CorePlan core = t.core;
      if (t.replicas > 1) core.name += "[" + std::to_string(r) + "]";
      for (auto &p : core.ports) {
        if (p.kind == PortPlan::Kind::Stream) {
          streams.push_back(plan.streams[p.stream]);
          p.stream = streams.size() - 1;
          continue;
        }
        auto it = splits.find(p.channel);
        if (it == splits.end() || (p.kind != PortPlan::Kind::ChannelIn && p.kind != PortPlan::Kind::ChannelOut)) continue;
        if (t.replicas > 1) {
          p.channel = it->second.parts[static_cast<size_t>(r)];
          continue;
        }
        if (p.once)
          return fail("process '" + core.name + "' moves an item of channel '" + it->first + "' once, outside its loop, "
                          "and its peers are " + std::to_string(it->second.replicas) + " replicas taking items in turn; "
                          "AIE shares a channel round-robin over loop iterations: move it into the loop", t.span);
        p.rotation = it->second.parts;
        p.channel = p.rotation[0];
        if (core.unroll != 1 && core.unroll != it->second.replicas)
          return fail("process '" + core.name + "' talks to groups of " + std::to_string(core.unroll) + " and " +
                          std::to_string(it->second.replicas) + " replicas; AIE lowers one replica count per process", t.span);
        core.unroll = it->second.replicas;
      }
      if (core.iterations % core.unroll != 0)
        return fail("process '" + core.name + "' moves " + std::to_string(core.iterations) + " items, which its " +
                        std::to_string(core.unroll) + " peer replicas cannot share evenly (round-robin)", t.span);
      plan.cores.push_back(std::move(core));
    }
  }
  plan.streams = std::move(streams);
  return true;
}

/// Links become rotations, with no core or mem tile of their own: a distribute `connect([a], [b0, ..., bn-1])`
/// makes a's producer send its iteration t to b(t mod n) (a, then, is not routed), a join
/// `connect([b0, ..., bn-1], [c])` makes c's consumer take its iteration t from b(t mod n), and a forward
/// renames. The round-robin order is the links' own; what a's depth buffered, b's depths now do.
bool inline_links(const htp::CspProgram &program, EntryPlan &plan, std::vector<Replicated> &templates,
                  std::vector<Problem> &problems) {
  for (const htp::CspLink &l : program.links) {
    auto fail = [&](const std::string &why) {
      problems.push_back({"aie.csp-route", "link '" + l.name + "': " + why, span_json(l.span)});
      return false;
    };
    const bool join = l.mode == "join";
    if (l.from.empty() || l.to.empty() || (l.from.size() != 1 && l.to.size() != 1))
      return fail("AIE lowers forward, distribute and join links");
    const std::string &one = join ? l.to[0] : l.from[0];
    const std::vector<std::string> &many = join ? l.from : l.to;
    const PortPlan::Kind kind = join ? PortPlan::Kind::ChannelIn : PortPlan::Kind::ChannelOut;
    std::vector<std::pair<Replicated *, PortPlan *>> ends;
    for (Replicated &t : templates)
      for (PortPlan &p : t.core.ports)
        if (p.kind == kind && p.channel == one) ends.push_back({&t, &p});
    if (ends.size() != 1)
      return fail("channel '" + one + "' must have one process at its other end; it has " +
                  std::to_string(ends.size()));
    if (ends[0].first->replicas != 1)
      return fail("channel '" + one + "' is served at its other end by process '" + ends[0].first->core.name +
                  "', replicated " + std::to_string(ends[0].first->replicas) +
                  " times; AIE lowers a link whose single end is one unreplicated process: write the replicas as "
                  "processes of their own, a channel each, or drop the link and let the replicas share channel '" +
                  one + "'");
    auto &[t, port] = ends[0];
    const int64_t n = static_cast<int64_t>(many.size());
    if (n > 1) {
      if (port->once)
        return fail("process '" + t->core.name + "' moves an item of channel '" + one + "' once, outside its loop; "
                    "AIE spreads a link's items over loop iterations: move it into the loop");
      if (t->core.unroll != 1 && t->core.unroll != n)
        return fail("process '" + t->core.name + "' already rotates over " + std::to_string(t->core.unroll) + " channels");
      if (t->core.iterations % n != 0)
        return fail("process '" + t->core.name + "' moves " + std::to_string(t->core.iterations) + " items on '" + one +
                    "', which the link cannot share evenly over " + std::to_string(n) + " channels");
      port->rotation = many;
      t->core.unroll = n;
    }
    port->channel = many[0];
    std::erase_if(plan.channels, [&](const ChannelPlan &c) { return c.name == one; });
  }
  return true;
}

}  // namespace

std::optional<EntryPlan> plan_csp_entry(const htp::CspProgram &program, const htp::TileKernels &kernels,
                                        const DeviceProfile &device, std::vector<Problem> &problems) {
  const std::string &name = program.name;
  EntryPlan plan{name, "csp-program", span_json(program.span)};
  plan.chain_placement = true;
  for (const htp::CspParam &p : program.params) {
    if (p.type.kind == "scalar") {  // a one-element object, moved to each process core that reads it
      plan.params.push_back(RuntimeParam{p.name, scalar_shape(p.type.dtype), p.type.dtype, "in", true});
      continue;
    }
    auto rp = runtime_param(p);
    if (!rp) {
      problems.push_back({"aie.runtime-scalar", "parameter '" + p.name + "' of CSP program '" + name +
                                                    "' is not a static tensor; AIE designs take static tensors", plan.span});
      return std::nullopt;
    }
    plan.params.push_back(*rp);
  }
  for (const htp::CspChannel &ch : program.channels) {
    if (ch.is_event()) {  // a FIFO of one token: a side's acquire of it is the rendezvous
      plan.channels.push_back(ChannelPlan{ch.name, 1, {1}, "i32", span_json(ch.span)});
      continue;
    }
    ChannelPlan cp{ch.name, ch.depth, {}, ch.elem ? ch.elem->dtype : "f32", span_json(ch.span)};
    for (const htp::IrDim &d : ch.elem ? ch.elem->shape : std::vector<htp::IrDim>{}) {
      if (d.is_symbol()) {
        problems.push_back({"aie.csp-route", "channel '" + cp.name + "' carries items of the symbolic dimension '" +
                                                 d.symbol + "'; AIE object FIFOs move static objects", cp.span});
        return std::nullopt;
      }
      cp.shape.push_back(d.size);
    }
    if (cp.depth < 1) {
      problems.push_back({"aie.csp-route", "channel '" + cp.name + "' has depth " + std::to_string(cp.depth) +
                                               ": an AIE object FIFO needs at least one buffer (events are not lowered)", cp.span});
      return std::nullopt;
    }
    plan.channels.push_back(cp);
  }
  const std::vector<htp::CspProcess> &processes = program.processes;
  int64_t replicas_total = 0;
  for (const htp::CspProcess &proc : processes) {
    const int64_t r = proc.replicas;
    if (r < 1 || __builtin_add_overflow(replicas_total, r, &replicas_total)) replicas_total = INT64_MAX;
  }
  if (replicas_total > device.compute_tiles()) {
    problems.push_back({"aie.grid-too-large", "CSP program '" + name + "' has " + std::to_string(replicas_total) +
                                                  " process replicas, but device " + device.describe() + " has " +
                                                  std::to_string(device.compute_tiles()), plan.span});
    return std::nullopt;
  }
  std::vector<Replicated> templates;
  for (const htp::CspProcess &proc : processes) {
    const std::string &fn = proc.function;
    const htp::TileKernel *kernel = kernels.find(fn);
    if (!kernel) {
      problems.push_back({"aie.kernel", "process '" + proc.name + "' runs '" + fn + "', which tile.kernels does not define", span_json(proc.span)});
      return std::nullopt;
    }
    // Statements before and after the loop (a collector: acc = full(...); the loop adds each item; send(out, acc)):
    // a kernel each, called once before and after the core loop; the registers they share with the loop (or an
    // iteration with the next) live in buffers of the core (htp::cut_process's carries).
    std::string cut_why;
    const std::optional<htp::ProcessCut> cut = htp::cut_process(*kernel, &cut_why);
    if (!cut && !cut_why.empty()) {
      problems.push_back({"aie.csp-shape", "process '" + proc.name + "' of CSP program '" + name + "': " + cut_why,
                          span_json(proc.span)});
      return std::nullopt;
    }
    std::set<std::string> carry_names;
    for (const htp::TileParam &t : cut ? cut->carries : std::vector<htp::TileParam>{}) carry_names.insert(t.name);
    ProcessCtx c{proc, cut ? cut->iteration : *kernel, name, problems, &carry_names};
    kernel = &c.kernel;
    const ExprEnv env = constexpr_env(*kernel);
    Loop loop;
    if (!read_loop(c, env, loop)) return std::nullopt;
    const std::string &pname = proc.name;
    CorePlan core{pname, "proc_" + pname, loop.trip, {}, c.span()};
    // One kernel per step of the iteration: a step receives before it sends, so a process that waits for the
    // reply to what it sent (a handshake, an event) acquires the reply's port only after releasing its send.
    std::vector<std::vector<htp::TileOp>> steps = htp::round_trip_steps(loop.body);
    // A tile register one step defines and a later one reads goes through a buffer in the core's memory:
    // stored at the end of every step that writes it, loaded at the top of every later step that reads it
    // before writing it (the steps are kernel calls of their own). A scalar register cannot cross.
    if (steps.size() > 1) {
      std::set<std::string> defined_before, handed;
      std::vector<std::set<std::string>> needs(steps.size()), writes(steps.size());
      for (size_t si = 0; si < steps.size(); ++si) {
        std::set<std::string> defined;
        std::optional<std::string> scalar;
        htp::for_each_op(steps[si], [&](const htp::TileOp &x) {
          std::vector<std::string> read;
          for (size_t a = 0; x.arg_name(a); ++a) read.push_back(*x.arg_name(a));
          if (x.is("store") && x.value && x.value->is_string()) read.push_back(x.value->get<std::string>());
          for (const std::string &r : read)
            if (const htp::TileLocal *l = kernel->local(r); l && defined_before.count(r) && !defined.count(r))
              l->is_scalar() ? void(scalar = r) : void(needs[si].insert(r));
          if (x.dst && kernel->local(*x.dst)) defined.insert(*x.dst), writes[si].insert(*x.dst);
        });
        if (scalar) {
          c.fail("aie.csp-shape", "it receives after it sends within an iteration and uses scalar register '" + *scalar +
                                      "' on both sides of that receive; the two sides are separate kernel calls, which "
                                      "hand tiles over through the core's memory, scalars not: compute it after the receive");
          return std::nullopt;
        }
        defined_before.insert(defined.begin(), defined.end());
        handed.insert(needs[si].begin(), needs[si].end());
      }
      auto move = [&](bool load, const std::string &reg) {
        htp::TileOp m;
        m.op = load ? "load" : "store";
        m.offset = std::vector<Json>(tile_shape(*kernel, reg).size(), Json(0));
        if (load) {
          m.dst = reg;
          m.src = handoff_tensor(reg);
        } else {
          m.dst = handoff_tensor(reg);
          m.value = Json(reg);
        }
        return m;
      };
      for (size_t si = 0; si < steps.size(); ++si) {
        for (const std::string &r : needs[si]) steps[si].insert(steps[si].begin(), move(true, r));
        for (const std::string &r : writes[si])
          if (handed.count(r)) steps[si].push_back(move(false, r));
      }
    }
    for (size_t si = 0; si < steps.size(); ++si) {
      const std::vector<htp::TileOp> &body = steps[si];
      const std::string kname = "proc_" + pname + (steps.size() > 1 ? "__" + std::to_string(si) : "");
      const size_t first_port = core.ports.size();
      if (!plan_step(c, program, loop, env, body, kname, steps.size() == 1, device, plan, core))
        return std::nullopt;
      if (steps.size() > 1 || cut) core.steps.push_back({kname, first_port, core.ports.size() - first_port});
      else core.kernel = kname;
    }
    for (const auto &[part, slot] : {std::pair{cut ? &cut->before : nullptr, &core.before},
                                     std::pair{cut ? &cut->after : nullptr, &core.after}}) {
      if (!part || !*part) continue;
      ProcessCtx pc{proc, **part, name, problems, &carry_names};
      Loop once{"", 0, 1, 1, (*part)->body};
      if (nested_movement(once.body)) {
        pc.fail("aie.csp-shape", "sends, receives, loads and stores around its loop must not be nested in an if or a "
                                 "loop (they run once)");
        return std::nullopt;
      }
      const size_t first_port = core.ports.size();
      const std::string kname = "proc_" + pname + (slot == &core.before ? "__before" : "__after");
      if (!plan_step(pc, program, once, env, once.body, kname, true, device, plan, core)) return std::nullopt;
      for (size_t i = first_port; i < core.ports.size(); ++i) core.ports[i].once = true;
      *slot = CorePlan::Step{kname, first_port, core.ports.size() - first_port};
    }
    // A tensor the statements around the loop move as the loop does (a scalar read before it and in it; a load
    // before it of what the loop loads) reaches the core through one FIFO: one stream, its views in call order.
    if (cut) {
      auto merge = [&](PortPlan &once, bool before) {
        if (once.kind != PortPlan::Kind::Stream) return;
        const StreamPlan &o = plan.streams[once.stream];
        for (PortPlan &p : core.ports) {
          if (p.once || p.kind != PortPlan::Kind::Stream) continue;
          StreamPlan &l = plan.streams[p.stream];
          if (l.tensor != o.tensor || l.in != o.in) continue;
          l.views.insert(before ? l.views.begin() : l.views.end(), o.views.begin(), o.views.end());
          const size_t gone = once.stream;
          plan.streams.erase(plan.streams.begin() + static_cast<long>(gone));
          once.stream = p.stream;
          for (PortPlan &q : core.ports)
            if (q.kind == PortPlan::Kind::Stream && q.stream > gone) --q.stream;
          return;
        }
      };
      if (core.before)  // prepended last port first, appended first port first: the views in call order
        for (size_t i = core.before->first + core.before->count; i-- > core.before->first;) merge(core.ports[i], true);
      if (core.after)
        for (size_t i = core.after->first; i < core.after->first + core.after->count; ++i) merge(core.ports[i], false);
    }
    templates.push_back({std::move(core), proc.replicas, c.span()});
  }
  std::map<size_t, std::pair<size_t, int64_t>> stream_process;  // stream -> (process, its replicas)
  for (size_t t = 0; t < templates.size(); ++t)
    for (const PortPlan &port : templates[t].core.ports)
      if (port.kind == PortPlan::Kind::Stream) stream_process[port.stream] = {t, templates[t].replicas};
  if (auto hazard = read_after_write(plan, stream_process)) {
    const auto &[load, store] = *hazard;
    auto line = [](const StreamPlan &x) {
      return x.span.is_object() && x.span.contains("line") ? " (line " + x.span["line"].dump() + ")" : std::string();
    };
    problems.push_back({"aie.csp-order", "CSP program '" + name + "' loads '" + load->tensor + "'" + line(*load) +
                                             " where it stores it before" + line(*store) +
                                             "; a spatial design streams every load from the start of the run, "
                                             "before any store, so the load would read the first contents",
                        load->span.is_null() ? plan.span : load->span});
    return std::nullopt;
  }
  if (!inline_links(program, plan, templates, problems) || !expand_replicas(plan, templates, problems)) return std::nullopt;
  return plan;
}

}  // namespace htp::aie
