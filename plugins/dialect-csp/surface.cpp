#include "surface.hpp"

#include "symbolic.hpp"
#include "types.hpp"

#include <algorithm>

namespace csp {

namespace {

/// Reports an error and counts it.
struct Reporter {
  htp::PassContext &ctx;
  int &errors;
  void operator()(htp::NodeRef at, std::string_view code, const std::string &message) const {
    ctx.error(at, code, message);
    ++errors;
  }
};

std::string decorator_name(htp::NodeRef d) {
  return surface_name(d.is("Call") ? d.child("func") : d);
}

/// `name = Channel[T](...)` or `name = Event()`.
bool is_channel_declaration(htp::NodeRef stmt) {
  return stmt.is("Assign") && stmt.size("targets") == 1 && stmt.item("targets", 0).is("Name") &&
         !channel_kind(stmt.child("value")).empty();
}

/// `with P.pipe():`
bool is_pipe_scope(htp::NodeRef stmt) {
  return stmt.is("With") && stmt.size("items") == 1 &&
         is_call_of(stmt.item("items", 0).child("context_expr"), "pipe");
}

/// One `process(...)` declaration before its names are resolved.
struct RawProcess {
  std::string name;
  htp::NodeRef at;   ///< decorator or builder call
  htp::NodeRef body; ///< the FunctionDef (nested def)
  std::vector<std::pair<std::string, htp::NodeRef>> produces, consumes;
  std::string body_name; ///< builder: the name passed to .body()
};

class ProgramReader {
public:
  ProgramReader(htp::PassContext &ctx, const Json &constants, int &errors)
      : report_{ctx, errors}, constants_(constants) {}

  ParsedProgram read(htp::NodeRef def) {
    out_.def = def;
    out_.decl.name = def.text("name").value_or("");
    out_.decl.span = span_json(def);
    read_params(def);
    for (auto stmt : def.items("body"))
      statement(stmt);
    resolve_processes();
    resolve_links();
    for (auto &[stmt, target, count] : replicates_)
      replicate(stmt, target, count);
    check_ends();
    return std::move(out_);
  }

  /// A workload whose body declares channels and holds one `with P.pipe():` scope (docs/dialects/wsp.md).
  ParsedProgram read_pipe(htp::NodeRef def) {
    out_.def = def;
    out_.decl.name = def.text("name").value_or("");
    out_.decl.origin = "wsp.pipe";
    out_.decl.span = span_json(def);
    read_params(def);
    htp::NodeRef pipe;
    for (auto stmt : def.items("body")) {
      if (stmt.is("Pass") || (stmt.is("Expr") && stmt.child("value").is("Constant"))) continue;
      if (is_channel_declaration(stmt)) {
        std::string target = stmt.item("targets", 0).text("id").value_or("");
        out_.locals.insert(target);
        pipe_channel(target, stmt.child("value"));
      } else if (is_pipe_scope(stmt) && !pipe) {
        pipe = stmt;
      } else {
        report_(stmt, "csp.pipe",
                "workload '" + out_.decl.name +
                    "' declares channels, so its body holds their declarations and one `with P.pipe():` "
                    "scope whose statements are the stages; this " +
                    (is_pipe_scope(stmt) ? std::string("is a second pipe scope")
                                         : std::string(stmt.type()) + " statement is neither"));
      }
    }
    if (!pipe) {
      report_(def, "csp.pipe",
              "workload '" + out_.decl.name +
                  "' declares channels but has no `with P.pipe():` scope whose stages use them");
      return std::move(out_);
    }
    int64_t index = 0;
    for (auto stmt : pipe.items("body"))
      if (!stmt.is("Pass") && !(stmt.is("Expr") && stmt.child("value").is("Constant"))) stage(stmt, index++);
    check_ends();
    return std::move(out_);
  }

private:
  /// A channel of a pipe: tensors only (a stage passes items to kernels as tensor arguments).
  void pipe_channel(const std::string &name, htp::NodeRef value) {
    if (is_call_of(value, "Event"))
      return report_(value, "csp.channel",
                     "'" + name +
                         "' is an Event; the channels of a pipe carry tensors between the stages' kernels: "
                         "declare Channel[Tensor[...]](depth=N)");
    channel(name, value);
    const ChannelDecl *c = out_.decl.channel(name);
    if (c && c->elem.is_object() && c->elem.value("kind", "") != "tensor")
      report_(value, "csp.channel-type",
              "channel '" + name + "' of a pipe carries " + type_text(c->elem) +
                  "; stages pass items to kernels as tensors: declare Channel[Tensor[...]](depth=N)");
  }

  /// One statement of the pipe scope as a process: named after the first kernel it launches, its ends
  /// inferred from its channel operations.
  void stage(htp::NodeRef stmt, int64_t index) {
    bool loop = stmt.is("For") || (stmt.is("With") && stmt.size("items") == 1 &&
                                   is_call_of(stmt.item("items", 0).child("context_expr"), "consume"));
    if (!loop && !(stmt.is("Expr") && stmt.child("value").is("Call")))
      return report_(stmt, "csp.stage",
                     "a stage of a pipe is a loop (`for i in P.seq(n):`, `for t in consume(ch):`, "
                     "`with consume(ch) as t:`) or a kernel launch; this " +
                         std::string(stmt.type()) + " statement is neither");
    std::string base = first_kernel(stmt);
    if (base.empty()) base = "stage" + std::to_string(index);
    std::string name = base;
    for (int n = 2; out_.decl.process(name) || out_.decl.channel(name); ++n)
      name = base + "_" + std::to_string(n);
    ProcessDecl p;
    p.name = name;
    p.function = out_.decl.name + "_" + name;
    p.span = span_json(stmt);
    p.stage = index;
    stmt.walk([&](htp::NodeRef n) {
      bool sends = is_call_of(n, "send");
      if (!(sends || is_call_of(n, "recv") || is_call_of(n, "consume")) || !n.size("args")) return;
      htp::NodeRef ch = n.item("args", 0);
      if (!ch.is("Name") || !out_.decl.channel(ch.text("id").value_or(""))) return;
      auto &ends = sends ? p.produces : p.consumes;
      std::string c = ch.text("id").value_or("");
      if (std::find(ends.begin(), ends.end(), c) == ends.end()) ends.push_back(c);
    });
    out_.stages[name] = stmt;
    out_.decl_nodes[name] = stmt;
    out_.decl.processes.push_back(std::move(p));
  }

  /// The first function of the module a stage launches (`k[i](...)` or `k(...)`), or empty.
  std::string first_kernel(htp::NodeRef stmt) {
    std::string found;
    stmt.walk([&](htp::NodeRef n) {
      if (!found.empty()) return false;
      if (!n.is("Call")) return true;
      htp::NodeRef f = n.child("func");
      if (f.is("Subscript")) f = f.child("value");
      std::string id = f.is("Name") ? f.text("id").value_or("") : "";
      if (!id.empty() && id != "send" && id != "recv" && id != "consume" &&
          find_function(report_.ctx.module(), id))
        found = id;
      return found.empty();
    });
    return found;
  }

  void read_params(htp::NodeRef def) {
    htp::NodeRef args = def.child("args");
    for (auto a : args.items("args")) {
      std::string name = a.text("arg").value_or("");
      std::string why;
      auto t = param_type_of(a.child("annotation"), constants_, why);
      if (!t) {
        report_(a, "csp.param",
                "parameter '" + name + "' of " + (out_.decl.origin == "wsp.pipe" ? "workload '" : "program '") +
                    out_.decl.name + "': " + why);
        continue;
      }
      out_.decl.params.push_back({{"name", name}, {"dir", t->dir}, {"type", t->type}});
      out_.param_nodes[name] = a;
    }
    for (const char *field : {"posonlyargs", "kwonlyargs"})
      for (auto a : args.items(field))
        report_(a, "csp.param", "program parameters are positional: '" + a.text("arg").value_or("") + "'");
  }

  void statement(htp::NodeRef stmt) {
    if (stmt.is("Pass")) return;
    if (stmt.is("Expr") && stmt.child("value").is("Constant")) return; // docstring
    if (stmt.is("FunctionDef")) return nested_function(stmt);
    if (stmt.is("Assign") && stmt.size("targets") == 1 && stmt.item("targets", 0).is("Name")) {
      std::string target = stmt.item("targets", 0).text("id").value_or("");
      out_.locals.insert(target);
      return assignment(target, stmt.child("value"));
    }
    if (stmt.is("Expr") && stmt.child("value").is("Call")) return call_statement(stmt.child("value"));
    report_(stmt, "csp.program-statement",
            "a program body declares channels and wires processes; this " + std::string(stmt.type()) +
                " statement is not one of Channel[T](depth=N), Event(), a @process function, "
                "process(...).body(fn), replicate(p, n)");
  }

  void nested_function(htp::NodeRef fn) {
    std::string fname = fn.text("name").value_or("");
    out_.locals.insert(fname);
    htp::NodeRef deco;
    for (auto d : fn.items("decorator_list"))
      if (decorator_name(d) == "process") deco = d;
    if (!deco) {
      plain_defs_[fname] = fn;
      return;
    }
    RawProcess p{fname, deco, fn, {}, {}, {}};
    if (deco.is("Call")) {
      for (auto a : deco.items("args"))
        report_(a, "csp.process", "@process takes keyword arguments only");
      for (auto kw : deco.items("keywords")) {
        std::string key = kw.text("arg").value_or("");
        htp::NodeRef v = kw.child("value");
        if (key == "name" && v.is("Constant") && v.constant() && v.constant()->kind == HTP_CONST_STR)
          p.name = htp::from_htp_str(v.constant()->text);
        else if (key == "produces" || key == "consumes")
          channel_list(v, key == "produces" ? p.produces : p.consumes);
        else
          report_(kw, "csp.process",
                  "@process accepts name=\"...\", produces=[...] and consumes=[...], not '" + key + "'");
      }
    }
    aliases_[fname] = p.name;
    raw_.push_back(std::move(p));
  }

  void channel_list(htp::NodeRef v, std::vector<std::pair<std::string, htp::NodeRef>> &into) {
    std::vector<htp::NodeRef> elts =
        (v.is("List") || v.is("Tuple")) ? v.items("elts") : std::vector<htp::NodeRef>{v};
    for (auto e : elts) {
      if (!e.is("Name")) {
        report_(e, "csp.process", "expected a channel name");
        continue;
      }
      into.emplace_back(e.text("id").value_or(""), e);
    }
  }

  void assignment(const std::string &target, htp::NodeRef value) {
    std::string kind = channel_kind(value);
    if (kind == "fifo") return channel(target, value);
    if (kind == "event") return event(target, value);
    if (builder_base(value)) {
      if (auto p = builder(value)) aliases_[target] = p->name, raw_.push_back(std::move(*p));
      return;
    }
    report_(value, "csp.program-statement",
            "'" + target + "' must be a Channel[T](depth=N), an Event() or a process(...) builder");
  }

  void declare_channel(ChannelDecl c, htp::NodeRef at) {
    if (out_.decl.channel(c.name)) {
      report_(at, "csp.duplicate", "channel '" + c.name + "' is declared twice");
      return;
    }
    out_.decl_nodes[c.name] = at;
    out_.decl.channels.push_back(std::move(c));
  }

  void channel(const std::string &name, htp::NodeRef call) {
    ChannelDecl c{name, "fifo", nullptr, 1, 1, span_json(call)};
    std::string why;
    // A bad element type is reported; the channel is still declared so that its uses raise no more errors.
    auto elem = type_of(call.child("func").child("slice"), constants_, why);
    if (!elem)
      report_(call, "csp.channel-type", "channel '" + name + "': " + why);
    else if (elem->value("kind", "") != "tile" && elem->value("kind", "") != "tensor")
      report_(call, "csp.channel-type",
              "channel '" + name + "' carries " + type_text(*elem) +
                  "; elements are Tile[...] or Tensor[...]");
    else
      c.elem = *elem;
    bool has_depth = false;
    for (auto kw : call.items("keywords")) {
      std::string key = kw.text("arg").value_or("");
      if (key != "depth" && key != "pack") {
        report_(kw, "csp.channel", "Channel accepts depth=N and pack=P, not '" + key + "'");
        continue;
      }
      has_depth |= key == "depth";
      auto v = static_int(kw.child("value"), "channel '" + name + "': " + key);
      if (!v) continue;
      if (*v < 1) {
        report_(kw, "csp.channel",
                "channel '" + name + "': " + key + " must be at least 1, got " + std::to_string(*v) +
                    (key == "depth" ? " (use Event() for a rendezvous of depth 0)" : ""));
        continue;
      }
      (key == "depth" ? c.depth : c.pack) = *v;
    }
    if (call.size("args") > 0)
      report_(call, "csp.channel", "Channel takes keyword arguments: Channel[T](depth=N)");
    if (!has_depth) report_(call, "csp.channel", "channel '" + name + "' needs a depth: Channel[T](depth=N)");
    declare_channel(std::move(c), call);
  }

  void event(const std::string &name, htp::NodeRef call) {
    if (call.size("args") || call.size("keywords"))
      report_(call, "csp.channel", "Event() takes no arguments");
    declare_channel(ChannelDecl{name, "event", nullptr, 0, 1, span_json(call)}, call);
  }

  std::optional<int64_t> static_int(htp::NodeRef n, const std::string &what) {
    ExprScope scope{&constants_, {}, {}};
    std::string why;
    auto e = expr_of(n, scope, why);
    auto v = e ? poly_of(*e).constant_value() : std::nullopt;
    if (!v)
      report_(n, "csp.static", what + " must be a compile-time integer" + (why.empty() ? "" : ": " + why));
    return v;
  }

  /// The `process("name")` call at the base of a builder chain, or an empty view.
  static htp::NodeRef builder_base(htp::NodeRef n) {
    while (n.is("Call") && n.child("func").is("Attribute"))
      n = n.child("func").child("value");
    return is_call_of(n, "process") ? n : htp::NodeRef();
  }

  std::optional<RawProcess> builder(htp::NodeRef call) {
    htp::NodeRef base = builder_base(call);
    RawProcess p{"", base, {}, {}, {}, {}};
    htp::NodeRef name = base.size("args") == 1 ? base.item("args", 0) : htp::NodeRef();
    auto c = name ? name.constant() : std::nullopt;
    if (!c || c->kind != HTP_CONST_STR || base.size("keywords")) {
      report_(base, "csp.process", "process(...) takes the process name as one string: process(\"loader\")");
      return std::nullopt;
    }
    p.name = htp::from_htp_str(c->text);
    for (htp::NodeRef n = call; n.is("Call") && n.child("func").is("Attribute");
         n = n.child("func").child("value")) {
      std::string method = n.child("func").text("attr").value_or("");
      if (method == "produces" || method == "consumes") {
        for (auto a : n.items("args"))
          channel_list(a, method == "produces" ? p.produces : p.consumes);
      } else if (method == "body" && n.size("args") == 1 && n.item("args", 0).is("Name")) {
        p.body_name = n.item("args", 0).text("id").value_or("");
        p.at = n;
      } else {
        report_(n, "csp.process",
                "a process builder is process(\"name\").produces(ch, ...).consumes(ch, ...).body(fn); '." +
                    method + "(...)' is not part of it");
      }
    }
    if (p.body_name.empty()) {
      report_(call, "csp.process",
              "process '" + p.name + "' has no body: add .body(fn) with a function of the program");
      return std::nullopt;
    }
    p.at = call;
    return p;
  }

  void call_statement(htp::NodeRef call) {
    if (builder_base(call)) {
      if (auto p = builder(call)) raw_.push_back(std::move(*p));
      return;
    }
    if (is_call_of(call, "replicate")) {
      if (call.size("args") != 2 || !call.item("args", 0).is("Name") || call.size("keywords"))
        return report_(call, "csp.replicate", "replicate takes a process and a count: replicate(worker, 4)");
      replicates_.emplace_back(call, call.item("args", 0).text("id").value_or(""), call.item("args", 1));
      return;
    }
    if (is_call_of(call, "connect")) return connect(call);
    report_(call, "csp.program-statement",
            "this call is not part of a program's wiring (Channel, Event, process, replicate, connect)");
  }

  void connect(htp::NodeRef call) {
    if (call.size("args") != 2 || call.size("keywords"))
      return report_(call, "csp.connect",
                     "connect takes two lists of channels: connect([sources], [destinations])");
    RawLink link{call, {}, {}};
    channel_list(call.item("args", 0), link.from);
    channel_list(call.item("args", 1), link.to);
    raw_links_.push_back(std::move(link));
  }

  /// Links join channels of one element type: one to one, one to many or many to one.
  void resolve_links() {
    for (auto &raw : raw_links_) {
      LinkDecl l{"link" + std::to_string(out_.decl.links.size()), {}, {}, span_json(raw.at)};
      bool ok = !raw.from.empty() && !raw.to.empty();
      if (!ok)
        report_(raw.at, "csp.connect", "connect needs at least one source and one destination channel");
      if (raw.from.size() > 1 && raw.to.size() > 1) {
        report_(raw.at, "csp.connect",
                "connect joins many channels into one or distributes one over many, not " +
                    std::to_string(raw.from.size()) + " into " + std::to_string(raw.to.size()));
        ok = false;
      }
      const ChannelDecl *first = nullptr;
      for (auto *side : {&raw.from, &raw.to})
        for (auto &[name, at] : *side) {
          const ChannelDecl *c = out_.decl.channel(name);
          if (!c) {
            report_(at, "csp.unknown-channel",
                    "connect: '" + name + "' is not a channel of program '" + out_.decl.name + "'");
            ok = false;
            continue;
          }
          if (c->kind == "event") {
            report_(at, "csp.connect", "connect links channels that carry items; '" + name + "' is an event");
            ok = false;
            continue;
          }
          if (first && c->elem != first->elem)
            report_(at, "csp.type-mismatch",
                    "connect links channel '" + first->name + "' of " + type_text(first->elem) +
                        " with channel '" + name + "' of " + type_text(c->elem) +
                        ": element types must agree end to end");
          if (!first) first = c;
          (side == &raw.from ? l.from : l.to).push_back(name);
        }
      if (ok) out_.decl.links.push_back(std::move(l));
    }
  }

  void resolve_processes() {
    for (auto &raw : raw_) {
      if (raw.body) { // a @process function
      } else if (auto it = plain_defs_.find(raw.body_name); it != plain_defs_.end()) {
        raw.body = it->second;
        if (!used_bodies_.insert(raw.body_name).second) {
          report_(raw.at, "csp.process",
                  "function '" + raw.body_name +
                      "' is already the body of another process; use replicate(p, n) for copies");
          continue;
        }
      } else {
        report_(raw.at, "csp.process",
                "the body of process '" + raw.name + "' must be a function defined in program '" +
                    out_.decl.name + "' before it; '" + raw.body_name + "' is not");
        continue;
      }
      if (out_.decl.process(raw.name) || out_.decl.channel(raw.name)) {
        report_(raw.at, "csp.duplicate", "process '" + raw.name + "' is declared twice");
        continue;
      }
      ProcessDecl p;
      p.name = raw.name;
      p.function = raw.body.text("name").value_or("");
      p.span = span_json(raw.at);
      for (auto &[c, at] : raw.produces)
        add_end(p, p.produces, c, at, "produces");
      for (auto &[c, at] : raw.consumes)
        add_end(p, p.consumes, c, at, "consumes");
      out_.bodies[p.name] = raw.body;
      out_.decl_nodes[p.name] = raw.at;
      out_.decl.processes.push_back(std::move(p));
    }
  }

  void add_end(ProcessDecl &p, std::vector<std::string> &ends, const std::string &c, htp::NodeRef at,
               const char *what) {
    if (!out_.decl.channel(c)) {
      report_(at, "csp.unknown-channel",
              "process '" + p.name + "' " + what + " '" + c + "', which is not a channel of program '" +
                  out_.decl.name + "'");
      return;
    }
    if (std::find(ends.begin(), ends.end(), c) == ends.end()) ends.push_back(c);
  }

  void replicate(htp::NodeRef call, const std::string &target, htp::NodeRef count) {
    auto alias = aliases_.find(target);
    ProcessDecl *p = out_.decl.process(alias == aliases_.end() ? target : alias->second);
    if (!p)
      return report_(call, "csp.replicate", "replicate: '" + target + "' is not a process of this program");
    auto n = static_int(count, "the replica count of process '" + p->name + "'");
    if (!n) return;
    if (*n < 1)
      return report_(count, "csp.replicate",
                     "process '" + p->name + "' needs at least 1 replica, got " + std::to_string(*n));
    if (!replicated_.insert(p->name).second)
      return report_(call, "csp.replicate", "process '" + p->name + "' is replicated twice");
    p->replicas = *n;
  }

  /// Declared ends: every channel needs a producer and a consumer.
  void check_ends() {
    for (const auto &c : out_.decl.channels) {
      std::vector<std::string> producers, consumers;
      for (const auto &p : out_.decl.processes) {
        if (std::count(p.produces.begin(), p.produces.end(), c.name)) producers.push_back(p.name);
        if (std::count(p.consumes.begin(), p.consumes.end(), c.name)) consumers.push_back(p.name);
      }
      for (const auto &l : out_.decl.links) {
        if (std::count(l.to.begin(), l.to.end(), c.name)) producers.push_back("connect(" + l.name + ")");
        if (std::count(l.from.begin(), l.from.end(), c.name)) consumers.push_back("connect(" + l.name + ")");
      }
      for (const auto &l : out_.decl.links) {
        bool from = std::count(l.from.begin(), l.from.end(), c.name),
             to = std::count(l.to.begin(), l.to.end(), c.name);
        if ((from && consumers.size() > 1) || (to && producers.size() > 1))
          report_(out_.decl_nodes[c.name], "csp.connect",
                  "channel '" + c.name + "' is " + (from ? "a source" : "a destination") +
                      " of a connect and so has no other " + (from ? "consumer" : "producer"));
      }
      htp::NodeRef at = out_.decl_nodes[c.name];
      if (out_.decl.origin == "wsp.pipe") {
        pipe_ends(c.name, at, producers, consumers);
        continue;
      }
      if (producers.empty() && consumers.empty())
        report_(at, "csp.unused-channel",
                "channel '" + c.name + "' is declared but no process produces or consumes it");
      else if (consumers.empty())
        report_(at, "csp.no-consumer",
                "channel '" + c.name + "' has no consumer: " + join(producers) + " produce" +
                    (producers.size() == 1 ? "s" : "") + " into it but no process declares consumes(" +
                    c.name + ")");
      else if (producers.empty())
        report_(at, "csp.no-producer",
                "channel '" + c.name + "' has no producer: " + join(consumers) + " consume" +
                    (consumers.size() == 1 ? "s" : "") + " from it but no process declares produces(" +
                    c.name + ")");
    }
  }

  /// The ends of a pipe's channel are the stages that use it: each channel needs a sending and a
  /// receiving stage.
  void pipe_ends(const std::string &c, htp::NodeRef at, const std::vector<std::string> &producers,
                 const std::vector<std::string> &consumers) {
    auto stages = [](const std::vector<std::string> &names) {
      return (names.size() == 1 ? "stage " : "stages ") + join(names);
    };
    if (producers.empty() && consumers.empty())
      report_(at, "csp.unused-channel",
              "channel '" + c + "' is declared but no stage of the pipe sends on it or receives from it");
    else if (consumers.empty())
      report_(at, "csp.no-consumer",
              "channel '" + c + "' has no consumer: " + stages(producers) + " of the pipe send" +
                  (producers.size() == 1 ? "s" : "") + " on it but no stage receives from it");
    else if (producers.empty())
      report_(at, "csp.no-producer",
              "channel '" + c + "' has no producer: " + stages(consumers) + " of the pipe receive" +
                  (consumers.size() == 1 ? "s" : "") + " from it but no stage sends on it");
  }

  static std::string join(const std::vector<std::string> &names) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
      out += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + ("'" + names[i] + "'");
    return out;
  }

  Reporter report_;
  const Json &constants_;
  ParsedProgram out_;
  struct RawLink {
    htp::NodeRef at;
    std::vector<std::pair<std::string, htp::NodeRef>> from, to;
  };
  std::vector<RawProcess> raw_;
  std::vector<RawLink> raw_links_;
  std::map<std::string, htp::NodeRef> plain_defs_;
  std::map<std::string, std::string> aliases_; ///< variable or def name -> process name
  std::set<std::string> used_bodies_, replicated_;
  std::vector<std::tuple<htp::NodeRef, std::string, htp::NodeRef>> replicates_;
};

} // namespace

bool is_csp_function(htp::NodeRef def, std::string_view decorator) {
  if (!def.is("FunctionDef")) return false;
  auto dialect = node_json(def, "htp.dialect");
  auto deco = node_json(def, "htp.decorator");
  if (dialect && deco) return *dialect == "csp" && *deco == std::string(decorator);
  for (auto d : def.items("decorator_list")) // AST JSON written without the frontend's attributes
    if (decorator_name(d) == decorator) return true;
  return false;
}

std::string channel_kind(htp::NodeRef value) {
  if (is_call_of(value, "Event")) return "event";
  if (value.is("Call") && value.child("func").is("Subscript") &&
      surface_name(value.child("func").child("value")) == "Channel")
    return "fifo";
  return "";
}

bool is_pipe_workload(htp::NodeRef def) {
  if (!def.is("FunctionDef")) return false;
  auto dialect = node_json(def, "htp.dialect");
  auto deco = node_json(def, "htp.decorator");
  bool workload = dialect && deco && *dialect == "wsp" && *deco == "workload";
  for (auto d : def.items("decorator_list"))
    workload |= decorator_name(d) == "workload";
  if (!workload) return false;
  for (auto stmt : def.items("body"))
    if (is_channel_declaration(stmt)) return true;
  return false;
}

ParsedProgram parse_pipe(htp::PassContext &ctx, htp::NodeRef def, const Json &constants, int &errors) {
  return ProgramReader(ctx, constants, errors).read_pipe(def);
}

ParsedProgram parse_program(htp::PassContext &ctx, htp::NodeRef def, const Json &constants, int &errors) {
  return ProgramReader(ctx, constants, errors).read(def);
}

} // namespace csp
