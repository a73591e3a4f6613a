#include "csp_lowering.hpp"

#include "memory_plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ptobe {

namespace {

[[noreturn]] void fail(const std::string &message, const Span &span) { throw IrError(message, span, "pto.csp"); }

std::string channel_param(const std::string &channel) { return "ch_" + channel; }

CspChannel parse_channel(const htp::CspChannel &c, const std::string &program) {
  CspChannel ch;
  ch.name = c.name;
  if (c.is_event()) {  // a token slot: its tasks only order each other (a rendezvous is a depth-1 channel here)
    ch.shape = {1, 8};
    ch.dtype = "f32";
    ch.depth = 1;
    return ch;
  }
  if (!c.elem)
    fail("channel '" + ch.name + "' of program '" + program + "' carries null; backend-pto lowers channels of tiles "
         "and tensors", Span::from(c.span));
  for (const htp::IrDim &d : c.elem->shape) {
    if (d.is_symbol())
      fail("channel '" + ch.name + "' of program '" + program + "' carries items of the symbolic dimension '" +
               d.symbol + "'; backend-pto lowers channels of static items", Span::from(c.span));
    ch.shape.push_back(d.size);
  }
  if (ch.shape.size() == 1) ch.shape.insert(ch.shape.begin(), 1);
  ch.dtype = c.elem->dtype;
  ch.depth = std::max<int64_t>(1, c.depth);
  return ch;
}

std::string op_channel(const Op &o) {
  const json &attrs = o.ir.attrs ? *o.ir.attrs : json::object();
  return attrs.contains("channel") && attrs["channel"].is_string() ? attrs["channel"].get<std::string>() : "";
}

/// Rewrites channel operations into loads and stores of the channel's slot parameter; an event's send and
/// receive move nothing (the task's access to the token slot orders it).
std::vector<Op> rewrite_body(const std::vector<Op> &ops, const std::string &process, const std::set<std::string> &events) {
  std::vector<Op> out;
  for (const Op &o : ops) {
    Op r = o;
    if (o.op == "csp.recv" || o.op == "csp.send") {
      const std::string ch = op_channel(o);
      if (ch.empty()) fail("process '" + process + "': " + o.op + " names no channel", o.span);
      if (events.count(ch)) continue;
      r.ir = htp::TileOp{};
      r.ir.offset = std::vector<json>{0, 0};
      r.ir.span = o.ir.span;
      if (o.op == "csp.recv") {
        r.op = r.ir.op = "load";
        r.ir.dst = r.dst;
        r.ir.src = channel_param(ch);
      } else {
        if (o.args.size() != 1) fail("process '" + process + "': csp.send takes one tile", o.span);
        r.op = r.ir.op = "store";
        r.dst = channel_param(ch);
        r.ir.dst = r.dst;
        r.ir.value = o.args[0];
        r.args.clear();
      }
    }
    r.body = rewrite_body(o.body, process, events);
    r.then_body = rewrite_body(o.then_body, process, events);
    r.else_body = rewrite_body(o.else_body, process, events);
    out.push_back(std::move(r));
  }
  return out;
}

const Kernel &process_kernel(const std::vector<Kernel> &kernels, const std::string &function, const Span &span) {
  for (const Kernel &k : kernels)
    if (k.name == function) return k;
  fail("process function '" + function + "' has no body in tile.kernels", span);
}

/// Producers before consumers (stable; a cycle keeps the program's order).
std::vector<CspProcess> order(std::vector<CspProcess> ps) {
  std::vector<CspProcess> out;
  std::set<std::string> produced;
  while (!ps.empty()) {
    auto ready = std::find_if(ps.begin(), ps.end(), [&](const CspProcess &p) {
      return std::all_of(p.channels.begin(), p.channels.end(), [&](const auto &c) {
        if (c.second != "inout") return true;
        bool has_producer = std::any_of(ps.begin(), ps.end(), [&](const CspProcess &q) {
          return std::any_of(q.channels.begin(), q.channels.end(),
                             [&](const auto &d) { return d.first == c.first && d.second == "out"; });
        });
        return !has_producer || produced.count(c.first);
      });
    });
    if (ready == ps.end()) ready = ps.begin();
    for (const auto &c : ready->channels)
      if (c.second == "out") produced.insert(c.first);
    out.push_back(std::move(*ready));
    ps.erase(ready);
  }
  return out;
}

/// A kernel the lowering derives, written as tile kernel IR (`k`, one kernel of htp.tile.kernels.v1) and
/// read like any other.
Kernel derived_kernel(const json &k) {
  try {
    return pto_kernels(htp::read_tile_kernels(json{{"schema", htp::kTileKernelsSchema}, {"kernels", {k}}})).front();
  } catch (const htp::IrDocumentError &e) {
    throw ir_error(e);
  }
}

/// A WSP pipe stage (a process with a "stage": the task-graph loop dialect-wsp lowered, docs/dialects/wsp.md)
/// as one per-iteration kernel: the kernels it launches, inlined in launch order. Their tensor parameters
/// become the workload's tensors at the view's offset or the channel's slot; their locals and loop
/// variables are renamed per launch; their scalar parameters are replaced by the launch's arguments.
class StageInliner {
public:
  StageInliner(const htp::CspProgram &program, const std::vector<Kernel> &kernels)
      : program_(program), kernels_(kernels) {}

  /// Appends launch `task` (a task node) to the derived kernel's body.
  void launch(const htp::WspNode &task, size_t index) {
    const Span span = Span::from(task.span);
    const std::string &name = task.kernel;
    const Kernel *k = nullptr;
    for (const Kernel &c : kernels_)
      if (c.name == name && c.kind == "kernel") k = &c;
    if (!k) fail("pipe stage launches kernel '" + name + "', which tile.kernels does not define", span);
    prefix_ = "s" + std::to_string(index) + "_";
    locals_.clear();
    tensors_.clear();
    scalars_.clear();
    for (const Local &l : k->locals) {
      locals_.insert(l.name);
      json lj = {{"name", prefix_ + l.name}, {"dtype", l.dtype}};
      if (l.scalar) lj["kind"] = "scalar";
      else lj["shape"] = l.shape;
      derived_locals_.push_back(lj);
    }
    std::map<std::string, const htp::WspArg *> args;
    for (const htp::WspArg &a : task.args) args[a.param] = &a;
    for (const Param &p : k->params) {
      if (p.kind == "constexpr") {
        scalars_[p.name] = p.value;
        continue;
      }
      auto it = args.find(p.name);
      if (it == args.end()) fail("the launch of '" + name + "' binds no argument to '" + p.name + "'", span);
      const htp::WspArg &a = *it->second;
      if (p.is_scalar() != a.is_scalar())
        fail("the launch of '" + name + "' binds " + (a.is_scalar() ? "a scalar" : "a tensor") + " to the " +
                 (p.is_scalar() ? "scalar" : "tensor") + " parameter '" + p.name + "'",
             span);
      if (p.is_scalar()) {
        scalars_[p.name] = *a.scalar;
      } else if (a.is_channel()) {
        tensors_[p.name] = {channel_param(*a.channel), json::array({0, 0})};
      } else {
        const std::string &t = *a.tensor;
        json offset = json(a.offset);
        if (offset.size() != p.shape.size())
          fail("the launch of '" + name + "' passes a " + std::to_string(offset.size()) + "-D view of '" + t +
                   "' to its " + std::to_string(p.shape.size()) + "-D parameter '" + p.name +
                   "'; backend-pto inlines pipe stages whose views keep every dimension",
               span);
        tensors_[p.name] = {t, offset};
        use_tensor(t, span);
      }
    }
    for (const Op &o : k->body) body_.push_back(op(op_json(o)));
  }

  /// The workload tensors the launches use, in order of first use.
  const std::vector<std::string> &tensors() const { return used_; }
  json body() const { return body_; }
  json locals() const { return derived_locals_; }

private:
  void use_tensor(const std::string &t, const Span &span) {
    if (std::find(used_.begin(), used_.end(), t) != used_.end()) return;
    bool known = false;
    for (const htp::CspParam &p : program_.params) known |= p.name == t;
    if (!known) fail("pipe stage passes '" + t + "', which is not a tensor parameter of the workload", span);
    used_.push_back(t);
  }

  std::string local(const json &name) const {
    const std::string n = name.get<std::string>();
    return locals_.count(n) || loop_vars_.count(n) ? prefix_ + n : n;
  }

  /// An Expr of the kernel in the stage: scalar parameters replaced, locals and loop variables renamed.
  json expr(const json &e) const {
    if (e.is_array()) {
      json out = json::array();
      for (const auto &x : e) out.push_back(expr(x));
      return out;
    }
    if (!e.is_object()) return e;
    if (e.contains("param")) {
      auto it = scalars_.find(e["param"].get<std::string>());
      return it == scalars_.end() ? e : it->second;
    }
    if (e.contains("var")) {
      auto it = scalars_.find(e["var"].get<std::string>());  // a scalar parameter spelled as a variable
      if (it != scalars_.end()) return it->second;
      return json{{"var", local(e["var"])}};
    }
    json out = e;
    if (e.contains("read") && tensors_.count(e["read"].get<std::string>()))
      out["read"] = tensors_.at(e["read"].get<std::string>()).first;
    if (e.contains("args")) out["args"] = expr(e["args"]);
    if (e.contains("index")) out["index"] = expr(e["index"]);
    return out;
  }

  /// A tensor access: the parameter's tensor and the view's offset added to the kernel's.
  void access(json &out, const char *key, const json &raw) {
    auto it = tensors_.find(raw.at(key).get<std::string>());
    if (it == tensors_.end()) return;
    out[key] = it->second.first;
    json offset = expr(raw.value("offset", json::array({0, 0})));
    const json &base = it->second.second;
    if (offset.size() != base.size())
      fail("kernel access of '" + raw.at(key).get<std::string>() + "' has " + std::to_string(offset.size()) +
               " offsets for a " + std::to_string(base.size()) + "-D view",
           Span::from_json(raw.value("span", json())));
    for (size_t d = 0; d < base.size(); ++d)
      if (base[d] != json(0)) offset[d] = json{{"op", "add"}, {"args", json::array({base[d], offset[d]})}};
    out["offset"] = offset;
  }

  json op(const json &raw) {
    json out = raw;
    const std::string name = raw.value("op", std::string());
    if (raw.contains("var")) loop_vars_.insert(raw["var"].get<std::string>());
    for (const char *key : {"start", "stop", "step", "cond", "scalar"})
      if (raw.contains(key)) out[key] = expr(raw[key]);
    if (raw.contains("var")) out["var"] = local(raw["var"]);
    if (raw.contains("args") && raw["args"].is_array())
      for (auto &a : out["args"]) a = a.is_string() ? json(local(a)) : expr(a);
    if (raw.contains("value")) out["value"] = raw["value"].is_string() ? json(local(raw["value"])) : expr(raw["value"]);
    if (raw.contains("dst") && raw["dst"].is_string()) out["dst"] = local(raw["dst"]);
    if (name == "load" || name == "tile.load" || name == "pto.load") access(out, "src", raw);
    if (name == "store" || name == "tile.store" || name == "pto.store") access(out, "dst", raw);
    for (const char *key : {"body", "then", "else"})
      if (raw.contains(key)) {
        out[key] = json::array();
        for (const auto &s : raw[key]) out[key].push_back(op(s));
      }
    return out;
  }

  const htp::CspProgram &program_;
  const std::vector<Kernel> &kernels_;
  std::string prefix_;
  std::set<std::string> locals_, loop_vars_;
  std::map<std::string, std::pair<std::string, json>> tensors_;  ///< parameter -> (tensor, view offset)
  std::map<std::string, json> scalars_;                         ///< parameter -> Expr
  std::vector<std::string> used_;
  json body_ = json::array(), derived_locals_ = json::array();
};

/// Scalar parameters of the workload an Expr tree mentions.
void scalar_params(const json &j, const std::vector<htp::CspParam> &params, std::vector<std::string> &out) {
  if (j.is_array()) {
    for (const auto &x : j) scalar_params(x, params, out);
    return;
  }
  if (!j.is_object()) return;
  if (j.contains("param") && j["param"].is_string())
    for (const htp::CspParam &p : params)
      if (p.name == j["param"] && p.type.is_scalar() && std::find(out.begin(), out.end(), p.name) == out.end())
        out.push_back(p.name);
  for (const auto &[k, v] : j.items()) scalar_params(v, params, out);
}

/// The per-iteration kernel of pipe stage `proc` (see StageInliner); sets the loop bounds and the process's
/// arguments.
Kernel lower_stage(const htp::CspProgram &program, const htp::CspProcess &proc, const std::vector<Kernel> &kernels,
                   const std::map<std::string, CspChannel> &channels, CspProcess &cp, json &start, json &stop) {
  const htp::WspNode &stage = *proc.stage;
  const Span span = Span::from(stage.span);
  if (!stage.is_loop() || stage.domain.type != "seq" || stage.vars.size() != 1)
    fail("pipe stage '" + cp.name + "' must be one sequential loop (for i in P.seq(n), or a consume loop) whose "
             "iterations backend-pto turns into tasks",
         span);
  start = 0;
  stop = stage.domain.extent;
  cp.loop_var = stage.vars[0];
  StageInliner inliner(program, kernels);
  size_t index = 0;
  // (channel, dir) -> the consume item moved (empty: recv or a slot): one item per iteration; arguments
  // naming the same consume item share it
  std::map<std::pair<std::string, std::string>, std::string> moved;
  for (const htp::WspNode &n : stage.body) {
    const Span at = Span::from(n.span);
    if (!n.is_task())
      fail("pipe stage '" + cp.name + "' nests a " + n.kind + " in its loop; backend-pto lowers stages whose loop "
           "body is kernel launches",
           at);
    for (const htp::WspArg &a : n.args)
      if (auto [it, first] = a.is_channel() ? moved.emplace(std::pair(*a.channel, a.dir), a.item.value_or(""))
                                            : std::pair(moved.end(), true);
          !first && (it->second.empty() || it->second != a.item.value_or("")))
        fail("pipe stage '" + cp.name + "' moves two items of channel '" + *a.channel +
                 "' per iteration; backend-pto gives each iteration one slot of a channel",
             at);
    inliner.launch(n, index++);
  }
  json params = json::array();
  for (const std::string &t : inliner.tensors())
    for (const htp::CspParam &p : program.params)
      if (p.name == t) {
        params.push_back(json(p));
        cp.args.push_back(htp::CspBinding{t, t, std::nullopt});
      }
  for (const auto &[ch, dir] : cp.channels) {
    auto it = channels.find(ch);
    if (it == channels.end()) fail("process '" + cp.name + "' uses unknown channel '" + ch + "'", span);
    params.push_back({{"name", channel_param(ch)},
                      {"dir", dir},
                      {"type", {{"kind", "tensor"}, {"shape", it->second.shape}, {"dtype", it->second.dtype}}}});
  }
  std::vector<std::string> scalars;
  scalar_params(inliner.body(), program.params, scalars);
  for (const std::string &n : scalars)
    for (const htp::CspParam &p : program.params)
      if (p.name == n) {
        params.push_back(json(p));
        cp.args.push_back(htp::CspBinding{n, std::nullopt, json{{"param", n}}});
      }
  params.push_back({{"name", cp.loop_var}, {"dir", "in"}, {"type", {{"kind", "scalar"}, {"dtype", "i64"}}}});
  json k = {{"name", cp.kernel}, {"kind", "kernel"},  {"span", json(stage.span)}, {"mapping", nullptr},
            {"params", params},  {"locals", inliner.locals()}, {"body", inliner.body()}};
  return derived_kernel(k);
}

/// Items that pass through channel `c` in all: what the processes producing it put (counts times replicas),
/// or, when a link produces it, what the processes consuming it get; null when only links touch it.
json channel_items(const htp::CspProgram &program, const std::string &c) {
  for (bool producers : {true, false}) {
    json total;
    for (const htp::CspProcess &proc : program.processes) {
      const auto &ends = producers ? proc.produces : proc.consumes;
      auto it = proc.counts.find(c);
      if (it == proc.counts.end() || std::find(ends.begin(), ends.end(), c) == ends.end()) continue;
      json n = producers ? it->second.put : it->second.get;
      if (proc.replicas != 1)
        n = n.is_number_integer() ? json(n.get<int64_t>() * proc.replicas) : json{{"op", "mul"}, {"args", {n, proc.replicas}}};
      if (total.is_null()) total = n;
      else if (total.is_number_integer() && n.is_number_integer()) total = total.get<int64_t>() + n.get<int64_t>();
      else total = json{{"op", "add"}, {"args", {total, n}}};
    }
    if (!total.is_null()) return total;
  }
  return json();
}

/// The per-item kernel of a link part: one item from channel `src`'s slot to channel `dst`'s.
Kernel link_kernel(const std::string &name, const std::string &src, const std::string &dst, const CspChannel &c,
                   const htp::IrSpan &span) {
  const json type = {{"kind", "tensor"}, {"shape", c.shape}, {"dtype", c.dtype}};
  const json at = json(span);
  json k = {{"name", name},
            {"kind", "kernel"},
            {"span", at},
            {"mapping", nullptr},
            {"params", {{{"name", channel_param(src)}, {"dir", "inout"}, {"type", type}},
                        {{"name", channel_param(dst)}, {"dir", "out"}, {"type", type}},
                        {{"name", "k"}, {"dir", "in"}, {"type", {{"kind", "scalar"}, {"dtype", "i64"}}}}}},
            {"locals", {{{"name", "t"}, {"kind", "tile"}, {"shape", c.shape}, {"dtype", c.dtype}}}},
            {"body", {{{"op", "load"}, {"dst", "t"}, {"src", channel_param(src)}, {"offset", {0, 0}}, {"span", at}},
                      {{"op", "store"}, {"dst", channel_param(dst)}, {"offset", {0, 0}}, {"value", "t"}, {"span", at}}}}};
  return derived_kernel(k);
}

/// The processes that run link `l`: one per channel on its many side (one for a forward), each moving one
/// item per iteration, as a replica of the link would (distribute: part j takes items j, j + n, ... of the
/// source; join: part j gives them to the destination).
void lower_link(const htp::CspProgram &program, const htp::CspLink &l, const std::map<std::string, CspChannel> &channels,
                std::vector<CspProcess> &processes, std::vector<Kernel> &derived) {
  const Span span = Span::from(l.span);
  if (l.from.empty() || l.to.empty() || (l.from.size() != 1 && l.to.size() != 1))
    fail("link '" + l.name + "' connects " + std::to_string(l.from.size()) + " channels to " +
             std::to_string(l.to.size()) + "; backend-pto lowers forward, distribute and join links", span);
  const bool join = l.mode == "join";
  const std::vector<std::string> &many = join ? l.from : l.to;
  const std::string &one = join ? l.to[0] : l.from[0];
  const int64_t n = static_cast<int64_t>(many.size());
  for (int64_t j = 0; j < n; ++j) {
    const std::string &own = many[static_cast<size_t>(j)];
    const json trip = channel_items(program, own);
    if (trip.is_null())
      fail("link '" + l.name + "' joins channel '" + own + "' to another link; backend-pto lowers links between "
           "channels that processes produce or consume", span);
    CspProcess part;
    part.name = l.name + (n > 1 ? "[" + own + "]" : "");
    part.kernel = program.name + "_" + l.name + (n > 1 ? "_" + std::to_string(j) : "");
    part.loop_var = "k";
    part.start = 0;
    part.stop = trip;
    part.step = 1;
    const std::string src = join ? own : one, dst = join ? one : own;
    derived.push_back(link_kernel(part.kernel, src, dst, channels.at(one), l.span));
    part.channels = {{src, "inout"}, {dst, "out"}};
    part.items[own] = {1, 0};
    part.items[one] = {n, j};
    processes.push_back(std::move(part));
  }
}

}  // namespace

CspProgram lower_csp_program(const htp::CspProgram &program, const std::vector<Kernel> &kernels,
                             const std::map<std::string, std::vector<htp::TileParam>> &carries,
                             std::vector<Kernel> &derived) {
  CspProgram p;
  p.name = program.name;
  p.span = Span::from(program.span);
  p.params = program.params;
  std::map<std::string, CspChannel> channels;
  std::set<std::string> events;
  for (const htp::CspChannel &c : program.channels) {
    if (c.is_event()) events.insert(c.name);
    CspChannel ch = parse_channel(c, p.name);
    channels[ch.name] = ch;
    p.channels.push_back(ch);
  }
  std::vector<CspProcess> processes;
  for (const htp::CspProcess &proc : program.processes) {
    const Span span = Span::from(proc.span);
    CspProcess cp;
    cp.name = proc.name;
    cp.kernel = p.name + "_" + cp.name;
    cp.args = proc.args;
    if (proc.replicas < 1) fail("process '" + cp.name + "' has " + std::to_string(proc.replicas) + " replicas", span);
    cp.replicas = proc.replicas;
    for (const std::string &c : proc.consumes) cp.channels.push_back({c, "inout"});
    for (const std::string &c : proc.produces) cp.channels.push_back({c, "out"});
    if (proc.stage) {  // a WSP pipe stage: kernel launches, inlined
      json start, stop;
      cp.args.clear();
      derived.push_back(lower_stage(program, proc, kernels, channels, cp, start, stop));
      cp.start = start;
      cp.stop = stop;
      cp.step = 1;
      processes.push_back(std::move(cp));
      continue;
    }
    const Kernel &body = process_kernel(kernels, proc.function, span);
    // Registers carried between its tasks (htp::cut_process): the kernels' tensor parameters of these names.
    if (auto c = carries.find(proc.function); c != carries.end())
      for (const htp::TileParam &t : c->second) cp.carries.push_back(CspChannel{t.name, t.type.shape, t.type.dtype, 1});
    auto is_carry = [&](const std::string &tensor) {
      return std::any_of(cp.carries.begin(), cp.carries.end(), [&](const CspChannel &c) { return c.name == tensor; });
    };
    if (body.body.size() != 1 || body.body[0].op != "for")
      fail("process '" + cp.name + "' must be one counted loop (for ... in range(n)) whose iterations backend-pto "
               "turns into tasks",
           body.span);
    const Op &loop = body.body[0];
    cp.start = *loop.ir.start;
    cp.stop = *loop.ir.stop;
    cp.step = *loop.ir.step;
    cp.loop_var = *loop.ir.var;
    // One kernel per step of the iteration (one step unless it receives after sending).
    auto kernel_of = [&](const Kernel &src, const std::string &name,
                         const std::vector<std::pair<std::string, std::string>> &moved, const std::vector<Op> &ops) {
      Kernel k;
      k.name = name;
      k.kind = "kernel";
      k.span = src.span;
      k.params = src.params;
      k.locals = src.locals;
      for (const auto &[ch, dir] : moved) {
        auto it = channels.find(ch);
        if (it == channels.end()) fail("process '" + cp.name + "' uses unknown channel '" + ch + "'", span);
        Param slot;
        slot.name = channel_param(ch);
        slot.dir = dir;
        slot.kind = "tensor";
        slot.shape = it->second.shape;
        slot.dtype = it->second.dtype;
        k.params.push_back(slot);
      }
      Param index;
      index.name = cp.loop_var;
      index.kind = "scalar";
      index.dtype = "i64";
      k.params.push_back(index);
      k.body = rewrite_body(ops, cp.name, events);
      return k;
    };
    // A task runs on one core type, and a2a3 cannot load an accumulator into L0C: say so in CSP terms (the
    // kernel-level messages name a derived kernel and advise exchanging tensors).
    std::set<std::string> carried;  // registers loaded from a carry tensor
    htp::for_each_op(body.body, [&](const Op &o) {
      if (o.op == "load" && is_carry(o.src())) carried.insert(o.dst);
    });
    auto checked = [&](Kernel k) {
      const std::string who = "process '" + cp.name + "' of CSP program '" + p.name + "'";
      if (const Op *v = vector_op_beside_matmul(k))
        fail(who + " does cube work (pto.matmul) and vector work (pto." + v->op + ") in one task; backend-pto runs " +
                 "each iteration of a process (and its statements before and after its loop) as one task on one core " +
                 "type: do the matmul in one process and the vector work in another, joined by a channel",
             v->span);
      htp::for_each_op(k.body, [&](const Op &o) {
        if (o.op == "matmul" && carried.count(o.dst) && (o.ir.accumulate.value_or(false) || o.args.size() > 2))
          fail(who + " accumulates matmuls into '" + o.dst + "', which it carries from one iteration to the next; a2a3 " +
                   "cannot load an accumulator into the cube core: send each product to another process that adds " +
                   "it up (acc = add(acc, recv(products)))",
               o.span);
      });
      return k;
    };
    // The steps of an iteration, a task each: cut where a receive follows a send (htp::round_trip_steps), and
    // between two statements that move an item of one channel (`send(ch, a)` then `send(ch, b)`: a task moves
    // one item per channel), where no register crosses the cut if there is such a place (what computes b goes
    // with the second send, what uses a received item with its receive). Only statements directly in the
    // loop's body are cut between; a channel used twice inside one (a loop, both branches) stays the error
    // below, and so does a replicated process (its replicas take items in turn).
    auto item_steps = [&](const std::vector<Op> &ops) {
      std::vector<std::vector<Op>> out;
      for (const std::vector<Op> &round : htp::round_trip_steps(ops)) {
        const size_t n = round.size();
        std::vector<std::set<std::pair<std::string, std::string>>> uses(n);
        std::vector<std::set<std::string>> defs(n), reads(n);
        for (size_t i = 0; i < n; ++i)
          htp::for_each_op(std::vector<Op>{round[i]}, [&](const Op &x) {
            if ((x.op == "csp.recv" || x.op == "csp.send") && !events.count(op_channel(x)))
              uses[i].insert({op_channel(x), x.op});
            if (!x.dst.empty()) defs[i].insert(x.dst);
            reads[i].insert(x.args.begin(), x.args.end());
            if (!x.stored().empty()) reads[i].insert(x.stored());
          });
        // Whether a register defined in [from, cut) is read in [cut, n).
        auto crosses = [&](size_t from, size_t cut) {
          for (size_t d = from; d < cut; ++d)
            for (const std::string &r : defs[d])
              for (size_t u = cut; u < n; ++u)
                if (reads[u].count(r)) return true;
          return false;
        };
        size_t start = 0;  // the current step's first statement
        for (size_t i = 0; i < n && proc.replicas == 1; ++i) {
          size_t next = n;  // the next statement moving an item of a channel statement i moves
          for (size_t later = i + 1; later < n && next == n; ++later)
            for (const auto &u : uses[i])
              if (uses[later].count(u)) next = later;
          if (next == n) continue;
          size_t cut = next;
          for (size_t c = i + 1; c <= next; ++c)
            if (!crosses(start, c)) {
              cut = c;
              break;
            }
          out.emplace_back(round.begin() + static_cast<std::ptrdiff_t>(start), round.begin() + static_cast<std::ptrdiff_t>(cut));
          start = cut;
          i = cut - 1;
        }
        out.emplace_back(round.begin() + static_cast<std::ptrdiff_t>(start), round.end());
      }
      return out;
    };
    const std::vector<std::vector<Op>> steps = [&] {
      // An iteration that receives after it sends runs as steps, a task each. Its carried registers are loaded
      // (from their carry tensors, at the top of the iteration) by every step that reads them and stored by every
      // step that writes them, so that they reach each step through the tensor instead of crossing between tasks.
      std::vector<Op> body_ops = loop.body, loads, stores;
      while (!body_ops.empty() && body_ops.front().op == "load" && is_carry(body_ops.front().src())) {
        loads.push_back(body_ops.front());
        body_ops.erase(body_ops.begin());
      }
      while (!body_ops.empty() && body_ops.back().op == "store" && is_carry(body_ops.back().dst)) {
        stores.insert(stores.begin(), body_ops.back());
        body_ops.pop_back();
      }
      std::vector<std::vector<Op>> out = item_steps(body_ops);
      if (out.size() == 1) return item_steps(loop.body);
      auto touches = [&](const std::vector<Op> &ops, const std::string &reg, bool writes) {
        bool found = false;
        htp::for_each_op(ops, [&](const Op &o) {
          if (writes) found = found || o.dst == reg;
          else found = found || o.stored() == reg || std::find(o.args.begin(), o.args.end(), reg) != o.args.end();
        });
        return found;
      };
      for (auto l = loads.rbegin(); l != loads.rend(); ++l) {
        bool placed = false;
        for (std::vector<Op> &step : out)
          if (touches(step, l->dst, false)) step.insert(step.begin(), *l), placed = true;
        if (!placed) out.front().insert(out.front().begin(), *l);
      }
      for (const Op &st : stores) {
        bool placed = false;
        for (std::vector<Op> &step : out)
          if (touches(step, st.stored(), true)) step.push_back(st), placed = true;
        if (!placed) out.back().push_back(st);
      }
      return out;
    }();
    // A step's task moves one item per channel: a second send (or receive) on one channel in the same step
    // — twice in a row, or in a loop — would land in (or read) the same slot.
    std::function<std::map<std::pair<std::string, std::string>, int>(const std::vector<Op> &)> uses =
        [&](const std::vector<Op> &ops) {
          std::map<std::pair<std::string, std::string>, int> n;
          for (const Op &x : ops) {
            if (x.op == "csp.recv" || x.op == "csp.send") ++n[{op_channel(x), x.op}];
            for (const auto &[key, c] : uses(x.body)) n[key] += x.op == "for" ? 2 * c : c;
            auto then_uses = uses(x.then_body), else_uses = uses(x.else_body);  // one branch runs
            for (const auto &[key, c] : then_uses) n[key] += std::max(c, else_uses[key]);
            for (const auto &[key, c] : else_uses)
              if (!then_uses.count(key)) n[key] += c;
          }
          return n;
        };
    for (const std::vector<Op> &step : steps)
      for (const auto &[key, count] : uses(step))
        if (count > 1 && !events.count(key.first))
          fail("process '" + cp.name + "' " + (key.second == "csp.send" ? "sends to" : "receives from") + " channel '" +
                   key.first + "' more than once per iteration; backend-pto moves one item per channel and iteration "
                   "(a task each): send or receive each item in an iteration of its own loop",
               span);
    // The channels statements move, receives first (a task's slots: "inout" to take an item, "out" to give one).
    auto moved_by = [&](const std::vector<Op> &ops) {
      std::vector<std::pair<std::string, std::string>> moved;
      htp::for_each_op(ops, [&](const Op &x) {
        if (x.op != "csp.recv" && x.op != "csp.send") return;
        const std::pair<std::string, std::string> use{op_channel(x), x.op == "csp.recv" ? "inout" : "out"};
        if (std::find(moved.begin(), moved.end(), use) == moved.end()) moved.push_back(use);
      });
      std::stable_partition(moved.begin(), moved.end(), [](const auto &m) { return m.second == "inout"; });
      return moved;
    };
    // Statements before or after the loop (htp::cut_process): a task each, once; registers they share with
    // the loop travel through the carry tensors.
    std::set<std::string> in_loop;
    for (const auto &[ch, dir] : moved_by(loop.body)) in_loop.insert(ch);
    for (const char *where : {"before", "after"}) {
      const Kernel *k = nullptr;
      for (const Kernel &x : kernels)
        if (x.name == proc.function + "__" + where) k = &x;
      if (!k) continue;
      const std::string around = std::string(where) + " its loop";
      if (htp::round_trip_steps(k->body).size() > 1)
        fail("process '" + cp.name + "' receives after it sends in its statements " + around +
                 "; backend-pto runs those statements as one task, which cannot wait for its own reply",
             k->span);
      for (const auto &[key, count] : uses(k->body))
        if (count > 1 && !events.count(key.first))
          fail("process '" + cp.name + "' " + (key.second == "csp.send" ? "sends to" : "receives from") + " channel '" +
                   key.first + "' more than once " + around + "; backend-pto moves one item per channel and task",
               k->span);
      const auto moved = moved_by(k->body);
      for (const auto &[ch, dir] : moved)
        if (in_loop.count(ch))
          fail("process '" + cp.name + "' uses channel '" + ch + "' both in its loop and " + around +
                   "; backend-pto gives a process's items of a channel to the iterations of one loop: move that "
                   "send or receive into the loop, or use another channel",
               k->span);
      CspStep step{cp.kernel + "__" + where, moved};
      derived.push_back(checked(kernel_of(*k, step.kernel, moved, k->body)));
      (std::string(where) == "before" ? cp.before : cp.after) = std::move(step);
    }
    if (steps.size() == 1 && (cp.before || cp.after)) {  // the loop moves only its own channels
      CspStep step{cp.kernel, moved_by(loop.body)};
      derived.push_back(checked(kernel_of(body, step.kernel, step.channels, loop.body)));
      cp.steps.push_back(std::move(step));
      processes.push_back(std::move(cp));
      continue;
    }
    if (steps.size() == 1) {
      derived.push_back(checked(kernel_of(body, cp.kernel, cp.channels, loop.body)));
      processes.push_back(std::move(cp));
      continue;
    }
    // A tile register one step defines and a later step reads (`u = recv(c); v = recv(c); add(u, v)`) travels
    // through a carry tensor of its own, as a register carried across iterations does: stored at the end of every
    // step that writes it, loaded at the top of every later one that reads it before writing it.
    Kernel stepped = body;  // the steps' kernels: the process's parameters and those carries
    std::vector<std::vector<Op>> handed = steps;
    {
      std::set<std::string> defined_before;
      std::vector<std::set<std::string>> needs(steps.size()), writes(steps.size());
      for (size_t s = 0; s < steps.size(); ++s) {
        std::set<std::string> defined;
        htp::for_each_op(steps[s], [&](const Op &x) {
          std::vector<std::string> read = x.args;
          if (!x.stored().empty()) read.push_back(x.stored());
          for (const std::string &a : read) {
            const Local *l = body.local(a);
            if (!l || !defined_before.count(a) || defined.count(a)) continue;
            if (l->scalar)
              fail("process '" + cp.name + "' runs each iteration as steps, a task each (it receives after it sends, "
                       "or moves two items of one channel), and uses scalar register '" + a + "' in two of them; "
                       "backend-pto hands tile registers from one step to the next through a tensor, scalars not: "
                       "compute it in the step that uses it",
                   x.span);
            needs[s].insert(a);
          }
          if (!x.dst.empty()) defined.insert(x.dst), writes[s].insert(x.dst);
        });
        defined_before.insert(defined.begin(), defined.end());
      }
      std::map<std::string, std::string> carry_of;  // register -> its carry tensor
      for (const std::set<std::string> &n : needs)
        for (const std::string &r : n) {
          if (carry_of.count(r)) continue;
          std::string name = "step_" + r;
          while (stepped.param(name) || stepped.local(name) || is_carry(name)) name += "_";
          const Local &l = *body.local(r);
          cp.carries.push_back(CspChannel{name, l.shape, l.dtype, 1});
          Param t;
          t.name = name;
          t.dir = "inout";
          t.kind = "tensor";
          t.shape = t.global_shape = l.shape;
          t.dtype = l.dtype;
          stepped.params.push_back(t);
          carry_of[r] = name;
          carried.insert(r);
        }
      auto move = [&](bool load, const std::string &reg) {
        Op m;
        m.op = m.ir.op = load ? "load" : "store";
        m.span = span;
        m.ir.offset = std::vector<json>{json(0), json(0)};
        if (load) {
          m.dst = reg;
          m.ir.dst = reg;
          m.ir.src = carry_of.at(reg);
        } else {
          m.dst = carry_of.at(reg);
          m.ir.dst = carry_of.at(reg);
          m.ir.value = reg;
        }
        return m;
      };
      for (size_t s = 0; s < steps.size(); ++s) {
        for (const std::string &r : needs[s]) handed[s].insert(handed[s].begin(), move(true, r));
        for (const std::string &r : writes[s])
          if (carry_of.count(r)) handed[s].push_back(move(false, r));
      }
    }
    for (size_t s = 0; s < steps.size(); ++s) {
      const auto moved = moved_by(steps[s]);
      CspStep step{cp.kernel + "__" + std::to_string(s), moved};
      derived.push_back(checked(kernel_of(stepped, step.kernel, moved, handed[s])));
      cp.steps.push_back(std::move(step));
    }
    processes.push_back(std::move(cp));
  }
  for (const htp::CspLink &l : program.links) lower_link(program, l, channels, processes, derived);
  if (processes.empty()) fail("program '" + p.name + "' has no process", p.span);
  p.processes = order(std::move(processes));
  return p;
}

}  // namespace ptobe
