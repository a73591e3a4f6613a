// The cpu-ref emit pass: plain C++17 loops for the host CPU from `tile.kernels` (htp.tile.kernels.v1,
// docs/ir-contracts.md §4) and, when present, `wsp.task_graph` (§5), both read with the SDK's typed
// readers (htp/tile_kernels.hpp, htp/wsp_task_graph.hpp). One file, codegen/cpu-ref/program.cpp,
// holds one function per kernel (tensors as data pointer + element strides) and one entry per workload
// (loop nests over the task tree) — or per kernel when there is no task graph:
//   extern "C" void htp_cpuref_<entry>(void *const *args, const int64_t *const *shapes)
// args are, in parameter order, the tensors' data pointers and pointers to the scalars (int64_t for
// integer dtypes, double for floats); shapes[i] is tensor i's shape (null for scalars).
// The pass also sets `htp.entrypoints` (contract §8) so that `htp-host run` can call the binding.
#include "ext_pack.hpp"

#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

#include <array>
#include <cctype>
#include <map>
#include <set>
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

/// Row-major element offset of `index` (one Expr per dim) into tensor `tensor`, through its strides st_<tensor>.
std::string linear_index(const json &tensor, const json &index);

/// A scalar Expr (docs/ir-contracts.md §2) as C++: loop variables v_<x>, parameters and symbols p_<x>.
std::string expr(const json &e) {
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

std::string linear_index(const json &tensor, const json &index) {
  std::string out = "0", t = tensor.get<std::string>();
  for (size_t d = 0; d < index.size(); ++d) out += " + " + expr(index[d]) + " * st_" + t + "[" + std::to_string(d) + "]";
  return out;
}

/// Declarations of a tensor argument's data pointer p_<n> and strides st_<n> from args[i] and shapes[i].
std::string unpack_tensor(const std::string &n, const std::string &ctype, size_t i, size_t rank) {
  std::string slot = std::to_string(i);
  return "  " + ctype + " *p_" + n + " = static_cast<" + ctype + " *>(args[" + slot + "]);\n  const auto st_" + n +
         " = strides(shapes[" + slot + "], " + std::to_string(rank) + ");\n";
}

/// Declaration of a scalar argument p_<n> from args[i] (int64_t for integer dtypes, double for floats).
std::string unpack_scalar(const std::string &n, const std::string &ctype, size_t i) {
  std::string carrier = ctype == "float" ? "double" : "int64_t";
  return "  const " + ctype + " p_" + n + " = static_cast<" + ctype + ">(*static_cast<const " + carrier + " *>(args[" +
         std::to_string(i) + "]));\n";
}

/// The params of an htp.entrypoints entry (contract §8) from a kernel's params; constexprs are folded.
json entry_params(const std::vector<htp::TileParam> &params) {
  json out = json::array();
  for (const htp::TileParam &p : params) {
    if (p.type.is_tensor())
      out.push_back({{"name", p.name}, {"kind", "tensor"}, {"dir", p.dir}, {"shape", p.type.shape}, {"dtype", p.type.dtype}});
    else if (p.type.is_scalar())
      out.push_back({{"name", p.name}, {"kind", "scalar"}, {"dir", "in"}, {"dtype", p.type.dtype}});
  }
  return out;
}

/// The same from a workload's params.
json entry_params(const std::vector<htp::WspParam> &params) {
  json out = json::array();
  for (const htp::WspParam &p : params) {
    if (p.type.is_tensor()) {
      json shape = json::array();
      for (const htp::IrDim &d : p.type.shape) shape.push_back(d.is_symbol() ? json(d.symbol) : json(d.size));
      out.push_back({{"name", p.name}, {"kind", "tensor"}, {"dir", p.dir}, {"shape", shape}, {"dtype", p.type.dtype}});
    } else {
      out.push_back({{"name", p.name}, {"kind", "scalar"}, {"dir", "in"}, {"dtype", p.type.dtype}});
    }
  }
  return out;
}

/// Emits one kernel of tile.kernels as a C++ function.
class KernelEmitter {
public:
  KernelEmitter(const htp::TileKernel &kernel, const json &placements)
      : k_(kernel), span_(json(kernel.span)), placements_(placements) {}

  std::string function() {
    for (const htp::TileParam &p : k_.params) params_[p.name] = &p;
    std::string out = "// kernel " + name() + " (line " + std::to_string(k_.span.line) + ")\n";
    out += "void kernel_" + name() + "(" + parameter_list() + ") {\n";
    out += constexpr_params() + locals();
    body(k_.body, 1, out);
    return out + "}\n";
  }

  /// The extern "C" entry that unpacks `args` and calls the kernel function.
  std::string entry() const {
    std::string call, out = "extern \"C\" void htp_cpuref_" + name() + "(void *const *args, const int64_t *const *shapes) {\n";
    size_t i = 0;
    for (const htp::TileParam *p : runtime_params()) {
      std::string n = p->name, t = ctype_of(p->type.dtype, span_);
      bool tensor = p->type.is_tensor();
      out += tensor ? unpack_tensor(n, t, i, p->type.shape.size()) : unpack_scalar(n, t, i);
      call += (call.empty() ? "p_" : ", p_") + n + (tensor ? ", st_" + n + ".data()" : "");
      ++i;
    }
    return out + "  kernel_" + name() + "(" + call + ");\n}\n";
  }

  /// This kernel's entry for htp.entrypoints.
  json entrypoint() const { return {{"name", name()}, {"kind", "kernel"}, {"params", entry_params(k_.params)}}; }

private:
  const std::string &name() const { return k_.name; }

  std::vector<const htp::TileParam *> runtime_params() const {
    std::vector<const htp::TileParam *> out;
    for (const htp::TileParam &p : k_.params)
      if (p.type.is_tensor() || p.type.is_scalar()) out.push_back(&p);
    return out;
  }

  std::string parameter_list() const {
    std::string out;
    for (const htp::TileParam *p : runtime_params()) {
      std::string t = ctype_of(p->type.dtype, span_);
      const std::string &n = p->name;
      out += (out.empty() ? "" : ", ") + (p->type.is_tensor() ? t + " *p_" + n + ", const int64_t *st_" + n : t + " p_" + n);
    }
    return out;
  }

  std::string constexpr_params() const {
    std::string out;
    for (const htp::TileParam &p : k_.params)
      if (p.type.is_constexpr() && !p.type.value.is_null())
        out += "  const auto p_" + p.name + " = " + literal(p.type.value) + ";\n";
    return out;
  }

  std::string locals() {
    std::string out;
    const json placed = placements_.value(name(), json::object());
    for (const htp::TileLocal &l : k_.locals) {
      const std::string &n = l.name;
      std::string t = ctype_of(l.dtype, span_);
      if (l.is_scalar()) {
        out += "  " + t + " v_" + n + "{};\n";
        continue;
      }
      Tile tile{l.shape[0], l.shape[1], t};
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
  const Tile &tile(const std::optional<std::string> &reg, const json &span) const {
    return tile(reg ? json(*reg) : json(), span);
  }
  static std::string reg(const json &r) { return "r_" + r.get<std::string>(); }
  static std::string reg(const std::optional<std::string> &r) { return "r_" + r.value_or(""); }
  /// Operand i of `o` (an Expr or a register name), or null.
  static json operand(const htp::TileOp &o, size_t i) { return o.args && i < o.args->size() ? json((*o.args)[i]) : json(); }

  /// `for (r, c) in tile` around `statement` (which reads r, c and i = r * C + c).
  static std::string loop2d(const Tile &t, const std::string &statement, int depth) {
    std::string pad(2 * depth, ' ');
    return pad + "for (int64_t r = 0; r < " + std::to_string(t.rows) + "; ++r)\n" + pad + "  for (int64_t c = 0; c < " +
           std::to_string(t.cols) + "; ++c) { const int64_t i = r * " + std::to_string(t.cols) + " + c; (void)i; " +
           statement + " }\n";
  }

  /// Base element offset, row stride and column stride of a (tensor, offset) view.
  std::array<std::string, 3> view(const json &tensor, const json &offset, const json &span) const {
    auto it = params_.find(tensor.get<std::string>());
    if (it == params_.end()) throw EmitError("cpu-ref.ir", "view of unknown tensor " + tensor.dump(), span);
    size_t rank = it->second->type.shape.size();
    std::string st = "st_" + tensor.get<std::string>();
    return {linear_index(tensor, offset), rank >= 2 ? st + "[" + std::to_string(rank - 2) + "]" : "0",
            st + "[" + std::to_string(rank - 1) + "]"};
  }

  void op(const htp::TileOp &o, int depth, std::string &out) {
    const std::string &kind = o.op;
    const json span = o.span ? json(*o.span) : span_;
    const std::string pad(2 * depth, ' ');
    auto dst = [&] { return tile(o.dst, span); };
    auto arg = [&](size_t i) { return reg(operand(o, i)) + "[i]"; };
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
      out += loop2d(t, reg(o.dst) + "[i] = " + t.ctype + "(" + fill(pattern, w) + ");", depth);
    };

    if (kind == "load" || kind == "store") {
      bool load = kind == "load";
      const json local = load ? json(*o.dst) : json(*o.value), tensor = json(load ? *o.src : *o.dst);
      const Tile &t = tile(local, span);
      auto [base, row, col] = view(tensor, json(*o.offset), span);
      std::string g = "p_" + tensor.get<std::string>() + "[base + r * " + row + " + c * " + col + "]";
      std::string l = reg(local) + "[i]";
      out += pad + "{ const int64_t base = " + base + ";\n" + loop2d(t, load ? l + " = " + g + ";" : g + " = " + l + ";", depth + 1) +
             pad + "}\n";
    } else if (binary.count(kind)) {
      elementwise(binary.at(kind), {{'A', arg(0)}, {'B', arg(1)}});
    } else if (kind.size() > 1 && kind.back() == 's' && binary.count(kind.substr(0, kind.size() - 1))) {  // adds, muls, ...
      elementwise(binary.at(kind.substr(0, kind.size() - 1)), {{'A', arg(0)}, {'B', dst().ctype + "(" + expr(o.scalar.value_or(nullptr)) + ")"}});
    } else if (unary.count(kind)) {
      elementwise(unary.at(kind), {{'A', arg(0)}});
    } else if (kind == "cast" || kind == "copy") {
      elementwise("A", {{'A', arg(0)}});
    } else if (kind == "full") {
      elementwise("V", {{'V', expr(*o.value)}});
    } else if (kind == "ext.axpby") {  // the pack's own intrinsic, fused (see axpby_intrinsic.cpp)
      elementwise("X * A + Y * B", {{'A', arg(0)}, {'B', arg(1)}, {'X', expr(operand(o, 2))}, {'Y', expr(operand(o, 3))}});
    } else if (kind.starts_with("rowexpand")) {
      std::string f = kind == "rowexpand" ? "S" : binary.count(kind.substr(10)) ? binary.at(kind.substr(10)) : "";
      if (f.empty()) throw EmitError("cpu-ref.unsupported", "cpu-ref does not emit '" + kind + "'", span);
      std::string s = reg(operand(o, kind == "rowexpand" ? 0 : 1)) + "[r]";
      elementwise(kind == "rowexpand" ? "S" : f, {{'A', arg(0)}, {'B', s}, {'S', s}});
    } else if (kind == "rowsum" || kind == "rowmax" || kind == "rowmin" || kind == "colsum" || kind == "colmax" ||
               kind == "colmin") {
      reduce(o, kind, span, depth, out);
    } else if (kind == "matmul") {
      const Tile &d = dst(), &a = tile(operand(o, 0), span);
      std::string acc = o.accumulate.value_or(false) ? reg(o.dst) + "[i]" : d.ctype + "(0)";
      out += loop2d(d, d.ctype + " sum = " + acc + "; for (int64_t k = 0; k < " + std::to_string(a.cols) + "; ++k) sum += " +
                           d.ctype + "(" + reg(operand(o, 0)) + "[r * " + std::to_string(a.cols) + " + k]) * " + d.ctype +
                           "(" + reg(operand(o, 1)) + "[k * " + std::to_string(d.cols) + " + c]); " + reg(o.dst) + "[i] = sum;",
                    depth);
    } else if (kind == "scalar") {
      out += pad + "v_" + *o.dst + " = " + expr(*o.value) + ";\n";
    } else if (kind == "for") {
      std::string v = "v_" + *o.var, stop = expr(*o.stop), step = expr(*o.step);
      std::string cond = o.step->is_number_integer() ? v + (o.step->get<int64_t>() > 0 ? " < " : " > ") + stop
                                                     : "(" + step + " > 0 ? " + v + " < " + stop + " : " + v + " > " + stop + ")";
      out += pad + "for (int64_t " + v + " = " + expr(*o.start) + "; " + cond + "; " + v + " += " + step + ") {\n";
      body(o.body, depth + 1, out);
      out += pad + "}\n";
    } else if (kind == "if") {
      out += pad + "if (" + expr(*o.cond) + ") {\n";
      body(o.then_body, depth + 1, out);
      out += pad + "} else {\n";
      body(o.else_body, depth + 1, out);
      out += pad + "}\n";
    } else {
      throw EmitError("cpu-ref.unsupported", "target cpu-ref cannot emit the tile op '" + kind + "'", span);
    }
  }

  void reduce(const htp::TileOp &o, const std::string &kind, const json &span, int depth, std::string &out) {
    const Tile &d = tile(o.dst, span), &a = tile(operand(o, 0), span);
    bool rows = kind.starts_with("row");
    std::string combine = kind.ends_with("sum") ? "acc + x" : kind.ends_with("max") ? "std::max(acc, x)" : "std::min(acc, x)";
    std::string n = std::to_string(rows ? a.cols : a.rows), src = reg(operand(o, 0));
    std::string x = rows ? src + "[r * " + std::to_string(a.cols) + " + k]" : src + "[k * " + std::to_string(a.cols) + " + c]";
    std::string init = kind.ends_with("sum") ? d.ctype + "(0)" : (rows ? src + "[r * " + std::to_string(a.cols) + "]" : src + "[c]");
    out += loop2d(d, d.ctype + " acc = " + init + "; for (int64_t k = 0; k < " + n + "; ++k) { const " + d.ctype + " x = " + x +
                         "; acc = " + combine + "; } " + reg(o.dst) + "[i] = acc;",
                  depth);
  }

  void body(const std::vector<htp::TileOp> &ops, int depth, std::string &out) {
    for (const htp::TileOp &o : ops) op(o, depth, out);
  }

  const htp::TileKernel &k_;
  const json span_;  ///< the kernel's
  const json &placements_;
  std::map<std::string, const htp::TileParam *> params_;
  std::map<std::string, Tile> tiles_;
};

/// Emits one workload of wsp.task_graph (htp.wsp.task_graph.v1, read with htp/wsp_task_graph.hpp) as an
/// entry: loop nests over the task tree, calling the kernel functions in program order on one thread
/// (every dependency kind holds).
class WorkloadEmitter {
public:
  WorkloadEmitter(const htp::WspWorkload &w, const std::map<std::string, const htp::TileKernel *> &kernels)
      : w_(w), span_(json(w.span)), kernels_(kernels) {}

  std::string entry() {
    std::string out = "// workload " + name() + " (line " + std::to_string(w_.span.line) + ")\n";
    out += "extern \"C\" void htp_cpuref_" + name() + "(void *const *args, const int64_t *const *shapes) {\n";
    std::set<std::string> symbols;
    size_t i = 0;
    for (const htp::WspParam &p : w_.params) {
      const std::string &n = p.name;
      std::string t = ctype_of(p.type.dtype, span_);
      if (!p.type.is_tensor()) {
        out += unpack_scalar(n, t, i++);
        continue;
      }
      const std::vector<htp::IrDim> &shape = p.type.shape;
      ranks_[n] = shape.size();
      out += unpack_tensor(n, t, i, shape.size());
      for (size_t d = 0; d < shape.size(); ++d)  // a symbolic dim is bound by the first tensor that has it
        if (shape[d].is_symbol() && symbols.insert(shape[d].symbol).second)
          out += "  const int64_t p_" + shape[d].symbol + " = shapes[" + std::to_string(i) + "][" +
                 std::to_string(d) + "];\n";
      ++i;
    }
    for (const htp::WspIntermediate &m : w_.intermediates) out += intermediate(m);
    body(w_.body, 1, out);
    return out + "}\n";
  }

  json entrypoint() const { return {{"name", name()}, {"kind", "workload"}, {"params", entry_params(w_.params)}}; }

private:
  const std::string &name() const { return w_.name; }

  static std::string dim(const htp::IrDim &d) { return d.is_symbol() ? "p_" + d.symbol : std::to_string(d.size); }

  /// A zero-filled workload-local tensor: storage, pointer, shape and strides.
  std::string intermediate(const htp::WspIntermediate &m) {
    const std::string &n = m.name;
    std::string t = ctype_of(m.type.dtype, span_);
    const std::vector<htp::IrDim> &shape = m.type.shape;
    ranks_[n] = shape.size();
    std::string dims, count = "1";
    for (const htp::IrDim &d : shape) dims += (dims.empty() ? "" : ", ") + dim(d), count += " * " + dim(d);
    return "  std::vector<" + t + "> buf_" + n + "(" + count + ");\n  " + t + " *p_" + n + " = buf_" + n +
           ".data();\n  const int64_t sh_" + n + "[] = {" + dims + "};\n  const auto st_" + n + " = strides(sh_" + n +
           ", " + std::to_string(shape.size()) + ");\n";
  }

  void body(const std::vector<htp::WspNode> &nodes, int depth, std::string &out) {
    for (const htp::WspNode &n : nodes) node(n, depth, out);
  }

  void node(const htp::WspNode &n, int depth, std::string &out) {
    const std::string pad(2 * depth, ' ');
    if (n.is_task()) {
      out += pad + task(n) + "\n";
    } else if (n.is_group()) {
      body(n.body, depth, out);
    } else if (n.is_when()) {
      out += pad + "if (" + expr(n.cond) + ") {\n";
      body(n.then_body, depth + 1, out);
      out += pad + "} else {\n";
      body(n.else_body, depth + 1, out);
      out += pad + "}\n";
    } else {
      loop(n, depth, out);
    }
  }

  static std::string for_var(const std::string &v, const std::string &start, const std::string &stop) {
    return "for (int64_t v_" + v + " = " + start + "; v_" + v + " < " + stop + "; ++v_" + v + ") {\n";
  }

  void loop(const htp::WspNode &n, int depth, std::string &out) {
    const htp::WspDomain &d = n.domain;
    const std::vector<std::string> &vars = n.vars;
    std::vector<std::string> heads;
    if (d.type == "dense") {
      for (size_t i = 0; i < vars.size() && i < d.extents.size(); ++i) heads.push_back(for_var(vars[i], "0", expr(d.extents[i])));
    } else if (d.type == "seq") {
      heads.push_back(for_var(vars[0], "0", expr(d.extent)));
    } else if (d.type == "ragged") {  // (row, position): position < lengths[row]
      heads.push_back(for_var(vars[0], "0", expr(d.extent)));
      heads.push_back(for_var(vars.at(1), "0", expr(json{{"read", d.lengths}, {"index", {{{"var", vars[0]}}}}})));
    } else {  // sparse: e over indices[indptr[row] : indptr[row + 1]]
      std::string v = vars[0], j = "j_" + v, row = expr(d.row);
      std::string indptr = "p_" + d.indptr, indices = "p_" + d.indices;
      std::string st_ptr = "st_" + d.indptr + "[0]", st_idx = "st_" + d.indices + "[0]";
      heads.push_back("for (int64_t " + j + " = " + indptr + "[(" + row + ") * " + st_ptr + "]; " + j + " < " + indptr +
                      "[(" + row + " + 1) * " + st_ptr + "]; ++" + j + ") { const int64_t v_" + v + " = " + indices + "[" +
                      j + " * " + st_idx + "];\n");
    }
    for (size_t i = 0; i < heads.size(); ++i) out += std::string(2 * (depth + i), ' ') + heads[i];
    body(n.body, depth + static_cast<int>(heads.size()), out);
    for (size_t i = heads.size(); i-- > 0;) out += std::string(2 * (depth + i), ' ') + "}\n";
  }

  /// A kernel launch: each tensor parameter gets its view's base pointer and the tensor's trailing strides.
  std::string task(const htp::WspNode &t) const {
    const json span = json(t.span);
    auto k = kernels_.find(t.kernel);
    if (k == kernels_.end())
      throw EmitError("cpu-ref.ir", "task '" + t.id + "' launches unknown kernel '" + t.kernel + "'", span);
    std::map<std::string, const htp::WspArg *> args;
    for (const htp::WspArg &a : t.args) args[a.param] = &a;
    std::string call;
    for (const htp::TileParam &p : k->second->params) {
      const std::string &kind = p.type.kind, &n = p.name;
      if (kind != "tensor" && kind != "scalar") continue;
      auto a = args.find(n);
      if (a == args.end()) throw EmitError("cpu-ref.ir", "task '" + t.id + "' binds no argument to '" + n + "'", span);
      if ((kind == "tensor") != a->second->is_view())
        throw EmitError("cpu-ref.ir", "task '" + t.id + "' binds a " + (kind == "tensor" ? "scalar" : "view") + " to the " +
                                          kind + " parameter '" + n + "'", span);
      std::string piece;
      if (kind == "tensor") {
        const std::string &tensor = *a->second->tensor;
        size_t drop = ranks_.at(tensor) - p.type.shape.size();  // dims dropped by integer indices lead
        piece = "p_" + tensor + " + (" + linear_index(tensor, json(a->second->offset)) + "), st_" + tensor + ".data() + " +
                std::to_string(drop);
      } else {
        piece = ctype_of(p.type.dtype, span) + "(" + expr(*a->second->scalar) + ")";
      }
      call += (call.empty() ? "" : ", ") + piece;
    }
    return "kernel_" + k->first + "(" + call + ");  // " + t.id;
  }

  const htp::WspWorkload &w_;
  const json span_;  ///< the workload's
  const std::map<std::string, const htp::TileKernel *> &kernels_;
  std::map<std::string, size_t> ranks_;
};

const char *kPrelude = R"(#include <algorithm>
#include <array>
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
// Row-major element strides of a C-contiguous tensor.
inline std::array<int64_t, 8> strides(const int64_t *shape, int rank) {
  std::array<int64_t, 8> st{};
  for (int64_t d = rank - 1, s = 1; d >= 0; s *= shape[d], --d) st[d] = s;
  return st;
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
  // Read and validated by the SDK: a malformed one (or another major version) throws htp::IrDocumentError,
  // a PassError naming the JSON path, which fails this pass with that message.
  const std::optional<htp::TileKernels> kernels = htp::tile_kernels(m);
  if (!kernels) throw htp::PassError("cpu-ref needs module attribute tile.kernels (htp.tile.kernels.v1)");
  json placements = json::parse(m.attr("place.placements").value_or("{}"), nullptr, false);
  placements = placements.is_object() ? placements.value("functions", json::object()) : json::object();

  const std::vector<htp::WspWorkload> workloads = htp::wsp_task_graph(m).value_or(htp::WspTaskGraph{}).workloads;

  std::string functions, entries;
  json entrypoints = json::array();
  std::map<std::string, const htp::TileKernel *> by_name;
  size_t errors = 0;
  auto guarded = [&](const json &span, auto &&emit) {
    try {
      emit();
    } catch (const EmitError &e) {
      report(ctx, e, m.file());
      ++errors;
    } catch (const json::exception &e) {
      report(ctx, EmitError("cpu-ref.ir", std::string("malformed IR: ") + e.what(), span), m.file());
      ++errors;
    }
  };
  for (const htp::TileKernel &k : kernels->kernels) {
    if (k.kind != "kernel") continue;  // processes belong to dialects cpu-ref does not accept
    by_name[k.name] = &k;
    guarded(json(k.span), [&] {
      KernelEmitter emitter(k, placements);
      functions += emitter.function() + "\n";
      if (workloads.empty()) {  // without a task graph, every kernel is an entry
        entries += emitter.entry() + "\n";
        entrypoints.push_back(emitter.entrypoint());
      }
    });
  }
  for (const htp::WspWorkload &w : workloads)
    guarded(json(w.span), [&] {
      WorkloadEmitter emitter(w, by_name);
      entries += emitter.entry() + "\n";
      entrypoints.push_back(emitter.entrypoint());
    });
  if (errors) return;
  if (entrypoints.empty()) throw htp::PassError("cpu-ref found no kernel to emit in tile.kernels");
  std::string source = "// Generated by the HTP extension pack (cpu-ref.emit) from " + m.file() +
                       ": plain C++17 loops for the host CPU.\n" + kPrelude + functions + "}  // namespace\n\n" + entries;
  ctx.write_file("codegen/cpu-ref/program.cpp", source, "kernel");
  m.set_attr("htp.entrypoints", entrypoints.dump());
}

}  // namespace extpack
