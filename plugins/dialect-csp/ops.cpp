#include "ops.hpp"

#include <map>
#include <set>

namespace csp {

namespace {

std::string_view field_name(htp::NodeRef n, size_t i) {
  HtpStr s = n.api()->node_field_name(n.api()->host, n.handle(), i);
  return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view();
}

class OpReader {
public:
  OpReader(htp::PassContext &ctx, int &errors) : ctx_(ctx), errors_(errors) {}

  std::vector<Op> block(const std::vector<htp::NodeRef> &stmts, ExprScope scope) {
    std::vector<Op> out;
    for (auto s : stmts)
      statement(s, scope, out);
    return out;
  }

  void error(htp::NodeRef at, std::string_view code, const std::string &message) {
    ctx_.error(at, code, message);
    ++errors_;
  }

private:
  std::map<int64_t, htp::NodeRef> seen_;  ///< channel operation id -> its node (copies share an id)

  static bool has_channel_op(htp::NodeRef n) {
    bool found = false;
    n.walk([&](htp::NodeRef x) {
      if (found) return false;
      if (x.attr(kOpAttr)) found = true;
      return !found;
    });
    return found;
  }

  /// Channel operations of an expression or simple statement, in Python's evaluation order.
  void expression(htp::NodeRef n, std::vector<Op> &out) {
    if (!n) return;
    if (n.is("Assign") || n.is("AnnAssign") || n.is("AugAssign")) {
      expression(n.child("value"), out); // the value is evaluated before the targets
      if (n.is("Assign")) {
        for (auto t : n.items("targets"))
          expression(t, out);
      } else {
        expression(n.child("target"), out);
      }
      return;
    }
    if (n.is("FunctionDef") || n.is("Lambda") || n.is("ClassDef") || n.is("AsyncFunctionDef")) {
      if (has_channel_op(n))
        error(n, "csp.control-flow",
              "channel operations inside a nested function or lambda cannot be counted");
      return;
    }
    for (size_t i = 0, nf = n.api()->node_field_count(n.api()->host, n.handle()); i < nf; ++i) {
      std::string_view f = field_name(n, i);
      if (htp::NodeRef c = n.child(f)) expression(c, out);
      for (size_t j = 0, k = n.size(f); j < k; ++j)
        expression(n.item(f, j), out);
    }
    if (auto op = node_json(n, kOpAttr); op && (*op)["op"] != "consume") {
      if (auto id = op->find("id"); id != op->end() && id->is_number_integer()) {
        auto [first, fresh] = seen_.emplace(id->get<int64_t>(), n);
        if (!fresh && !(first->second == n)) {
          const HtpSpan at = first->second.span();
          error(n, "csp.copied-op",
                "this " + (*op)["op"].get<std::string>() + " on channel '" + (*op)["channel"].get<std::string>() +
                    "' is a copy of the one at line " + std::to_string(at.line) + ":" + std::to_string(at.col + 1) +
                    ", made by a pass (an intrinsic lowering using an operand twice): it would " +
                    ((*op)["op"] == "recv" ? "receive" : "send") + " twice. Receive into a name first "
                    "(t = recv(ch)) and pass t, or make the lowering bind the operand to a temporary once");
        }
      }
      Op o;
      o.kind = (*op)["op"] == "send" ? Op::Kind::Send : Op::Kind::Recv;
      o.channel = (*op)["channel"];
      o.node = n;
      out.push_back(std::move(o));
    }
  }

  void loop(htp::NodeRef s, ExprScope scope, std::vector<Op> &out) {
    htp::NodeRef iter = s.child("iter");
    if (s.size("orelse") && has_channel_op(s))
      error(s, "csp.control-flow", "for-else around channel operations is not supported");
    if (auto op = node_json(iter, kOpAttr); op && (*op)["op"] == "consume") {
      Op o;
      o.kind = Op::Kind::Consume;
      o.channel = (*op)["channel"];
      o.node = s;
      if (!scope.loop_vars.empty())
        error(iter, "csp.consume",
              "consume(" + o.channel + ") must not be nested in a loop: a stream is consumed once");
      scope.loop_vars.insert("<stream>");
      Op recv; // each iteration receives one item, then runs the body
      recv.kind = Op::Kind::Recv;
      recv.channel = o.channel;
      recv.node = iter;
      o.body = block(s.items("body"), scope);
      o.body.insert(o.body.begin(), std::move(recv));
      check_jumps(s);
      out.push_back(std::move(o));
      return;
    }
    ExprScope inner = scope;
    if (s.child("target").is("Name")) inner.loop_vars.insert(s.child("target").text("id").value_or(""));
    if (!has_channel_op(s)) return;
    expression(iter, out);
    if (!is_call_of(iter, "range") || !iter.child("func").is("Name") || iter.size("keywords") ||
        iter.size("args") < 1 || iter.size("args") > 3) {
      error(
          iter, "csp.dynamic-count",
          "a loop around channel operations must be `for v in range(...)` or `for x in consume(ch)` so that "
          "its sends and receives can be counted");
      return;
    }
    std::vector<Json> b;
    for (auto a : iter.items("args")) {
      std::string why;
      auto e = expr_of(a, scope, why);
      if (!e) {
        error(a, "csp.dynamic-count",
              "cannot count the iterations of this loop around channel operations: " + why);
        return;
      }
      if (mentions_var(*e)) {
        error(a, "csp.dynamic-count",
              "the trip count of a loop around channel operations must not depend on an enclosing loop "
              "variable");
        return;
      }
      b.push_back(*e);
    }
    Json start = b.size() >= 2 ? b[0] : Json(0), stop = b.size() >= 2 ? b[1] : b[0],
         step = b.size() == 3 ? b[2] : Json(1);
    auto step_v = poly_of(step).constant_value();
    if (!step_v || *step_v <= 0) {
      error(iter, "csp.dynamic-count", "a loop around channel operations needs a positive constant step");
      return;
    }
    Poly span = poly_of(stop) - poly_of(start);
    Op o;
    o.kind = Op::Kind::Loop;
    o.node = s;
    if (*step_v == 1)
      o.trips = span;
    else if (auto v = span.constant_value())
      o.trips = Poly::constant(*v <= 0 ? 0 : (*v + *step_v - 1) / *step_v);
    else
      o.trips = poly_of(
          Json{{"op", "floordiv"}, {"args", {(span + Poly::constant(*step_v - 1)).to_expr(), *step_v}}});
    if (auto v = o.trips.constant_value(); v && *v < 0) o.trips = Poly::constant(0);
    o.body = block(s.items("body"), inner);
    check_jumps(s);
    out.push_back(std::move(o));
  }

  /// break / continue inside a loop with channel operations would make its counts path-dependent.
  void check_jumps(htp::NodeRef loop) {
    for (auto s : loop.items("body"))
      s.walk([&](htp::NodeRef n) {
        if (n.is("For") || n.is("While") || n.is("FunctionDef") || n.is("Lambda")) return false;
        if (n.is("Break") || n.is("Continue"))
          error(n, "csp.control-flow",
                std::string(n.is("Break") ? "break" : "continue") +
                    " in a loop with channel operations makes the put/get counts differ between paths");
        return true;
      });
  }

  void statement(htp::NodeRef s, const ExprScope &scope, std::vector<Op> &out) {
    if (s.is("For")) return loop(s, scope, out);
    if (s.is("While")) {
      if (has_channel_op(s))
        error(s, "csp.dynamic-count",
              "a while loop around channel operations cannot be counted; use for v in range(n)");
      return;
    }
    if (s.is("If")) {
      expression(s.child("test"), out);
      Op o;
      o.kind = Op::Kind::If;
      o.node = s;
      o.body = block(s.items("body"), scope);
      o.orelse = block(s.items("orelse"), scope);
      if (!o.body.empty() || !o.orelse.empty()) out.push_back(std::move(o));
      return;
    }
    if (s.is("With")) {
      for (auto item : s.items("items"))
        expression(item, out);
      auto inner = block(s.items("body"), scope);
      out.insert(out.end(), std::make_move_iterator(inner.begin()), std::make_move_iterator(inner.end()));
      return;
    }
    if (s.is("Try") || s.is("TryStar") || s.is("Match") || s.is("AsyncFor") || s.is("AsyncWith")) {
      if (has_channel_op(s))
        error(s, "csp.control-flow", std::string(s.type()) + " around channel operations is not supported");
      return;
    }
    expression(s, out);
  }

  htp::PassContext &ctx_;
  int &errors_;
};

Counts scaled(const Counts &c, const Poly &k) {
  Counts out;
  for (const auto &[ch, n] : c)
    out[ch] = {n.put * k, n.get * k};
  return out;
}

void add_into(Counts &into, const Counts &c) {
  for (const auto &[ch, n] : c) {
    into[ch].put = into[ch].put + n.put;
    into[ch].get = into[ch].get + n.get;
  }
}

} // namespace

std::vector<Op> extract_ops(htp::PassContext &ctx, htp::NodeRef fn, const ExprScope &scope, int &errors) {
  OpReader r(ctx, errors);
  auto body = fn.items("body");
  // Only a final `return` keeps every path through the process alike.
  std::vector<htp::NodeRef> returns;
  fn.walk([&](htp::NodeRef n) {
    if (n.is("Return")) returns.push_back(n);
  });
  bool ops = false;
  fn.walk([&](htp::NodeRef n) { ops |= static_cast<bool>(n.attr(kOpAttr)); });
  for (auto ret : returns)
    if (ops && !(body.size() && ret == body.back()))
      r.error(ret, "csp.control-flow",
              "return before the end of a process makes its put/get counts path-dependent");
  return r.block(body, scope);
}

Counts count_ops(htp::PassContext &ctx, const std::vector<Op> &ops, int &errors) {
  Counts out;
  for (const auto &o : ops) {
    switch (o.kind) {
    case Op::Kind::Send: out[o.channel].put = out[o.channel].put + Poly::constant(1); break;
    case Op::Kind::Recv: out[o.channel].get = out[o.channel].get + Poly::constant(1); break;
    case Op::Kind::Loop: add_into(out, scaled(count_ops(ctx, o.body, errors), o.trips)); break;
    case Op::Kind::Consume: {
      Poly len = o.trips.is_zero() ? Poly::atom(Json{{"stream", o.channel}}) : o.trips;
      add_into(out, scaled(count_ops(ctx, o.body, errors), len)); // the body starts with its recv
      break;
    }
    case Op::Kind::If: {
      Counts a = count_ops(ctx, o.body, errors), b = count_ops(ctx, o.orelse, errors);
      std::set<std::string> channels;
      for (const auto &[ch, n] : a)
        channels.insert(ch);
      for (const auto &[ch, n] : b)
        channels.insert(ch);
      for (const auto &ch : channels) {
        ChannelCount x = a[ch], y = b[ch];
        for (bool put : {true, false}) {
          const Poly &px = put ? x.put : x.get, &py = put ? y.put : y.get;
          if (px == py) continue;
          ctx.error(o.node, "csp.path-imbalance",
                    std::string("the branches of this if ") + (put ? "send " : "receive ") + px.to_text() +
                        " and " + py.to_text() + " items " + (put ? "on" : "from") + " channel '" + ch +
                        "': put/get counts must agree on every path");
          ++errors;
        }
      }
      add_into(out, a);
      break;
    }
    }
  }
  return out;
}

Json op_span(const Op &o) {
  return o.node ? span_json(o.node) : o.span;
}

const Op *first_op(const std::vector<Op> &ops, const std::string &channel, Op::Kind kind) {
  for (const auto &o : ops) {
    if (o.kind == kind && o.channel == channel) return &o;
    for (const auto *list : {&o.body, &o.orelse})
      if (const Op *f = first_op(*list, channel, kind)) return f;
  }
  return nullptr;
}

void visit_ops(std::vector<Op> &ops, const std::function<void(Op &)> &f) {
  for (auto &o : ops) {
    f(o);
    visit_ops(o.body, f);
    visit_ops(o.orelse, f);
  }
}

} // namespace csp
