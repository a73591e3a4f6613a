#include "ast/json_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "ast/json_reader.hpp"
#include "ast/literal.hpp"
#include "ast/unicode.hpp"
#include "json/json_text_writer.hpp"

namespace htp::ast {
namespace {

using json = nlohmann::json;

// Per node kind, its field indices in key order (the order json.dumps(sort_keys=True) writes them).
const std::vector<size_t> &sorted_fields(Kind kind) {
  static const auto table = [] {
    std::array<std::vector<size_t>, kKindCount> t;
    for (size_t k = 0; k < kKindCount; ++k) {
      const auto &fields = kind_info(static_cast<Kind>(k)).fields;
      for (size_t i = 0; i < fields.size(); ++i)
        t[k].push_back(i);
      std::sort(t[k].begin(), t[k].end(),
                [&](size_t a, size_t b) { return fields[a].name < fields[b].name; });
    }
    return t;
  }();
  return table[static_cast<size_t>(kind)];
}

class Writer {
public:
  explicit Writer(int indent) : json_(indent, InvalidUtf8::Replace) {}

  std::string take() { return json_.take(); }

  void document(const Module &m) {
    open('{');
    if (!m.attrs.empty()) {
      key("attrs");
      attributes(m.attrs);
    }
    key("file");
    string(m.file);
    key("format");
    string(kAstJsonFormat);
    key("root");
    if (m.root)
      node(*m.root);
    else
      json_.null();
    if (!m.source.empty()) {
      key("source");
      string(m.source);
    }
    close('}');
  }

private:
  // Layout and escaping are the shared JSON text writer's (json.dumps(ensure_ascii=False) rules; invalid
  // UTF-8 becomes U+FFFD).
  void open(char c) { c == '{' ? json_.begin_object() : json_.begin_array(); }
  void close(char c) { c == '}' ? json_.end_object() : json_.end_array(); }
  void key(std::string_view k) { json_.key(k); }
  void string(std::string_view s) { json_.string(s); }

  void number(int64_t v) { json_.integer(v); }

  void float_payload(double v) {
    if (std::isnan(v))
      string("nan");
    else if (std::isinf(v))
      string(v > 0 ? "inf" : "-inf");
    else
      json_.raw(float_repr(v));
  }

  // Any JSON value (attributes), written with the same rules as the tree.
  void value(const json &j) {
    switch (j.type()) {
    case json::value_t::object:
      open('{');
      for (auto it = j.begin(); it != j.end(); ++it) {
        key(it.key());
        value(*it);
      }
      close('}');
      return;
    case json::value_t::array:
      open('[');
      for (const auto &e : j) {
        value(e);
      }
      close(']');
      return;
    case json::value_t::string: string(j.get_ref<const std::string &>()); return;
    case json::value_t::number_float: {
      double d = j.get<double>();
      if (std::isfinite(d))
        json_.raw(float_repr(d));
      else
        json_.null();
      return;
    }
    default: json_.raw(j.dump()); return;
    }
  }

  void attributes(const Attributes &attrs) {
    open('{');
    for (const auto &[k, v] : attrs) {
      key(k);
      value(v);
    }
    close('}');
  }

  void tagged(std::string_view tag) {
    open('{');
    key(tag);
  }

  void constant(const Constant &c) {
    struct Visitor {
      Writer &w;
      void operator()(NoneValue) { w.json_.null(); }
      void operator()(bool b) { w.json_.boolean(b); }
      void operator()(int64_t i) { w.number(i); }
      void operator()(const BigInt &b) {
        w.tagged("int");
        w.string(b.decimal);
        w.close('}');
      }
      void operator()(const Float &f) {
        w.tagged("float");
        w.float_payload(f.value);
        w.close('}');
      }
      void operator()(const Complex &z) {
        w.tagged("complex");
        w.open('[');
        w.float_payload(z.real);
        w.float_payload(z.imag);
        w.close(']');
        w.close('}');
      }
      void operator()(const Str &s) {
        if (!has_surrogates(s.utf8)) {
          w.string(s.utf8);
          return;
        }
        w.tagged("codepoints");
        w.open('[');
        for (size_t pos = 0; pos < s.utf8.size();) {
          w.number(decode_utf8(s.utf8, pos));
        }
        w.close(']');
        w.close('}');
      }
      void operator()(const Bytes &b) {
        std::string latin1;
        for (unsigned char c : b.data)
          append_utf8(latin1, c);
        w.tagged("bytes");
        w.string(latin1);
        w.close('}');
      }
      void operator()(EllipsisValue) {
        w.tagged("ellipsis");
        w.json_.boolean(true);
        w.close('}');
      }
    };
    std::visit(Visitor{*this}, c);
  }

  void field_value(const Value &v) {
    struct Visitor {
      Writer &w;
      void operator()(const std::monostate &) { w.json_.null(); }
      void operator()(const NodePtr &n) { w.node(*n); }
      void operator()(const NodeList &list) {
        w.open('[');
        for (const auto &n : list) {
          if (n)
            w.node(*n);
          else
            w.json_.null();
        }
        w.close(']');
      }
      void operator()(const std::string &s) { w.string(s); }
      void operator()(const IdentList &list) {
        w.open('[');
        for (const auto &s : list) {
          w.string(s);
        }
        w.close(']');
      }
      void operator()(const Constant &c) { w.constant(c); }
      void operator()(int64_t i) { w.number(i); }
    };
    std::visit(Visitor{*this}, v);
  }

  void node(const Node &n) {
    open('{');
    if (!n.attrs().empty()) {
      key("_attrs");
      attributes(n.attrs());
    }
    if (n.info().located && n.span().known()) {
      const Span &s = n.span();
      key("_span");
      open('[');
      for (uint32_t v : {s.line, s.col, s.end_line, s.end_col}) {
        number(v);
      }
      close(']');
    }
    key("_type");
    string(n.type_name());
    for (size_t f : sorted_fields(n.kind())) {
      key(n.field_info(f).name);
      field_value(n.field(f));
    }
    close('}');
  }

  JsonTextWriter json_;
};

} // namespace

std::string dump_json(const Module &module, int indent) {
  Writer w(indent);
  w.document(module);
  return w.take();
}

} // namespace htp::ast
