#include "csp_lowering.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace ptobe {

namespace {

[[noreturn]] void fail(const std::string &message, const Span &span) { throw IrError(message, span, "pto.csp"); }

std::string channel_param(const std::string &channel) { return "ch_" + channel; }

CspChannel parse_channel(const json &c, const std::string &program) {
  CspChannel ch;
  ch.name = c.at("name").get<std::string>();
  const json &elem = c.at("elem");
  if (!elem.contains("shape") || !elem.contains("dtype"))
    fail("channel '" + ch.name + "' of program '" + program + "' carries " + elem.dump() +
             "; backend-pto lowers channels of tiles and tensors",
         Span::from_json(c.value("span", json())));
  for (const auto &d : elem["shape"]) ch.shape.push_back(d.get<int64_t>());
  if (ch.shape.size() == 1) ch.shape.insert(ch.shape.begin(), 1);
  ch.dtype = elem["dtype"].get<std::string>();
  ch.depth = std::max<int64_t>(1, c.value("depth", 1));
  return ch;
}

/// Rewrites channel operations into loads and stores of the channel's slot parameter.
std::vector<Op> rewrite_body(const std::vector<Op> &ops, const std::string &process) {
  std::vector<Op> out;
  for (const Op &o : ops) {
    Op r = o;
    if (o.op == "csp.recv" || o.op == "csp.send") {
      const std::string ch = o.raw.contains("attrs") ? o.raw["attrs"].value("channel", std::string()) : std::string();
      if (ch.empty()) fail("process '" + process + "': " + o.op + " names no channel", o.span);
      r.raw = json{{"offset", json::array({0, 0})}};
      if (o.op == "csp.recv") {
        r.op = "load";
        r.raw["src"] = channel_param(ch);
      } else {
        if (o.args.size() != 1) fail("process '" + process + "': csp.send takes one tile", o.span);
        r.op = "store";
        r.dst = channel_param(ch);
        r.raw["value"] = o.args[0];
        r.args.clear();
      }
      r.raw["span"] = o.raw.value("span", json());
    }
    r.body = rewrite_body(o.body, process);
    r.then_body = rewrite_body(o.then_body, process);
    r.else_body = rewrite_body(o.else_body, process);
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

}  // namespace

CspProgram lower_csp_program(const json &program, const std::vector<Kernel> &kernels, std::vector<Kernel> &derived) {
  CspProgram p;
  p.name = program.at("name").get<std::string>();
  p.span = Span::from_json(program.value("span", json()));
  p.params = program.value("params", json::array());
  std::map<std::string, CspChannel> channels;
  for (const auto &c : program.value("channels", json::array())) {
    CspChannel ch = parse_channel(c, p.name);
    channels[ch.name] = ch;
    p.channels.push_back(ch);
  }
  std::vector<CspProcess> processes;
  bool first = true;
  for (const auto &proc : program.value("processes", json::array())) {
    const Span span = Span::from_json(proc.value("span", json()));
    CspProcess cp;
    cp.name = proc.at("name").get<std::string>();
    cp.kernel = p.name + "_" + cp.name;
    cp.args = proc.value("args", json::array());
    if (proc.value("replicas", 1) != 1)
      fail("process '" + cp.name + "' is replicated " + proc["replicas"].dump() +
               " times; backend-pto lowers processes with one replica",
           span);
    const Kernel &body = process_kernel(kernels, proc.value("function", cp.name), span);
    if (body.body.size() != 1 || body.body[0].op != "for")
      fail("process '" + cp.name + "' must be one counted loop (for ... in range(n)) whose iterations backend-pto "
               "turns into tasks",
           body.span);
    const Op &loop = body.body[0];
    json start = loop.raw.value("start", json(0)), stop = loop.raw.at("stop"), step = loop.raw.value("step", json(1));
    if (first) {
      p.start = start;
      p.stop = stop;
      p.step = step;
      first = false;
    } else if (start != p.start || stop != p.stop || step != p.step) {
      fail("process '" + cp.name + "' loops over range(" + start.dump() + ", " + stop.dump() + ", " + step.dump() +
               ") but the first process over range(" + p.start.dump() + ", " + p.stop.dump() + ", " + p.step.dump() +
               "); backend-pto lowers processes that run the same iterations",
           body.span);
    }
    cp.loop_var = loop.raw.value("var", std::string("i"));
    Kernel k;
    k.name = cp.kernel;
    k.kind = "kernel";
    k.span = body.span;
    k.params = body.params;
    k.locals = body.locals;
    for (const auto &c : proc.value("consumes", json::array())) cp.channels.push_back({c.get<std::string>(), "inout"});
    for (const auto &c : proc.value("produces", json::array())) cp.channels.push_back({c.get<std::string>(), "out"});
    for (const auto &[ch, dir] : cp.channels) {
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
    k.body = rewrite_body(loop.body, cp.name);
    derived.push_back(std::move(k));
    processes.push_back(std::move(cp));
  }
  if (processes.empty()) fail("program '" + p.name + "' has no process", p.span);
  p.processes = order(std::move(processes));
  return p;
}

}  // namespace ptobe
