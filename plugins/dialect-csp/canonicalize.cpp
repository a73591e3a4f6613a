// csp.canonicalize: programs read, ends checked, process functions lifted and marked for the tile dialect.
#include "ast_build.hpp"
#include "passes.hpp"
#include "surface.hpp"
#include "types.hpp"

#include <algorithm>
#include <set>

namespace csp {

namespace {

/// The names a function binds itself (parameters, stores, nested definitions, comprehension targets).
std::set<std::string> bound_names(htp::NodeRef fn) {
  std::set<std::string> bound;
  fn.walk([&](htp::NodeRef n) {
    if (n.is("Name") && !n.child("ctx").is("Load"))
      bound.insert(n.text("id").value_or(""));
    else if (n.is("arg"))
      bound.insert(n.text("arg").value_or(""));
    else if ((n.is("FunctionDef") || n.is("ClassDef")) && !(n == fn))
      bound.insert(n.text("name").value_or(""));
  });
  return bound;
}

/// Moves one process function out of its program and makes it a tile body.
class ProcessLifter {
public:
  ProcessLifter(htp::PassContext &ctx, ParsedProgram &prog, int &errors)
      : ctx_(ctx), prog_(prog), errors_(errors) {}

  /// Checks and rewrites the body of `p`; lifting happens in lift() once every process is checked.
  void rewrite(ProcessDecl &p) {
    htp::NodeRef fn = prog_.bodies.at(p.name);
    htp::NodeRef args = fn.child("args");
    if (args.size("args") || args.size("posonlyargs") || args.size("kwonlyargs") || args.child("vararg") ||
        args.child("kwarg"))
      error(fn, "csp.process",
            "process function '" + p.function +
                "' takes no parameters: it reads the program's tensors and "
                "channels directly");
    std::set<std::string> bound = bound_names(fn);
    std::vector<htp::NodeRef> ops;
    std::set<HtpNode *> channel_args;
    auto walk_body = [&](auto &&f) {
      for (auto stmt : fn.items("body"))
        stmt.walk(f);
    };
    walk_body([&](htp::NodeRef n) {
      if (is_channel_op(n)) {
        ops.push_back(n);
        if (n.size("args") && n.item("args", 0).is("Name")) channel_args.insert(n.item("args", 0).handle());
      }
    });
    std::set<std::string> reads;
    walk_body([&](htp::NodeRef n) {
      if (!n.is("Name") || !n.child("ctx").is("Load")) return;
      std::string id = n.text("id").value_or("");
      if (bound.count(id)) return;
      if (prog_.decl.channel(id)) {
        if (!channel_args.count(n.handle()))
          error(n, "csp.channel-use",
                "channel '" + id + "' can only be used as the first argument of send, recv or consume");
      } else if (prog_.decl.param(id)) {
        reads.insert(id);
      } else if (prog_.locals.count(id)) {
        error(n, "csp.closure",
              "process '" + p.name + "' reads '" + id + "', a local of program '" + prog_.decl.name +
                  "' that is neither a channel nor a parameter; use a module constant");
      }
    });
    for (const auto &param : prog_.decl.params) {
      std::string name = param["name"];
      if (!reads.count(name)) continue;
      used_params_[p.name].push_back(name);
      if (param["type"]["kind"] == "tensor")
        p.args.push_back({{"param", name}, {"tensor", name}});
      else
        p.args.push_back({{"param", name}, {"scalar", Json{{"param", name}}}});
    }
    for (auto op : ops)
      rewrite_op(p, op);
  }

  /// Moves the function of `p` after the program, with its parameters, and marks it.
  void lift(const ProcessDecl &p, size_t &insert_at) {
    htp::NodeRef fn = prog_.bodies.at(p.name);
    auto m = ctx_.module();
    htp::NodeRef body_owner = fn.parent();
    auto siblings = body_owner.items("body");
    for (size_t i = 0; i < siblings.size(); ++i)
      if (siblings[i] == fn) m.erase(body_owner, "body", i);
    while (fn.size("decorator_list"))
      m.erase(fn, "decorator_list", 0);
    add_params(p, fn);
    m.insert(m.root(), "body", insert_at++, fn);
    fn.set_attr("tile.lower", R"({"kind":"process"})");
    fn.set_attr(kProcessAttr, Json{{"program", prog_.decl.name}, {"process", p.name}}.dump());
  }

  /// A pipe stage's function (already in the module): its parameters and the process mark; its body
  /// launches kernels, so it is no tile body.
  void mark_stage(const ProcessDecl &p) {
    htp::NodeRef fn = prog_.bodies.at(p.name);
    add_params(p, fn);
    fn.set_attr(kProcessAttr,
                Json{{"program", prog_.decl.name}, {"process", p.name}, {"stage", p.stage}}.dump());
  }

private:
  /// In a pipe, send / recv / consume are channel operations only on a channel (a kernel may be called
  /// `consume`); in a program every such call is one.
  bool is_channel_op(htp::NodeRef n) const {
    if (!is_call_of(n, "send") && !is_call_of(n, "recv") && !is_call_of(n, "consume")) return false;
    if (prog_.decl.origin == "program") return true;
    return n.size("args") && n.item("args", 0).is("Name") &&
           prog_.decl.channel(n.item("args", 0).text("id").value_or(""));
  }

  /// Adds a parameter for every program parameter the body of `p` reads (annotation copied).
  void add_params(const ProcessDecl &p, htp::NodeRef fn) {
    auto m = ctx_.module();
    HtpSpan span = fn.span();
    AstBuilder b(m, span);
    htp::NodeRef args = fn.child("args");
    for (const auto &name : used_params_[p.name]) {
      htp::NodeRef annotation = prog_.param_nodes.at(name).child("annotation");
      m.insert(args, "args", args.size("args"),
               b.arg(name, annotation ? m.clone(annotation) : htp::NodeRef()));
    }
  }

  void rewrite_op(const ProcessDecl &p, htp::NodeRef call) {
    std::string op = surface_name(call.child("func"));
    if (!call.size("args") || !call.item("args", 0).is("Name") ||
        !prog_.decl.channel(call.item("args", 0).text("id").value_or(""))) {
      error(call, "csp.channel-use", op + " takes a channel of the program as its first argument");
      return;
    }
    std::string ch = call.item("args", 0).text("id").value_or("");
    const ChannelDecl &c = *prog_.decl.channel(ch);
    bool sends = op == "send";
    const auto &ends = sends ? p.produces : p.consumes;
    if (std::find(ends.begin(), ends.end(), ch) == ends.end()) {
      error(call, "csp.undeclared-channel",
            "process '" + p.name + "' " + (sends ? "sends on" : "receives from") + " channel '" + ch +
                "', which it does not declare: add it to " + (sends ? "produces" : "consumes") + "(...)");
      return;
    }
    size_t want = (sends && c.kind == "fifo") ? 2 : 1;
    if (call.size("args") != want || call.size("keywords")) {
      std::string form =
          sends ? (c.kind == "fifo" ? "send(" + ch + ", value)" : "send(" + ch + ")") : op + "(" + ch + ")";
      error(call, "csp.arity",
            op + " on " + (c.kind == "fifo" ? "channel '" : "event '") + ch + "' is " + form);
      return;
    }
    if (op == "consume") {
      htp::NodeRef parent = call.parent();
      if (!parent.is("For") || !(parent.child("iter") == call) || !parent.child("target").is("Name")) {
        error(call, "csp.consume",
              "consume(" + ch + ") is iterated by a loop: for x in consume(" + ch + "):");
        return;
      }
    }
    auto m = ctx_.module();
    m.erase(call, "args", 0);
    AstBuilder b(m, call.span());
    m.insert(call, "keywords", 0, b.keyword("channel", b.str(ch)));
    // Each channel operation carries an id: a later pass that copies one (an intrinsic lowering using an
    // operand `recv(ch)` twice) leaves two of one id, which the effect analysis reports (csp.copied-op).
    call.set_attr(kOpAttr, Json{{"op", op}, {"channel", ch}, {"id", next_op_id_++}}.dump());
    if (op == "send")
      call.set_attr("tile.foreign",
                    Json{{"op", "csp.send"}, {"type", nullptr}, {"attrs", {{"channel", ch}}}}.dump());
    else if (op == "recv")
      call.set_attr("tile.foreign",
                    Json{{"op", "csp.recv"}, {"type", received_type(c.elem)}, {"attrs", {{"channel", ch}}}}.dump());
  }

  void error(htp::NodeRef at, std::string_view code, const std::string &message) {
    ctx_.error(at, code, message);
    ++errors_;
  }

  htp::PassContext &ctx_;
  ParsedProgram &prog_;
  int &errors_;
  std::map<std::string, std::vector<std::string>> used_params_;
  int64_t next_op_id_ = 0;
};

/// Builds the function of one pipe stage: a copy of the stage statement in which `with consume(ch) as t:`
/// is `for t in consume(ch):` and the sequential loops `P.seq(n)` are `range(n)`, the forms the effect
/// check counts. The original workload stays as it is for dialect-wsp.
class StageBuilder {
public:
  StageBuilder(htp::PassContext &ctx, const ProgramDecl &program, int &errors)
      : ctx_(ctx), program_(program), errors_(errors) {}

  htp::NodeRef build(htp::NodeRef stmt, const std::string &name) {
    auto m = ctx_.module();
    HtpSpan span = stmt.span();
    htp::NodeRef fn = m.create("FunctionDef", &span);
    m.set_text(fn, "name", name);
    m.set_child(fn, "args", m.create("arguments", &span));
    htp::NodeRef body = stmt.is("With") ? consume_loop(stmt) : m.clone(stmt);
    if (!body) return {};
    m.insert(fn, "body", 0, body);
    std::vector<htp::NodeRef> loops;
    body.walk([&](htp::NodeRef n) {
      if (n.is("For")) loops.push_back(n);
    });
    for (auto loop : loops)
      sequential(loop);
    return fn;
  }

private:
  htp::NodeRef consume_loop(htp::NodeRef with) {
    auto m = ctx_.module();
    htp::NodeRef item = with.item("items", 0);
    htp::NodeRef target = item.child("optional_vars");
    if (!target || !target.is("Name")) {
      error(item.child("context_expr"), "csp.consume",
            "a consume scope names the item it receives: `with consume(ch) as t:`");
      return {};
    }
    HtpSpan span = with.span();
    htp::NodeRef loop = m.create("For", &span);
    m.set_child(loop, "target", m.clone(target));
    m.set_child(loop, "iter", m.clone(item.child("context_expr")));
    auto body = with.items("body");
    for (size_t i = 0; i < body.size(); ++i)
      m.insert(loop, "body", i, m.clone(body[i]));
    return loop;
  }

  bool has_channel_op(htp::NodeRef n) const {
    bool found = false;
    n.walk([&](htp::NodeRef x) {
      if (found) return false;
      found = (is_call_of(x, "send") || is_call_of(x, "recv") || is_call_of(x, "consume")) &&
              x.size("args") && x.item("args", 0).is("Name") &&
              program_.channel(x.item("args", 0).text("id").value_or(""));
      return !found;
    });
    return found;
  }

  /// `for i in P.seq(n)` -> `for i in range(n)`; a parallel loop around channel operations is an error.
  void sequential(htp::NodeRef loop) {
    htp::NodeRef iter = loop.child("iter");
    if (!iter.is("Call") || is_call_of(iter, "range") || is_call_of(iter, "consume")) return;
    std::string ctor = surface_name(iter.child("func"));
    if (ctor == "seq" && iter.size("args") == 1 && !iter.size("keywords")) {
      auto m = ctx_.module();
      AstBuilder b(m, iter.span());
      m.set_child(loop, "iter", b.call("range", {m.clone(iter.item("args", 0))}));
      return;
    }
    if (has_channel_op(loop))
      error(iter, "csp.stage",
            "a loop of a pipe stage around send / recv is sequential (`for i in P.seq(n):` or `range(n)`): "
            "the items of a channel are ordered");
  }

  void error(htp::NodeRef at, std::string_view code, const std::string &message) {
    ctx_.error(at, code, message);
    ++errors_;
  }

  htp::PassContext &ctx_;
  const ProgramDecl &program_;
  int &errors_;
};

/// Inserts the function of every stage of a pipe program after its workload and rewrites it as a process.
void lift_pipe(htp::PassContext &ctx, ParsedProgram &prog, std::set<std::string> &top_names, int &errors) {
  auto m = ctx.module();
  size_t insert_at = 0;
  auto top = m.root().items("body");
  for (size_t i = 0; i < top.size(); ++i)
    if (top[i] == prog.def) insert_at = i + 1;
  StageBuilder builder(ctx, prog.decl, errors);
  ProcessLifter lifter(ctx, prog, errors);
  for (auto &p : prog.decl.processes) {
    htp::NodeRef stmt = prog.stages.at(p.name);
    if (!top_names.insert(p.function).second) {
      ctx.error(stmt, "csp.name-clash",
                "the function of pipe stage '" + p.name + "' would be '" + p.function +
                    "', which another function of the module already is; rename it");
      ++errors;
      continue;
    }
    htp::NodeRef fn = builder.build(stmt, p.function);
    if (!fn) continue;
    m.insert(m.root(), "body", insert_at++, fn);
    prog.bodies[p.name] = fn;
    lifter.rewrite(p);
    lifter.mark_stage(p);
  }
}

} // namespace

void canonicalize(htp::PassContext &ctx) {
  auto m = ctx.module();
  Json constants = captured_constants(m);
  int errors = 0;
  std::vector<ParsedProgram> programs;
  std::set<std::string> top_names;
  for (auto stmt : m.root().items("body")) {
    if (stmt.is("FunctionDef")) top_names.insert(stmt.text("name").value_or(""));
    if (is_csp_function(stmt, "program"))
      programs.push_back(parse_program(ctx, stmt, constants, errors));
    else if (is_pipe_workload(stmt)) {
      int before = errors;
      programs.push_back(parse_pipe(ctx, stmt, constants, errors));
      if (errors != before) programs.back().stages.clear(); // unread: no stage to lift
    } else if (is_csp_function(stmt, "process")) {
      ctx.error(stmt, "csp.process",
                "@process function '" + stmt.text("name").value_or("") +
                    "' must be defined inside a @program, which declares the channels it uses");
      ++errors;
    }
  }
  std::vector<ProgramDecl> decls;
  for (auto &prog : programs) {
    if (prog.decl.origin == "wsp.pipe") { // its stages are checked even when another program has errors
      if (!prog.stages.empty()) lift_pipe(ctx, prog, top_names, errors);
      decls.push_back(prog.decl);
      continue;
    }
    ProcessLifter lifter(ctx, prog, errors);
    for (auto &p : prog.decl.processes) {
      if (!top_names.insert(p.function).second) {
        ctx.error(prog.bodies.at(p.name), "csp.name-clash",
                  "process function '" + p.function +
                      "' would clash with another function of the module; rename it");
        ++errors;
      }
      lifter.rewrite(p);
    }
    if (errors) continue;
    size_t insert_at = 0;
    auto top = m.root().items("body");
    for (size_t i = 0; i < top.size(); ++i)
      if (top[i] == prog.def) insert_at = i + 1;
    for (const auto &p : prog.decl.processes)
      lifter.lift(p, insert_at);
    if (prog.def.size("body") == 0) m.insert(prog.def, "body", 0, m.create("Pass", nullptr));
    decls.push_back(prog.decl);
  }
  if (errors) return; // reported: the pass fails
  m.set_attr(kProgramsAttr, programs_to_json(decls).dump());
}

} // namespace csp
