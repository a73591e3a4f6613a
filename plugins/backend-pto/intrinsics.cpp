#include "intrinsics.hpp"

#include "dtype.hpp"

namespace ptobe {

std::string_view core_type_name(CoreType c) {
  switch (c) {
  case CoreType::Aiv: return "aiv";
  case CoreType::Aic: return "aic";
  case CoreType::Any: return "any";
  }
  return "any";
}

const std::vector<IntrinsicContract> &intrinsic_contracts() {
  using K = OpKind;
  using C = CoreType;
  static const std::vector<IntrinsicContract> table = {
      {"load", K::Load, C::Any, "TLOAD", false, "tile <- tensor view at an element offset (GM -> UB or L1)"},
      {"store", K::Store, C::Any, "TSTORE", false, "tensor view <- tile (UB or L0C -> GM)"},
      {"alloc", K::Alloc, C::Any, "TASSIGN", false, "reserve a tile in its memory space"},
      {"full", K::Full, C::Aiv, "TEXPANDS", false, "fill a tile with a constant (0 on an accumulator resets it)"},
      {"copy", K::Copy, C::Aiv, "TMOV", false, "tile copy"},
      {"add", K::Binary, C::Aiv, "TADD", false, "elementwise a + b"},
      {"sub", K::Binary, C::Aiv, "TSUB", false, "elementwise a - b"},
      {"mul", K::Binary, C::Aiv, "TMUL", false, "elementwise a * b"},
      {"div", K::Binary, C::Aiv, "TDIV", true, "elementwise a / b"},
      {"max", K::Binary, C::Aiv, "TMAX", false, "elementwise maximum"},
      {"min", K::Binary, C::Aiv, "TMIN", false, "elementwise minimum"},
      {"adds", K::ScalarBinary, C::Aiv, "TADDS", false, "a + scalar"},
      {"subs", K::ScalarBinary, C::Aiv, "TSUBS", false, "a - scalar"},
      {"muls", K::ScalarBinary, C::Aiv, "TMULS", false, "a * scalar"},
      {"divs", K::ScalarBinary, C::Aiv, "TDIVS", true, "a / scalar"},
      {"maxs", K::ScalarBinary, C::Aiv, "TMAXS", false, "max(a, scalar)"},
      {"mins", K::ScalarBinary, C::Aiv, "TMINS", false, "min(a, scalar)"},
      {"exp", K::Unary, C::Aiv, "TEXP", true, "e^a"},
      {"log", K::Unary, C::Aiv, "TLOG", true, "natural logarithm"},
      {"sqrt", K::Unary, C::Aiv, "TSQRT", true, "square root"},
      {"rsqrt", K::Unary, C::Aiv, "TRSQRT", true, "1 / sqrt(a)"},
      {"recip", K::Unary, C::Aiv, "TRECIP", true, "1 / a"},
      {"abs", K::Unary, C::Aiv, "TABS", false, "|a|"},
      {"neg", K::Unary, C::Aiv, "TNEG", false, "-a"},
      {"relu", K::Unary, C::Aiv, "TRELU", false, "max(a, 0)"},
      {"sigmoid", K::Unary, C::Aiv, "TNEG TEXP TADDS TRECIP", true, "1 / (1 + e^-a)"},
      {"tanh", K::Unary, C::Aiv, "TMULS TNEG TEXP TADDS TRECIP TMULS TADDS", true, "2 sigmoid(2a) - 1"},
      {"rowsum", K::RowReduce, C::Aiv, "TROWSUM", false, "sum of each row -> [R, 1]"},
      {"rowmax", K::RowReduce, C::Aiv, "TROWMAX", false, "maximum of each row -> [R, 1]"},
      {"rowmin", K::RowReduce, C::Aiv, "TROWMIN", false, "minimum of each row -> [R, 1]"},
      {"colsum", K::ColReduce, C::Aiv, "TCOLSUM", false, "sum of each column -> [1, C]"},
      {"colmax", K::ColReduce, C::Aiv, "TCOLMAX", false, "maximum of each column -> [1, C]"},
      {"colmin", K::ColReduce, C::Aiv, "TCOLMIN", false, "minimum of each column -> [1, C]"},
      {"rowexpand", K::RowExpand, C::Aiv, "TROWEXPAND", false, "[R, 1] copied across columns"},
      {"colexpand", K::ColExpand, C::Aiv, "TCOLEXPAND", false, "[1, C] copied across rows"},
      {"rowexpand_add", K::RowExpandBinary, C::Aiv, "TROWEXPANDADD", false, "a + rowexpand(b)"},
      {"rowexpand_sub", K::RowExpandBinary, C::Aiv, "TROWEXPANDSUB", false, "a - rowexpand(b)"},
      {"rowexpand_mul", K::RowExpandBinary, C::Aiv, "TROWEXPANDMUL", false, "a * rowexpand(b)"},
      {"rowexpand_div", K::RowExpandBinary, C::Aiv, "TROWEXPANDDIV", true, "a / rowexpand(b)"},
      {"rowexpand_max", K::RowExpandBinary, C::Aiv, "TROWEXPANDMAX", false, "max(a, rowexpand(b))"},
      {"rowexpand_min", K::RowExpandBinary, C::Aiv, "TROWEXPANDMIN", false, "min(a, rowexpand(b))"},
      {"colexpand_add", K::ColExpandBinary, C::Aiv, "TCOLEXPANDADD", false, "a + colexpand(b)"},
      {"colexpand_sub", K::ColExpandBinary, C::Aiv, "TCOLEXPANDSUB", false, "a - colexpand(b)"},
      {"colexpand_mul", K::ColExpandBinary, C::Aiv, "TCOLEXPANDMUL", false, "a * colexpand(b)"},
      {"colexpand_div", K::ColExpandBinary, C::Aiv, "TCOLEXPANDDIV", true, "a / colexpand(b)"},
      {"colexpand_max", K::ColExpandBinary, C::Aiv, "TCOLEXPANDMAX", false, "max(a, colexpand(b))"},
      {"colexpand_min", K::ColExpandBinary, C::Aiv, "TCOLEXPANDMIN", false, "min(a, colexpand(b))"},
      {"matmul", K::Matmul, C::Aic, "TMOV TMATMUL TMATMUL_ACC", false, "acc (+)= a @ b on the cube unit"},
      {"cast", K::Cast, C::Aiv, "TCVT", false, "element type conversion to the result's dtype"},
      {"transpose", K::Transpose, C::Aiv, "TTRANS", false, "[R, C] -> [C, R]"},
  };
  return table;
}

const IntrinsicContract *find_intrinsic(std::string_view op) {
  for (const IntrinsicContract &c : intrinsic_contracts())
    if (c.op == op) return &c;
  return nullptr;
}

std::vector<std::string> intrinsic_op_names() {
  std::vector<std::string> out;
  for (const IntrinsicContract &c : intrinsic_contracts()) out.emplace_back(c.op);
  return out;
}

MemorySpaces memory_spaces(const IntrinsicContract &c) {
  switch (c.kind) {
  case OpKind::Load: return {{"GM"}, {"UB", "L1"}};
  case OpKind::Store: return {{"UB", "L1", "L0C"}, {"GM"}};
  case OpKind::Alloc: return {{}, {"UB", "L1", "L0C"}};
  case OpKind::Full: return {{}, {"UB", "L0C"}};
  case OpKind::Matmul: return {{"L1"}, {"L0C"}};  // through the L0A / L0B companions
  case OpKind::Cast: return {{"UB", "L0C"}, {"UB", "L0C"}};  // an accumulator converts in TSTORE
  default: return {{"UB"}, {"UB"}};
  }
}

std::string memory_spaces_text(const MemorySpaces &m) {
  auto join = [](const std::vector<std::string_view> &v) {
    std::string s;
    for (auto x : v) s += (s.empty() ? "" : " | ") + std::string(x);
    return s;
  };
  return (m.in.empty() ? std::string() : join(m.in) + " ") + "-> " + join(m.out);
}

std::string_view contract_class(OpKind k) {
  switch (k) {
  case OpKind::Load: return "load";
  case OpKind::Store: return "store";
  case OpKind::Alloc: return "alloc";
  case OpKind::Full: return "full";
  case OpKind::Copy: return "copy";
  case OpKind::Binary: return "elementwise";
  case OpKind::ScalarBinary: return "scalar_form";
  case OpKind::Unary: return "unary";
  case OpKind::RowReduce: return "row_reduce";
  case OpKind::ColReduce: return "col_reduce";
  case OpKind::RowExpand: return "row_expand";
  case OpKind::ColExpand: return "col_expand";
  case OpKind::RowExpandBinary: return "row_expand_binary";
  case OpKind::ColExpandBinary: return "col_expand_binary";
  case OpKind::Matmul: return "matmul";
  case OpKind::Cast: return "cast";
  case OpKind::Transpose: return "transpose";
  }
  return "?";
}

json intrinsic_set_table() {
  json ops = json::object();
  for (const IntrinsicContract &c : intrinsic_contracts())
    ops[std::string(c.op)] = {{"contract", contract_class(c.kind)}, {"float_only", c.float_only},
                              {"core", core_type_name(c.core)}, {"spaces", memory_spaces_text(memory_spaces(c))}, {"isa", c.isa},
                              {"summary", c.summary}};
  return {{"schema", "htp.tile.intrinsic-set.v1"}, {"set", "pto"}, {"plugin", "backend-pto"}, {"ops", ops}};
}

std::string describe_tile(const std::vector<int64_t> &shape, const std::string &dtype) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "] " + dtype;
}

namespace {

using Shape = std::vector<int64_t>;

/// Checks one statement; members return the first violation.
class ContractCheck {
public:
  ContractCheck(const Kernel &k, const Op &s, const IntrinsicContract &c) : k_(k), s_(s), c_(c) {}

  std::optional<std::string> run() {
    if (auto e = arity()) return e;
    switch (c_.kind) {
    case OpKind::Load: return load();
    case OpKind::Store: return store();
    case OpKind::Alloc:
      if (!tile(s_.dst, "result")) return error_;
      return std::nullopt;
    case OpKind::Full: return full();
    case OpKind::Copy:
    case OpKind::Binary:
    case OpKind::ScalarBinary:
    case OpKind::Unary: return elementwise();
    case OpKind::RowReduce: return shaped({{0, {rows(0), -1}}}, {rows(0), 1});
    case OpKind::ColReduce: return shaped({{0, {-1, cols(0)}}}, {1, cols(0)});
    case OpKind::RowExpand: return shaped({{0, {drows(), 1}}}, {});
    case OpKind::ColExpand: return shaped({{0, {1, dcols()}}}, {});
    case OpKind::RowExpandBinary: return shaped({{0, {drows(), dcols()}}, {1, {drows(), 1}}}, {});
    case OpKind::ColExpandBinary: return shaped({{0, {drows(), dcols()}}, {1, {1, dcols()}}}, {});
    case OpKind::Matmul: return matmul();
    case OpKind::Cast: return shaped({{0, {drows(), dcols()}}}, {}, /*same_dtype=*/false);
    case OpKind::Transpose: return shaped({{0, {dcols(), drows()}}}, {});
    }
    return std::nullopt;
  }

private:
  std::string name() const { return "pto." + std::string(c_.op); }

  size_t expected_args() const {
    switch (c_.kind) {
    case OpKind::Load: case OpKind::Store: case OpKind::Alloc: case OpKind::Full: return 0;
    case OpKind::Binary: case OpKind::RowExpandBinary: case OpKind::ColExpandBinary: case OpKind::Matmul: return 2;
    default: return 1;
    }
  }

  std::optional<std::string> arity() {
    size_t want = expected_args(), have = s_.args.size();
    if (c_.kind == OpKind::Matmul && have == 3) return std::nullopt;  // acc = matmul(a, b, acc)
    if (c_.kind == OpKind::Load || c_.kind == OpKind::Store) return std::nullopt;
    if (have != want)
      return name() + " takes " + std::to_string(want) + " operand(s), found " + std::to_string(have);
    if (c_.kind != OpKind::Store && s_.dst.empty()) return name() + " has no result register";
    return std::nullopt;
  }

  const Local *tile(const std::string &n, const char *role) {
    const Local *l = k_.local(n);
    if (!l || l->scalar) {
      error_ = name() + ": " + role + " '" + n + "' is not a tile register of " + k_.kind + " '" + k_.name + "'";
      return nullptr;
    }
    return l;
  }

  const Local *dst() { return k_.local(s_.dst); }
  const Local *arg(size_t i) { return i < s_.args.size() ? k_.local(s_.args[i]) : nullptr; }
  int64_t rows(size_t i) { const Local *a = arg(i); return a ? a->rows() : -1; }
  int64_t cols(size_t i) { const Local *a = arg(i); return a ? a->cols() : -1; }
  int64_t drows() { const Local *d = dst(); return d ? d->rows() : -1; }
  int64_t dcols() { const Local *d = dst(); return d ? d->cols() : -1; }

  /// Operand i must have `want` (a -1 dim is free) and the result `result` (empty: free).
  std::optional<std::string> shaped(std::vector<std::pair<size_t, Shape>> want, Shape result, bool same_dtype = true) {
    const Local *d = tile(s_.dst, "result");
    if (!d) return error_;
    for (auto &[i, shape] : want) {
      const Local *a = tile(s_.args[i], "operand");
      if (!a) return error_;
      Shape have = a->shape;
      Shape expect = shape;
      for (size_t j = 0; j < expect.size(); ++j)
        if (expect[j] < 0) expect[j] = have[j];
      if (have != expect)
        return name() + ": operand '" + a->name + "' is " + describe_tile(have, a->dtype) + " but must be " +
               describe_tile(expect, a->dtype) + " for the result '" + d->name + "' " +
               describe_tile(d->shape, d->dtype);
      if (same_dtype && a->dtype != d->dtype)
        return name() + ": operand '" + a->name + "' is " + a->dtype + " but the result '" + d->name + "' is " +
               d->dtype + "; convert with pto.cast";
    }
    if (!result.empty() && d->shape != result)
      return name() + ": the result '" + d->name + "' is " + describe_tile(d->shape, d->dtype) + " but must be " +
             describe_tile(result, d->dtype);
    return float_check(d);
  }

  std::optional<std::string> float_check(const Local *d) {
    auto t = find_dtype(d->dtype);
    if (!t) return name() + ": unknown element type '" + d->dtype + "' of '" + d->name + "'";
    if (c_.float_only && !t->is_float)
      return name() + " needs a floating-point tile (f16, bf16, f32), '" + d->name + "' is " + d->dtype;
    return std::nullopt;
  }

  std::optional<std::string> elementwise() {
    std::vector<std::pair<size_t, Shape>> want;
    for (size_t i = 0; i < s_.args.size(); ++i) want.push_back({i, {drows(), dcols()}});
    if (c_.kind == OpKind::ScalarBinary && !s_.ir.scalar)
      return name() + " needs a scalar operand ('scalar')";
    return shaped(want, {});
  }

  std::optional<std::string> full() {
    if (!tile(s_.dst, "result")) return error_;
    if (!s_.ir.value || s_.ir.value->is_null() || s_.ir.value->is_string())
      return name() + " needs a scalar 'value'";
    return std::nullopt;
  }

  /// A tile [R, C] against a view of tensor param `p` at `offset` (element offsets per tensor dim).
  std::optional<std::string> view(const Local *t, const std::string &pname, const json &offset, const char *what) {
    const Param *p = k_.param(pname);
    if (!p || !p->is_tensor())
      return name() + ": '" + pname + "' is not a tensor parameter of " + k_.kind + " '" + k_.name + "'";
    if (!offset.is_array() || offset.size() != p->shape.size())
      return name() + ": " + what + " '" + pname + "' needs " + std::to_string(p->shape.size()) +
             " offset(s), found " + (offset.is_array() ? std::to_string(offset.size()) : std::string("none"));
    int64_t prow = p->shape.size() >= 2 ? p->shape[p->shape.size() - 2] : 1, pcol = p->shape.back();
    if (t->rows() > prow || t->cols() > pcol)
      return name() + ": tile '" + t->name + "' " + describe_tile(t->shape, t->dtype) + " does not fit in " +
             what + " '" + pname + "' " + describe_tile(p->shape, p->dtype);
    return std::nullopt;
  }

  /// A matmul result, or the cast of one (converted when stored).
  bool is_accumulator(const std::string &tile_name) const {
    bool acc = false;
    for_each_op(k_.body, [&](const Op &o) {
      acc = acc || (o.op == "matmul" && o.dst == tile_name) ||
            (o.op == "cast" && o.dst == tile_name && o.args.size() == 1 && o.args[0] != tile_name &&
             is_accumulator(o.args[0]));
    });
    return acc;
  }

  std::optional<std::string> load() {
    const Local *t = tile(s_.dst, "result");
    if (!t) return error_;
    std::string src = s_.src();
    if (auto e = view(t, src, s_.offset(), "source")) return e;
    const Param *p = k_.param(src);
    if (p->dtype != t->dtype)
      return name() + ": tile '" + t->name + "' is " + t->dtype + " but tensor '" + src + "' is " + p->dtype;
    return std::nullopt;
  }

  std::optional<std::string> store() {
    std::string value = s_.stored();
    const Local *t = tile(value, "stored value");
    if (!t) return error_;
    if (auto e = view(t, s_.dst, s_.offset(), "destination")) return e;
    const Param *p = k_.param(s_.dst);
    if (p->dir == "in") return name() + ": '" + s_.dst + "' is an In parameter and cannot be stored to";
    if (p->dtype != t->dtype && !is_accumulator(value))
      return name() + ": tile '" + value + "' is " + t->dtype + " but tensor '" + s_.dst + "' is " + p->dtype +
             "; convert with pto.cast";
    return std::nullopt;
  }

  std::optional<std::string> matmul() {
    const Local *d = tile(s_.dst, "result");
    const Local *a = d ? tile(s_.args[0], "left operand") : nullptr;
    const Local *b = a ? tile(s_.args[1], "right operand") : nullptr;
    if (!b) return error_;
    if (s_.args.size() == 3 && s_.args[2] != s_.dst)
      return name() + ": the accumulator operand '" + s_.args[2] + "' must be the result register '" + s_.dst + "'";
    if (a->cols() != b->rows())
      return name() + ": contraction mismatch: '" + a->name + "' is " + describe_tile(a->shape, a->dtype) +
             " and '" + b->name + "' is " + describe_tile(b->shape, b->dtype) + " (" + std::to_string(a->cols()) +
             " != " + std::to_string(b->rows()) + ")";
    if (d->shape != Shape{a->rows(), b->cols()})
      return name() + ": the result '" + d->name + "' is " + describe_tile(d->shape, d->dtype) + " but " +
             a->name + " @ " + b->name + " is " + describe_tile({a->rows(), b->cols()}, d->dtype);
    if (a->dtype != b->dtype)
      return name() + ": operands '" + a->name + "' (" + a->dtype + ") and '" + b->name + "' (" + b->dtype +
             ") must have one element type";
    return std::nullopt;
  }

  const Kernel &k_;
  const Op &s_;
  const IntrinsicContract &c_;
  std::string error_;
};

}  // namespace

std::optional<std::string> check_contract(const Kernel &k, const Op &s, const IntrinsicContract &c) {
  return ContractCheck(k, s, c).run();
}

}  // namespace ptobe
