// wsp.canonicalize: rewrites the sugar of the workload surface to the canonical forms the lowering
// reads, as match -> apply patterns driven by the host (each visible in the `--dump-ir` dumps):
//   for i in range(n):            ->  for i in P.seq(n):
//   if c: A  else: B              ->  with P.when(c): A   /   with P.otherwise(): B
//   combine(k1(...), k2(...))     ->  with combine(): k1(...); k2(...)        (also sequential)
//   S = Sparse(n, ptr, idx) ... P.sel(S[row])  ->  P.sel(Sparse(n, ptr, idx), row)   (also Sparse(...)[row])
// Only statements inside @workload functions are touched (kernels have their own `if` and `range`).
#include "passes.hpp"
#include "program.hpp"

namespace wsp {

namespace {

bool in_workload(htp::NodeRef n) {
  for (htp::NodeRef p = n.parent(); p; p = p.parent())
    if (p.is("FunctionDef")) return is_captured(p, "wsp", "workload");
  return false;
}

htp::NodeRef enclosing_function(htp::NodeRef n) {
  for (htp::NodeRef p = n.parent(); p; p = p.parent())
    if (p.is("FunctionDef")) return p;
  return {};
}

/// The node-list field of its parent that holds `n`, and its index there.
std::pair<std::string, size_t> position(htp::NodeRef n) {
  const HtpHostApi *api = n.api();
  htp::NodeRef parent = n.parent();
  for (size_t f = 0, nf = api->node_field_count(api->host, parent.handle()); f < nf; ++f) {
    std::string field = htp::from_htp_str(api->node_field_name(api->host, parent.handle(), f));
    for (size_t i = 0, size = parent.size(field); i < size; ++i)
      if (parent.item(field, i) == n) return {field, i};
  }
  throw htp::PassError("a statement is not in a list of its parent");
}

/// Builds nodes at one span.
class Builder {
public:
  Builder(const htp::ModuleRef &m, HtpSpan span) : m_(m), span_(span) {}

  htp::NodeRef name(const std::string &id) const {
    htp::NodeRef n = m_.create("Name", &span_);
    m_.set_text(n, "id", id);
    m_.set_child(n, "ctx", m_.create("Load"));
    return n;
  }
  /// `P.<attr>` or a plain `name` for surface callees.
  htp::NodeRef callee(const std::string &dotted) const {
    auto dot = dotted.find('.');
    if (dot == std::string::npos) return name(dotted);
    htp::NodeRef a = m_.create("Attribute", &span_);
    m_.set_child(a, "value", name(dotted.substr(0, dot)));
    m_.set_text(a, "attr", dotted.substr(dot + 1));
    m_.set_child(a, "ctx", m_.create("Load"));
    return a;
  }
  htp::NodeRef call(const std::string &dotted, const std::vector<htp::NodeRef> &args) const {
    htp::NodeRef c = m_.create("Call", &span_);
    m_.set_child(c, "func", callee(dotted));
    for (size_t i = 0; i < args.size(); ++i)
      m_.insert(c, "args", i, args[i]);
    return c;
  }
  /// `with <block>: <body>` with cloned body statements.
  htp::NodeRef with(htp::NodeRef block, const std::vector<htp::NodeRef> &body) const {
    htp::NodeRef item = m_.create("withitem");
    m_.set_child(item, "context_expr", block);
    htp::NodeRef w = m_.create("With", &span_);
    m_.insert(w, "items", 0, item);
    for (size_t i = 0; i < body.size(); ++i)
      m_.insert(w, "body", i, body[i]);
    return w;
  }
  htp::NodeRef expr_statement(htp::NodeRef value) const {
    htp::NodeRef s = m_.create("Expr", &span_);
    m_.set_child(s, "value", value);
    return s;
  }
  std::vector<htp::NodeRef> clones(const std::vector<htp::NodeRef> &nodes) const {
    std::vector<htp::NodeRef> out;
    for (auto n : nodes)
      out.push_back(m_.clone(n));
    return out;
  }

private:
  const htp::ModuleRef &m_;
  HtpSpan span_;
};

struct RangeToSeq {
  static constexpr const char *name = "wsp.range-to-seq";
  static constexpr std::array<const char *, 1> roots{"For"};
  static constexpr int32_t benefit = 1;
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    htp::NodeRef it = n.child("iter");
    if (!it.is("Call") || it.child("func").dotted_name() != "range" || it.size("args") != 1 ||
        it.size("keywords") != 0 || !in_workload(n))
      return false;
    auto m = ctx.module();
    htp::NodeRef func = it.child("func");
    m.replace(func, Builder(m, func.span()).callee("P.seq"));
    return true;
  }
};

struct IfToWhen {
  static constexpr const char *name = "wsp.if-to-when";
  static constexpr std::array<const char *, 1> roots{"If"};
  static constexpr int32_t benefit = 1;
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    if (!in_workload(n)) return false;
    auto m = ctx.module();
    Builder b(m, n.span());
    auto [field, index] = position(n);
    htp::NodeRef parent = n.parent();
    htp::NodeRef when = b.with(b.call("P.when", {m.clone(n.child("test"))}), b.clones(n.items("body")));
    std::vector<htp::NodeRef> orelse = n.items("orelse");
    m.replace(n, when);
    if (!orelse.empty()) {
      HtpSpan s = orelse.front().span();
      Builder eb(m, s);
      m.insert(parent, field, index + 1, eb.with(eb.call("P.otherwise", {}), eb.clones(orelse)));
    }
    return true;
  }
};

struct CombineCallToBlock {
  static constexpr const char *name = "wsp.group-call-to-block";
  static constexpr std::array<const char *, 1> roots{"Expr"};
  static constexpr int32_t benefit = 1;
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    htp::NodeRef v = n.child("value");
    if (!v.is("Call") || v.size("args") == 0 || v.size("keywords")) return false;
    std::string callee = surface_name(v.child("func"));
    if (callee != "combine" && callee != "sequential") return false;
    for (auto a : v.items("args"))
      if (!a.is("Call")) return false;
    if (!in_workload(n)) return false;
    auto m = ctx.module();
    Builder b(m, n.span());
    std::vector<htp::NodeRef> body;
    for (auto a : v.items("args"))
      body.push_back(Builder(m, a.span()).expr_statement(m.clone(a)));
    m.replace(n, b.with(b.call(callee, {}), body));
    return true;
  }
};

/// The `Sparse(...)` call a workload binds to `name` (`S = Sparse(n, indptr, indices)`), if any.
htp::NodeRef sparse_binding(htp::NodeRef fn, const std::string &name) {
  htp::NodeRef found;
  fn.walk([&](htp::NodeRef s) {
    if (found || !s.is("Assign") || s.size("targets") != 1) return;
    htp::NodeRef t = s.item("targets", 0), v = s.child("value");
    if (t.is("Name") && t.text("id") == name && v.is("Call") && surface_name(v.child("func")) == "Sparse")
      found = v;
  });
  return found;
}

struct InlineSparseRow {
  static constexpr const char *name = "wsp.inline-sparse-row";
  static constexpr std::array<const char *, 1> roots{"Call"};
  static constexpr int32_t benefit = 1;
  /// The Sparse(...) call `P.sel(S[row])` indexes: written in place or bound to the local S.
  static htp::NodeRef sparse_of(htp::NodeRef sel) {
    if (surface_name(sel.child("func")) != "P.sel" || sel.size("args") != 1) return {};
    htp::NodeRef row = sel.item("args", 0);
    if (!row.is("Subscript") || !in_workload(sel)) return {};
    htp::NodeRef base = row.child("value");
    if (base.is("Call") && surface_name(base.child("func")) == "Sparse") return base;
    return base.is("Name") ? sparse_binding(enclosing_function(sel), *base.text("id")) : htp::NodeRef();
  }
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    htp::NodeRef sparse = sparse_of(n);
    if (!sparse) return false;
    auto m = ctx.module();
    htp::NodeRef row = n.item("args", 0);
    htp::NodeRef index = m.clone(row.child("slice"));
    m.erase(n, "args", 0);
    m.insert(n, "args", 0, m.clone(sparse));
    m.insert(n, "args", 1, index);
    return true;
  }
};

} // namespace

std::vector<htp::PatternSpec> canonicalize_patterns() {
  return {htp::pattern<RangeToSeq>(), htp::pattern<IfToWhen>(), htp::pattern<CombineCallToBlock>(),
          htp::pattern<InlineSparseRow>()};
}

} // namespace wsp
