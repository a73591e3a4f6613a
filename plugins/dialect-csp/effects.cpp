// csp.effects: counts, balance, element types and deadlock freedom of every program; consume loops
// become counted loops of recv once the stream lengths are known.
#include "ast_build.hpp"
#include "deadlock.hpp"
#include "passes.hpp"
#include "types.hpp"

#include <algorithm>
#include <deque>
#include <set>

namespace csp {

namespace {

std::string quoted_list(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + ("'" + names[i] + "'");
  return out;
}

Json stream_atom(const std::string &channel) {
  return Json{{"stream", channel}};
}

/// The analysis of one program.
class ProgramEffects {
public:
  ProgramEffects(htp::PassContext &ctx, ProgramDecl &program, const Json &constants, int &errors)
      : ctx_(ctx), program_(program), constants_(constants), errors_(errors) {}

  void run() {
    read_processes();
    if (errors_) return;
    resolve_streams();
    if (errors_) return;
    check_declared_ends();
    check_balance();
    check_types();
    if (errors_) return;
    check_deadlock();
    if (errors_) return;
    rewrite_consume_loops();
    record_counts();
  }

private:
  struct Body {
    ProcessDecl *decl;
    htp::NodeRef fn;
    std::vector<Op> ops;
    Counts counts;
  };

  void error(const Json &span, std::string_view code, const std::string &message) {
    report_at(ctx_, HTP_SEV_ERROR, span, code, message);
    ++errors_;
  }
  void note(const Json &span, const std::string &message) {
    report_at(ctx_, HTP_SEV_NOTE, span, "csp.note", message);
  }

  void read_processes() {
    ExprScope scope{&constants_, {}, {}};
    for (const auto &p : program_.params)
      if (p["type"]["kind"] != "tensor") scope.params.insert(p["name"].get<std::string>());
    for (auto &p : program_.processes) {
      htp::NodeRef fn = find_function(ctx_.module(), p.function);
      if (!fn) throw htp::PassError("process function '" + p.function + "' is missing from the module");
      Body b{&p, fn, extract_ops(ctx_, fn, scope, errors_), {}};
      bodies_.push_back(std::move(b));
    }
    for (const auto &l : program_.links)
      bodies_.push_back(link_body(l));
    for (auto &b : bodies_)
      b.counts = count_ops(ctx_, b.ops, errors_);
    if (errors_) return;
    for (auto &b : bodies_)
      for (const auto &[ch, n] : b.counts) {
        Poly stream = Poly::atom(stream_atom(ch));
        bool mixed = n.get.has_atom([&](const Json &a) { return a == stream_atom(ch); }) && n.get != stream;
        if (!mixed) continue;
        const Op *at = first_op(b.ops, ch, Op::Kind::Recv);
        if (!at) at = first_op(b.ops, ch, Op::Kind::Consume);
        error(at ? op_span(*at) : b.decl->span, "csp.consume",
              "process '" + b.decl->name + "' receives from '" + ch + "' both with consume(" + ch +
                  ") and with recv: a stream is consumed by one loop");
      }
  }

  static Json link_atom(const std::string &link) { return Json{{"link", link}}; }

  /// A connect as a process: per iteration it takes one item from each source and gives one to each
  /// destination in turn (`link_atom` iterations until resolve_streams knows the count).
  Body link_body(const LinkDecl &l) {
    ProcessDecl &d = link_decls_.emplace_back();
    d.name = "connect(" + quoted_list(l.from) + " -> " + quoted_list(l.to) + ")";
    d.name.erase(std::remove(d.name.begin(), d.name.end(), '\''), d.name.end());
    d.produces = l.to;
    d.consumes = l.from;
    d.span = l.span;
    Op loop;
    loop.kind = Op::Kind::Loop;
    loop.trips = Poly::atom(link_atom(l.name));
    loop.span = l.span;
    size_t n = std::max(l.from.size(), l.to.size());
    for (size_t i = 0; i < n; ++i)
      for (bool send : {false, true}) {
        Op o;
        o.kind = send ? Op::Kind::Send : Op::Kind::Recv;
        o.channel = send ? l.to[i % l.to.size()] : l.from[i % l.from.size()];
        o.span = l.span;
        loop.body.push_back(std::move(o));
      }
    return Body{&d, htp::NodeRef(), {std::move(loop)}, {}};
  }

  /// Iterations of a link once its sources' totals are known (nullopt while they are not).
  std::optional<Poly> link_trips(const LinkDecl &l) {
    std::optional<Poly> per_source;
    for (const auto &s : l.from) {
      Poly t = total(s, true);
      if (has_stream(t)) return std::nullopt;
      if (per_source && *per_source != t) {
        error(l.span, "csp.count-mismatch",
              "connect joins channels with different counts: '" + l.from[0] + "' carries " +
                  per_source->to_text() + " items and '" + s + "' " + t.to_text() +
                  "; a join takes one item from each in turn");
        return Poly::constant(0);
      }
      per_source = t;
    }
    auto trips = per_source->divided_by(static_cast<int64_t>(l.to.size()));
    if (!trips) {
      error(l.span, "csp.count-mismatch",
            "connect distributes the " + per_source->to_text() + " items of '" + l.from[0] + "' over " +
                std::to_string(l.to.size()) + " channels, which does not divide evenly");
      return Poly::constant(0);
    }
    return trips;
  }

  /// Replaces an unknown (stream or link) by its value in every count and trip count.
  void substitute(const Json &atom, const Poly &value) {
    for (auto &b : bodies_) {
      for (auto &[c, n] : b.counts)
        n = {n.put.substitute(atom.dump(), value), n.get.substitute(atom.dump(), value)};
      visit_ops(b.ops, [&](Op &o) {
        if (atom.contains("stream") && o.kind == Op::Kind::Consume && o.channel == atom["stream"])
          o.trips = value;
        else
          o.trips = o.trips.substitute(atom.dump(), value);
      });
    }
  }

  /// Items all processes put (or get) on `ch`: the sum of replicas * count.
  Poly total(const std::string &ch, bool put) const {
    Poly sum;
    for (const auto &b : bodies_)
      if (auto it = b.counts.find(ch); it != b.counts.end())
        sum = sum + Poly::constant(b.decl->replicas) * (put ? it->second.put : it->second.get);
    return sum;
  }

  bool consumes_stream(const Body &b, const std::string &ch) const {
    auto it = b.counts.find(ch);
    return it != b.counts.end() && it->second.get == Poly::atom(stream_atom(ch));
  }

  /// Items taken from `ch` by receivers other than consume loops.
  Poly fixed_gets(const std::string &ch) const {
    Poly sum;
    for (const auto &b : bodies_)
      if (!consumes_stream(b, ch))
        if (auto it = b.counts.find(ch); it != b.counts.end())
          sum = sum + Poly::constant(b.decl->replicas) * it->second.get;
    return sum;
  }

  /// Process instances consuming `ch` with a consume loop.
  int64_t stream_consumers(const std::string &ch) const {
    int64_t k = 0;
    for (const auto &b : bodies_)
      if (consumes_stream(b, ch)) k += b.decl->replicas;
    return k;
  }

  /// Whether a count still holds an unknown: a stream length or a link's iterations.
  static bool has_stream(const Poly &p) {
    return p.has_atom(
        [](const Json &a) { return a.is_object() && (a.contains("stream") || a.contains("link")); });
  }

  /// A consume loop gets what the producers put minus what fixed receivers take, shared by its replicas;
  /// a connect forwards what its sources carry. Resolved in dependency order.
  void resolve_streams() {
    std::set<std::string> pending;
    for (const auto &c : program_.channels)
      if (stream_consumers(c.name) > 0) pending.insert(c.name);
    std::vector<const LinkDecl *> links;
    for (const auto &l : program_.links)
      links.push_back(&l);
    while (!pending.empty() || !links.empty()) {
      bool progressed = false;
      for (const auto &ch : std::vector<std::string>(pending.begin(), pending.end())) {
        Poly put = total(ch, true), fixed = fixed_gets(ch);
        if (has_stream(put) || has_stream(fixed)) continue;
        substitute(stream_atom(ch), stream_share(ch, put, fixed));
        pending.erase(ch);
        progressed = true;
      }
      for (auto it = links.begin(); it != links.end();) {
        auto trips = link_trips(**it);
        if (!trips) {
          ++it;
          continue;
        }
        substitute(link_atom((*it)->name), *trips);
        it = links.erase(it);
        progressed = true;
      }
      if (!progressed) {
        for (const auto &ch : pending)
          error(program_.channel(ch)->span, "csp.count-mismatch",
                "the length of the stream of channel '" + ch +
                    "' depends on other streams in a cycle; give one of the loops a fixed range(n)");
        for (const auto *l : links)
          error(l->span, "csp.count-mismatch",
                "the number of items this connect forwards depends on a stream in a cycle; give one of the "
                "loops a "
                "fixed range(n)");
        return;
      }
    }
  }

  Poly stream_share(const std::string &ch, const Poly &put, const Poly &fixed) {
    int64_t k = stream_consumers(ch);
    auto share = (put - fixed).divided_by(k);
    if (!share) {
      error(program_.channel(ch)->span, "csp.count-mismatch",
            "the stream of channel '" + ch + "' holds " + (put - fixed).to_text() + " items, which its " +
                std::to_string(k) + " consume(" + ch + ") loops cannot share evenly");
      return Poly::constant(0);
    }
    if (auto v = share->constant_value(); v && *v < 0) {
      error(program_.channel(ch)->span, "csp.count-mismatch",
            "channel '" + ch + "' is unbalanced: its producers send " + put.to_text() +
                " items but recv takes " + fixed.to_text() + " before the consume(" + ch + ") loops");
      return Poly::constant(0);
    }
    return *share;
  }

  void check_declared_ends() {
    for (auto &b : bodies_) {
      if (!b.fn) continue; // a connect uses all its ends
      for (bool put : {true, false})
        for (const auto &ch : put ? b.decl->produces : b.decl->consumes) {
          const ChannelCount &n = b.counts[ch];
          if (!(put ? n.put : n.get).is_zero()) continue;
          error(b.decl->span, "csp.unused-end",
                "process '" + b.decl->name + "' declares " + (put ? "produces(" : "consumes(") + ch +
                    ") but never " + (put ? "sends on it" : "receives from it"));
        }
    }
  }

  std::string per_process(const std::string &ch, bool put) const {
    std::string out;
    for (const auto &b : bodies_) {
      auto it = b.counts.find(ch);
      if (it == b.counts.end() || (put ? it->second.put : it->second.get).is_zero()) continue;
      out += std::string(out.empty() ? "" : ", ") + b.decl->name + ": " +
             (put ? it->second.put : it->second.get).to_text() +
             (b.decl->replicas > 1 ? " each x" + std::to_string(b.decl->replicas) + " replicas" : "");
    }
    return out;
  }

  void check_balance() {
    for (const auto &c : program_.channels) {
      Poly put = total(c.name, true), get = total(c.name, false);
      if (put.is_zero() && get.is_zero()) continue;
      if (put != get) {
        const Op *at = nullptr;
        std::string who;
        for (const auto &b : bodies_)
          if (!at && (at = first_op(b.ops, c.name, Op::Kind::Recv))) who = b.decl->name;
        const Op *send = nullptr;
        for (const auto &b : bodies_)
          if (!send) send = first_op(b.ops, c.name, Op::Kind::Send);
        std::string what = c.kind == "event" ? "event '" : "channel '";
        error(at ? op_span(*at) : c.span, "csp.count-mismatch",
              what + c.name + "' is unbalanced: its producers send " + put.to_text() + " items (" +
                  per_process(c.name, true) + ") but its consumers receive " + get.to_text() + " (" +
                  per_process(c.name, false) + ")");
        if (send) note(op_span(*send), "the first send on '" + c.name + "' is here");
        continue;
      }
      if (auto v = put.constant_value(); v && c.pack > 1 && *v % c.pack != 0)
        error(c.span, "csp.pack",
              "channel '" + c.name + "' packs " + std::to_string(c.pack) +
                  " elements per transfer but carries " + std::to_string(*v) + " items, not a multiple of " +
                  std::to_string(c.pack));
    }
  }

  /// Element types end to end: values received and then sent, annotations of received values.
  void check_types() {
    for (auto &b : bodies_) {
      if (!b.fn) continue;               // a connect: its ends were checked when it was read
      std::map<std::string, Json> known; // local -> element type it holds
      b.fn.walk([&](htp::NodeRef n) {
        if (n.is("Assign") || n.is("AnnAssign")) {
          htp::NodeRef value = n.child("value");
          auto op = value ? node_json(value, kOpAttr) : std::nullopt;
          std::optional<Json> type;
          if (op && (*op)["op"] == "recv") type = program_.channel((*op)["channel"])->elem;
          htp::NodeRef target = n.is("Assign")
                                    ? (n.size("targets") == 1 ? n.item("targets", 0) : htp::NodeRef())
                                    : n.child("target");
          if (n.is("AnnAssign")) {
            std::string why;
            auto declared = type_of(n.child("annotation"), constants_, why);
            if (declared && type && *declared != *type)
              error(span_json(value), "csp.type-mismatch",
                    "recv from channel '" + (*op)["channel"].get<std::string>() + "' yields " +
                        type_text(*type) + " but '" + target.text("id").value_or("?") + "' is annotated " +
                        type_text(*declared));
            if (declared) type = declared;
          }
          if (target.is("Name")) {
            std::string id = target.text("id").value_or("");
            if (type)
              known[id] = *type;
            else
              known.erase(id);
          }
        }
        if (n.is("For") && n.child("target").is("Name")) { // a stream loop's variable holds its items
          std::string id = n.child("target").text("id").value_or("");
          auto stream = node_json(n.child("iter"), kOpAttr);
          if (stream && (*stream)["op"] == "consume")
            known[id] = program_.channel((*stream)["channel"])->elem;
          else
            known.erase(id);
        }
        auto op = node_json(n, kOpAttr);
        if (!op || (*op)["op"] != "send" || n.size("args") != 1) return;
        const ChannelDecl *c = program_.channel((*op)["channel"]);
        htp::NodeRef value = n.item("args", 0);
        std::optional<Json> type;
        std::string from;
        if (value.is("Name") && known.count(value.text("id").value_or(""))) {
          type = known[value.text("id").value_or("")];
          from = "'" + value.text("id").value_or("") + "' ";
        } else if (auto inner = node_json(value, kOpAttr); inner && (*inner)["op"] == "recv") {
          type = program_.channel((*inner)["channel"])->elem;
          from = "the item received from '" + (*inner)["channel"].get<std::string>() + "' ";
        }
        if (type && c->elem.is_object() && *type != c->elem)
          error(span_json(n), "csp.type-mismatch",
                "process '" + b.decl->name + "' sends " + from + "of type " + type_text(*type) +
                    " on channel '" + c->name + "', which carries " + type_text(c->elem));
      });
    }
  }

  void check_deadlock() {
    std::vector<SimProcess> procs;
    for (const auto &b : bodies_)
      procs.push_back({b.decl, &b.ops});
    bool has_if = false, has_params = false;
    for (auto &b : bodies_)
      visit_ops(b.ops, [&](Op &o) { has_if |= o.kind == Op::Kind::If; });
    for (const auto &p : program_.params)
      has_params |= p["type"]["kind"] != "tensor";
    for (int64_t value : has_params ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{1})
      for (bool take_else : has_if ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
        SimResult r = find_deadlock(program_, procs, value, take_else);
        if (r.deadlock) return report(*r.deadlock);
        if (r.undecided) {
          report_at(ctx_, HTP_SEV_WARNING, program_.span, "csp.deadlock-undecided",
                    "program '" + program_.name +
                        "' was not checked for deadlocks: running it takes more than " +
                        std::to_string(kSimulationBudget) + " channel operations or " +
                        std::to_string(kSimulationInstances) + " process replicas");
          return;
        }
      }
  }

  void report(const Deadlock &d) {
    std::vector<std::string> members;
    for (const auto &w : d.cycle)
      members.push_back(w.process);
    auto describe = [&](const Waiter &w) {
      const ChannelDecl *c = program_.channel(w.op->channel);
      bool send = w.op->kind == Op::Kind::Send;
      std::string peers = quoted_list(w.waits_on);
      if (c->kind == "event")
        return "'" + w.process + "' waits at " + (send ? "send(" : "recv(") + c->name + ") for " + peers +
               " to meet it";
      if (send)
        return "'" + w.process + "' waits for a free slot of '" + c->name + "' (" + std::to_string(w.used) +
               " of " + std::to_string(c->depth) + " used) until " + peers + " receives";
      return "'" + w.process + "' waits to receive from '" + c->name + "' (empty) until " + peers + " sends";
    };
    std::string chain;
    for (const auto &w : d.cycle)
      chain += (chain.empty() ? "" : "; ") + describe(w);
    const Waiter *full = nullptr;
    for (const auto &w : d.cycle)
      if (!full && w.op->kind == Op::Kind::Send && program_.channel(w.op->channel)->kind == "fifo") full = &w;
    if (full) {
      const ChannelDecl *c = program_.channel(full->op->channel);
      std::string consumers;
      for (const auto &w : d.cycle)
        if (std::count(w.waits_on.begin(), w.waits_on.end(), w.process) == 0 &&
            std::count(full->waits_on.begin(), full->waits_on.end(), w.process))
          consumers = w.process;
      error(op_span(*full->op), "csp.depth",
            "channel '" + c->name + "' has depth " + std::to_string(c->depth) + " but process '" +
                full->process + "' needs " + std::to_string(full->used + 1) + " slots before " +
                (consumers.empty() ? std::string("its consumer") : "'" + consumers + "'") + " receives " +
                (full->received == 0 ? "the first item" : "the next item") + ": deadlock between " +
                quoted_list(members) + " (" + chain + ")");
    } else {
      error(op_span(*d.cycle.front().op), "csp.deadlock",
            "deadlock: processes " + quoted_list(members) + " wait on each other in a cycle (" + chain + ")");
    }
    for (const auto &w : d.cycle)
      if (&w != (full ? full : &d.cycle.front())) note(op_span(*w.op), describe(w));
  }

  /// Adds program parameter `name` to a process function that reads it only through a stream length.
  void ensure_param(Body &b, const std::string &name) {
    for (const auto &a : b.decl->args)
      if (a["param"] == name) return;
    auto m = ctx_.module();
    htp::NodeRef prog = find_function(m, program_.name);
    htp::NodeRef annotation;
    for (auto a : prog.child("args").items("args"))
      if (a.text("arg") == name) annotation = a.child("annotation");
    AstBuilder build(m, b.fn.span());
    htp::NodeRef args = b.fn.child("args");
    m.insert(args, "args", args.size("args"),
             build.arg(name, annotation ? m.clone(annotation) : htp::NodeRef()));
    b.decl->args.push_back({{"param", name}, {"scalar", Json{{"param", name}}}});
  }

  static void params_of(const Json &e, std::set<std::string> &out) {
    if (e.is_object() && e.contains("param")) out.insert(e["param"].get<std::string>());
    if (e.is_object() && e.contains("args"))
      for (const auto &a : e["args"])
        params_of(a, out);
  }

  /// `for x in consume(ch): body` -> `for _csp_x in range(len): x = recv(channel="ch"); body`.
  void rewrite_consume_loops() {
    auto m = ctx_.module();
    for (auto &b : bodies_)
      visit_ops(b.ops, [&](Op &o) {
        if (o.kind != Op::Kind::Consume) return;
        Json len = o.trips.to_expr();
        std::set<std::string> params;
        params_of(len, params);
        for (const auto &p : params)
          ensure_param(b, p);
        htp::NodeRef loop = o.node;
        AstBuilder build(m, loop.child("iter").span());
        htp::NodeRef target = loop.child("target");
        std::string var = "_csp_" + target.text("id").value_or("item");
        m.set_child(loop, "target", build.name(var, /*store=*/true));
        m.set_child(loop, "iter", build.call("range", {build.expr(len)}));
        htp::NodeRef recv = build.call("recv", {}, {build.keyword("channel", build.str(o.channel))});
        recv.set_attr(kOpAttr, Json{{"op", "recv"}, {"channel", o.channel}}.dump());
        recv.set_attr("tile.foreign", Json{{"op", "csp.recv"},
                                           {"type", received_type(program_.channel(o.channel)->elem)},
                                           {"attrs", {{"channel", o.channel}}}}
                                          .dump());
        m.insert(loop, "body", 0, build.assign(target, recv));
        loop.set_attr("csp.stream", Json{{"channel", o.channel}, {"length", len}}.dump());
      });
  }

  void record_counts() {
    for (auto &b : bodies_) {
      Json counts = Json::object();
      std::vector<std::string> channels = b.decl->produces;
      for (const auto &c : b.decl->consumes)
        if (std::find(channels.begin(), channels.end(), c) == channels.end()) channels.push_back(c);
      for (const auto &c : channels) {
        const ChannelCount &n = b.counts[c];
        counts[c] = {{"put", n.put.to_expr()}, {"get", n.get.to_expr()}};
      }
      b.decl->counts = counts;
    }
  }

  htp::PassContext &ctx_;
  ProgramDecl &program_;
  const Json &constants_;
  int &errors_;
  std::vector<Body> bodies_;
  std::deque<ProcessDecl> link_decls_; ///< the processes standing for connects (stable addresses)
};

} // namespace

void check_effects(htp::PassContext &ctx) {
  auto m = ctx.module();
  auto doc = module_json(m, kProgramsAttr);
  if (!doc)
    throw htp::PassError(std::string("module attribute ") + kProgramsAttr +
                         " is missing: csp.canonicalize did not run");
  std::vector<ProgramDecl> programs = programs_from_json(*doc);
  Json constants = captured_constants(m);
  int errors = 0;
  for (auto &p : programs) {
    int program_errors = 0;
    ProgramEffects(ctx, p, constants, program_errors).run();
    errors += program_errors;
  }
  if (errors) return; // reported: the pass fails
  m.set_attr(kProgramsAttr, programs_to_json(programs).dump());
}

} // namespace csp
