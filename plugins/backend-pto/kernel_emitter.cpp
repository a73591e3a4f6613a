#include "kernel_emitter.hpp"

#include <htp/expr_eval.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "dtype.hpp"
#include "expr_cpp.hpp"
#include "runtime_api.hpp"

namespace ptobe {

namespace {

/// The hardware pipes PTO-ISA synchronises with set_flag/wait_flag.
enum class Pipe { None, MTE2, MTE1, V, M, MTE3, FIX };

const char *pipe_name(Pipe p) {
  switch (p) {
  case Pipe::MTE2: return "PIPE_MTE2";
  case Pipe::MTE1: return "PIPE_MTE1";
  case Pipe::V: return "PIPE_V";
  case Pipe::M: return "PIPE_M";
  case Pipe::MTE3: return "PIPE_MTE3";
  case Pipe::FIX: return "PIPE_FIX";
  case Pipe::None: break;
  }
  return "PIPE_S";
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string var_name(const std::string &n) { return "i_" + n; }
/// A tile's C++ name: `t_<register>`, or `tmp<register>` for compiler temporaries (`_t0`), so that no
/// generated name holds a double underscore.
std::string tile_var(const TileBuffer &b) { return b.name.rfind('_', 0) == 0 ? "tmp" + b.name : "t_" + b.name; }

class KernelWriter;
using Emitter = std::function<void(KernelWriter &, const Op &, const IntrinsicContract &)>;

/// Writes one kernel: arguments, tiles, body statements with pipe synchronisation.
class KernelWriter {
public:
  KernelWriter(const Kernel &k, const KernelPlan &plan) : k_(k), plan_(plan) {
    names_.var = [this](const std::string &n) {
      const Local *l = k_.local(n);
      if (l && l->scalar) return "s_" + n;
      const Param *p = k_.param(n);
      return p && !p->is_tensor() ? "p_" + n : var_name(n);
    };
    names_.param = [](const std::string &n) { return "p_" + n; };
    names_.read = [this](const std::string &t, const std::vector<std::string> &idx) {
      if (!k_.param(t) || !k_.param(t)->is_tensor())
        throw IrError(k_.kind + " '" + k_.name + "' reads '" + t + "', which is not a tensor parameter", k_.span);
      if (idx.size() == 1) return "g_" + t + "[" + idx[0] + "]";
      if (idx.size() == 2) return "g_" + t + "[(" + idx[0] + ") * " + t + "_row_stride + (" + idx[1] + ")]";
      throw IrError(k_.kind + " '" + k_.name + "' reads '" + t + "' with " + std::to_string(idx.size()) + " indices",
                    k_.span);
    };
  }

  std::string run(const KernelOrigin &origin);

  // ---- used by the emitters ----
  std::string expr(const json &e) const { return expr_to_cpp(e, names_); }
  const TileBuffer &tile(const std::string &reg) const { return plan_.buffer(reg); }
  std::string tv(const std::string &reg) const { return tile_var(tile(reg)); }
  std::string ctype(const std::string &reg) const { return std::string(dtype(tile(reg).dtype).cpp); }
  const KernelPlan &plan() const { return plan_; }
  void line(const std::string &text) { out_ << indent_ << text << "\n"; }
  /// Synchronises every pipe that may still be running with `p`, then records `p` as the last one.
  void on_pipe(Pipe p) {
    if (p == Pipe::None) return;
    for (Pipe q : pending_)
      if (q != p) {
        line(std::string("set_flag(") + pipe_name(q) + ", " + pipe_name(p) + ", EVENT_ID0);");
        line(std::string("wait_flag(") + pipe_name(q) + ", " + pipe_name(p) + ", EVENT_ID0);");
      }
    pending_ = {p};
  }
  /// `g` bound to the view of tensor param `pname` at `offset` with the shape of tile register `reg`; returns
  /// the tile to load or store (the register's, or a view of its bytes for a tiled memory layout).
  std::string global_view(const std::string &g, const std::string &pname, const json &offset, const std::string &reg,
                          const Span &span) {
    const Param *p = k_.param(pname);
    if (p && !p->mem_strides.empty()) return layout_view(g, *p, offset, reg);
    const TileBuffer &b = tile(reg);
    std::string addr = "g_" + pname;
    const size_t n = offset.is_array() ? offset.size() : 0;
    // An offset known only at run time (a runtime loop bound, a scalar) is checked on the simulator.
    const std::vector<int64_t> extents = htp::view_extents(b.rows, b.cols, n);
    const std::string where = this->where(span);
    for (size_t d = 0; d < n; ++d) {
      // A constant offset is checked here: the kernel IR may come from a plugin's pass, after tile.typecheck.
      if (offset[d].is_number_integer() && p && d < p->shape.size() && p->shape[d] > 0 &&
          (offset[d].get<int64_t>() < 0 || offset[d].get<int64_t>() + extents[d] > p->shape[d]))
        throw IrError(k_.kind + " '" + k_.name + "': the tile of '" + reg + "' at offset " + offset[d].dump() +
                          " of '" + pname + "' covers [" + offset[d].dump() + ", " +
                          std::to_string(offset[d].get<int64_t>() + extents[d]) + ") in dimension " + std::to_string(d) +
                          ", outside its extent " + std::to_string(p->shape[d]),
                      span, "pto.contract");
      if (offset[d].is_number()) continue;
      line("HTP_CHECK_VIEW(" + pname + "_view, " + where + ", " + json(pname).dump() + ", " + std::to_string(n) +
           ", " + std::to_string(d) + ", " + expr(offset[d]) + ", " + std::to_string(extents[d]) + ");");
    }
    for (size_t d = 0; d + 2 < n; ++d)  // leading dims of a rank-3+ tensor (extent 1 in the view)
      addr += " + (" + expr(offset[d]) + ") * " + pname + "_stride" + std::to_string(d);
    if (n >= 2)
      addr += " + (" + expr(offset[n - 2]) + ") * " + pname + "_row_stride + (" + expr(offset[n - 1]) + ")";
    else if (n == 1)
      addr += " + (" + expr(offset[0]) + ")";
    const std::string type = g + "_type";
    line("using " + type + " = GlobalTensor<" + std::string(dtype(p->dtype).cpp) + ", Shape<1, 1, 1, " +
         std::to_string(b.rows) + ", " + std::to_string(b.cols) + ">, Stride<1, 1, 1, -1, 1>>;");
    line(type + " " + g + "(" + addr + ", " + type + "::Shape(), " + type + "::Stride(" + pname + "_row_stride));");
    return tv(reg);
  }
  /// global_view of a parameter global memory holds in a `mem` layout (Param::mem_strides, static). Element
  /// strides per dim: a strided view at the offset (`Layout::DN` when column-major). A tiled layout (several
  /// iters on a dim): the whole tensor only, through a row-major view of the tile's bytes whose rows walk
  /// every iter but the last (at most four) and whose columns walk the last one.
  std::string layout_view(const std::string &g, const Param &p, const json &offset, const std::string &reg) {
    const TileBuffer &b = tile(reg);
    const std::string ct = std::string(dtype(p.dtype).cpp), type = g + "_type";
    const std::vector<int64_t> &ext = p.mem_extents, &str = p.mem_strides;
    auto list = [](std::vector<int64_t> v) {
      while (v.size() < 5) v.insert(v.begin(), 1);
      std::string out;
      for (int64_t x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
      return out;
    };
    auto refuse = [&](const std::string &why) -> std::string {
      throw IrError(k_.kind + " '" + k_.name + "': parameter '" + p.name + "' has a tiled memory layout " +
                        json(ext).dump() + " x " + json(str).dump() + "; " + why, k_.span, "pto.layout-mem");
    };
    if (ext.size() == 2) {
      std::string addr = "g_" + p.name;
      for (size_t d = 0; d < 2 && offset.is_array() && d < offset.size(); ++d)
        addr += " + (" + expr(offset[d]) + ") * " + std::to_string(str[d]);
      const bool dn = str[0] == 1 && str[1] != 1;
      line("using " + type + " = GlobalTensor<" + ct + ", Shape<" + list({b.rows, b.cols}) + ">, Stride<" +
           list(str) + ">" + (dn ? ", Layout::DN" : "") + ">;  // memory layout: strides " + json(str).dump());
      line(type + " " + g + "(" + addr + ");");
      return tv(reg);
    }
    bool whole = b.rows == p.shape[0] && b.cols == p.shape[1];
    for (size_t d = 0; offset.is_array() && d < offset.size(); ++d) whole = whole && offset[d] == json(0);
    if (!whole) refuse("backend-pto loads and stores such a tensor whole");
    if (b.tile_type != "Vec" || b.pcols != b.cols) refuse("backend-pto moves it through unpadded vector tiles only");
    if (ext.size() > 5) refuse("a view walks at most five iters");
    const int64_t w = ext.back(), rows = b.rows * b.cols / w;
    if ((w * dtype(p.dtype).bytes) % 32 != 0)
      refuse("its innermost iter (" + std::to_string(w) + " elements) is not a multiple of the 32-byte block");
    const std::string view = tv(reg) + "_blocks";
    line("using " + view + "_type = Tile<TileType::Vec, " + ct + ", " + std::to_string(rows) + ", " + std::to_string(w) +
         ", BLayout::RowMajor, " + std::to_string(rows) + ", " + std::to_string(w) + ">;  // the tile's bytes, " +
         std::to_string(w) + " elements a row");
    line(view + "_type " + view + ";");
    line("TASSIGN(" + view + ", " + hex(b.address) + ");");
    line("using " + type + " = GlobalTensor<" + ct + ", Shape<" + list(ext) + ">, Stride<" + list(str) +
         ">>;  // tiled memory layout");
    line(type + " " + g + "(g_" + p.name + ");");
    return view;
  }
  /// The names to give PTO-ISA's scalar forms (TADDS, TMULS, ...), which take row-major tiles only: for
  /// an op on [R, 1] column tiles, opens a block declaring row-major [1, R] views at the same addresses
  /// (the same bytes) and returns their names (close with close_block()); otherwise the tiles' own names.
  std::vector<std::string> row_major_operands(const Op &o, bool &opened) {
    std::vector<std::string> regs{o.dst};
    regs.insert(regs.end(), o.args.begin(), o.args.end());
    opened = false;
    bool column = true;
    for (const auto &r : regs) {
      const TileBuffer &b = tile(r);
      column = column && b.col_major && b.rows == tile(o.dst).rows &&
               (b.rows * dtype(b.dtype).bytes) % 32 == 0;
    }
    std::vector<std::string> out;
    if (!column) {
      for (const auto &r : regs) out.push_back(tv(r));
      return out;
    }
    open_block();
    opened = true;
    std::set<std::string> declared;
    for (const auto &r : regs) {
      const TileBuffer &b = tile(r);
      const std::string v = tv(r) + "_row";
      if (declared.insert(v).second) {
        const std::string n = std::to_string(b.rows);
        line("using " + v + "_type = Tile<TileType::Vec, " + std::string(dtype(b.dtype).cpp) + ", 1, " + n +
             ", BLayout::RowMajor, 1, " + n + ">;");
        line(v + "_type " + v + ";");
        line("TASSIGN(" + v + ", " + hex(b.address) + ");");
      }
      out.push_back(v);
    }
    return out;
  }
  void open_block() { line("{"); indent_ += "    "; }
  void close_block() { indent_.resize(indent_.size() - 4); line("}"); }
  std::string acc_flag(const std::string &reg) const { return "acc_live_" + reg; }
  /// The statement's place as a C++ string literal ("\"prog.py:12\""), for the simulator's run errors.
  std::string where(const Span &span) const { return json(file_ + ":" + std::to_string(span.line)).dump(); }

private:
  void arguments();
  void tiles();
  void declare(const TileBuffer &b);
  void statements(const std::vector<Op> &ops);
  void statement(const Op &o);
  void control(const Op &o);
  static std::set<Pipe> pipes_of(const std::vector<Op> &ops);

  const Kernel &k_;
  const KernelPlan &plan_;
  ExprNames names_;
  std::ostringstream out_;
  std::string indent_ = "    ";
  std::set<Pipe> pending_;
  std::string file_;  ///< the kernel's source file, for messages
};

// ---- one emitter per intrinsic family; the instruction comes from the table below ----

Pipe store_pipe(const TileBuffer &b) { return b.tile_type == "Acc" ? Pipe::FIX : Pipe::MTE3; }

void emit_load(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  w.on_pipe(Pipe::MTE2);
  w.open_block();
  const std::string dst = w.global_view("src", o.src(), o.offset(), o.dst, o.span);
  w.line("TLOAD(" + dst + ", src);");
  w.close_block();
}

void emit_store(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  const std::string value = o.stored();
  w.on_pipe(store_pipe(w.tile(value)));
  if (const TileBuffer &b = w.tile(value); b.tile_type == "Acc")  // (a cast of the accumulator is its buffer)
    w.line("HTP_CHECK_ACC_WRITTEN(" + w.acc_flag(b.register_) + ", " + w.where(o.span) + ", " +
           json(b.register_).dump() + ");");
  w.open_block();
  const std::string src = w.global_view("dst", o.dst, o.offset(), value, o.span);
  w.line("TSTORE(dst, " + src + ");");
  w.close_block();
}

void emit_full(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  if (w.tile(o.dst).tile_type == "Acc") {  // a zero accumulator: the next matmul overwrites instead of adding
    w.line(w.acc_flag(o.dst) + " = false;");
    return;
  }
  w.on_pipe(Pipe::V);
  w.line("TEXPANDS(" + w.tv(o.dst) + ", static_cast<" + w.ctype(o.dst) + ">(" + w.expr(*o.ir.value) + "));");
}

void emit_nothing(KernelWriter &, const Op &, const IntrinsicContract &) {}

/// dst <- INSTR(dst, args...) for the binary, unary, expansion and copy families.
void emit_vector(KernelWriter &w, const Op &o, const IntrinsicContract &c) {
  w.on_pipe(Pipe::V);
  std::string call = std::string(c.isa) + "(" + w.tv(o.dst);
  for (const auto &a : o.args) call += ", " + w.tv(a);
  w.line(call + ");");
}

void emit_scalar_binary(KernelWriter &w, const Op &o, const IntrinsicContract &c) {
  w.on_pipe(Pipe::V);
  bool opened = false;
  auto n = w.row_major_operands(o, opened);
  w.line(std::string(c.isa) + "(" + n[0] + ", " + n[1] + ", static_cast<" + w.ctype(o.dst) + ">(" +
         w.expr(*o.ir.scalar) + "));");
  if (opened) w.close_block();
}

void emit_row_reduce(KernelWriter &w, const Op &o, const IntrinsicContract &c) {
  w.on_pipe(Pipe::V);
  const TileBuffer &scratch = w.plan().tiles.at(w.plan().scratch_of.at(&o));
  w.line(std::string(c.isa) + "(" + w.tv(o.dst) + ", " + w.tv(o.args[0]) + ", " + tile_var(scratch) + ");");
}

void emit_sigmoid_into(KernelWriter &w, const std::string &d, const std::string &s, const std::string &t) {
  w.line("TNEG(" + d + ", " + s + ");");
  w.line("TEXP(" + d + ", " + d + ");");
  w.line("TADDS(" + d + ", " + d + ", static_cast<" + t + ">(1.0));");
  w.line("TRECIP(" + d + ", " + d + ");");
}

/// The f32 scratch tile a half-precision sigmoid or tanh computes in (nullopt: it computes in its own dtype).
std::optional<std::string> f32_scratch(KernelWriter &w, const Op &o) {
  auto it = w.plan().scratch_of.find(&o);
  if (it == w.plan().scratch_of.end()) return std::nullopt;
  return tile_var(w.plan().tiles.at(it->second));
}

void emit_sigmoid(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  w.on_pipe(Pipe::V);
  if (auto s = f32_scratch(w, o)) {  // a half tile: in f32, rounded once
    w.line("TCVT(" + *s + ", " + w.tv(o.args[0]) + ", RoundMode::CAST_NONE);");
    emit_sigmoid_into(w, *s, *s, "float");
    w.line("TCVT(" + w.tv(o.dst) + ", " + *s + ", RoundMode::CAST_RINT);");
    return;
  }
  bool opened = false;
  auto n = w.row_major_operands(o, opened);
  emit_sigmoid_into(w, n[0], n[1], w.ctype(o.dst));
  if (opened) w.close_block();
}

void emit_tanh(KernelWriter &w, const Op &o, const IntrinsicContract &) {  // 2 sigmoid(2x) - 1
  w.on_pipe(Pipe::V);
  if (auto scratch = f32_scratch(w, o)) {  // a half tile: in f32, rounded once
    const std::string &s = *scratch;
    w.line("TCVT(" + s + ", " + w.tv(o.args[0]) + ", RoundMode::CAST_NONE);");
    w.line("TMULS(" + s + ", " + s + ", 2.0f);");
    emit_sigmoid_into(w, s, s, "float");
    w.line("TMULS(" + s + ", " + s + ", 2.0f);");
    w.line("TADDS(" + s + ", " + s + ", -1.0f);");
    w.line("TCVT(" + w.tv(o.dst) + ", " + s + ", RoundMode::CAST_RINT);");
    return;
  }
  bool opened = false;
  auto n = w.row_major_operands(o, opened);
  const std::string d = n[0], t = w.ctype(o.dst);
  w.line("TMULS(" + d + ", " + n[1] + ", static_cast<" + t + ">(2.0));");
  emit_sigmoid_into(w, d, d, t);
  w.line("TMULS(" + d + ", " + d + ", static_cast<" + t + ">(2.0));");
  w.line("TADDS(" + d + ", " + d + ", static_cast<" + t + ">(-1.0));");
  if (opened) w.close_block();
}

void emit_cast(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  if (w.tile(o.dst).tile_type == "Acc") return;  // an accumulator converts in TSTORE (the FIX pipe)
  w.on_pipe(Pipe::V);
  const auto to = dtype(w.tile(o.dst).dtype), from = dtype(w.tile(o.args[0]).dtype);
  // docs/dialects/tile.md: a float to an integer truncates toward zero (NumPy's astype, C's conversion, as
  // backend-aie's kernels do); a narrower float rounds to nearest even; a wider float is exact.
  const char *mode = to.is_float && from.is_float && to.bytes >= from.bytes ? "CAST_NONE"
                     : from.is_float && !to.is_float                          ? "CAST_TRUNC"
                                                                              : "CAST_RINT";
  w.line("TCVT(" + w.tv(o.dst) + ", " + w.tv(o.args[0]) + ", RoundMode::" + mode + ");");
}

void emit_matmul(KernelWriter &w, const Op &o, const IntrinsicContract &) {
  const KernelPlan &plan = w.plan();
  const std::string left = tile_var(plan.tiles.at(plan.left_of.at(o.args[0])));
  const std::string right = tile_var(plan.tiles.at(plan.right_of.at(o.args[1])));
  w.on_pipe(Pipe::MTE1);
  w.line("TMOV(" + left + ", " + w.tv(o.args[0]) + ");");
  w.line("TMOV(" + right + ", " + w.tv(o.args[1]) + ");");
  w.on_pipe(Pipe::M);
  const std::string acc = w.tv(o.dst), flag = w.acc_flag(o.dst);
  bool accumulate = o.ir.accumulate.value_or(false) || o.args.size() == 3;
  if (!accumulate) {
    w.line("TMATMUL(" + acc + ", " + left + ", " + right + ");");
  } else {
    w.line("if (" + flag + ") {");
    w.line("    TMATMUL_ACC(" + acc + ", " + acc + ", " + left + ", " + right + ");");
    w.line("} else {");
    w.line("    TMATMUL(" + acc + ", " + left + ", " + right + ");");
    w.line("}");
  }
  w.line(flag + " = true;");
}

const std::map<std::string_view, Emitter> &emitters() {
  static const std::map<std::string_view, Emitter> table = [] {
    std::map<std::string_view, Emitter> t;
    for (const IntrinsicContract &c : intrinsic_contracts()) {
      switch (c.kind) {
      case OpKind::Load: t[c.op] = emit_load; break;
      case OpKind::Store: t[c.op] = emit_store; break;
      case OpKind::Alloc: t[c.op] = emit_nothing; break;
      case OpKind::Full: t[c.op] = emit_full; break;
      case OpKind::ScalarBinary: t[c.op] = emit_scalar_binary; break;
      case OpKind::RowReduce:
      case OpKind::Transpose: t[c.op] = emit_row_reduce; break;  // dst, src, scratch
      case OpKind::Matmul: t[c.op] = emit_matmul; break;
      case OpKind::Cast: t[c.op] = emit_cast; break;
      default: t[c.op] = emit_vector; break;
      }
    }
    t["sigmoid"] = emit_sigmoid;
    t["tanh"] = emit_tanh;
    return t;
  }();
  return table;
}

std::set<Pipe> KernelWriter::pipes_of(const std::vector<Op> &ops) {
  std::set<Pipe> out;
  for_each_op(ops, [&](const Op &o) {
    const IntrinsicContract *c = find_intrinsic(o.op);
    if (!c) return;
    switch (c->kind) {
    case OpKind::Load: out.insert(Pipe::MTE2); break;
    case OpKind::Store: out.insert(Pipe::MTE3); out.insert(Pipe::FIX); break;
    case OpKind::Alloc: break;
    case OpKind::Matmul: out.insert(Pipe::MTE1); out.insert(Pipe::M); break;
    default: out.insert(Pipe::V); break;
    }
  });
  return out;
}

void KernelWriter::arguments() {
  int index = 0;
  out_ << "    // Tensor arguments: ChipTensor views (data = buffer.addr + start_offset elements).\n";
  for (const Param *p : k_.tensor_params()) {
    out_ << rt::kernel_tensor_arg(index++, p->name + "_view", "g_" + p->name, p->name + "_row_stride",
                                  std::string(dtype(p->dtype).cpp));
    for (size_t d = 0; d + 2 < p->shape.size(); ++d)
      out_ << rt::kernel_tensor_stride(p->name + "_view", p->name + "_stride" + std::to_string(d), d, p->shape.size());
  }
  if (!k_.scalar_params().empty()) out_ << "    // Scalar arguments (raw 64-bit slots after the tensors).\n";
  for (const Param *p : k_.scalar_params()) {
    DType t = dtype(p->dtype);
    out_ << rt::kernel_scalar_arg(index++, "p_" + p->name, std::string(t.cpp), t.is_float);
  }
  for (const Param &p : k_.params)
    if (p.kind == "constexpr") out_ << "    constexpr auto p_" << p.name << " = " << literal_cpp(p.value) << ";\n";
  for (const Local &l : k_.locals)
    if (l.scalar) out_ << "    " << dtype(l.dtype).cpp << " s_" << l.name << " = 0;\n";
}

std::string tile_type_text(const TileBuffer &b) {
  const std::string t = std::string(dtype(b.dtype).cpp);
  const std::string dims = std::to_string(b.prows) + ", " + std::to_string(b.pcols) + ", " + std::to_string(b.rows) +
                           ", " + std::to_string(b.cols);
  if (b.tile_type == "Left") return "TileLeft<" + t + ", " + dims + ">";
  if (b.tile_type == "Right") return "TileRight<" + t + ", " + dims + ">";
  if (b.tile_type == "Acc") return "TileAcc<" + t + ", " + dims + ">";
  const std::string shape = std::to_string(b.prows) + ", " + std::to_string(b.pcols);
  const std::string valid = std::to_string(b.rows) + ", " + std::to_string(b.cols);
  if (b.tile_type == "Mat")
    return "Tile<TileType::Mat, " + t + ", " + shape + ", BLayout::ColMajor, " + valid + ", SLayout::RowMajor, 512>";
  return "Tile<TileType::Vec, " + t + ", " + shape + ", BLayout::" + (b.col_major ? "ColMajor" : "RowMajor") + ", " +
         valid + ">";
}

void KernelWriter::tiles() {
  std::vector<std::string> spaces;  // in order of first use
  for (const TileBuffer &b : plan_.tiles)
    if (std::find(spaces.begin(), spaces.end(), b.space) == spaces.end()) spaces.push_back(b.space);
  for (const std::string &space : spaces) {
    out_ << "    // Tiles in " << space << ".\n";
    for (const TileBuffer &b : plan_.tiles)
      if (b.space == space) declare(b);
  }
}

void KernelWriter::declare(const TileBuffer &b) {
  const std::string v = tile_var(b);
  out_ << "    using " << v << "_type = " << tile_type_text(b) << ";\n";
  out_ << "    " << v << "_type " << v << ";\n";
  out_ << "    TASSIGN(" << v << ", " << hex(b.address) << ");\n";
  if (b.tile_type == "Acc") out_ << "    bool " << acc_flag(b.register_) << " = false;\n";
}

void KernelWriter::control(const Op &o) {
  if (o.op == "scalar") {
    line(names_.var(o.dst) + " = " + expr(*o.ir.value) + ";");
    return;
  }
  if (o.op == "for") {
    const std::string v = var_name(*o.ir.var);
    const json &step = *o.ir.step;
    std::set<Pipe> before = pending_, body = pipes_of(o.body);
    pending_.insert(body.begin(), body.end());  // iteration i+1 starts after iteration i's last pipe
    line("for (int64_t " + v + " = " + expr(*o.ir.start) + "; " +
         htp::loop_condition_cpp(v, expr(*o.ir.stop), step, expr(step)) + "; " + v + " += " + expr(step) + ") {");
    indent_ += "    ";
    line("HTP_TICK();  // (a simulator's time limit; nothing on the device)");
    statements(o.body);
    indent_.resize(indent_.size() - 4);
    line("}");
    pending_.insert(before.begin(), before.end());
    return;
  }
  // if
  std::set<Pipe> before = pending_;
  line("if (" + expr(*o.ir.cond) + ") {");
  indent_ += "    ";
  statements(o.then_body);
  std::set<Pipe> after_then = pending_;
  indent_.resize(indent_.size() - 4);
  pending_ = before;
  if (!o.else_body.empty()) {
    line("} else {");
    indent_ += "    ";
    statements(o.else_body);
    indent_.resize(indent_.size() - 4);
  }
  line("}");
  pending_.insert(after_then.begin(), after_then.end());
}

void KernelWriter::statement(const Op &o) {
  if (o.span.line) names_.where = where(o.span);
  if (o.op == "scalar" || o.op == "for" || o.op == "if") return control(o);
  const IntrinsicContract *c = find_intrinsic(o.op);
  auto it = emitters().find(o.op);
  if (!c || it == emitters().end())
    throw IrError(k_.kind + " '" + k_.name + "': backend-pto cannot lower '" + o.op + "'", o.span, "pto.unsupported");
  it->second(*this, o, *c);
}

void KernelWriter::statements(const std::vector<Op> &ops) {
  for (const Op &o : ops) statement(o);
}

std::string KernelWriter::run(const KernelOrigin &origin) {
  file_ = origin.file;
  out_ << "// " << k_.kind << " '" << k_.name << "' (" << origin.file << ":" << k_.span.line
       << "): generated by HTP backend-pto for " << origin.target << ".\n"
       << "// PTO-ISA " << rt::kIsaRevision << " kernel for pto-runtime " << rt::kRuntimeRevision
       << "; core type " << core_type_name(plan_.core) << ".\n"
       << rt::kernel_prologue() << "\n"
       << expr_helpers_cpp() << "\n"
       << (k_.repeat > 1 ? rt::kernel_run_open() : rt::kernel_entry_open());
  arguments();
  tiles();
  out_ << "    // Body.\n";
  statements(k_.body);
  out_ << rt::kernel_epilogue() << "}\n";
  if (k_.repeat > 1) out_ << rt::kernel_repeat_entry(k_.repeat, k_.tensor_params().size(), k_.scalar_params().size());
  return out_.str();
}

}  // namespace

std::string emit_kernel(const Kernel &k, const KernelPlan &plan, const KernelOrigin &origin) {
  return KernelWriter(k, plan).run(origin);
}

}  // namespace ptobe
