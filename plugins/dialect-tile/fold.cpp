// tile.fold (canonicalize): inside tile kernels, names of captured global constants (module attribute
// htp.capture, written by the capture) become literals, and integer arithmetic on literals is folded
// (`N // 32` -> `4`), so that later passes and the IR dumps see static shapes and bounds. Names a kernel
// binds itself (parameters, locals) shadow the globals and are left alone.
#include <array>

#include "functions.hpp"
#include "passes.hpp"

namespace tile {

namespace {

/// The replacement literal for a captured constant, or an empty view (strings, tuples, None stay names).
htp::NodeRef literal_for(const htp::ModuleRef &m, const nlohmann::json &v, const HtpSpan &span) {
  HtpConstant c{};
  c.struct_size = sizeof c;
  if (v.is_boolean()) {
    c.kind = HTP_CONST_BOOL;
    c.i = v.get<bool>() ? 1 : 0;
  } else if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return {};
    c.kind = HTP_CONST_INT;
    c.i = v.get<int64_t>();
  } else if (v.is_number_float()) {
    c.kind = HTP_CONST_FLOAT;
    c.real = v.get<double>();
  } else {
    return {};
  }
  auto n = m.create("Constant", &span);
  m.set_constant(n, c);
  return n;
}

/// The module-level function a node belongs to (empty when none).
htp::NodeRef enclosing_function(htp::NodeRef n) {
  htp::NodeRef fn;
  for (auto p = n; p; p = p.parent())
    if (p.is("FunctionDef")) fn = p;
  return fn;
}

bool in_tile_kernel(htp::NodeRef n) {
  auto fn = enclosing_function(n);
  return fn && is_tile_kernel(fn);
}

std::optional<int64_t> fold_int_binop(std::string_view op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "Add") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Sub") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Mult") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "FloorDiv" || op == "Mod") {
    if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt; // left for the type checker to report
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return op == "FloorDiv" ? q : a - q * b;
  }
  return std::nullopt;
}

/// `a <op> b` on int literals inside a kernel (+ - * // %), with Python semantics; overflow and division
/// by zero are left as they are.
struct FoldIntBinOp {
  static constexpr const char *name = "tile.fold-int-binop";
  static constexpr std::array<const char *, 1> roots{"BinOp"};
  static constexpr int32_t benefit = 1;
  static std::optional<int64_t> value(htp::NodeRef n) {
    auto a = n.child("left").int_constant(), b = n.child("right").int_constant();
    if (!a || !b) return std::nullopt;
    return fold_int_binop(n.child("op").type(), *a, *b);
  }
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    auto v = value(n);
    if (!v || !in_tile_kernel(n)) return false;
    HtpSpan span = n.span();
    auto m = ctx.module();
    m.replace(n, m.int_constant(*v, &span));
    return true;
  }
};

/// `-a` on an int literal inside a kernel (so that `-N` folds like `0 - N`).
struct FoldIntNeg {
  static constexpr const char *name = "tile.fold-int-neg";
  static constexpr std::array<const char *, 1> roots{"UnaryOp"};
  static constexpr int32_t benefit = 1;
  bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const {
    auto v = n.child("operand").int_constant();
    // A literal operand of a BinOp is folded with it; a lone `-1` stays as Python writes it.
    if (!n.child("op").is("USub") || !v || *v == INT64_MIN || !n.parent().is("BinOp") || !in_tile_kernel(n))
      return false;
    HtpSpan span = n.span();
    auto m = ctx.module();
    m.replace(n, m.int_constant(-*v, &span));
    return true;
  }
};

/// A module-level tile kernel whose body reads captured global constants: each such name (not shadowed by a
/// name the kernel binds) becomes its literal. One rewrite per kernel; the literals it inserts queue their
/// parents, so the arithmetic patterns fold what they enable.
struct InlineCapturedConstants {
  static constexpr const char *name = "tile.inline-captured-constants";
  static constexpr std::array<const char *, 1> roots{"FunctionDef"};
  static constexpr int32_t benefit = 2;
  bool match_and_rewrite(htp::NodeRef fn, htp::PassContext &ctx) const {
    if (!fn.parent().is("Module") || !is_tile_kernel(fn)) return false;
    auto m = ctx.module();
    auto constants = captured_constants(m);
    if (constants.empty()) return false;
    auto bound = bound_names(fn);
    std::vector<std::pair<htp::NodeRef, htp::NodeRef>> edits; // collected first: no edits while walking
    fn.walk([&](htp::NodeRef n) {
      if (!n.is("Name") || !n.child("ctx").is("Load")) return;
      std::string id = n.text("id").value_or("");
      if (bound.count(id) || !constants.contains(id)) return;
      if (auto lit = literal_for(m, constants[id], n.span())) edits.emplace_back(n, lit);
    });
    for (auto [from, to] : edits)
      m.replace(from, to);
    return !edits.empty();
  }
};

} // namespace

std::vector<htp::PatternSpec> fold_patterns() {
  return {htp::pattern<InlineCapturedConstants>(), htp::pattern<FoldIntBinOp>(), htp::pattern<FoldIntNeg>()};
}

} // namespace tile
