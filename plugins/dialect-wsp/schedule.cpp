#include "schedule.hpp"

#include "expr.hpp"

#include <functional>
#include <set>

namespace wsp {

namespace {

const std::set<std::string> kDirectives = {"dispatch", "streams",  "stream_by", "timing",
                                           "tile",     "pipeline", "buffer",    "task_window"};
/// Directives that may appear once per schedule (tile and buffer accumulate).
const std::set<std::string> kSingle = {"dispatch", "streams",  "stream_by",
                                       "timing",   "pipeline", "task_window"};

bool is_symbol(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

std::optional<std::string> string_constant(htp::NodeRef n) {
  if (!n.is("Constant")) return std::nullopt;
  auto c = n.constant();
  if (!c || c->kind != HTP_CONST_STR) return std::nullopt;
  return htp::from_htp_str(c->text);
}

/// The policy name of a directive argument: `round_robin(4)` and `work_steal` give their name.
std::string policy_name(htp::NodeRef arg) {
  if (arg.is("Call")) return surface_name(arg.child("func"));
  if (arg.is("Name") || arg.is("Attribute")) return surface_name(arg);
  return {};
}

std::string policy_of(const std::string &directive, htp::NodeRef call) {
  htp::NodeRef first = call.size("args") ? call.item("args", 0) : htp::NodeRef();
  if (directive == "dispatch" || directive == "timing") return first ? policy_name(first) : "";
  if (directive == "buffer" && call.size("args") == 2)
    return string_constant(call.item("args", 1)).value_or("");
  return {};
}

class ScheduleLowering {
public:
  ScheduleLowering(htp::NodeRef fn, const json &workload, htp::PassContext &ctx)
      : fn_(fn), workload_(workload), ctx_(ctx), constants_(captured_constants(ctx.module())) {}

  std::optional<json> run() {
    json out = {{"span", span_json(fn_)}};
    std::map<std::string, htp::NodeRef> seen;
    for (auto stmt : fn_.items("body")) {
      if (stmt.is("Pass") || is_docstring(stmt)) continue;
      try {
        auto d = directive_of(stmt);
        if (!d)
          throw WspError(
              stmt, "wsp.schedule",
              "a schedule body is a list of directives (dispatch, streams, stream_by, timing, tile, "
              "pipeline, buffer, task_window); got " +
                  describe(stmt.is("Expr") ? stmt.child("value") : stmt));
        if (kSingle.count(d->name) && seen.count(d->name))
          throw WspError(d->call, "wsp.schedule",
                         "directive '" + d->name + "' is given twice (first at line " +
                             std::to_string(seen[d->name].span().line) + ")");
        seen.emplace(d->name, d->call);
        apply(*d, out);
      } catch (const WspError &e) {
        report(ctx_, e);
        failed_ = true;
      }
    }
    if (failed_) return std::nullopt;
    return out;
  }

private:
  [[noreturn]] void fail(htp::NodeRef at, const std::string &message) const {
    throw WspError(at, "wsp.schedule", message);
  }

  void expect_args(const Directive &d, size_t n, const std::string &form) const {
    if (d.call.size("args") != n || d.call.size("keywords")) fail(d.call, "expected " + form);
  }

  int64_t positive_int(htp::NodeRef n, const std::string &what) const {
    // (a literal, a captured int constant, or an integer expression of them: 2 * R, -2)
    std::optional<int64_t> v = constant_int(n, constants_);
    if (!v || *v <= 0) fail(n, what + " must be a positive int, got " + (v ? std::to_string(*v) : describe(n)));
    return *v;
  }

  std::string axis(htp::NodeRef n) const {
    auto name = string_constant(n);
    if (!name) fail(n, "an axis is named by a string, e.g. \"b\"; got " + describe(n));
    check_axis(n, *name);
    return *name;
  }

  void check_axis(htp::NodeRef at, const std::string &name) const {
    for (const auto &a : workload_["axes"])
      if (a == name) return;
    std::string axes;
    for (const auto &a : workload_["axes"])
      axes += (axes.empty() ? "" : ", ") + a.get<std::string>();
    throw WspError(at, "wsp.schedule-axis",
                   "schedule '" + *fn_.text("name") + "' names axis '" + name + "', but workload '" +
                       workload_["name"].get<std::string>() + "' " +
                       (axes.empty() ? "has no loop axes" : "has the axes " + axes));
  }

  std::string tensor(htp::NodeRef n) const {
    auto name = string_constant(n);
    if (!name) fail(n, "buffer names its tensor by a string, e.g. buffer(\"K\", \"L1\"); got " + describe(n));
    for (const char *list : {"params", "intermediates"})
      for (const auto &p : workload_[list])
        if (p["name"] == *name && p["type"]["kind"] == "tensor") return *name;
    fail(n, "workload '" + workload_["name"].get<std::string>() + "' has no tensor '" + *name + "'");
  }

  json dispatch(const Directive &d) const {
    expect_args(d, 1, "dispatch(round_robin(n) | affinity(axis) | hash(axis) | work_steal())");
    htp::NodeRef p = d.call.item("args", 0);
    size_t nargs = p.is("Call") ? p.size("args") : 0;
    if (d.policy == "round_robin" && nargs == 1)
      return {{"policy", d.policy}, {"n", positive_int(p.item("args", 0), "round_robin(n)")}};
    if ((d.policy == "affinity" || d.policy == "hash") && nargs == 1)
      return {{"policy", d.policy}, {"axis", axis(p.item("args", 0))}};
    if (d.policy == "work_steal" && nargs == 0) return {{"policy", d.policy}};
    fail(p, "a dispatch policy is round_robin(n), affinity(axis), hash(axis) or work_steal(); got " +
                describe(p));
  }

  json timing(const Directive &d) const {
    expect_args(d, 1, "timing(immediate) or timing(batched(n))");
    htp::NodeRef p = d.call.item("args", 0);
    if (d.policy == "immediate" && !p.is("Call")) return {{"mode", "immediate"}};
    if (d.policy == "batched" && p.is("Call") && p.size("args") == 1)
      return {{"mode", "batched"}, {"n", positive_int(p.item("args", 0), "batched(n)")}};
    fail(p, "a timing policy is immediate or batched(n); got " + describe(p));
  }

  json stream_by(const Directive &d) const {
    expect_args(d, 1, "stream_by(lambda h: h % n) or stream_by(\"axis\")");
    htp::NodeRef f = d.call.item("args", 0);
    if (!f.is("Lambda")) return json{{"var", axis(f)}};
    Env env;
    env.constants = constants_;
    htp::NodeRef args = f.child("args");
    for (auto a : args.items("args")) {
      check_axis(a, *a.text("arg"));
      env.values[*a.text("arg")] = json{{"var", *a.text("arg")}};
    }
    return lower_expr(f.child("body"), env);
  }

  void apply(const Directive &d, json &out) const {
    const std::string &n = d.name;
    if (n == "dispatch")
      out["dispatch"] = dispatch(d);
    else if (n == "timing")
      out["timing"] = timing(d);
    else if (n == "stream_by")
      out["stream_by"] = stream_by(d);
    else if (n == "streams" || n == "task_window") {
      expect_args(d, 1, n + "(n)");
      out[n] = positive_int(d.call.item("args", 0), n + "(n)");
    } else if (n == "pipeline") {
      expect_args(d, 1, "pipeline(depth)");
      out["pipeline"] = {{"depth", positive_int(d.call.item("args", 0), "pipeline(depth)")}};
      // pipeline overlaps iterations of a sequential loop; a workload without one has nothing to overlap.
      std::function<bool(const json &)> sequential = [&](const json &nodes) {
        for (const json &node : nodes) {
          if (node.value("kind", "") == "loop" && node.value("dep", "") == "sequential") return true;
          for (const char *key : {"body", "then", "else"})
            if (node.contains(key) && node[key].is_array() && sequential(node[key])) return true;
        }
        return false;
      };
      if (workload_.contains("body") && !sequential(workload_["body"]))
        ctx_.warning(d.call, "wsp.schedule-unused",
                     "pipeline(...) overlaps iterations of a sequential loop (P.seq), and workload '" +
                         workload_["name"].get<std::string>() + "' has none: it does nothing here");
    } else if (n == "tile") {
      expect_args(d, 2, "tile(axis, factor)");
      out["tile"].push_back({{"axis", axis(d.call.item("args", 0))},
                             {"factor", positive_int(d.call.item("args", 1), "the tile factor")}});
    } else if (n == "buffer") {
      expect_args(d, 2, "buffer(tensor, space)");
      if (!is_symbol(d.policy))
        fail(d.call.item("args", 1), "a memory space is a name such as \"L1\" or \"UB\"");
      out["buffer"].push_back({{"tensor", tensor(d.call.item("args", 0))}, {"space", d.policy}, {"span", span_json(d.call)}});
    }
  }

  htp::NodeRef fn_;
  const json &workload_;
  htp::PassContext &ctx_;
  json constants_;
  bool failed_ = false;
};

} // namespace

std::optional<Directive> directive_of(htp::NodeRef stmt) {
  if (!stmt.is("Expr") || !stmt.child("value").is("Call")) return std::nullopt;
  htp::NodeRef call = stmt.child("value");
  std::string name = surface_name(call.child("func"));
  if (!kDirectives.count(name)) return std::nullopt;
  return Directive{name, policy_of(name, call), call};
}

std::string obligation_of(const Directive &d) {
  std::string text = "Uses.Schedule(directive=" + d.name;
  if (is_symbol(d.policy)) text += ",policy=" + d.policy;
  return text + ")";
}

std::optional<json> lower_schedule(htp::NodeRef fn, const json &workload, htp::PassContext &ctx) {
  return ScheduleLowering(fn, workload, ctx).run();
}

} // namespace wsp
