#include "kernel_emitter.hpp"

#include <htp/device_estimate.hpp>
#include <htp/expr_eval.hpp>

#include "intrinsics.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <functional>
#include <sstream>
#include <stdexcept>

namespace htp::aie {

std::string kernel_symbol(const std::string &kernel) {
  static const std::set<std::string> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main",
      "restrict"};
  // Functions with C linkage the kernel's headers (<cmath>, <cstring>, <cstdlib> through <algorithm>) declare:
  // an extern "C" kernel of that name would be a conflicting declaration (a kernel named `fma`).
  static const std::set<std::string> math = {
      "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign", "cos", "cosh", "erf",
      "erfc", "exp", "exp2", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "frexp", "hypot",
      "ilogb", "ldexp", "lgamma", "llrint", "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround",
      "modf", "nan", "nearbyint", "nextafter", "nexttoward", "pow", "remainder", "remquo", "rint", "round",
      "scalbln", "scalbn", "sin", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc"};
  static const std::set<std::string> libc = {
      "abort", "abs", "atexit", "atof", "atoi", "atol", "atoll", "bsearch", "calloc", "div", "exit", "free",
      "getenv", "labs", "ldiv", "llabs", "lldiv", "malloc", "memchr", "memcmp", "memcpy", "memmove", "memset",
      "qsort", "rand", "realloc", "srand", "strcat", "strchr", "strcmp", "strcpy", "strlen", "strncmp", "strncpy",
      "strstr", "strtod", "strtof", "strtol", "strtoul", "system",
      // declared by the same headers under _GNU_SOURCE (sys/select.h, POSIX and BSD string and stdlib calls)
      "select", "pselect", "random", "srandom", "strdup", "strndup", "strtok", "strerror", "index", "rindex", "bzero",
      "bcopy", "bcmp", "ffs", "setenv", "unsetenv", "putenv", "mkstemp", "realpath", "aligned_alloc",
      "posix_memalign", "memalign", "valloc", "drand48", "lrand48", "mrand48", "srand48",
      // and functions a core's C library links (write, step: the simulator's library binds its own first)
      "read", "write", "open", "close", "printf", "puts", "sleep", "step", "time", "clock", "signal", "wait",
      "pause", "poll"};
  const bool math_name = math.count(kernel) ||
                         (kernel.size() > 1 && (kernel.back() == 'f' || kernel.back() == 'l') &&
                          math.count(kernel.substr(0, kernel.size() - 1)));
  return reserved.count(kernel) || math_name || libc.count(kernel) ? "htp_" + kernel : kernel;
}

std::string c_type(const std::string &dtype) {
  static const std::map<std::string, std::string> m = {{"f32", "float"},    {"f16", "_Float16"}, {"bf16", "htp_bf16"},
                                                       {"i8", "int8_t"},    {"i16", "int16_t"},  {"i32", "int32_t"},
                                                       {"i64", "int64_t"},  {"u8", "uint8_t"},   {"bool", "int32_t"}};
  auto it = m.find(dtype);
  return it == m.end() ? "float" : it->second;
}

TensorAccess object_access(const htp::TileKernel &kernel, const htp::TileOp &op, std::string param,
                           std::vector<int64_t> shape, const std::string &dir) {
  const std::optional<std::string> reg = op.moved_register();
  const htp::TileLocal *l = reg ? kernel.local(*reg) : nullptr;
  const bool at_zero = op.offset && std::all_of(op.offset->begin(), op.offset->end(), [](const Json &e) { return e == Json(0); });
  const bool whole = at_zero && l && !l->is_scalar() && dir != "inout" && product(l->shape) == product(shape);
  return TensorAccess{std::move(param), std::move(shape), !whole, dir == "in"};
}

bool is_data_movement(const htp::TileOp &op) {
  const std::string &o = op.op;
  return o == "load" || o == "store" || o == "csp.send" || o == "csp.recv";
}

namespace {

// bf16 in a kernel: Peano's __bf16 on the core; for aie-sim, host compilers without a bfloat16 type (g++ 12)
// get its 16-bit pattern (the top half of an IEEE float, as torch and NumPy hold it), computed in float and
// rounded to nearest even.
constexpr const char *kBf16Type =
    "#if defined(HTP_AIE_SIM)\n"
    "#include <cstring>\n"
    "struct htp_bf16 {\n"
    "  uint16_t bits;\n"
    "  htp_bf16() = default;\n"
    "  htp_bf16(double d) {\n"
    "    float v = float(d);\n"
    "    uint32_t u;\n"
    "    std::memcpy(&u, &v, sizeof u);\n"
    "    bits = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t((u >> 16) | 0x40u) : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
    "  }\n"
    "  operator float() const {\n"
    "    uint32_t u = uint32_t(bits) << 16;\n"
    "    float f;\n"
    "    std::memcpy(&f, &u, sizeof f);\n"
    "    return f;\n"
    "  }\n"
    "};\n"
    "#else\n"
    "typedef __bf16 htp_bf16;\n"
    "#endif\n\n";

/// A float cast to an integer truncates toward zero; a value the integer cannot hold (or NaN) gives what NumPy's
/// astype gives on x86, whose conversion instructions return the "integer indefinite" value: INT32_MIN
/// narrowed to types of 32 bits or fewer (0 for i8 and i16), INT64_MIN for 64-bit ones (a C++ cast of such a value
/// is undefined; a direct one through int64 wrapped 1e10 to 1410065408 in an i32).
constexpr const char *kFloatToInt =
    "template <class T> static inline T htp_float_to_int(double v) {\n"
    "  if (sizeof(T) == 8)\n"
    "    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? T(int64_t(v)) : T(INT64_MIN);\n"
    "  if (sizeof(T) == 4 && T(-1) > T(0))  // (u32 converts through 64 bits)\n"
    "    return (v > -9223372036854775808.0 && v < 9223372036854775808.0) ? T(int64_t(v)) : T(0);\n"
    "  return (v >= -2147483648.0 && v < 2147483648.0) ? T(int32_t(v)) : T(INT32_MIN);\n"
    "}\n\n";

/// HTP_CHECK_VIEW(where, tensor, dim, offset, extent, size): on aie-sim, a tile at an offset known only at
/// run time that leaves the object throws (the simulator reports it with the core); nothing on a device.
/// The elementwise max / min of tiles and their reductions, as NumPy's maximum / minimum (and max / min)
/// compute them: a NaN in either operand is the result (std::max keeps its first operand instead). Integers
/// compute in int64_t, where it is std::max / std::min.
constexpr const char *kTileMaxMin =
    "template <class T> static inline T htp_tile_max(T a, T b) { return (a > b || a != a) ? a : b; }\n"
    "template <class T> static inline T htp_tile_min(T a, T b) { return (a < b || a != a) ? a : b; }\n";

constexpr const char *kViewCheck =
    "#ifdef HTP_AIE_SIM\n"
    "#include <cstdio>\n"
    "#include <stdexcept>\n"
    "[[noreturn]] __attribute__((noinline, cold)) static void htp_view_outside(const char *where, const char *tensor,\n"
    "                                                                        int64_t dim, int64_t lo, int64_t hi,\n"
    "                                                                        int64_t size) {\n"
    "  char text[384];\n"
    "  std::snprintf(text, sizeof text, \"%s: runtime data: the tile of '%s' covers [%lld, %lld) in dimension %lld, \"\n"
    "                \"outside its extent %lld\", where, tensor, (long long)lo, (long long)hi, (long long)dim, (long long)size);\n"
    "  throw std::runtime_error(text);\n"
    "}\n"
    "#define HTP_CHECK_VIEW(where, tensor, dim, offset, extent, size) \\\n"
    "  do { const int64_t htp_o = (int64_t)(offset); \\\n"
    "       if (htp_o < 0 || htp_o + (extent) > (size)) htp_view_outside(where, tensor, dim, htp_o, htp_o + (extent), size); \\\n"
    "  } while (0)\n"
    "#else\n"
    "#define HTP_CHECK_VIEW(where, tensor, dim, offset, extent, size) ((void)0)\n"
    "#endif\n\n";

struct Local {
  std::vector<int64_t> shape;
  std::string dtype;
  bool scalar = false;
  int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  int64_t size() const { return rows() * cols(); }
};

class EmitError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Whether tiles of `dtype` hold integers: their elementwise ops compute in int64_t (wrapping as they are
/// stored, exact beyond 2^53), not in double.
bool integral(const std::string &dtype) { return !dtype.empty() && (dtype[0] == 'i' || dtype[0] == 'u'); }

/// The type an op computes in when its result is a tile of `dtype`.
std::string compute_type(const std::string &dtype) { return integral(dtype) ? "int64_t" : "double"; }

/// `where`: the statement's place as a C++ string literal, which an integer division by 0 names.
std::string binary_expr(std::string_view op, const std::string &a, const std::string &b, bool ints,
                        const std::string &where) {
  if (op == "add") return a + " + " + b;
  if (op == "sub") return a + " - " + b;
  if (op == "mul") return a + " * " + b;
  if (op == "div") return ints ? "htp_floordiv(" + a + ", " + b + ", " + where + ")" : a + " / " + b;  // (as //)
  if (ints) return std::string(op == "max" ? "std::max(" : "std::min(") + a + ", " + b + ")";
  return std::string(op == "max" ? "htp_tile_max(" : "htp_tile_min(") + a + ", " + b + ")";  // NaN propagates
}

std::string unary_expr(std::string_view op, const std::string &x, bool ints) {
  if (ints && op == "abs") return "(" + x + " < 0 ? -" + x + " : " + x + ")";
  if (ints && op == "relu") return "std::max<int64_t>(0, " + x + ")";
  if (op == "recip") return "1.0 / " + x;
  if (op == "exp") return "std::exp(" + x + ")";
  if (op == "log") return "std::log(" + x + ")";
  if (op == "sqrt") return "std::sqrt(" + x + ")";
  if (op == "rsqrt") return "1.0 / std::sqrt(" + x + ")";
  if (op == "abs") return "std::fabs(" + x + ")";
  if (op == "neg") return "-" + x;
  if (op == "relu") return "htp_tile_max(" + x + ", 0.0)";
  if (op == "sigmoid") return "1.0 / (1.0 + std::exp(-" + x + "))";
  return "std::tanh(" + x + ")";
}

class Emitter {
public:
  Emitter(const htp::TileKernel &kernel, const KernelPlan &plan) : kernel_(kernel), plan_(plan) {
    for (const htp::TileLocal &l : kernel.locals) {
      Local loc;
      loc.scalar = l.is_scalar();
      loc.dtype = l.dtype;
      if (!loc.scalar) loc.shape = l.shape;
      locals_[l.name] = loc;
    }
  }

  EmittedKernel run() {
    std::ostringstream body;
    for (const auto &[name, l] : locals_)
      if (l.scalar) body << "  double " << local(name) << " = 0;\n";
    find_aliases();
    declare_tile_storage(body);
    emit_block(plan_.body, body, 1);
    const std::string sig = signature();
    std::ostringstream out;
    out << "// External AIE kernel '" << plan_.function << "' generated by HTP backend-aie from tile kernel '"
        << kernel_.name << "'.\n"
        << "// Portable C++: compiled by Peano (--target=aie2-none-unknown-elf) for the core, and by the host\n"
        << "// compiler for aie-sim (-DHTP_AIE_SIM adds the void** call wrapper).\n"
        << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n\n"
        << htp::kScalarHelpersCpp << "\n" << kViewCheck
        << (body.str().find("htp_float_to_int") != std::string::npos ? kFloatToInt : "")
        << (body.str().find("htp_tile_m") != std::string::npos ? kTileMaxMin : "")
        << (sig.find("htp_bf16") != std::string::npos || body.str().find("htp_bf16") != std::string::npos ? kBf16Type : "")
        << "extern \"C\" void " << plan_.function << "(" << sig << ") {\n"
        << body.str() << "}\n\n"
        << "#ifdef HTP_AIE_SIM\nextern \"C\" void htp_aie_call_" << plan_.function << "(void **args) {\n  "
        << plan_.function << "(" << wrapper_args() << ");\n}\n#endif\n";
    return {out.str(), locals_bytes_, work().to_json()};
  }

private:
  static std::string local(const std::string &n) { return "l_" + n; }

  // ---- registers that are an acquired object --------------------------------------------------------

  /// A tile register defined once, by a move of a whole object (a receive, a load of the object a stream
  /// brings, or the value sent or stored as a whole object), is that object: it points at the object's
  /// memory instead of a copy on the stack (a 16 KB item would cost 16 KB of the core's 64 KB). The object is
  /// acquired for the whole call, so the pointer is valid throughout.
  void find_aliases() {
    std::map<std::string, int> defs;
    htp::for_each_op(plan_.body, [&](const htp::TileOp &op) {
      if (op.dst && locals_.count(*op.dst) && !locals_.at(*op.dst).scalar) ++defs[*op.dst];
    });
    // Every data movement with the object it moves (numbered in program order, as plan_.access takes them).
    std::vector<std::pair<const htp::TileOp *, std::optional<TensorAccess>>> moves;
    htp::for_each_op(plan_.body, [&](const htp::TileOp &op) {
      if (!is_data_movement(op)) return;
      const int at = static_cast<int>(moves.size());
      moves.emplace_back(&op, plan_.access ? plan_.access(op, at) : std::nullopt);
    });
    // Objects written by more than one store or send: none is a register's storage, since another write
    // (in another branch, or later) would overwrite the register while it may still be read.
    std::map<std::string, int> writes;
    for (const auto &[op, a] : moves)
      if (a && !op->is("csp.recv") && !op->is("load")) ++writes[a->param];
    for (const auto &[op_ptr, a] : moves) {
      const htp::TileOp &op = *op_ptr;
      const bool in = op.is("csp.recv") || op.is("load");
      const std::optional<std::string> reg = op.moved_register();
      if (!reg || defs[*reg] != 1 || aliases_.count(*reg) || !a) continue;
      const Local &l = locals_.at(*reg);
      const KernelArg *arg = nullptr;
      for (const auto &[name, k] : plan_.params)
        if (name == a->param) arg = &k;
      if (!arg || !arg->memref || arg->dtype != l.dtype) continue;
      if (a->use_offsets) {
        // A load of a block of a read-only object that is contiguous in it (whole rows of a row-major
        // object, or one row) at constant offsets: a pointer into the object.
        if (!in || !a->read_only || !op.offset) continue;
        if (auto offset = contiguous_block(*a, *op.offset, l)) aliases_[*reg] = {a->param, *offset};
        continue;
      }
      if (product(a->shape) != l.size()) continue;
      if (!in) {  // an object written once is the storage of the register written, unless one is already
        if (writes[a->param] > 1) continue;
        if (std::any_of(aliases_.begin(), aliases_.end(), [&](const auto &x) { return x.second.param == a->param; }))
          continue;
      }
      aliases_[*reg] = {a->param, 0};
    }
  }

  /// The element offset of the tile `l` moved at `offsets` of the object of `a`, when the tile is one
  /// contiguous run of the object's elements within its bounds and the offsets are constants.
  std::optional<int64_t> contiguous_block(const TensorAccess &a, const std::vector<Json> &offsets, const Local &l) const {
    std::vector<int64_t> off;
    for (const Json &e : offsets) {
      auto v = eval_int(e, plan_.constants);
      if (!v || *v < 0) return std::nullopt;
      off.push_back(*v);
    }
    if (l.shape.size() != 2 || a.shape.empty()) return std::nullopt;
    int64_t first = 0;
    if (a.shape.size() == 1) {
      first = off.empty() ? 0 : off.back();
    } else if (a.shape.size() == 2) {
      const int64_t width = a.shape[1], o0 = off.size() >= 1 ? off[0] : 0, o1 = off.size() >= 2 ? off[1] : 0;
      if (!(l.cols() == width && o1 == 0) && l.rows() != 1) return std::nullopt;
      if (o1 + l.cols() > width) return std::nullopt;
      first = o0 * width + o1;
    } else {
      return std::nullopt;
    }
    if (first + l.size() > product(a.shape)) return std::nullopt;
    return first;
  }

  /// A register that is an object, or a contiguous block of one.
  struct Alias {
    std::string param;   ///< the object parameter
    int64_t offset = 0;  ///< the block's first element
  };
  std::map<std::string, Alias> aliases_;  ///< register -> the object (block) it is
  mutable std::map<int64_t, const htp::TileOp *> op_at_;  ///< live_ranges' positions -> their statements

  // ---- tile storage: registers whose live ranges do not overlap share one array -----------------------

  /// Live range of each tile register over the body in program order: from its first to its last
  /// occurrence (as destination or operand); a register that occurs inside a loop is live over the whole
  /// loop (a value may flow around the back edge). Conservative: every string operand naming a register is
  /// a use.
  void live_ranges(const std::vector<htp::TileOp> &ops, int64_t &pos,
                   std::map<std::string, std::pair<int64_t, int64_t>> &range) const {
    auto touch = [&](const std::string &name, int64_t at) {
      auto it = locals_.find(name);
      if (it == locals_.end() || it->second.scalar) return;
      auto [r, fresh] = range.try_emplace(name, at, at);
      if (!fresh) r->second.first = std::min(r->second.first, at), r->second.second = std::max(r->second.second, at);
    };
    std::function<void(const Json &, int64_t)> names = [&](const Json &j, int64_t at) {
      if (j.is_string()) touch(j.get<std::string>(), at);
      else if (j.is_array() || j.is_object())
        for (const auto &v : j) names(v, at);
    };
    for (const auto &op : ops) {
      const int64_t at = pos++;
      op_at_[at] = &op;
      if (op.dst) touch(*op.dst, at);
      for (const auto *list : {&op.args, &op.offset})
        if (*list)
          for (const Json &a : **list) names(a, at);
      for (const auto *j : {&op.value, &op.scalar, &op.cond, &op.start, &op.stop})
        if (*j) names(**j, at);
      if (!op.body.empty() || !op.then_body.empty() || !op.else_body.empty()) {
        std::map<std::string, std::pair<int64_t, int64_t>> inner;
        live_ranges(op.body, pos, inner);
        live_ranges(op.then_body, pos, inner);
        live_ranges(op.else_body, pos, inner);
        const int64_t end = pos++;
        const bool loop = op.is("for");
        for (auto &[name, r] : inner) {
          if (loop) touch(name, at), touch(name, end);
          else touch(name, r.first), touch(name, r.second);
        }
      }
    }
  }

  /// Declares the tile registers: one array per group of registers of a dtype whose live ranges are
  /// disjoint (a linear scan over the ranges), each register a pointer into its group's array. The core's
  /// stack is the arrays' total (locals_bytes_).
  void declare_tile_storage(std::ostream &o) {
    std::map<std::string, std::pair<int64_t, int64_t>> range;
    int64_t pos = 0;
    live_ranges(plan_.body, pos, range);
    struct Slot {
      std::string dtype;
      int64_t size = 0, free_from = 0;
      std::string last;  ///< the register that used it last
    };
    // A register an elementwise op defines may take the array of an operand of its shape whose last use is
    // that op (each element is read before it is written): exp(rowexpand_sub(t, m)) needs one array, not two.
    auto in_place = [&](const Slot &s, const std::string &name, int64_t at) {
      auto it = op_at_.find(at);
      if (s.last.empty() || s.free_from != at + 1 || it == op_at_.end() || it->second->dst != name) return false;
      const htp::TileOp &op = *it->second;
      const AieIntrinsic *c = find_intrinsic(op.op);
      if (!c || !(c->kind == IntrinsicKind::Binary || c->kind == IntrinsicKind::RowExpandBinary ||
                  c->kind == IntrinsicKind::ColExpandBinary || c->kind == IntrinsicKind::ScalarBinary ||
                  c->kind == IntrinsicKind::Unary || c->kind == IntrinsicKind::Copy))
        return false;
      bool operand = false;
      for (size_t i = 0; op.arg_name(i); ++i) operand = operand || *op.arg_name(i) == s.last;
      return operand && locals_.at(s.last).shape == locals_.at(name).shape;
    };
    std::vector<Slot> slots;
    std::vector<std::pair<std::string, size_t>> assigned;
    std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> order;
    for (const auto &[name, l] : locals_)
      if (!l.scalar && !aliases_.count(name))
        order.push_back({range.count(name) ? range[name] : std::make_pair(int64_t(-1), int64_t(-1)), name});
    std::sort(order.begin(), order.end());
    for (const auto &[r, name] : order) {
      const Local &l = locals_.at(name);
      size_t pick = slots.size();
      for (size_t i = 0; i < slots.size(); ++i)
        if (slots[i].dtype == l.dtype && r.first >= 0 && (slots[i].free_from <= r.first || in_place(slots[i], name, r.first)) &&
            (pick == slots.size() || std::abs(slots[i].size - l.size()) < std::abs(slots[pick].size - l.size())))
          pick = i;
      if (pick == slots.size()) slots.push_back({l.dtype, 0, 0, ""});
      slots[pick].size = std::max(slots[pick].size, l.size());
      slots[pick].free_from = r.second + 1;
      slots[pick].last = name;
      assigned.emplace_back(name, pick);
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      o << "  " << c_type(slots[i].dtype) << " tile_storage" << i << "[" << slots[i].size << "];\n";
      locals_bytes_ += slots[i].size * std::max<int64_t>(1, dtype_bytes(slots[i].dtype));
    }
    std::sort(assigned.begin(), assigned.end());
    for (const auto &[name, slot] : assigned)
      o << "  " << c_type(locals_.at(name).dtype) << " *const " << local(name) << " = tile_storage" << slot << ";\n";
    for (const auto &[name, alias] : aliases_)
      o << "  " << c_type(locals_.at(name).dtype) << " *const " << local(name) << " = " << alias.param
        << (alias.offset ? " + " + std::to_string(alias.offset) + ";  // a block of the object\n" : ";  // the object\n");
  }

  htp::KernelWork work() const {
    Json constants = Json::object();
    for (const auto &[name, v] : plan_.constants.params) constants[name] = v;
    return htp::count_kernel_work(
        plan_.body,
        [&](const std::string &name) -> std::optional<htp::TileShape> {
          auto it = locals_.find(name);
          if (it == locals_.end() || it->second.scalar || it->second.shape.size() != 2) return std::nullopt;
          return htp::TileShape{it->second.shape[0], it->second.shape[1], it->second.dtype};
        },
        constants);
  }

  std::string signature() const {
    std::string s;
    for (const auto &[name, a] : plan_.params) {
      if (!s.empty()) s += ", ";
      s += a.memref ? c_type(a.dtype) + " *" + name : c_type(a.dtype) + " " + name;
    }
    return s.empty() ? "void" : s;
  }

  std::string wrapper_args() const {
    std::string s;
    for (size_t i = 0; i < plan_.params.size(); ++i) {
      const auto &a = plan_.params[i].second;
      if (i) s += ", ";
      std::string t = c_type(a.dtype);
      s += a.memref ? "static_cast<" + t + " *>(args[" + std::to_string(i) + "])"
                    : "*static_cast<" + t + " *>(args[" + std::to_string(i) + "])";
    }
    return s;
  }

  /// `e` in C++. A scalar register (a double) reads as an integer where `e` is an index (offsets, bounds) and
  /// as its value elsewhere (a scalar operand, a fill value, a condition): s = k * 2.0 + 1.0 is 4.5, not 4.
  std::string expr(const Json &e, bool index = true) const {
    return expr_to_cpp(e, [&](const Json &leaf) -> std::string {
      if (leaf.contains("var")) {
        std::string v = leaf["var"].get<std::string>();
        if (auto it = plan_.vars.find(v); it != plan_.vars.end()) return it->second;
        if (auto it = locals_.find(v); it != locals_.end() && it->second.scalar)
          return index ? "(int64_t)" + local(v) : local(v);
        return "v_" + v;
      }
      if (leaf.contains("param")) {
        std::string p = leaf["param"].get<std::string>();
        if (auto it = plan_.constants.params.find(p); it != plan_.constants.params.end()) return it->second.dump();
        if (auto it = plan_.scalars.find(p); it != plan_.scalars.end()) return it->second;
        throw EmitError("parameter '" + p + "' is not available in the kernel");
      }
      throw EmitError("reading a tensor in a scalar expression is not supported on AIE");
    }, where_);
  }

  const Local &tile(const std::string &name, const htp::TileOp &op) const {
    auto it = locals_.find(name);
    if (it == locals_.end()) throw EmitError("op '" + op.op + "' names an unknown local " + Json(name).dump());
    return it->second;
  }

  /// Element (r, c) of local `n`, broadcasting [R,1], [1,C] and scalars over the destination.
  std::string elem(const std::string &n, const Local &l, const std::string &as = "double") const {
    if (l.scalar) return as == "double" ? local(n) : "(" + as + ")" + local(n);
    std::string r = l.rows() == 1 ? "0" : "r";
    std::string c = l.cols() == 1 ? "0" : "c";
    return "(" + as + ")" + local(n) + "[" + r + " * " + std::to_string(l.cols()) + " + " + c + "]";
  }

  void loop2(std::ostream &o, int ind, const Local &d, const std::string &dst_name, const std::string &value) const {
    std::string pad(ind * 2, ' ');
    o << pad << "for (int64_t r = 0; r < " << d.rows() << "; ++r)\n"
      << pad << "  for (int64_t c = 0; c < " << d.cols() << "; ++c)\n"
      << pad << "    " << local(dst_name) << "[r * " << d.cols() << " + c] = (" << c_type(d.dtype) << ")(" << value
      << ");\n";
  }

  TensorAccess access(const htp::TileOp &op) {
    int index = movement_index_++;
    auto a = plan_.access ? plan_.access(op, index) : std::nullopt;
    if (!a) throw EmitError("op '" + op.op + "' moves data the AIE mapping does not connect");
    return *a;
  }

  /// Pointer index of element (r, c) of a tile moved at `offset` within memory of `shape`.
  std::string mem_index(const TensorAccess &a, const htp::TileOp &op, const Local &t) const {
    std::vector<std::string> off;
    if (a.use_offsets && op.offset)
      for (const auto &e : *op.offset) off.push_back(expr(e));
    if (a.shape.size() <= 1) {
      std::string base = off.empty() ? "0" : off.back();
      return "(" + base + ") + r * " + std::to_string(t.cols()) + " + c";
    }
    // Row-major over the object's dims: the tile's rows run along the last but one, its columns along the
    // last; a leading dim (a view x[b, 0:32, :] of a rank-3 object, extent 1) adds its offset times its stride.
    const size_t n = a.shape.size();
    off.resize(n, "0");
    std::string index = "((" + off[n - 2] + ") + r) * " + std::to_string(a.shape.back()) + " + (" + off[n - 1] + ") + c";
    int64_t stride = a.shape[n - 1] * a.shape[n - 2];
    for (size_t d = n - 2; d-- > 0;) {
      index = "(" + off[d] + ") * " + std::to_string(stride) + " + " + index;
      stride *= a.shape[d];
    }
    return index;
  }

  /// On aie-sim, a check of each offset of `op` known only at run time (a runtime loop bound, a scalar)
  /// against the object: a runtime error naming the line instead of a read or write past it.
  void emit_view_check(std::ostream &o, const std::string &pad, const TensorAccess &a, const htp::TileOp &op,
                       const Local &t) const {
    if (!a.use_offsets || !op.offset) return;
    const size_t n = op.offset->size();
    if (a.shape.size() != n) return;
    const std::vector<int64_t> extents = htp::view_extents(t.rows(), t.cols(), n);
    const std::string where = place(op);
    for (size_t d = 0; d < n; ++d) {
      const Json &e = (*op.offset)[d];
      // A constant offset is checked here: the kernel IR may come from a plugin's pass, after tile.typecheck.
      if (e.is_number_integer() && (e.get<int64_t>() < 0 || e.get<int64_t>() + extents[d] > a.shape[d]))
        throw EmitError(where + ": the tile of " + op.op + " '" + op.moved_tensor() + "' at offset " + e.dump() +
                        " covers [" + e.dump() + ", " + std::to_string(e.get<int64_t>() + extents[d]) +
                        ") in dimension " + std::to_string(d) + ", outside its extent " + std::to_string(a.shape[d]));
      if (e.is_number()) continue;
      o << pad << "HTP_CHECK_VIEW(" << Json(where).dump() << ", " << Json(op.moved_tensor()).dump() << ", " << d << ", "
        << expr(e) << ", " << extents[d] << ", " << a.shape[d] << ");\n";
    }
  }

  /// A load or store moves a register of its tensor's dtype (tile.typecheck's rule, checked again: the kernel
  /// IR may come from a plugin's pass); a copy loop would convert silently.
  void check_moved_dtype(const htp::TileOp &op, const Local &t) const {
    if (!op.is("load") && !op.is("store")) return;
    const htp::TileParam *p = kernel_.param(op.moved_tensor());
    if (p && !p->type.dtype.empty() && !t.dtype.empty() && p->type.dtype != t.dtype)
      throw EmitError(op.op + " of '" + op.moved_tensor() + "' (" + p->type.dtype + ") moves a register of " + t.dtype +
                      "; a load or store keeps the tensor's dtype (convert with cast)");
  }

  void emit_move_in(std::ostream &o, int ind, const htp::TileOp &op, const std::string &dst) {
    const Local &d = tile(dst, op);
    check_moved_dtype(op, d);
    TensorAccess a = access(op);
    std::string pad(ind * 2, ' ');
    if (auto it = aliases_.find(dst); it != aliases_.end() && it->second.param == a.param) {
      o << pad << "// " << local(dst) << " is " << (it->second.offset ? "a block of " : "") << "the object " << a.param << "\n";
      return;
    }
    emit_view_check(o, pad, a, op, d);
    o << pad << "for (int64_t r = 0; r < " << d.rows() << "; ++r)\n"
      << pad << "  for (int64_t c = 0; c < " << d.cols() << "; ++c)\n"
      << pad << "    " << local(dst) << "[r * " << d.cols() << " + c] = " << a.param << "[" << mem_index(a, op, d)
      << "];\n";
  }

  void emit_move_out(std::ostream &o, int ind, const htp::TileOp &op, const std::string &src) {
    const Local &s = tile(src, op);
    check_moved_dtype(op, s);
    TensorAccess a = access(op);
    std::string pad(ind * 2, ' ');
    if (auto it = aliases_.find(src); it != aliases_.end() && it->second.param == a.param) {
      o << pad << "// " << local(src) << " was computed in the object " << a.param << "\n";
      return;
    }
    emit_view_check(o, pad, a, op, s);
    o << pad << "for (int64_t r = 0; r < " << s.rows() << "; ++r)\n"
      << pad << "  for (int64_t c = 0; c < " << s.cols() << "; ++c)\n"
      << pad << "    " << a.param << "[" << mem_index(a, op, s) << "] = " << local(src) << "[r * " << s.cols()
      << " + c];\n";
  }

  /// A long block goes out in runs of kRun statements, each a lambda of its own that is not inlined (registers
  /// are declared at the top of the kernel, so a run declares nothing a later one reads): a compiler's cost
  /// grows faster than a function's length, and one function of 1200 tile statements kept g++ -O2 busy for a
  /// minute on aie-sim's first run. A run is kRun loop nests, so the call costs nothing beside them.
  void emit_block(const std::vector<htp::TileOp> &ops, std::ostream &o, int ind) {
    constexpr size_t kRun = 32;
    if (ops.size() <= kRun) {
      for (const auto &op : ops) emit_op(op, o, ind);
      return;
    }
    const std::string pad(ind * 2, ' ');
    for (size_t first = 0; first < ops.size(); first += kRun) {
      o << pad << "[&]() __attribute__((noinline)) {  // statements " << first + 1 << " to "
        << std::min(ops.size(), first + kRun) << " of " << ops.size() << "\n";
      for (size_t i = first; i < std::min(ops.size(), first + kRun); ++i) emit_op(ops[i], o, ind + 1);
      o << pad << "}();\n";
    }
  }

  std::string arg(const htp::TileOp &op, size_t i) const {
    auto a = op.arg_name(i);
    if (!a) throw EmitError("op '" + op.op + "' needs argument " + std::to_string(i + 1));
    return *a;
  }

  /// "prog.py:12": where `op` is in the program, for runtime checks' messages.
  std::string place(const htp::TileOp &op) const {
    return std::filesystem::path(kernel_.span.file.value_or("")).filename().string() + ":" +
           std::to_string(op.span ? op.span->line : kernel_.span.line);
  }

  void emit_op(const htp::TileOp &op, std::ostream &o, int ind) {
    where_ = Json(place(op)).dump();
    const std::string &k = op.op;
    const std::string pad(ind * 2, ' ');
    const std::string dst = op.dst.value_or("");
    if ((k == "csp.recv" && dst.empty()) || (k == "csp.send" && !op.arg_name(0))) {  // an event: the port's
      (void)access(op);                                                               // acquire is the signal
      o << pad << "// " << k << " of an event: acquiring the token is the rendezvous\n";
      return;
    }
    if (k == "load") return emit_move_in(o, ind, op, dst);
    if (k == "csp.recv") return emit_move_in(o, ind, op, dst);
    if (k == "store") return emit_move_out(o, ind, op, op.value && op.value->is_string() ? op.value->get<std::string>() : "");
    if (k == "csp.send") return emit_move_out(o, ind, op, arg(op, 0));
    if (k == "for") {
      std::string v = "v_" + *op.var;
      o << pad << "for (int64_t " << v << " = " << expr(*op.start) << "; "
        << htp::loop_condition_cpp(v, expr(*op.stop), *op.step, expr(*op.step)) << "; " << v << " += " << expr(*op.step)
        << ") {\n";
      o << pad << "  HTP_TICK();  // (aie-sim's time limit; nothing on the core)\n";
      emit_block(op.body, o, ind + 1);
      o << pad << "}\n";
      return;
    }
    if (k == "if") {
      o << pad << "if (" << expr(*op.cond, false) << ") {\n";
      emit_block(op.then_body, o, ind + 1);
      o << pad << "} else {\n";
      emit_block(op.else_body, o, ind + 1);
      o << pad << "}\n";
      return;
    }
    if (k == "scalar") {
      o << pad << local(dst) << " = (double)(" << expr(*op.value, false) << ");\n";
      return;
    }
    const AieIntrinsic *c = intrinsic_of(op);
    const Local &d = tile(dst, op);
    const bool ints = integral(d.dtype);
    const std::string as = compute_type(d.dtype);
    switch (c->kind) {
    case IntrinsicKind::Full: return loop2(o, ind, d, dst, "(" + as + ")(" + expr(op.value.value_or(Json(0)), false) + ")");
    case IntrinsicKind::Binary:
    case IntrinsicKind::RowExpandBinary:
    case IntrinsicKind::ColExpandBinary: {  // elem() broadcasts the [R, 1] / [1, C] operand
      const std::string a = arg(op, 0), b = arg(op, 1);
      return loop2(o, ind, d, dst, binary_expr(c->scalar, elem(a, tile(a, op), as), elem(b, tile(b, op), as), ints, where_));
    }
    case IntrinsicKind::ScalarBinary: {
      const std::string a = arg(op, 0);
      if (!op.scalar) throw EmitError("op '" + k + "' needs a scalar operand ('scalar')");
      // A float scalar is first rounded to the tile's dtype, as NumPy takes `f16_array + 0.1` (and Ascend's
      // TADDS its scalar); the op then computes in double and rounds once.
      const std::string scalar = ints ? expr(*op.scalar, false) : "(" + c_type(d.dtype) + ")(" + expr(*op.scalar, false) + ")";
      return loop2(o, ind, d, dst, binary_expr(c->scalar, elem(a, tile(a, op), as), "(" + as + ")(" + scalar + ")", ints, where_));
    }
    case IntrinsicKind::Unary: {
      const std::string a = arg(op, 0);
      return loop2(o, ind, d, dst, unary_expr(c->scalar, elem(a, tile(a, op), as), ints));
    }
    case IntrinsicKind::Cast: {
      const std::string a = arg(op, 0);
      const Local &src = tile(a, op);
      if (integral(d.dtype) && !integral(src.dtype))  // out of range: the value NumPy's astype gives on x86
        return loop2(o, ind, d, dst, "htp_float_to_int<" + c_type(d.dtype) + ">(" + elem(a, src, "double") + ")");
      return loop2(o, ind, d, dst, elem(a, src, as));
    }
    case IntrinsicKind::Copy:
    case IntrinsicKind::RowExpand:
    case IntrinsicKind::ColExpand: {  // (a float cast to an integer truncates toward zero, as NumPy's astype)
      const std::string a = arg(op, 0);
      return loop2(o, ind, d, dst, elem(a, tile(a, op), as));
    }
    case IntrinsicKind::Transpose: {  // d is [C, R] of a's [R, C]
      const std::string a = arg(op, 0);
      return loop2(o, ind, d, dst, "(" + as + ")" + local(a) + "[c * " + std::to_string(d.rows()) + " + r]");
    }
    case IntrinsicKind::RowReduce:
    case IntrinsicKind::ColReduce: return emit_reduce(o, ind, op, *c, d);
    case IntrinsicKind::Matmul: return emit_matmul(o, ind, op, d);
    case IntrinsicKind::Load:
    case IntrinsicKind::Store: break;  // handled above
    }
    throw EmitError("op '" + k + "' has no AIE kernel lowering");
  }

  /// The contract of a compute op: of the `aie` set or portable (`"set"` absent or "tile").
  static const AieIntrinsic *intrinsic_of(const htp::TileOp &op) {
    const std::string &k = op.op;
    const std::string set = op.set.value_or("tile");
    if (set != "tile" && set != "aie")
      throw EmitError("'" + set + "." + k + "' belongs to intrinsic set '" + set +
                      "'; backend-aie lowers the aie and portable (tile) intrinsics only");
    const AieIntrinsic *c = find_intrinsic(k);
    if (!c) throw EmitError("op '" + k + "' has no AIE kernel lowering");
    return c;
  }

  void emit_reduce(std::ostream &o, int ind, const htp::TileOp &op, const AieIntrinsic &c, const Local &d) {
    const std::string a = arg(op, 0), dst = op.dst.value_or("");
    const Local &s = tile(a, op);
    const bool rows = c.kind == IntrinsicKind::RowReduce;
    const std::string_view kind = c.scalar;
    const std::string pad(ind * 2, ' ');
    const int64_t outer = rows ? s.rows() : s.cols(), inner = rows ? s.cols() : s.rows();
    const std::string at = rows ? "[o * " + std::to_string(s.cols()) + " + i]" : "[i * " + std::to_string(s.cols()) + " + o]";
    const std::string combine = kind == "sum" ? "acc += x;" : kind == "max" ? "acc = htp_tile_max(acc, x);" : "acc = htp_tile_min(acc, x);";
    const std::string as = compute_type(d.dtype);
    o << pad << "for (int64_t o = 0; o < " << outer << "; ++o) {\n"
      << pad << "  " << as << " acc = (" << as << ")" << local(a) << (rows ? "[o * " + std::to_string(s.cols()) + "]" : "[o]") << ";\n"
      << pad << "  for (int64_t i = 1; i < " << inner << "; ++i) { " << as << " x = (" << as << ")" << local(a) << at << "; "
      << combine << " }\n"
      << pad << "  " << local(dst) << "[o] = (" << c_type(d.dtype) << ")acc;\n"
      << pad << "}\n";
  }

  void emit_matmul(std::ostream &o, int ind, const htp::TileOp &op, const Local &d) {
    const std::string a = arg(op, 0), b = arg(op, 1), dst = op.dst.value_or("");
    const Local &la = tile(a, op), &lb = tile(b, op);
    if (la.cols() != lb.rows() || la.rows() != d.rows() || lb.cols() != d.cols())
      throw EmitError("matmul shapes do not agree: [" + std::to_string(la.rows()) + ", " + std::to_string(la.cols()) +
                      "] @ [" + std::to_string(lb.rows()) + ", " + std::to_string(lb.cols()) + "]");
    const bool acc = op.accumulate.value_or(false);
    const std::string pad(ind * 2, ' ');
    o << pad << "for (int64_t m = 0; m < " << d.rows() << "; ++m)\n"
      << pad << "  for (int64_t n = 0; n < " << d.cols() << "; ++n) {\n"
      << pad << "    float acc = " << (acc ? "(float)" + local(dst) + "[m * " + std::to_string(d.cols()) + " + n]" : "0.0f")
      << ";\n"
      << pad << "    for (int64_t k = 0; k < " << la.cols() << "; ++k)\n"
      << pad << "      acc += (float)" << local(a) << "[m * " << la.cols() << " + k] * (float)" << local(b) << "[k * "
      << lb.cols() << " + n];\n"
      << pad << "    " << local(dst) << "[m * " << d.cols() << " + n] = (" << c_type(d.dtype) << ")acc;\n"
      << pad << "  }\n";
  }

  const htp::TileKernel &kernel_;
  const KernelPlan &plan_;
  std::map<std::string, Local> locals_;
  std::string where_ = "nullptr";  ///< the statement being emitted, a C++ string literal (binary_expr)
  int64_t locals_bytes_ = 0;
  int movement_index_ = 0;
};

}  // namespace

std::optional<EmittedKernel> emit_kernel(const htp::TileKernel &kernel, const KernelPlan &plan, std::string *error) {
  try {
    return Emitter(kernel, plan).run();
  } catch (const std::exception &e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
}

}  // namespace htp::aie
