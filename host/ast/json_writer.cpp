#include "ast/json_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "ast/json_reader.hpp"
#include "ast/literal.hpp"
#include "ast/unicode.hpp"

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
  explicit Writer(int indent) : indent_(indent) {}
  std::string out;

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
      out += "null";
    if (!m.source.empty()) {
      key("source");
      string(m.source);
    }
    close('}');
  }

private:
  // Containers: `first_` tracks whether the next item needs a separator.
  void open(char c) {
    out += c;
    ++level_;
    first_ = true;
  }
  void close(char c) {
    --level_;
    if (!first_) newline();
    out += c;
    first_ = false;
  }
  void item() {
    if (!first_) out += ',';
    first_ = false;
    newline();
  }
  void newline() {
    if (indent_ < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(level_ * indent_), ' ');
  }
  void key(std::string_view k) {
    item();
    string(k);
    out += indent_ < 0 ? ":" : ": ";
  }

  // json.dumps(ensure_ascii=False) escaping; invalid UTF-8 becomes U+FFFD.
  void string(std::string_view s) {
    out += '"';
    for (size_t pos = 0; pos < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[pos]);
      if (c >= 0x80) {
        size_t at = pos;
        if (decode_strict_utf8(s, pos))
          out.append(s.substr(at, pos - at));
        else
          append_utf8(out, kReplacementChar);
        continue;
      }
      ++pos;
      switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
      }
    }
    out += '"';
  }

  void number(int64_t v) { out += std::to_string(v); }

  void float_payload(double v) {
    if (std::isnan(v))
      string("nan");
    else if (std::isinf(v))
      string(v > 0 ? "inf" : "-inf");
    else
      out += float_repr(v);
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
        item();
        value(e);
      }
      close(']');
      return;
    case json::value_t::string: string(j.get_ref<const std::string &>()); return;
    case json::value_t::number_float: {
      double d = j.get<double>();
      if (std::isfinite(d))
        out += float_repr(d);
      else
        out += "null";
      return;
    }
    default: out += j.dump(); return;
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
      void operator()(NoneValue) { w.out += "null"; }
      void operator()(bool b) { w.out += b ? "true" : "false"; }
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
        w.item();
        w.float_payload(z.real);
        w.item();
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
          w.item();
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
        w.out += "true";
        w.close('}');
      }
    };
    std::visit(Visitor{*this}, c);
  }

  void field_value(const Value &v) {
    struct Visitor {
      Writer &w;
      void operator()(const std::monostate &) { w.out += "null"; }
      void operator()(const NodePtr &n) { w.node(*n); }
      void operator()(const NodeList &list) {
        w.open('[');
        for (const auto &n : list) {
          w.item();
          if (n)
            w.node(*n);
          else
            w.out += "null";
        }
        w.close(']');
      }
      void operator()(const std::string &s) { w.string(s); }
      void operator()(const IdentList &list) {
        w.open('[');
        for (const auto &s : list) {
          w.item();
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
        item();
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

  int indent_;
  int level_ = 0;
  bool first_ = true;
};

} // namespace

std::string dump_json(const Module &module, int indent) {
  Writer w(indent);
  w.document(module);
  return std::move(w.out);
}

} // namespace htp::ast
