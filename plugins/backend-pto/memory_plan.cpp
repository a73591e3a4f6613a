#include "memory_plan.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "dtype.hpp"

namespace ptobe {

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return a == 0 ? v : (v + a - 1) / a * a; }

/// The registers by cube role.
struct CubeRoles {
  std::set<std::string> left, right, acc;
  std::map<std::string, std::string> fix_cast;  ///< cast result -> accumulator (converted by TSTORE)
  const Op *first_matmul = nullptr;
};

CubeRoles cube_roles(const Kernel &k) {
  CubeRoles r;
  for_each_op(k.body, [&](const Op &o) {
    if (o.op != "matmul" || o.args.size() < 2) return;
    if (!r.first_matmul) r.first_matmul = &o;
    r.left.insert(o.args[0]);
    r.right.insert(o.args[1]);
    r.acc.insert(o.dst);
  });
  for_each_op(k.body, [&](const Op &o) {
    if (o.op == "cast" && o.args.size() == 1 && r.acc.count(o.args[0]) && !r.acc.count(o.dst))
      r.fix_cast[o.dst] = o.args[0];
  });
  return r;
}

/// The first statement of `k` that a cube kernel cannot hold (a cube kernel holds only data movement, matmuls,
/// accumulator resets and control flow), or nullptr.
const Op *non_cube_op(const Kernel &k, const CubeRoles &roles) {
  static const std::set<std::string> kCubeOps = {"load", "store", "matmul", "alloc", "full", "for", "if", "scalar"};
  const Op *found = nullptr;
  for_each_op(k.body, [&](const Op &o) {
    if (found || (kCubeOps.count(o.op) && !(o.op == "full" && !roles.acc.count(o.dst)))) return;
    if (o.op == "cast" && roles.fix_cast.count(o.dst)) return;  // the accumulator converts as it is stored
    found = &o;
  });
  return found;
}

/// Elements of the contraction-dimension padding for `l`'s dtype.
int64_t k_align_of(const Local &l, const HardwareProfile &hw) {
  return std::max<int64_t>(1, hw.k_align_bytes / dtype(l.dtype).bytes);
}

/// Whether register `l`, a left and a right operand, pads alike in both roles, so that one L1 tile feeds both its
/// L0A and its L0B copy (rows to the left operand's and to the contraction's alignment, columns to the
/// contraction's and the right operand's).
bool pads_alike_both_sides(const Local &l, const HardwareProfile &hw) {
  const int64_t k = k_align_of(l, hw);
  return align_up(l.rows(), hw.m_align) == align_up(l.rows(), k) && align_up(l.cols(), k) == align_up(l.cols(), hw.n_align);
}

void check_cube_only(const Kernel &k, const CubeRoles &roles, const HardwareProfile &hw) {
  if (const Op *o = non_cube_op(k, roles))
    throw IrError(k.kind + " '" + k.name + "' uses pto.matmul (cube core, AIC) and pto." + o->op +
                      " (vector core, AIV); a kernel runs on one core type: split it into a cube kernel and a "
                      "vector kernel that exchange tensors",
                  o->span, "pto.core-type");
  for (const std::string &reg : roles.left) {
    // (a left and a right operand, `matmul(x, x)` or x on either side of two matmuls: moved into L0A and L0B
    // from one L1 tile when it pads alike in both roles)
    const Local *l = k.local(reg);
    const bool both_operands = roles.right.count(reg) && l && pads_alike_both_sides(*l, hw);
    if ((roles.right.count(reg) && !both_operands) || roles.acc.count(reg))
      throw IrError("tile '" + reg + "' of " + k.kind + " '" + k.name +
                        "' is used in two cube roles (left operand and right operand or accumulator)",
                    roles.first_matmul->span, "pto.core-type");
  }
  for (const std::string &reg : roles.right)
    if (roles.acc.count(reg))
      throw IrError("tile '" + reg + "' of " + k.kind + " '" + k.name + "' is both a right operand and an accumulator",
                    roles.first_matmul->span, "pto.core-type");
}

class Planner {
public:
  Planner(const Kernel &k, const HardwareProfile &hw) : k_(k), hw_(hw) {}

  KernelPlan run() {
    CubeRoles roles = cube_roles(k_);
    plan_.core = roles.acc.empty() ? CoreType::Aiv : CoreType::Aic;
    if (plan_.core == CoreType::Aic) check_cube_only(k_, roles, hw_);
    for (const Local &l : k_.locals) {
      if (l.scalar || roles.fix_cast.count(l.name)) continue;
      if (plan_.core == CoreType::Aiv) {
        plan_.by_register[l.name] = add_vec(l.name, l.name, l.rows(), l.cols(), l.dtype);
      } else if (roles.acc.count(l.name)) {
        plan_.by_register[l.name] = add_cube(l, "Acc", "L0C", hw_.m_align, hw_.n_align, "");
      } else if (roles.right.count(l.name)) {
        plan_.by_register[l.name] = add_cube(l, "Mat", "L1", k_align(l), hw_.n_align, "");
        plan_.right_of[l.name] = add_cube(l, "Right", "L0B", k_align(l), hw_.n_align, "_l0b");
        if (roles.left.count(l.name)) plan_.left_of[l.name] = add_cube(l, "Left", "L0A", hw_.m_align, k_align(l), "_l0a");
      } else {  // left operands, and tiles a cube kernel only moves
        plan_.by_register[l.name] = add_cube(l, "Mat", "L1", hw_.m_align, k_align(l), "");
        if (roles.left.count(l.name)) plan_.left_of[l.name] = add_cube(l, "Left", "L0A", hw_.m_align, k_align(l), "_l0a");
      }
    }
    for (const auto &[cast, acc] : roles.fix_cast)
      if (plan_.core == CoreType::Aic && plan_.by_register.count(acc)) plan_.by_register[cast] = plan_.by_register[acc];
    for_each_op(k_.body, [&](const Op &o) {
      // sigmoid and tanh of a half-precision row-major tile compute in an f32 scratch: rounded to f16 or bf16
      // at each step, 2 sigmoid(2x) - 1 cancels near 0 (bf16 tanh(0.0025) was 0) and e^-x overflows f16 below
      // x = -11 (f16 sigmoid(-12) was 0).
      if ((o.op == "tanh" || o.op == "sigmoid") && !o.dst.empty()) {
        const Local *d = k_.local(o.dst);
        if (d && d->cols() > 1 && (d->dtype == "f16" || d->dtype == "bf16"))
          plan_.scratch_of[&o] = add_vec("scratch" + std::to_string(plan_.scratch_of.size()),
                                         "f32 scratch for pto." + o.op, d->rows(), d->cols(), "f32");
        return;
      }
      const IntrinsicContract *c = find_intrinsic(o.op);
      if (!c || (c->kind != OpKind::RowReduce && c->kind != OpKind::Transpose) || o.args.empty()) return;
      const Local *src = k_.local(o.args[0]);
      if (!src) return;
      plan_.scratch_of[&o] = add_vec("scratch" + std::to_string(plan_.scratch_of.size()), "scratch for pto." + o.op,
                                     src->rows(), src->cols(), src->dtype);
    });
    live_ranges();
    assign_addresses();
    return std::move(plan_);
  }

private:
  /// Elements of the contraction-dimension padding for `l`'s dtype.
  int64_t k_align(const Local &l) const { return k_align_of(l, hw_); }

  size_t place(TileBuffer b) {
    plan_.tiles.push_back(std::move(b));
    return plan_.tiles.size() - 1;
  }

  /// Live interval [first, last] of every register in statement positions (pre-order); a register that
  /// occurs inside a loop is live across the whole loop (iteration k + 1 may read what k wrote).
  void live_ranges() {
    int pos = 0;
    std::vector<std::pair<int, int>> loops;
    std::function<void(const std::vector<Op> &)> walk = [&](const std::vector<Op> &ops) {
      for (const Op &o : ops) {
        const int at = pos++;
        auto touch = [&](const std::string &r) {
          auto [it, fresh] = live_.try_emplace(r, at, at);
          if (!fresh) it->second = {std::min(it->second.first, at), std::max(it->second.second, at)};
        };
        touch(o.dst);
        for (const auto &a : o.args) touch(a);
        if (o.ir.value && o.ir.value->is_string()) touch(o.stored());
        scratch_pos_[&o] = at;
        walk(o.body);
        walk(o.then_body);
        walk(o.else_body);
        if (o.op == "for") loops.push_back({at, pos - 1});
      }
    };
    walk(k_.body);
    for (auto &[reg, range] : live_)
      for (bool changed = true; changed;) {
        changed = false;
        for (const auto &[ls, le] : loops)
          if (range.first <= le && range.second > ls && (range.first > ls || range.second < le)) {
            range = {std::min(range.first, ls), std::max(range.second, le)};
            changed = true;
          }
      }
    for (const auto &[reg, index] : plan_.by_register) {  // a converting alias keeps its accumulator alive
      const std::string &owner = plan_.tiles[index].register_;
      if (reg == owner || !live_.count(reg)) continue;
      auto &r = live_[owner];
      r = {std::min(r.first, live_[reg].first), std::max(r.second, live_[reg].second)};
    }
  }

  std::pair<int, int> interval(const TileBuffer &b, size_t index) const {
    for (const auto &[op, i] : plan_.scratch_of)
      if (i == index) {
        int at = scratch_pos_.at(op);
        return {at, at};
      }
    auto it = live_.find(b.register_);
    return it == live_.end() ? std::pair<int, int>{0, 0} : it->second;
  }

  /// First-fit addresses per space among buffers whose live intervals overlap.
  void assign_addresses() {
    std::vector<std::pair<int, int>> iv;
    for (size_t i = 0; i < plan_.tiles.size(); ++i) iv.push_back(interval(plan_.tiles[i], i));
    for (size_t i = 0; i < plan_.tiles.size(); ++i) {
      TileBuffer &b = plan_.tiles[i];
      const uint64_t align = hw_.space(b.space).alignment;
      uint64_t addr = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (size_t j = 0; j < i; ++j) {
          const TileBuffer &o = plan_.tiles[j];
          if (o.space != b.space || iv[j].second < iv[i].first || iv[i].second < iv[j].first) continue;
          if (addr < o.address + o.bytes && o.address < addr + b.bytes) {
            addr = align_up(o.address + o.bytes, align);
            moved = true;
          }
        }
      }
      b.address = addr;
      plan_.used[b.space] = std::max(plan_.used[b.space], addr + b.bytes);
    }
  }

  size_t add_vec(const std::string &name, const std::string &reg, int64_t rows, int64_t cols, const std::string &dt) {
    TileBuffer b;
    b.name = name;
    b.register_ = reg;
    b.space = "UB";
    b.tile_type = "Vec";
    b.col_major = cols == 1;
    b.dtype = dt;
    b.rows = b.prows = rows;
    b.cols = b.pcols = cols;
    uint64_t e = dtype(dt).bytes;
    // A row-major tile's rows are whole vector blocks: a row narrower than a block (an i8 tile of 16 columns)
    // is padded, the instructions acting on its valid cols x rows region.
    if (!b.col_major && (cols * e) % hw_.block_bytes != 0)
      b.pcols = static_cast<int64_t>(align_up(cols * e, hw_.block_bytes) / e);
    b.bytes = b.col_major ? align_up(rows * e, hw_.block_bytes) : static_cast<uint64_t>(rows * b.pcols) * e;
    return place(std::move(b));
  }

  size_t add_cube(const Local &l, const char *type, const char *space, int64_t row_align, int64_t col_align,
                  const char *suffix) {
    TileBuffer b;
    b.name = l.name + suffix;
    b.register_ = l.name;
    b.space = space;
    b.tile_type = type;
    b.dtype = l.dtype;
    b.rows = l.rows();
    b.cols = l.cols();
    b.prows = static_cast<int64_t>(align_up(b.rows, row_align));
    b.pcols = static_cast<int64_t>(align_up(b.cols, col_align));
    b.bytes = static_cast<uint64_t>(b.prows * b.pcols) * dtype(l.dtype).bytes;
    return place(std::move(b));
  }

  const Kernel &k_;
  const HardwareProfile &hw_;
  KernelPlan plan_;
  std::map<std::string, std::pair<int, int>> live_;
  std::map<const Op *, int> scratch_pos_;
};

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

const Op *vector_op_beside_matmul(const Kernel &k) {
  const CubeRoles roles = cube_roles(k);
  return roles.first_matmul ? non_cube_op(k, roles) : nullptr;
}

KernelPlan plan_memory(const Kernel &k, const HardwareProfile &hw) {
  for (const Local &l : k.locals)
    if (!l.scalar && !find_dtype(l.dtype))
      throw IrError("tile '" + l.name + "' of " + k.kind + " '" + k.name + "' has unknown element type '" + l.dtype + "'",
                    k.span);
  return Planner(k, hw).run();
}

std::vector<std::string> check_memory(const Kernel &k, const KernelPlan &plan, const HardwareProfile &hw) {
  std::vector<std::string> out;
  const std::string core = plan.core == CoreType::Aic ? "AIC" : "AIV";
  for (const TileBuffer &b : plan.tiles) {
    const MemorySpace &space = hw.space(b.space);
    if (b.bytes > space.capacity)
      out.push_back("tile '" + b.name + "' " + describe_tile({b.rows, b.cols}, b.dtype) + " needs " +
                    std::to_string(b.bytes) + " bytes of " + b.space + ", but " + b.space + " holds " +
                    std::to_string(space.capacity) + " bytes per " + core + " core (" + hw.name + ")");
    uint64_t row_bytes = static_cast<uint64_t>(b.pcols) * dtype(b.dtype).bytes;
    if (b.tile_type == "Vec" && !b.col_major && row_bytes % hw.block_bytes != 0)
      out.push_back("tile '" + b.name + "' " + describe_tile({b.rows, b.cols}, b.dtype) + ": a row is " +
                    std::to_string(row_bytes) + " bytes, not a multiple of the " + std::to_string(hw.block_bytes) +
                    "-byte vector block");
    if ((b.tile_type == "Left" || b.tile_type == "Right") && !contains(hw.cube_input_dtypes, b.dtype))
      out.push_back("matmul operand '" + b.register_ + "' is " + b.dtype + "; the " + hw.name +
                    " cube unit multiplies " + [&] {
                      std::string s;
                      for (const auto &d : hw.cube_input_dtypes) s += (s.empty() ? "" : ", ") + d;
                      return s;
                    }());
    if (b.tile_type == "Acc" && !contains(hw.acc_dtypes, b.dtype))
      out.push_back("matmul accumulator '" + b.register_ + "' is " + b.dtype + "; the cube unit accumulates in f32 or i32");
  }
  if (!out.empty()) return out;
  for (const auto &[space_name, used] : plan.used) {
    const MemorySpace &space = hw.space(space_name);
    if (used <= space.capacity) continue;
    std::string list;
    for (const TileBuffer &b : plan.tiles)
      if (b.space == space_name) list += (list.empty() ? "" : ", ") + b.name + " " + std::to_string(b.bytes);
    out.push_back("the tiles of " + k.kind + " '" + k.name + "' need " + std::to_string(used) + " bytes of " +
                  space_name + " (" + list + "), but " + space_name + " holds " + std::to_string(space.capacity) +
                  " bytes per " + core + " core (" + hw.name + ")");
  }
  return out;
}

}  // namespace ptobe
