#include "ast_build.hpp"

namespace csp {

htp::NodeRef AstBuilder::name(std::string_view id, bool store) const {
  htp::NodeRef n = m_.create("Name", &span_);
  m_.set_text(n, "id", id);
  m_.set_child(n, "ctx", m_.create(store ? "Store" : "Load"));
  return n;
}

htp::NodeRef AstBuilder::str(std::string_view text) const {
  htp::NodeRef n = m_.create("Constant", &span_);
  HtpConstant c{};
  c.struct_size = sizeof c;
  c.kind = HTP_CONST_STR;
  c.text = htp::to_htp_str(text);
  m_.set_constant(n, c);
  return n;
}

htp::NodeRef AstBuilder::keyword(std::string_view arg, htp::NodeRef value) const {
  htp::NodeRef k = m_.create("keyword", &span_);
  m_.set_text(k, "arg", arg);
  m_.set_child(k, "value", value);
  return k;
}

htp::NodeRef AstBuilder::call(std::string_view fn, std::vector<htp::NodeRef> args,
                              std::vector<htp::NodeRef> keywords) const {
  htp::NodeRef c = m_.create("Call", &span_);
  m_.set_child(c, "func", name(fn));
  for (size_t i = 0; i < args.size(); ++i)
    m_.insert(c, "args", i, args[i]);
  for (size_t i = 0; i < keywords.size(); ++i)
    m_.insert(c, "keywords", i, keywords[i]);
  return c;
}

htp::NodeRef AstBuilder::assign(htp::NodeRef target, htp::NodeRef value) const {
  htp::NodeRef a = m_.create("Assign", &span_);
  m_.insert(a, "targets", 0, target);
  m_.set_child(a, "value", value);
  return a;
}

htp::NodeRef AstBuilder::arg(std::string_view n, htp::NodeRef annotation) const {
  htp::NodeRef a = m_.create("arg", &span_);
  m_.set_text(a, "arg", n);
  if (annotation) m_.set_child(a, "annotation", annotation);
  return a;
}

htp::NodeRef AstBuilder::binop(std::string_view op, htp::NodeRef l, htp::NodeRef r) const {
  htp::NodeRef b = m_.create("BinOp", &span_);
  m_.set_child(b, "left", l);
  m_.set_child(b, "op", m_.create(op));
  m_.set_child(b, "right", r);
  return b;
}

htp::NodeRef AstBuilder::expr(const Json &e) const {
  if (e.is_number_integer()) return integer(e.get<int64_t>());
  if (e.is_object() && e.contains("param")) return name(e["param"].get<std::string>());
  if (!e.is_object() || !e.contains("op") || !e["args"].is_array() || e["args"].empty())
    throw htp::PassError("cannot write the expression " + e.dump() + " as Python");
  static const std::map<std::string, std::string> ops = {
      {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mult"}, {"floordiv", "FloorDiv"}, {"mod", "Mod"}};
  std::string op = e["op"];
  const Json &args = e["args"];
  if (op == "neg") {
    htp::NodeRef u = m_.create("UnaryOp", &span_);
    m_.set_child(u, "op", m_.create("USub"));
    m_.set_child(u, "operand", expr(args[0]));
    return u;
  }
  if (op == "min" || op == "max") return call(op, {expr(args[0]), expr(args[1])});
  auto it = ops.find(op);
  if (it == ops.end()) throw htp::PassError("cannot write the operation '" + op + "' as Python");
  htp::NodeRef acc = expr(args[0]);
  for (size_t i = 1; i < args.size(); ++i)
    acc = binop(it->second, acc, expr(args[i]));
  return acc;
}

} // namespace csp
