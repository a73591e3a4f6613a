// Test helper: terse construction of host AST trees, e.g. bin(name("a"), Kind::Add, num(1)).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "ast/node.hpp"

namespace htp::ast::test {

/// A node under construction; f() sets a field (failing the test if the grammar rejects it).
class B {
public:
  explicit B(Kind kind) : node_(Node::make(kind)) {}
  B(NodePtr node) : node_(std::move(node)) {}

  B &&f(std::string_view field, Value v) && {
    auto old = node_->set(field, std::move(v));
    if (!old) ADD_FAILURE() << old.error().message;
    return std::move(*this);
  }
  B &&f(std::string_view field, B &&child) && {
    return std::move(*this).f(field, Value(std::move(child).take()));
  }
  B &&at(uint32_t line, uint32_t col, uint32_t end_line, uint32_t end_col, std::string file = "t.py") && {
    node_->set_span(Span{std::move(file), line, col, end_line, end_col});
    return std::move(*this);
  }
  NodePtr take() && { return std::move(node_); }
  operator NodePtr() && { return std::move(node_); }

private:
  NodePtr node_;
};

template <class... Bs> NodeList list(Bs &&...items) {
  NodeList l;
  (l.push_back(std::move(items).take()), ...);
  return l;
}

inline B name(std::string id, Kind ctx = Kind::Load) {
  return B(Kind::Name).f("id", std::move(id)).f("ctx", B(ctx));
}
inline B num(int64_t v) {
  return B(Kind::Constant).f("value", Constant{v});
}
inline B cst(Constant c) {
  return B(Kind::Constant).f("value", std::move(c));
}
inline B str(std::string s) {
  return cst(Str{std::move(s)});
}
inline B bin(B l, Kind op, B r) {
  return B(Kind::BinOp).f("left", std::move(l)).f("op", B(op)).f("right", std::move(r));
}
inline B unary(Kind op, B operand) {
  return B(Kind::UnaryOp).f("op", B(op)).f("operand", std::move(operand));
}
inline B boolop(Kind op, NodeList values) {
  return B(Kind::BoolOp).f("op", B(op)).f("values", std::move(values));
}
inline B tuple(NodeList elts, Kind ctx = Kind::Load) {
  return B(Kind::Tuple).f("elts", std::move(elts)).f("ctx", B(ctx));
}
inline B call(B func, NodeList args = {}) {
  return B(Kind::Call).f("func", std::move(func)).f("args", std::move(args));
}
inline B expr_stmt(B e) {
  return B(Kind::Expr).f("value", std::move(e));
}
inline B assign(NodeList targets, B value) {
  return B(Kind::Assign).f("targets", std::move(targets)).f("value", std::move(value));
}
inline B ret(B value) {
  return B(Kind::Return).f("value", std::move(value));
}
inline B arguments(NodeList args = {}) {
  return B(Kind::arguments).f("args", std::move(args));
}
inline B arg(std::string n) {
  return B(Kind::arg).f("arg", std::move(n));
}
inline B def(std::string n, NodeList body, NodeList args = {}) {
  return B(Kind::FunctionDef)
      .f("name", std::move(n))
      .f("args", arguments(std::move(args)))
      .f("body", std::move(body));
}
inline B cls(std::string n, NodeList body) {
  return B(Kind::ClassDef).f("name", std::move(n)).f("body", std::move(body));
}
inline B module(NodeList body) {
  return B(Kind::Module).f("body", std::move(body));
}

} // namespace htp::ast::test
