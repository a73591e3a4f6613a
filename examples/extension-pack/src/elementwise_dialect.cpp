// Dialect `ext`: a small programming model of whole-tensor elementwise maps.
//
//   @elementwise(tile=(32, 128))
//   def blend(x: In[Tensor[64, 256, f32]], y: In[Tensor[64, 256, f32]], z: Out[Tensor[64, 256, f32]]):
//       z[...] = relu(axpby(x, y, 2.0, -0.5)) + x * 0.25
//
// The construct is the store `out[...] = <expression over whole tensors>` (temporaries `t = ...` too).
// The pass `ext.lower-elementwise` rewrites each such function, in the AST, into a tile kernel: a loop
// nest over (R, C) tiles that loads every input tile, evaluates the expression with tile intrinsics
// (`a + b` -> tile.add, `a * 2.0` -> tile.muls, ...) and stores every output tile. It then marks the
// function `tile.lower = {"kind": "kernel"}` so that the tile dialect types and lowers it like a kernel.
#include "ext_pack.hpp"

#include <map>
#include <set>

namespace extpack {

json node_attr(htp::NodeRef n, std::string_view key) {
  auto text = n.attr(key);
  if (!text) return nullptr;
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json() : j;
}

namespace {

bool is_elementwise(htp::NodeRef fn) {
  if (!fn.is("FunctionDef")) return false;
  json dialect = node_attr(fn, "htp.dialect");
  if (dialect.is_string()) return dialect == "ext";
  for (auto d : fn.items("decorator_list")) {
    std::string name = (d.is("Call") ? d.child("func") : d).dotted_name();
    if (name == "elementwise" || name == "ext.elementwise") return true;
  }
  return false;
}

}  // namespace

bool is_axpby_call(htp::NodeRef n) {
  if (!n.is("Call")) return false;
  std::string callee = n.child("func").dotted_name();
  return callee == "axpby" || callee == "ext.axpby" || callee.ends_with(".ext.axpby");
}

// Obligations: Uses.Dialect(name=ext) per @elementwise function, plus Uses.Dialect(name=tile) because it
// lowers into a tile kernel (so the tile passes run); Uses.Intrinsic(set=ext,op=axpby) per axpby call in
// any function.
void scan_ext(htp::PassContext &ctx) {
  for (auto fn : ctx.module().root().items("body")) {
    if (!fn.is("FunctionDef")) continue;
    if (is_elementwise(fn)) {
      htp::NodeRef at = fn.size("decorator_list") ? fn.item("decorator_list", 0) : fn;
      ctx.add_obligation("Uses.Dialect(name=ext)", at);
      ctx.add_obligation("Uses.Dialect(name=tile)", at);
    }
    fn.walk([&](htp::NodeRef n) {
      if (is_axpby_call(n)) ctx.add_obligation("Uses.Intrinsic(set=ext,op=axpby)", n);
    });
  }
}

namespace {

struct Param {
  std::string name, dir;     // dir: in | out | inout | scalar
  std::vector<int64_t> shape;
  std::string dtype;
  htp::NodeRef node;
};

/// Builds detached AST nodes at one span.
class Builder {
public:
  Builder(const htp::ModuleRef &m, HtpSpan span) : m_(m), span_(span) {}

  htp::NodeRef name(std::string_view id, bool store = false) const {
    htp::NodeRef n = m_.create("Name", &span_);
    m_.set_text(n, "id", id);
    m_.set_child(n, "ctx", m_.create(store ? "Store" : "Load"));
    return n;
  }
  htp::NodeRef integer(int64_t v) const { return m_.int_constant(v, &span_); }
  /// `base.attr`
  htp::NodeRef attribute(htp::NodeRef base, std::string_view attr) const {
    htp::NodeRef a = m_.create("Attribute", &span_);
    m_.set_child(a, "value", base);
    m_.set_text(a, "attr", attr);
    m_.set_child(a, "ctx", m_.create("Load"));
    return a;
  }
  htp::NodeRef call(htp::NodeRef func, std::vector<htp::NodeRef> args,
                    std::vector<std::pair<std::string, htp::NodeRef>> keywords = {}) const {
    htp::NodeRef c = m_.create("Call", &span_);
    m_.set_child(c, "func", func);
    for (size_t i = 0; i < args.size(); ++i) m_.insert(c, "args", i, args[i]);
    for (size_t i = 0; i < keywords.size(); ++i) {
      htp::NodeRef k = m_.create("keyword", &span_);
      m_.set_text(k, "arg", keywords[i].first);
      m_.set_child(k, "value", keywords[i].second);
      m_.insert(c, "keywords", i, k);
    }
    return c;
  }
  /// `tile.<op>(args...)`: a portable tile intrinsic.
  htp::NodeRef intrinsic(std::string_view op, std::vector<htp::NodeRef> args) const {
    return call(attribute(name("tile"), op), std::move(args));
  }
  htp::NodeRef tuple(std::vector<htp::NodeRef> elts) const {
    htp::NodeRef t = m_.create("Tuple", &span_);
    for (size_t i = 0; i < elts.size(); ++i) m_.insert(t, "elts", i, elts[i]);
    m_.set_child(t, "ctx", m_.create("Load"));
    return t;
  }
  htp::NodeRef assign(htp::NodeRef target, htp::NodeRef value) const {
    htp::NodeRef a = m_.create("Assign", &span_);
    m_.insert(a, "targets", 0, target);
    m_.set_child(a, "value", value);
    return a;
  }
  htp::NodeRef expr_stmt(htp::NodeRef value) const {
    htp::NodeRef s = m_.create("Expr", &span_);
    m_.set_child(s, "value", value);
    return s;
  }
  /// `for var in range(n): body`
  htp::NodeRef for_range(std::string_view var, int64_t n, const std::vector<htp::NodeRef> &body) const {
    htp::NodeRef f = m_.create("For", &span_);
    m_.set_child(f, "target", name(var, true));
    m_.set_child(f, "iter", call(name("range"), {integer(n)}));
    for (size_t i = 0; i < body.size(); ++i) m_.insert(f, "body", i, body[i]);
    return f;
  }
  const htp::ModuleRef &module() const { return m_; }
  HtpSpan span() const { return span_; }

private:
  const htp::ModuleRef &m_;
  HtpSpan span_;
};

constexpr const char *kRow = "_row", *kCol = "_col";

/// One @elementwise function being lowered.
class ElementwiseLowering {
public:
  ElementwiseLowering(htp::PassContext &ctx, htp::NodeRef fn, const json &constants)
      : ctx_(ctx), m_(ctx.module()), fn_(fn), constants_(constants) {}

  void run() {
    if (!read_tile() || !read_params()) return;
    const size_t errors_before = errors_;
    std::vector<htp::NodeRef> stmts;
    for (auto s : fn_.items("body")) lower_statement(s, stmts);
    if (errors_ != errors_before || stmts.empty()) {
      if (stmts.empty() && errors_ == errors_before)
        error(fn_, "ext.empty", "@elementwise function '" + fn_name() + "' stores nothing: write out[...] = <expression>");
      return;
    }
    Builder b(m_, fn_.span());
    std::vector<htp::NodeRef> body = loads(b);
    body.insert(body.end(), stmts.begin(), stmts.end());
    htp::NodeRef inner = b.for_range(kCol, shape_[1] / tile_[1], body);
    htp::NodeRef outer = b.for_range(kRow, shape_[0] / tile_[0], {inner});
    for (size_t i = fn_.size("body"); i-- > 0;) m_.erase(fn_, "body", i);
    m_.insert(fn_, "body", 0, outer);
    fn_.set_attr("tile.lower", R"({"kind": "kernel"})", ctx_.diag());
  }

private:
  std::string fn_name() const { return fn_.text("name").value_or("?"); }
  void error(htp::NodeRef at, std::string_view code, const std::string &message) {
    ++errors_;
    ctx_.error(at, code, message);
  }

  std::optional<int64_t> int_value(htp::NodeRef n) const {
    if (auto v = n.int_constant()) return v;
    if (n.is("Name")) {
      auto it = constants_.find(n.text("id").value_or(""));
      if (it != constants_.end() && it->is_number_integer()) return it->get<int64_t>();
    }
    return std::nullopt;
  }

  // @elementwise(tile=(R, C))
  bool read_tile() {
    for (auto d : fn_.items("decorator_list")) {
      if (!d.is("Call")) continue;
      for (auto k : d.items("keywords")) {
        if (k.text("arg").value_or("") != "tile") continue;
        auto elts = k.child("value").items("elts");
        if (elts.size() == 2 && int_value(elts[0]).value_or(0) > 0 && int_value(elts[1]).value_or(0) > 0) {
          tile_ = {*int_value(elts[0]), *int_value(elts[1])};
          return true;
        }
        error(k, "ext.tile", "tile= takes two positive integer constants, e.g. tile=(32, 128)");
        return false;
      }
    }
    error(fn_, "ext.tile", "@elementwise function '" + fn_name() + "' needs its tile shape: @elementwise(tile=(R, C))");
    return false;
  }

  // In[Tensor[d0, d1, dtype]] / Out[...] / InOut[...] / Tensor[...] (optionally `@ layout`), or a scalar.
  std::optional<Param> read_param(htp::NodeRef arg) {
    Param p{arg.text("arg").value_or(""), "in", {}, "", arg};
    htp::NodeRef a = arg.child("annotation");
    if (a && a.is("Subscript")) {
      std::string head = a.child("value").dotted_name();
      if (head == "In" || head == "Out" || head == "InOut") {
        p.dir = head == "In" ? "in" : head == "Out" ? "out" : "inout";
        a = a.child("slice");
      }
    }
    if (a && a.is("BinOp") && a.child("op").is("MatMult")) a = a.child("left");  // a layout: the layout plugin's
    if (!a || !a.is("Subscript") || a.child("value").dotted_name() != "Tensor") {
      p.dir = "scalar";  // Scalar[...], float, int: used as a scalar in expressions
      return p;
    }
    auto elts = a.child("slice").items("elts");
    if (elts.size() != 3) {
      error(arg, "ext.param", "@elementwise parameters are 2-D tensors: Tensor[rows, cols, dtype]");
      return std::nullopt;
    }
    for (int d = 0; d < 2; ++d) {
      auto v = int_value(elts[d]);
      if (!v || *v <= 0) {
        error(elts[d], "ext.param", "a tensor dimension must be a positive integer constant");
        return std::nullopt;
      }
      p.shape.push_back(*v);
    }
    p.dtype = elts[2].dotted_name();
    return p;
  }

  bool read_params() {
    for (auto arg : fn_.child("args").items("args")) {
      auto p = read_param(arg);
      if (!p) return false;
      if (p->dir != "scalar") {
        if (shape_.empty()) shape_ = p->shape, dtype_ = p->dtype;
        if (p->shape != shape_ || p->dtype != dtype_) {
          error(arg, "ext.shape", "every tensor of '" + fn_name() + "' must be " + dims(shape_) + " " + dtype_ +
                                      " like the first one; '" + p->name + "' is " + dims(p->shape) + " " + p->dtype);
          return false;
        }
      }
      params_[p->name] = *p;
    }
    if (shape_.empty()) {
      error(fn_, "ext.param", "@elementwise function '" + fn_name() + "' has no tensor parameter");
      return false;
    }
    for (int d = 0; d < 2; ++d)
      if (shape_[d] % tile_[d]) {
        error(fn_, "ext.tile", "tile " + dims(tile_) + " does not divide the tensors' shape " + dims(shape_));
        return false;
      }
    return true;
  }

  static std::string dims(const std::vector<int64_t> &s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
  }

  const Param *param(htp::NodeRef n) const {
    if (!n.is("Name")) return nullptr;
    auto it = params_.find(n.text("id").value_or(""));
    return it == params_.end() ? nullptr : &it->second;
  }

  bool is_scalar(htp::NodeRef n) const {
    if (n.is("Constant")) return true;
    if (n.is("UnaryOp")) return is_scalar(n.child("operand"));
    if (n.is("BinOp")) return is_scalar(n.child("left")) && is_scalar(n.child("right"));
    if (const Param *p = param(n)) return p->dir == "scalar";
    std::string id = n.is("Name") ? n.text("id").value_or("") : "";
    return !id.empty() && (constants_.contains(id) || scalar_names_.count(id));
  }

  // The view of the current tile of tensor `p`: p.tile(_row, _col, shape=(R, C)).
  htp::NodeRef tile_view(const Builder &b, const std::string &p) const {
    return b.call(b.attribute(b.name(p), "tile"), {b.name(kRow), b.name(kCol)},
                  {{"shape", b.tuple({b.integer(tile_[0]), b.integer(tile_[1])})}});
  }
  static std::string tile_register(const std::string &p) { return p + "_tile"; }

  std::vector<htp::NodeRef> loads(const Builder &b) const {
    std::vector<htp::NodeRef> out;
    for (auto arg : fn_.child("args").items("args")) {
      std::string p = arg.text("arg").value_or("");
      if (read_.count(p))
        out.push_back(b.assign(b.name(tile_register(p), true), b.intrinsic("load", {tile_view(b, p)})));
    }
    return out;
  }

  void lower_statement(htp::NodeRef s, std::vector<htp::NodeRef> &out) {
    Builder b(m_, s.span());
    if (s.is("Expr") && s.child("value").is("Constant")) return;  // docstring
    if (s.is("Assign") && s.size("targets") == 1) {
      htp::NodeRef target = s.item("targets", 0), value = s.child("value");
      if (target.is("Name") && !param(target)) {
        if (is_scalar(value)) scalar_names_.insert(*target.text("id"));  // `s = 2.0`: a scalar, not a tile
        if (auto v = lower_expr(value)) out.push_back(b.assign(b.name(*target.text("id"), true), v));
        return;
      }
      if (target.is("Subscript")) {
        const Param *p = param(target.child("value"));
        if (!p || (p->dir != "out" && p->dir != "inout")) {
          error(target, "ext.store", "only Out/InOut tensor parameters can be stored to (out[...] = ...)");
          return;
        }
        if (auto v = lower_expr(value))
          out.push_back(b.expr_stmt(b.intrinsic("store", {tile_view(b, p->name), v})));
        return;
      }
    }
    error(s, "ext.unsupported",
          "an @elementwise body holds only `out[...] = <expression>` and `name = <expression>` statements");
  }

  htp::NodeRef lower_expr(htp::NodeRef e) {
    Builder b(m_, e.span());
    if (const Param *p = param(e)) {
      if (p->dir == "scalar") return m_.clone(e);
      if (p->dir == "out") {
        error(e, "ext.load-from-out", "'" + p->name + "' is an Out parameter and cannot be read (declare it InOut)");
        return {};
      }
      read_.insert(p->name);
      return b.name(tile_register(p->name));
    }
    if (e.is("Name") || e.is("Constant")) return m_.clone(e);
    if (e.is("UnaryOp") && e.child("op").is("USub")) {
      if (is_scalar(e)) return m_.clone(e);
      auto v = lower_expr(e.child("operand"));
      return v ? b.intrinsic("neg", {v}) : v;
    }
    if (e.is("BinOp")) return lower_binop(e, b);
    if (e.is("Call")) return lower_call(e, b);
    error(e, "ext.unsupported", "this expression is not supported in an @elementwise body (use tile intrinsics, + - * /)");
    return {};
  }

  htp::NodeRef lower_binop(htp::NodeRef e, const Builder &b) {
    static const std::map<std::string, std::string> ops = {{"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"}, {"Div", "div"}};
    if (is_scalar(e)) return m_.clone(e);
    auto it = ops.find(std::string(e.child("op").type()));
    if (it == ops.end()) {
      error(e, "ext.unsupported", "only + - * / combine tensors in an @elementwise body");
      return {};
    }
    const std::string &op = it->second;
    htp::NodeRef left = e.child("left"), right = e.child("right");
    if (is_scalar(left)) {  // s + t, s * t, s - t
      if (op == "div") {
        error(e, "ext.unsupported", "scalar / tensor is not supported; write tensor * (1 / scalar) or a tile intrinsic");
        return {};
      }
      auto t = lower_expr(right);
      if (!t) return t;
      if (op == "sub") return b.intrinsic("adds", {b.intrinsic("neg", {t}), m_.clone(left)});
      return b.intrinsic(op + "s", {t, m_.clone(left)});
    }
    auto l = lower_expr(left);
    if (is_scalar(right)) return l ? b.intrinsic(op + "s", {l, m_.clone(right)}) : l;
    auto r = lower_expr(right);
    return l && r ? b.intrinsic(op, {l, r}) : htp::NodeRef();
  }

  htp::NodeRef lower_call(htp::NodeRef e, const Builder &b) {
    std::vector<htp::NodeRef> args;
    for (auto a : e.items("args")) {
      auto v = lower_expr(a);
      if (!v) return {};
      args.push_back(v);
    }
    std::vector<std::pair<std::string, htp::NodeRef>> keywords;
    for (auto k : e.items("keywords")) {
      auto v = lower_expr(k.child("value"));
      if (!v) return {};
      keywords.emplace_back(k.text("arg").value_or(""), v);
    }
    htp::NodeRef c = b.call(m_.clone(e.child("func")), args, keywords);
    // Every value of an elementwise body is one (R, C) tile of the function's dtype: record it, so that
    // target-specific lowerings of ext intrinsics can type their results before the tile typecheck.
    if (is_axpby_call(c))
      c.set_attr("ext.tile_type", json{{"kind", "tile"}, {"shape", tile_}, {"dtype", dtype_}}.dump(), ctx_.diag());
    return c;
  }

  htp::PassContext &ctx_;
  htp::ModuleRef m_;
  htp::NodeRef fn_;
  const json &constants_;
  std::vector<int64_t> tile_, shape_;
  std::string dtype_;
  std::map<std::string, Param> params_;
  std::set<std::string> read_, scalar_names_;
  size_t errors_ = 0;
};

}  // namespace

void lower_elementwise(htp::PassContext &ctx) {
  json capture = json::parse(ctx.module().attr("htp.capture").value_or("{}"), nullptr, false);
  json constants = capture.is_object() && capture.contains("constants") ? capture["constants"] : json::object();
  for (auto fn : ctx.module().root().items("body"))
    if (is_elementwise(fn)) ElementwiseLowering(ctx, fn, constants).run();  // errors fail the pass at its end
}

}  // namespace extpack
