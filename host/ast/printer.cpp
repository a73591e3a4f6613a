#include "ast/printer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "ast/literal.hpp"
#include "ast/unicode.hpp"

namespace htp::ast {
namespace {

// Binding strength of expression contexts, weakest first (the grammar's precedence levels).
enum class Prec : int {
  NamedExpr = 1,
  Tuple,
  Yield,
  Test,
  Or,
  And,
  Not,
  Cmp,
  Expr,
  BOr = Expr,
  BXor,
  BAnd,
  Shift,
  Arith,
  Term,
  Factor,
  Power,
  Await,
  Atom,
};

Prec next(Prec p) {
  return p == Prec::Atom ? p : static_cast<Prec>(static_cast<int>(p) + 1);
}

// A literal that overflows to infinity: how inf and nan constants are spelled in source.
constexpr std::string_view kInfinity = "1e309";

using Quotes = std::vector<std::string_view>;
const Quotes kAllQuotes = {"'", "\"", "\"\"\"", "'''"};
const Quotes kMultiQuotes = {"\"\"\"", "'''"};

bool is_multi(std::string_view q) {
  return q.size() == 3;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// The spelling of a float or complex constant: repr, with infinities and NaNs made parseable.
std::string number_source(std::string repr) {
  repr = replace_all(std::move(repr), "inf", kInfinity);
  return replace_all(std::move(repr), "nan",
                     "(" + std::string(kInfinity) + "-" + std::string(kInfinity) + ")");
}

struct BinopInfo {
  std::string_view text;
  Prec prec;
};

BinopInfo binop(Kind k) {
  switch (k) {
  case Kind::Add: return {"+", Prec::Arith};
  case Kind::Sub: return {"-", Prec::Arith};
  case Kind::Mult: return {"*", Prec::Term};
  case Kind::MatMult: return {"@", Prec::Term};
  case Kind::Div: return {"/", Prec::Term};
  case Kind::Mod: return {"%", Prec::Term};
  case Kind::LShift: return {"<<", Prec::Shift};
  case Kind::RShift: return {">>", Prec::Shift};
  case Kind::BitOr: return {"|", Prec::BOr};
  case Kind::BitXor: return {"^", Prec::BXor};
  case Kind::BitAnd: return {"&", Prec::BAnd};
  case Kind::FloorDiv: return {"//", Prec::Term};
  case Kind::Pow: return {"**", Prec::Power};
  default: return {"<?>", Prec::Atom};
  }
}

std::string_view cmpop(Kind k) {
  switch (k) {
  case Kind::Eq: return "==";
  case Kind::NotEq: return "!=";
  case Kind::Lt: return "<";
  case Kind::LtE: return "<=";
  case Kind::Gt: return ">";
  case Kind::GtE: return ">=";
  case Kind::Is: return "is";
  case Kind::IsNot: return "is not";
  case Kind::In: return "in";
  case Kind::NotIn: return "not in";
  default: return "<?>";
  }
}

// A string made a literal body with as few backslashes as possible, and the quotes that can hold it.
struct LiteralBody {
  std::string text;
  Quotes quotes;
};

// Escapes backslashes and unprintable characters (newline and tab too when `escape_whitespace`), then
// keeps the quotes of `quote_types` the text does not contain; falls back to repr when none is left.
LiteralBody str_literal(std::string_view utf8, const Quotes &quote_types, bool escape_whitespace) {
  std::string escaped;
  escaped.reserve(utf8.size());
  for (size_t pos = 0; pos < utf8.size();) {
    uint32_t cp = decode_utf8(utf8, pos);
    if (!escape_whitespace && (cp == '\n' || cp == '\t'))
      escaped += static_cast<char>(cp);
    else if (cp == '\\' || !is_printable(cp))
      append_unicode_escape(escaped, cp);
    else
      append_utf8(escaped, cp);
  }
  bool has_newline = escaped.find('\n') != std::string::npos;
  Quotes possible;
  for (auto q : quote_types)
    if ((!has_newline || is_multi(q)) && escaped.find(q) == std::string::npos) possible.push_back(q);
  if (possible.empty()) {
    std::string repr = str_repr(utf8);
    std::string_view quote(repr.data(), 1);
    for (auto q : quote_types)
      if (q.find(repr[0]) != std::string_view::npos) {
        quote = q;
        break;
      }
    return {repr.substr(1, repr.size() - 2), {quote}};
  }
  if (!escaped.empty()) {
    char last = escaped.back();
    std::stable_sort(possible.begin(), possible.end(),
                     [&](std::string_view a, std::string_view b) { return (a[0] == last) < (b[0] == last); });
    if (possible[0][0] == last) escaped.insert(escaped.size() - 1, "\\");
  }
  return {std::move(escaped), std::move(possible)};
}

class Printer {
public:
  explicit Printer(bool avoid_backslashes = false) : avoid_backslashes_(avoid_backslashes) {}

  std::string take() { return std::move(out_); }

  // Any node; `prec` is the binding strength its context demands (as ast.unparse's set_precedence).
  void visit(const Node *n, Prec prec = Prec::Test) {
    if (!n) {
      write("<missing>");
      return;
    }
    switch (n->info().category) {
    case Category::stmt: statement(*n); return;
    case Category::expr: expression(*n, prec); return;
    case Category::pattern: pattern(*n, prec); return;
    default: break;
    }
    switch (n->kind()) {
    case Kind::Module: module(*n); return;
    case Kind::Interactive: statements(n->children("body")); return;
    case Kind::Expression: visit(n->child("body")); return;
    case Kind::FunctionType:
      write("(");
      interleave(n->children("argtypes"), ", ", [&](const Node *t) { visit(t); });
      write(") -> ");
      visit(n->child("returns"));
      return;
    case Kind::comprehension: comprehension(*n); return;
    case Kind::ExceptHandler: except_handler(*n); return;
    case Kind::arguments: arguments(*n); return;
    case Kind::arg: arg(*n); return;
    case Kind::keyword:
      if (const std::string *name = n->text("arg")) {
        write(*name);
        write("=");
      } else {
        write("**");
      }
      visit(n->child("value"));
      return;
    case Kind::alias:
      write(*n->text("name"));
      if (const std::string *as = n->text("asname"); as && !as->empty()) write(" as " + *as);
      return;
    case Kind::withitem:
      visit(n->child("context_expr"));
      if (const Node *vars = n->child("optional_vars")) {
        write(" as ");
        visit(vars);
      }
      return;
    case Kind::match_case: match_case(*n); return;
    default: return; // contexts, operators and TypeIgnore print nothing, as with ast.unparse
    }
  }

private:
  // ---- output ----
  void write(std::string_view s) { out_.append(s); }
  void maybe_newline() {
    if (!out_.empty()) out_ += '\n';
  }
  void fill(std::string_view text = {}) {
    maybe_newline();
    out_.append(static_cast<size_t>(indent_) * 4, ' ');
    out_.append(text);
  }
  template <class F> std::string buffered(F &&f) {
    std::string saved = std::exchange(out_, std::string());
    f();
    return std::exchange(out_, std::move(saved));
  }
  template <class F> void interleave(const NodeList &items, std::string_view sep, F &&f) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) write(sep);
      f(items[i].get());
    }
  }
  // Items separated by ", ", with a trailing comma when there is exactly one.
  void items_view(const NodeList &items) {
    if (items.size() == 1) {
      visit(items[0].get());
      write(",");
    } else {
      interleave(items, ", ", [&](const Node *n) { visit(n); });
    }
  }
  template <class F> void block(F &&body, std::string_view extra = {}) {
    write(":");
    write(extra);
    ++indent_;
    body();
    --indent_;
  }
  void open_if(bool cond, std::string_view s) {
    if (cond) write(s);
  }

  // ---- statements ----
  void statements(const NodeList &body, size_t from = 0) {
    for (size_t i = from; i < body.size(); ++i)
      visit(body[i].get());
  }

  void module(const Node &n) {
    for (const auto &ti : n.children("type_ignores"))
      if (ti) type_ignores_[ti->integer("lineno").value_or(0)] = "ignore" + *ti->text("tag");
    docstring_and_body(n);
    type_ignores_.clear();
  }

  static const Node *raw_docstring(const Node &n) {
    const auto &body = n.children("body");
    if (body.empty() || !body[0] || body[0]->kind() != Kind::Expr) return nullptr;
    const Node *value = body[0]->child("value");
    if (!value || value->kind() != Kind::Constant) return nullptr;
    return std::holds_alternative<Str>(*value->constant("value")) ? value : nullptr;
  }

  void docstring_and_body(const Node &n) {
    if (const Node *doc = raw_docstring(n)) {
      fill();
      if (is_u(*doc)) write("u");
      write_str_avoiding_backslashes(std::get<Str>(*doc->constant("value")).utf8, kMultiQuotes);
      statements(n.children("body"), 1);
    } else {
      statements(n.children("body"));
    }
  }

  std::string type_comment(const Node &n) {
    if (auto it = type_ignores_.find(n.span().line); it != type_ignores_.end())
      return " # type: " + it->second;
    if (const std::string *tc = n.text("type_comment")) return " # type: " + *tc;
    return {};
  }

  void decorators(const Node &n) {
    for (const auto &d : n.children("decorator_list")) {
      fill("@");
      visit(d.get());
    }
  }

  void statement(const Node &n) {
    switch (n.kind()) {
    case Kind::FunctionDef:
    case Kind::AsyncFunctionDef:
      maybe_newline();
      decorators(n);
      fill(n.kind() == Kind::FunctionDef ? "def " : "async def ");
      write(*n.text("name"));
      write("(");
      visit(n.child("args"));
      write(")");
      if (const Node *r = n.child("returns")) {
        write(" -> ");
        visit(r);
      }
      block([&] { docstring_and_body(n); }, type_comment(n));
      return;
    case Kind::ClassDef: {
      maybe_newline();
      decorators(n);
      fill("class ");
      write(*n.text("name"));
      const auto &bases = n.children("bases");
      const auto &keywords = n.children("keywords");
      bool parens = !bases.empty() || !keywords.empty();
      open_if(parens, "(");
      bool comma = false;
      for (const auto *list : {&bases, &keywords})
        for (const auto &e : *list) {
          if (comma) write(", ");
          comma = true;
          visit(e.get());
        }
      open_if(parens, ")");
      block([&] { docstring_and_body(n); });
      return;
    }
    case Kind::Return:
      fill("return");
      if (const Node *v = n.child("value")) {
        write(" ");
        visit(v);
      }
      return;
    case Kind::Delete:
      fill("del ");
      interleave(n.children("targets"), ", ", [&](const Node *t) { visit(t); });
      return;
    case Kind::Assign:
      fill();
      for (const auto &t : n.children("targets")) {
        visit(t.get(), Prec::Tuple);
        write(" = ");
      }
      visit(n.child("value"));
      write(type_comment(n));
      return;
    case Kind::AugAssign:
      fill();
      visit(n.child("target"));
      write(" ");
      write(n.child("op") ? binop(n.child("op")->kind()).text : "<?>");
      write("= ");
      visit(n.child("value"));
      return;
    case Kind::AnnAssign: {
      fill();
      const Node *target = n.child("target");
      bool parens = n.integer("simple").value_or(0) == 0 && target && target->kind() == Kind::Name;
      open_if(parens, "(");
      visit(target);
      open_if(parens, ")");
      write(": ");
      visit(n.child("annotation"));
      if (const Node *v = n.child("value")) {
        write(" = ");
        visit(v);
      }
      return;
    }
    case Kind::For:
    case Kind::AsyncFor:
      fill(n.kind() == Kind::For ? "for " : "async for ");
      visit(n.child("target"), Prec::Tuple);
      write(" in ");
      visit(n.child("iter"));
      block([&] { statements(n.children("body")); }, type_comment(n));
      else_block(n.children("orelse"));
      return;
    case Kind::While:
      fill("while ");
      visit(n.child("test"));
      block([&] { statements(n.children("body")); });
      else_block(n.children("orelse"));
      return;
    case Kind::If: {
      fill("if ");
      visit(n.child("test"));
      block([&] { statements(n.children("body")); });
      const Node *node = &n;
      // Collapse an else holding a lone if into elif.
      while (node->children("orelse").size() == 1 && node->children("orelse")[0] &&
             node->children("orelse")[0]->kind() == Kind::If) {
        node = node->children("orelse")[0].get();
        fill("elif ");
        visit(node->child("test"));
        block([&] { statements(node->children("body")); });
      }
      else_block(node->children("orelse"));
      return;
    }
    case Kind::With:
    case Kind::AsyncWith:
      fill(n.kind() == Kind::With ? "with " : "async with ");
      interleave(n.children("items"), ", ", [&](const Node *i) { visit(i); });
      block([&] { statements(n.children("body")); }, type_comment(n));
      return;
    case Kind::Match:
      fill("match ");
      visit(n.child("subject"));
      block([&] {
        for (const auto &c : n.children("cases"))
          visit(c.get());
      });
      return;
    case Kind::Raise:
      fill("raise");
      if (const Node *exc = n.child("exc")) {
        write(" ");
        visit(exc);
        if (const Node *cause = n.child("cause")) {
          write(" from ");
          visit(cause);
        }
      }
      return;
    case Kind::Try:
    case Kind::TryStar: {
      bool saved = std::exchange(in_try_star_, n.kind() == Kind::TryStar);
      fill("try");
      block([&] { statements(n.children("body")); });
      for (const auto &h : n.children("handlers"))
        visit(h.get());
      else_block(n.children("orelse"));
      if (!n.children("finalbody").empty()) {
        fill("finally");
        block([&] { statements(n.children("finalbody")); });
      }
      in_try_star_ = saved;
      return;
    }
    case Kind::Assert:
      fill("assert ");
      visit(n.child("test"));
      if (const Node *msg = n.child("msg")) {
        write(", ");
        visit(msg);
      }
      return;
    case Kind::Import:
      fill("import ");
      interleave(n.children("names"), ", ", [&](const Node *a) { visit(a); });
      return;
    case Kind::ImportFrom: {
      fill("from ");
      out_.append(static_cast<size_t>(std::max<int64_t>(0, n.integer("level").value_or(0))), '.');
      if (const std::string *m = n.text("module")) write(*m);
      write(" import ");
      interleave(n.children("names"), ", ", [&](const Node *a) { visit(a); });
      return;
    }
    case Kind::Global:
    case Kind::Nonlocal: {
      fill(n.kind() == Kind::Global ? "global " : "nonlocal ");
      const IdentList &names = *n.idents("names");
      for (size_t i = 0; i < names.size(); ++i) {
        if (i) write(", ");
        write(names[i]);
      }
      return;
    }
    case Kind::Expr:
      fill();
      visit(n.child("value"), Prec::Yield);
      return;
    case Kind::Pass: fill("pass"); return;
    case Kind::Break: fill("break"); return;
    case Kind::Continue: fill("continue"); return;
    default: return;
    }
  }

  void else_block(const NodeList &orelse) {
    if (orelse.empty()) return;
    fill("else");
    block([&] { statements(orelse); });
  }

  void except_handler(const Node &n) {
    fill(in_try_star_ ? "except*" : "except");
    if (const Node *type = n.child("type")) {
      write(" ");
      visit(type);
    }
    if (const std::string *name = n.text("name"); name && !name->empty()) write(" as " + *name);
    block([&] { statements(n.children("body")); });
  }

  void match_case(const Node &n) {
    fill("case ");
    visit(n.child("pattern"));
    if (const Node *guard = n.child("guard")) {
      write(" if ");
      visit(guard);
    }
    block([&] { statements(n.children("body")); });
  }

  // ---- expressions ----
  static bool is_u(const Node &constant) {
    const std::string *kind = constant.text("kind");
    return kind && *kind == "u";
  }

  // Writes "(" now and ")" at scope exit when `open`: the parentheses a context's precedence demands.
  struct Parens {
    Printer &p;
    bool open;
    Parens(Printer &printer, bool cond) : p(printer), open(cond) {
      if (open) p.write("(");
    }
    ~Parens() {
      if (open) p.write(")");
    }
    Parens(const Parens &) = delete;
    Parens &operator=(const Parens &) = delete;
  };

  // One small function per kind: expressions nest thousands deep, and only the frames of the kinds on
  // the path are on the stack.
  void expression(const Node &n, Prec prec) {
    switch (n.kind()) {
    case Kind::BoolOp: bool_op(n, prec); return;
    case Kind::NamedExpr: named_expr(n, prec); return;
    case Kind::BinOp: bin_op(n, prec); return;
    case Kind::UnaryOp: unary_op(n, prec); return;
    case Kind::Lambda: lambda(n, prec); return;
    case Kind::IfExp: if_exp(n, prec); return;
    case Kind::Dict: dict(n); return;
    case Kind::Set: set(n); return;
    case Kind::ListComp:
    case Kind::SetComp:
    case Kind::GeneratorExp:
    case Kind::DictComp: comprehension_expr(n); return;
    case Kind::Await:
    case Kind::Yield:
    case Kind::YieldFrom: prefix_expr(n, prec); return;
    case Kind::Compare: compare(n, prec); return;
    case Kind::Call: call(n); return;
    case Kind::FormattedValue: formatted_value(n); return;
    case Kind::JoinedStr: joined_str(n); return;
    case Kind::Constant: constant(n); return;
    case Kind::Attribute: attribute(n); return;
    case Kind::Subscript: subscript(n); return;
    case Kind::Starred:
      write("*");
      visit(n.child("value"), Prec::Expr);
      return;
    case Kind::Name: write(*n.text("id")); return;
    case Kind::List:
      write("[");
      interleave(n.children("elts"), ", ", [&](const Node *e) { visit(e); });
      write("]");
      return;
    case Kind::Tuple: {
      const auto &elts = n.children("elts");
      Parens p(*this, elts.empty() || prec > Prec::Tuple);
      items_view(elts);
      return;
    }
    case Kind::Slice: slice(n); return;
    default: return;
    }
  }

  void bool_op(const Node &n, Prec prec) {
    bool is_and = n.child("op") && n.child("op")->kind() == Kind::And;
    Prec level = is_and ? Prec::And : Prec::Or;
    Parens p(*this, prec > level);
    const auto &values = n.children("values");
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) write(is_and ? " and " : " or ");
      level = next(level); // each operand binds one level tighter than the one before, as unparse does
      visit(values[i].get(), level);
    }
  }

  void named_expr(const Node &n, Prec prec) {
    Parens p(*this, prec > Prec::NamedExpr);
    visit(n.child("target"), Prec::Atom);
    write(" := ");
    visit(n.child("value"), Prec::Atom);
  }

  void bin_op(const Node &n, Prec prec) {
    BinopInfo op = binop(n.child("op") ? n.child("op")->kind() : Kind::Add);
    bool right_assoc = op.text == "**";
    Parens p(*this, prec > op.prec);
    visit(n.child("left"), right_assoc ? next(op.prec) : op.prec);
    write(" ");
    write(op.text);
    write(" ");
    visit(n.child("right"), right_assoc ? op.prec : next(op.prec));
  }

  void unary_op(const Node &n, Prec prec) {
    Kind op = n.child("op") ? n.child("op")->kind() : Kind::Not;
    Prec own = op == Kind::Not ? Prec::Not : Prec::Factor;
    Parens p(*this, prec > own);
    write(op == Kind::Invert ? "~" : op == Kind::Not ? "not " : op == Kind::UAdd ? "+" : "-");
    visit(n.child("operand"), own);
  }

  void lambda(const Node &n, Prec prec) {
    Parens p(*this, prec > Prec::Test);
    write("lambda");
    std::string args = buffered([&] { visit(n.child("args")); });
    if (!args.empty()) {
      write(" ");
      write(args);
    }
    write(": ");
    visit(n.child("body"), Prec::Test);
  }

  void if_exp(const Node &n, Prec prec) {
    Parens p(*this, prec > Prec::Test);
    visit(n.child("body"), next(Prec::Test));
    write(" if ");
    visit(n.child("test"), next(Prec::Test));
    write(" else ");
    visit(n.child("orelse"), Prec::Test);
  }

  void dict(const Node &n) {
    write("{");
    const auto &keys = n.children("keys");
    const auto &values = n.children("values");
    for (size_t i = 0; i < std::min(keys.size(), values.size()); ++i) {
      if (i) write(", ");
      if (!keys[i]) {
        write("**");
        visit(values[i].get(), Prec::Expr);
      } else {
        visit(keys[i].get());
        write(": ");
        visit(values[i].get());
      }
    }
    write("}");
  }

  void set(const Node &n) {
    if (n.children("elts").empty()) {
      write("{*()}"); // `{}` is a dict, and `set` may be shadowed
      return;
    }
    write("{");
    interleave(n.children("elts"), ", ", [&](const Node *e) { visit(e); });
    write("}");
  }

  void comprehension_expr(const Node &n) {
    Kind k = n.kind();
    write(k == Kind::ListComp ? "[" : k == Kind::GeneratorExp ? "(" : "{");
    if (k == Kind::DictComp) {
      visit(n.child("key"));
      write(": ");
      visit(n.child("value"));
    } else {
      visit(n.child("elt"));
    }
    for (const auto &g : n.children("generators"))
      visit(g.get());
    write(k == Kind::ListComp ? "]" : k == Kind::GeneratorExp ? ")" : "}");
  }

  // await x, yield x, yield from x.
  void prefix_expr(const Node &n, Prec prec) {
    Prec own = n.kind() == Kind::Await ? Prec::Await : Prec::Yield;
    Parens p(*this, prec > own);
    write(n.kind() == Kind::Await ? "await" : n.kind() == Kind::Yield ? "yield" : "yield from ");
    const Node *value = n.child("value");
    if (n.kind() == Kind::YieldFrom) {
      visit(value, Prec::Atom);
    } else if (value) {
      write(" ");
      visit(value, Prec::Atom);
    }
  }

  void compare(const Node &n, Prec prec) {
    Parens p(*this, prec > Prec::Cmp);
    visit(n.child("left"), next(Prec::Cmp));
    const auto &ops = n.children("ops");
    const auto &comparators = n.children("comparators");
    for (size_t i = 0; i < std::min(ops.size(), comparators.size()); ++i) {
      write(" ");
      write(ops[i] ? cmpop(ops[i]->kind()) : "<?>");
      write(" ");
      visit(comparators[i].get(), next(Prec::Cmp));
    }
  }

  void call(const Node &n) {
    visit(n.child("func"), Prec::Atom);
    write("(");
    bool comma = false;
    for (const auto *list : {&n.children("args"), &n.children("keywords")})
      for (const auto &e : *list) {
        if (comma) write(", ");
        comma = true;
        visit(e.get());
      }
    write(")");
  }

  void attribute(const Node &n) {
    const Node *value = n.child("value");
    visit(value, Prec::Atom);
    // `3.__abs__()` is a syntax error; `3 .__abs__()` is not.
    if (value && value->kind() == Kind::Constant) {
      const Constant &c = *value->constant("value");
      if (std::holds_alternative<int64_t>(c) || std::holds_alternative<BigInt>(c) ||
          std::holds_alternative<bool>(c))
        write(" ");
    }
    write(".");
    write(*n.text("attr"));
  }

  void subscript(const Node &n) {
    visit(n.child("value"), Prec::Atom);
    write("[");
    const Node *slice = n.child("slice");
    if (slice && slice->kind() == Kind::Tuple && !slice->children("elts").empty())
      items_view(slice->children("elts")); // a subscript tuple needs no parentheses
    else
      visit(slice);
    write("]");
  }

  void slice(const Node &n) {
    if (const Node *lower = n.child("lower")) visit(lower);
    write(":");
    if (const Node *upper = n.child("upper")) visit(upper);
    if (const Node *step = n.child("step")) {
      write(":");
      visit(step);
    }
  }

  void comprehension(const Node &n) {
    write(n.integer("is_async").value_or(0) ? " async for " : " for ");
    visit(n.child("target"), Prec::Tuple);
    write(" in ");
    visit(n.child("iter"), next(Prec::Test));
    for (const auto &cond : n.children("ifs")) {
      write(" if ");
      visit(cond.get(), next(Prec::Test));
    }
  }

  void arg(const Node &n) {
    write(*n.text("arg"));
    if (const Node *ann = n.child("annotation")) {
      write(": ");
      visit(ann);
    }
  }

  void arguments(const Node &n) {
    bool first = true;
    auto comma = [&] {
      if (!first) write(", ");
      first = false;
    };
    const auto &posonly = n.children("posonlyargs");
    const auto &args = n.children("args");
    const auto &defaults = n.children("defaults");
    size_t total = posonly.size() + args.size();
    size_t first_default = total >= defaults.size() ? total - defaults.size() : 0;
    for (size_t i = 0; i < total; ++i) {
      const Node *a = i < posonly.size() ? posonly[i].get() : args[i - posonly.size()].get();
      comma();
      visit(a);
      if (i >= first_default) {
        if (const Node *d = defaults[i - first_default].get()) {
          write("=");
          visit(d);
        }
      }
      if (i + 1 == posonly.size()) write(", /");
    }
    const Node *vararg = n.child("vararg");
    const auto &kwonly = n.children("kwonlyargs");
    if (vararg || !kwonly.empty()) {
      comma();
      write("*");
      if (vararg) {
        write(*vararg->text("arg"));
        if (const Node *ann = vararg->child("annotation")) {
          write(": ");
          visit(ann);
        }
      }
    }
    const auto &kw_defaults = n.children("kw_defaults");
    for (size_t i = 0; i < kwonly.size(); ++i) {
      write(", ");
      visit(kwonly[i].get());
      if (i < kw_defaults.size() && kw_defaults[i]) {
        write("=");
        visit(kw_defaults[i].get());
      }
    }
    if (const Node *kwarg = n.child("kwarg")) {
      comma();
      write("**");
      write(*kwarg->text("arg"));
      if (const Node *ann = kwarg->child("annotation")) {
        write(": ");
        visit(ann);
      }
    }
  }

  // ---- literals ----
  void write_str_avoiding_backslashes(std::string_view utf8, const Quotes &quote_types = kAllQuotes) {
    LiteralBody body = str_literal(utf8, quote_types, false);
    write(body.quotes[0]);
    write(body.text);
    write(body.quotes[0]);
  }

  void write_constant(const Constant &c) {
    struct Visitor {
      Printer &p;
      void operator()(NoneValue) { p.write("None"); }
      void operator()(bool b) { p.write(b ? "True" : "False"); }
      void operator()(int64_t i) { p.write(std::to_string(i)); }
      void operator()(const BigInt &b) { p.write(b.decimal); }
      void operator()(const Float &f) { p.write(number_source(float_repr(f.value))); }
      void operator()(const Complex &z) { p.write(number_source(complex_repr(z.real, z.imag))); }
      void operator()(const Str &s) {
        if (p.avoid_backslashes_)
          p.write_str_avoiding_backslashes(s.utf8);
        else
          p.write(str_repr(s.utf8));
      }
      void operator()(const Bytes &b) { p.write(bytes_repr(b.data)); }
      void operator()(EllipsisValue) { p.write("..."); }
    };
    std::visit(Visitor{*this}, c);
  }

  void constant(const Node &n) {
    const Constant &c = *n.constant("value");
    if (std::holds_alternative<EllipsisValue>(c)) {
      write("...");
      return;
    }
    if (is_u(n)) write("u");
    write_constant(c);
  }

  // The text of an f-string part without quoting: literal text with braces doubled, replacement fields.
  void fstring_inner(const Node *n) {
    if (!n) return;
    if (n->kind() == Kind::JoinedStr) {
      for (const auto &v : n->children("values"))
        fstring_inner(v.get());
    } else if (n->kind() == Kind::Constant && std::holds_alternative<Str>(*n->constant("value"))) {
      const std::string &s = std::get<Str>(*n->constant("value")).utf8;
      write(replace_all(replace_all(s, "{", "{{"), "}", "}}"));
    } else if (n->kind() == Kind::FormattedValue) {
      formatted_value(*n);
    } else {
      write("{");
      visit(n, next(Prec::Test));
      write("}");
    }
  }

  void formatted_value(const Node &n) {
    write("{");
    Printer inner(true);
    inner.visit(n.child("value"), next(Prec::Test));
    std::string expr = inner.take();
    if (!expr.empty() && expr[0] == '{') write(" "); // `{ {` keeps a set or dict from reading as `{{`
    write(expr);
    int64_t conversion = n.integer("conversion").value_or(-1);
    if (conversion != -1) {
      write("!");
      append_utf8(out_, static_cast<uint32_t>(conversion));
    }
    if (const Node *spec = n.child("format_spec")) {
      write(":");
      fstring_inner(spec);
    }
    write("}");
  }

  void joined_str(const Node &n) {
    write("f");
    if (avoid_backslashes_) {
      std::string body = buffered([&] { fstring_inner(&n); });
      write_str_avoiding_backslashes(body);
      return;
    }
    // Literal parts may use escaped whitespace (f"{x}\n"); replacement fields must avoid backslashes.
    Quotes quote_types = kAllQuotes;
    std::string text;
    for (const auto &v : n.children("values")) {
      std::string part = buffered([&] { fstring_inner(v.get()); });
      bool is_constant = v && v->kind() == Kind::Constant;
      LiteralBody body = str_literal(part, quote_types, is_constant);
      text += body.text;
      quote_types = std::move(body.quotes);
    }
    write(quote_types[0]);
    write(text);
    write(quote_types[0]);
  }

  // ---- patterns ----
  void pattern(const Node &n, Prec prec) {
    switch (n.kind()) {
    case Kind::MatchValue: visit(n.child("value")); return;
    case Kind::MatchSingleton: write_constant(*n.constant("value")); return;
    case Kind::MatchSequence:
      write("[");
      interleave(n.children("patterns"), ", ", [&](const Node *p) { visit(p); });
      write("]");
      return;
    case Kind::MatchStar: {
      const std::string *name = n.text("name");
      write("*");
      write(name ? *name : "_");
      return;
    }
    case Kind::MatchMapping: {
      write("{");
      const auto &keys = n.children("keys");
      const auto &patterns = n.children("patterns");
      for (size_t i = 0; i < std::min(keys.size(), patterns.size()); ++i) {
        if (i) write(", ");
        visit(keys[i].get());
        write(": ");
        visit(patterns[i].get());
      }
      if (const std::string *rest = n.text("rest")) {
        if (!keys.empty()) write(", ");
        write("**");
        write(*rest);
      }
      write("}");
      return;
    }
    case Kind::MatchClass: {
      visit(n.child("cls"), Prec::Atom);
      write("(");
      const auto &patterns = n.children("patterns");
      interleave(patterns, ", ", [&](const Node *p) { visit(p); });
      const IdentList &attrs = *n.idents("kwd_attrs");
      const auto &kwd_patterns = n.children("kwd_patterns");
      if (!attrs.empty() && !patterns.empty()) write(", ");
      for (size_t i = 0; i < std::min(attrs.size(), kwd_patterns.size()); ++i) {
        if (i) write(", ");
        write(attrs[i]);
        write("=");
        visit(kwd_patterns[i].get());
      }
      write(")");
      return;
    }
    case Kind::MatchAs: {
      const std::string *name = n.text("name");
      const Node *inner = n.child("pattern");
      if (!name) {
        write("_");
      } else if (!inner) {
        write(*name);
      } else {
        bool p = prec > Prec::Test;
        open_if(p, "(");
        visit(inner, Prec::BOr);
        write(" as ");
        write(*name);
        open_if(p, ")");
      }
      return;
    }
    case Kind::MatchOr: {
      bool p = prec > Prec::BOr;
      open_if(p, "(");
      interleave(n.children("patterns"), " | ", [&](const Node *q) { visit(q, next(Prec::BOr)); });
      open_if(p, ")");
      return;
    }
    default: return;
    }
  }

  std::string out_;
  int indent_ = 0;
  bool avoid_backslashes_;
  bool in_try_star_ = false;
  std::map<uint32_t, std::string> type_ignores_;
};

} // namespace

std::string to_source(const Node &node) {
  Printer p;
  p.visit(&node);
  return p.take();
}

std::string to_source(const Module &module) {
  return module.root ? to_source(*module.root) : std::string();
}

} // namespace htp::ast
