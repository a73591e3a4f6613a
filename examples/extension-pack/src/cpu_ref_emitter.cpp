// The cpu-ref emit pass: plain C++17 loops for the host CPU from `tile.kernels` (htp.tile.kernels.v1,
// docs/ir-contracts.md §4). One file, codegen/cpu-ref/program.cpp, holds one function per kernel and an
// entry `extern "C" void htp_cpuref_<kernel>(void *const *args)` whose args are, in parameter order, the
// tensors' data pointers and pointers to the scalars (int64_t for integer dtypes, double for floats).
// The pass also sets `htp.entrypoints` (contract §8) so that `htp-host run` can call the binding.
#include "ext_pack.hpp"

#include <cctype>
#include <map>
#include <sstream>

namespace extpack {

namespace {

struct Tile {
  int64_t rows = 0, cols = 0;
  std::string ctype;
};

/// An emit error at the span of the op or kernel it concerns.
struct EmitError : std::runtime_error {
  EmitError(const std::string &code, const std::string &message, json span)
      : std::runtime_error(message), code(code), span(std::move(span)) {}
  std::string code;
  json span;
};

std::string ctype_of(const std::string &dtype, const json &span) {
  static const std::map<std::string, std::string> types = {{"f32", "float"},    {"i64", "int64_t"}, {"i32", "int32_t"},
                                                           {"i16", "int16_t"},  {"i8", "int8_t"},   {"u8", "uint8_t"}};
  auto it = types.find(dtype);
  if (it == types.end())
    throw EmitError("cpu-ref.dtype", "cpu-ref has no C++ type for dtype '" + dtype + "' (f32 and integer dtypes only)", span);
  return it->second;
}

std::string literal(const json &v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return "int64_t(" + std::to_string(v.get<int64_t>()) + ")";
  std::ostringstream s;
  s.precision(17);
  s << std::showpoint << v.get<double>();
  return s.str();
}

/// Emits one kernel of tile.kernels as a C++ function.
class KernelEmitter {
public:
  KernelEmitter(const json &kernel, const json &placements) : k_(kernel), placements_(placements) {}

  std::string function() {
    for (const json &p : k_["params"]) params_[p["name"].get<std::string>()] = p;
    std::string out = "// kernel " + name() + " (line " + std::to_string(k_["span"].value("line", 0)) + ")\n";
    out += "void kernel_" + name() + "(" + parameter_list() + ") {\n";
    out += constexpr_params() + locals();
    body(k_["body"], 1, out);
    return out + "}\n";
  }

  /// The extern "C" entry that unpacks `args` and calls the kernel function.
  std::string entry() const {
    std::string call, out = "extern \"C\" void htp_cpuref_" + name() + "(void *const *args) {\n";
    size_t i = 0;
    for (const json &p : runtime_params()) {
      std::string t = ctype_of(p["type"]["dtype"], k_["span"]);
      bool tensor = p["type"]["kind"] == "tensor";
      std::string slot = "args[" + std::to_string(i++) + "]";
      std::string value = tensor ? "static_cast<" + t + " *>(" + slot + ")"
                                 : "static_cast<" + t + ">(*static_cast<const " + scalar_carrier(t) + " *>(" + slot + "))";
      call += (call.empty() ? "" : ", ") + value;
    }
    return out + "  kernel_" + name() + "(" + call + ");\n}\n";
  }

  /// This kernel's entry for htp.entrypoints.
  json entrypoint() const {
    json params = json::array();
    for (const json &p : runtime_params()) {
      const json &t = p["type"];
      if (t["kind"] == "tensor")
        params.push_back({{"name", p["name"]}, {"kind", "tensor"}, {"dir", p["dir"]}, {"shape", t["shape"]}, {"dtype", t["dtype"]}});
      else
        params.push_back({{"name", p["name"]}, {"kind", "scalar"}, {"dir", "in"}, {"dtype", t["dtype"]}});
    }
    return {{"name", name()}, {"kind", "kernel"}, {"params", params}};
  }

private:
  std::string name() const { return k_["name"].get<std::string>(); }
  static std::string scalar_carrier(const std::string &ctype) { return ctype == "float" ? "double" : "int64_t"; }

  std::vector<json> runtime_params() const {
    std::vector<json> out;
    for (const json &p : k_["params"])
      if (p["type"]["kind"] == "tensor" || p["type"]["kind"] == "scalar") out.push_back(p);
    return out;
  }

  std::string parameter_list() const {
    std::string out;
    for (const json &p : runtime_params()) {
      std::string t = ctype_of(p["type"]["dtype"], k_["span"]);
      out += (out.empty() ? "" : ", ") + t + (p["type"]["kind"] == "tensor" ? " *p_" : " p_") + p["name"].get<std::string>();
    }
    return out;
  }

  std::string constexpr_params() const {
    std::string out;
    for (const json &p : k_["params"])
      if (p["type"]["kind"] == "constexpr" && !p["type"]["value"].is_null())
        out += "  const auto p_" + p["name"].get<std::string>() + " = " + literal(p["type"]["value"]) + ";\n";
    return out;
  }

  std::string locals() {
    std::string out;
    const json placed = placements_.value(name(), json::object());
    for (const json &l : k_["locals"]) {
      std::string n = l["name"], t = ctype_of(l["dtype"], k_["span"]);
      if (l.value("kind", "tile") == "scalar") {
        out += "  " + t + " v_" + n + "{};\n";
        continue;
      }
      Tile tile{l["shape"][0].get<int64_t>(), l["shape"][1].get<int64_t>(), t};
      tiles_[n] = tile;
      if (placed.contains(n))
        out += "  // " + n + ": Place(\"" + placed[n].value("space", "") + "\"), " +
               std::to_string(placed[n].value("bytes", 0)) + " bytes there; host memory on cpu-ref\n";
      out += "  std::vector<" + t + "> r_" + n + "(" + std::to_string(tile.rows * tile.cols) + ");\n";
    }
    return out;
  }

  const Tile &tile(const json &reg, const json &span) const {
    auto it = tiles_.find(reg.is_string() ? reg.get<std::string>() : "");
    if (it == tiles_.end()) throw EmitError("cpu-ref.ir", "operand " + reg.dump() + " is not a tile register", span);
    return it->second;
  }
  static std::string reg(const json &r) { return "r_" + r.get<std::string>(); }

  std::string expr(const json &e) const {
    if (!e.is_object()) return literal(e);
    if (e.contains("var")) return "v_" + e["var"].get<std::string>();
    if (e.contains("param")) return "p_" + e["param"].get<std::string>();
    if (e.contains("read")) return "p_" + e["read"].get<std::string>() + "[" + linear_index(e["read"], e["index"]) + "]";
    static const std::map<std::string, std::string> infix = {
        {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"lt", "<"},  {"le", "<="}, {"eq", "=="},
        {"ne", "!="}, {"gt", ">"},  {"ge", ">="}, {"and", "&&"}, {"or", "||"}};
    static const std::map<std::string, std::string> calls = {
        {"floordiv", "floordiv"}, {"mod", "pymod"}, {"min", "pymin"}, {"max", "pymax"}};
    std::string op = e.value("op", "");
    const json &a = e["args"];
    if (auto it = infix.find(op); it != infix.end()) return "(" + expr(a[0]) + " " + it->second + " " + expr(a[1]) + ")";
    if (auto it = calls.find(op); it != calls.end()) return it->second + "(" + expr(a[0]) + ", " + expr(a[1]) + ")";
    if (op == "neg") return "(-" + expr(a[0]) + ")";
    if (op == "not") return "(!" + expr(a[0]) + ")";
    if (op == "select") return "(" + expr(a[0]) + " ? " + expr(a[1]) + " : " + expr(a[2]) + ")";
    throw EmitError("cpu-ref.ir", "unknown scalar operation " + e.dump(), nullptr);
  }

  /// Row-major element offset of `index` (one Expr per dim) into tensor parameter `tensor`.
  std::string linear_index(const json &tensor, const json &index) const {
    const json &shape = params_.at(tensor.get<std::string>())["type"]["shape"];
    std::string out = "0";
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      out += " + " + expr(index[d]) + " * " + std::to_string(stride);
      stride *= shape[d].get<int64_t>();
    }
    return out;
  }

  /// `for (r, c) in tile` around `statement` (which reads r, c and i = r * C + c).
  static std::string loop2d(const Tile &t, const std::string &statement, int depth) {
    std::string pad(2 * depth, ' ');
    return pad + "for (int64_t r = 0; r < " + std::to_string(t.rows) + "; ++r)\n" + pad + "  for (int64_t c = 0; c < " +
           std::to_string(t.cols) + "; ++c) { const int64_t i = r * " + std::to_string(t.cols) + " + c; (void)i; " +
           statement + " }\n";
  }

  /// Base element offset and row stride of a (tensor, offset) view.
  std::pair<std::string, std::string> view(const json &tensor, const json &offset, const json &span) const {
    auto it = params_.find(tensor.get<std::string>());
    if (it == params_.end()) throw EmitError("cpu-ref.ir", "view of unknown tensor " + tensor.dump(), span);
    const json &shape = it->second["type"]["shape"];
    int64_t row_stride = shape.size() >= 2 ? shape[shape.size() - 1].get<int64_t>() : 0;
    return {linear_index(tensor, offset), std::to_string(row_stride)};
  }

  void op(const json &o, int depth, std::string &out) {
    const std::string kind = o.value("op", "");
    const json &span = o.contains("span") ? o["span"] : k_["span"];
    const std::string pad(2 * depth, ' ');
    auto dst = [&] { return tile(o["dst"], span); };
    auto arg = [&](size_t i) { return reg(o["args"][i]) + "[i]"; };
    static const std::map<std::string, std::string> binary = {
        {"add", "A + B"}, {"sub", "A - B"}, {"mul", "A * B"}, {"div", "A / B"}, {"max", "std::max(A, B)"}, {"min", "std::min(A, B)"}};
    static const std::map<std::string, std::string> unary = {
        {"exp", "std::exp(A)"},   {"log", "std::log(A)"},    {"sqrt", "std::sqrt(A)"}, {"rsqrt", "1 / std::sqrt(A)"},
        {"abs", "std::abs(A)"},   {"neg", "-A"},             {"relu", "std::max(A, T(0))"},
        {"recip", "1 / A"},       {"tanh", "std::tanh(A)"},  {"sigmoid", "1 / (1 + std::exp(-A))"}};
    auto fill = [](std::string pattern, const std::map<char, std::string> &with) {
      for (size_t at = 0; at < pattern.size(); ++at)
        if (auto it = with.find(pattern[at]); it != with.end() && (at + 1 == pattern.size() || !std::isalpha(pattern[at + 1])) &&
                                                 (at == 0 || !std::isalpha(pattern[at - 1]))) {
          pattern.replace(at, 1, it->second);
          at += it->second.size() - 1;
        }
      return pattern;
    };
    auto elementwise = [&](const std::string &pattern, const std::map<char, std::string> &with) {
      const Tile &t = dst();
      std::map<char, std::string> w = with;
      w['T'] = t.ctype;
      out += loop2d(t, reg(o["dst"]) + "[i] = " + t.ctype + "(" + fill(pattern, w) + ");", depth);
    };

    if (kind == "load" || kind == "store") {
      bool load = kind == "load";
      const Tile &t = tile(load ? o["dst"] : o["value"], span);
      auto [base, ld] = view(load ? o["src"] : o["dst"], o["offset"], span);
      std::string g = "p_" + (load ? o["src"] : o["dst"]).get<std::string>() + "[base + r * " + ld + " + c]";
      std::string l = reg(load ? o["dst"] : o["value"]) + "[i]";
      out += pad + "{ const int64_t base = " + base + ";\n" + loop2d(t, load ? l + " = " + g + ";" : g + " = " + l + ";", depth + 1) +
             pad + "}\n";
    } else if (binary.count(kind)) {
      elementwise(binary.at(kind), {{'A', arg(0)}, {'B', arg(1)}});
    } else if (kind.size() > 1 && kind.back() == 's' && binary.count(kind.substr(0, kind.size() - 1))) {  // adds, muls, ...
      elementwise(binary.at(kind.substr(0, kind.size() - 1)), {{'A', arg(0)}, {'B', dst().ctype + "(" + expr(o["scalar"]) + ")"}});
    } else if (unary.count(kind)) {
      elementwise(unary.at(kind), {{'A', arg(0)}});
    } else if (kind == "cast" || kind == "copy") {
      elementwise("A", {{'A', arg(0)}});
    } else if (kind == "full") {
      elementwise("V", {{'V', expr(o["value"])}});
    } else if (kind == "ext.axpby") {  // the pack's own intrinsic, fused (see axpby_intrinsic.cpp)
      elementwise("X * A + Y * B", {{'A', arg(0)}, {'B', arg(1)}, {'X', expr(o["args"][2])}, {'Y', expr(o["args"][3])}});
    } else if (kind.starts_with("rowexpand")) {
      std::string f = kind == "rowexpand" ? "S" : binary.count(kind.substr(10)) ? binary.at(kind.substr(10)) : "";
      if (f.empty()) throw EmitError("cpu-ref.unsupported", "cpu-ref does not emit '" + kind + "'", span);
      std::string s = reg(o["args"][kind == "rowexpand" ? 0 : 1]) + "[r]";
      elementwise(kind == "rowexpand" ? "S" : f, {{'A', arg(0)}, {'B', s}, {'S', s}});
    } else if (kind == "rowsum" || kind == "rowmax" || kind == "rowmin" || kind == "colsum" || kind == "colmax" ||
               kind == "colmin") {
      reduce(o, kind, span, depth, out);
    } else if (kind == "matmul") {
      const Tile &d = dst(), &a = tile(o["args"][0], span);
      std::string acc = o.value("accumulate", false) ? reg(o["dst"]) + "[i]" : d.ctype + "(0)";
      out += loop2d(d, d.ctype + " sum = " + acc + "; for (int64_t k = 0; k < " + std::to_string(a.cols) + "; ++k) sum += " +
                           d.ctype + "(" + reg(o["args"][0]) + "[r * " + std::to_string(a.cols) + " + k]) * " + d.ctype +
                           "(" + reg(o["args"][1]) + "[k * " + std::to_string(d.cols) + " + c]); " + reg(o["dst"]) + "[i] = sum;",
                    depth);
    } else if (kind == "scalar") {
      out += pad + "v_" + o["dst"].get<std::string>() + " = " + expr(o["value"]) + ";\n";
    } else if (kind == "for") {
      std::string v = "v_" + o["var"].get<std::string>(), stop = expr(o["stop"]), step = expr(o["step"]);
      std::string cond = o["step"].is_number_integer() ? v + (o["step"].get<int64_t>() > 0 ? " < " : " > ") + stop
                                                       : "(" + step + " > 0 ? " + v + " < " + stop + " : " + v + " > " + stop + ")";
      out += pad + "for (int64_t " + v + " = " + expr(o["start"]) + "; " + cond + "; " + v + " += " + step + ") {\n";
      body(o["body"], depth + 1, out);
      out += pad + "}\n";
    } else if (kind == "if") {
      out += pad + "if (" + expr(o["cond"]) + ") {\n";
      body(o["then"], depth + 1, out);
      out += pad + "} else {\n";
      body(o.value("else", json::array()), depth + 1, out);
      out += pad + "}\n";
    } else {
      throw EmitError("cpu-ref.unsupported", "target cpu-ref cannot emit the tile op '" + kind + "'", span);
    }
  }

  void reduce(const json &o, const std::string &kind, const json &span, int depth, std::string &out) {
    const Tile &d = tile(o["dst"], span), &a = tile(o["args"][0], span);
    bool rows = kind.starts_with("row");
    std::string combine = kind.ends_with("sum") ? "acc + x" : kind.ends_with("max") ? "std::max(acc, x)" : "std::min(acc, x)";
    std::string n = std::to_string(rows ? a.cols : a.rows), src = reg(o["args"][0]);
    std::string x = rows ? src + "[r * " + std::to_string(a.cols) + " + k]" : src + "[k * " + std::to_string(a.cols) + " + c]";
    std::string init = kind.ends_with("sum") ? d.ctype + "(0)" : (rows ? src + "[r * " + std::to_string(a.cols) + "]" : src + "[c]");
    out += loop2d(d, d.ctype + " acc = " + init + "; for (int64_t k = 0; k < " + n + "; ++k) { const " + d.ctype + " x = " + x +
                         "; acc = " + combine + "; } " + reg(o["dst"]) + "[i] = acc;",
                  depth);
  }

  void body(const json &ops, int depth, std::string &out) {
    for (const json &o : ops) op(o, depth, out);
  }

  const json &k_;
  const json &placements_;
  std::map<std::string, json> params_;
  std::map<std::string, Tile> tiles_;
};

const char *kPrelude = R"(#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace {

// Python's floor division and modulo on integers (and on floats).
template <class A, class B> auto floordiv(A a, B b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    auto q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  } else {
    return std::floor(double(a) / double(b));
  }
}
template <class A, class B> auto pymod(A a, B b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    auto r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    return double(a) - double(b) * std::floor(double(a) / double(b));
  }
}
template <class A, class B> auto pymin(A a, B b) { return std::min<std::common_type_t<A, B>>(a, b); }
template <class A, class B> auto pymax(A a, B b) { return std::max<std::common_type_t<A, B>>(a, b); }

)";

void report(htp::PassContext &ctx, const EmitError &e, const std::string &file) {
  htp::SourceSpan span{file};
  if (e.span.is_object()) {
    span.file = e.span.value("file", file);
    span.line = e.span.value("line", 0u), span.col = e.span.value("col", 0u);
    span.end_line = e.span.value("end_line", 0u), span.end_col = e.span.value("end_col", 0u);
  }
  htp::Host(ctx.api()).error(ctx.diag(), e.code, e.what(), span);
}

}  // namespace

void emit_cpu_ref(htp::PassContext &ctx) {
  htp::ModuleRef m = ctx.module();
  json kernels = json::parse(m.attr("tile.kernels").value_or("null"), nullptr, false);
  if (!kernels.is_object() || kernels.value("schema", "") != "htp.tile.kernels.v1")
    throw htp::PassError("cpu-ref needs module attribute tile.kernels (htp.tile.kernels.v1)");
  json placements = json::parse(m.attr("place.placements").value_or("{}"), nullptr, false);
  placements = placements.is_object() ? placements.value("functions", json::object()) : json::object();

  std::string functions, entries;
  json entrypoints = json::array();
  size_t errors = 0;
  for (const json &k : kernels["kernels"]) {
    if (k.value("kind", "") != "kernel") continue;  // processes belong to dialects cpu-ref does not accept
    try {
      KernelEmitter emitter(k, placements);
      functions += emitter.function() + "\n";
      entries += emitter.entry() + "\n";
      entrypoints.push_back(emitter.entrypoint());
    } catch (const EmitError &e) {
      report(ctx, e, m.file());
      ++errors;
    } catch (const json::exception &e) {
      report(ctx, EmitError("cpu-ref.ir", std::string("malformed tile.kernels: ") + e.what(), k.value("span", json())), m.file());
      ++errors;
    }
  }
  if (errors) return;
  if (entrypoints.empty()) throw htp::PassError("cpu-ref found no kernel to emit in tile.kernels");
  std::string source = "// Generated by the HTP extension pack (cpu-ref.emit) from " + m.file() +
                       ": plain C++17 loops for the host CPU.\n" + kPrelude + functions + "}  // namespace\n\n" + entries;
  ctx.write_file("codegen/cpu-ref/program.cpp", source, "kernel");
  m.set_attr("htp.entrypoints", entrypoints.dump());
}

}  // namespace extpack
