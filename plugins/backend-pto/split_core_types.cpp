#include "split_core_types.hpp"

#include "register_webs.hpp"

#include <htp/fuse.hpp>
#include <htp/kernel_entry.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <map>
#include <set>

namespace ptobe {

namespace {

enum class Side { None, Cube, Vector };

/// The ops a cube kernel may hold besides matmul (data movement, accumulator resets, control flow).
bool movement(const std::string &op) {
  static const std::set<std::string> k = {"load", "store", "full", "scalar", "alloc", "for", "if"};
  return k.count(op) > 0;
}

/// Whether `o` (with its nested statements) does cube work (a matmul), vector work (anything but data
/// movement and matmul), both, or neither.
void sides(const htp::TileOp &o, const std::set<std::string> &acc, bool &cube, bool &vector) {
  const std::string op = bare_op(o.op);
  const bool acc_cast = op == "cast" && o.arg_name(0) && acc.count(*o.arg_name(0));  // converted by TSTORE
  // A fill of an accumulator resets it on the cube core (another value than 0 becomes a fill of a register of
  // the vector core and an add, add_loaded_accumulators); a fill of any other register is vector work.
  const bool fill = op == "full" && !(o.dst && acc.count(*o.dst));
  if (op == "matmul") cube = true;
  else if ((!movement(op) && !acc_cast) || fill) vector = true;
  for (const auto *body : {&o.body, &o.then_body, &o.else_body})
    for (const htp::TileOp &c : *body) sides(c, acc, cube, vector);
}

/// Whether expression `e` reads only parameters and constants: the same value wherever the kernel evaluates
/// it.
bool invariant(const json &e) {
  if (e.is_number() || e.is_boolean()) return true;
  if (!e.is_object()) return false;
  if (e.contains("param")) return e.size() == 1;
  if (!e.contains("op") || !e.contains("args") || !e["args"].is_array() || e.size() != 2) return false;
  return std::all_of(e["args"].begin(), e["args"].end(), [](const json &a) { return invariant(a); });
}

/// The matmul accumulators of `k`.
std::set<std::string> accumulators(const htp::TileKernel &k) {
  std::set<std::string> out;
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    if (bare_op(o.op) == "matmul" && o.dst) out.insert(*o.dst);
  });
  return out;
}

/// The matmul results of `k`: its accumulators and the casts of them. A matmul reading one as an operand reads
/// another's result, which an a2a3 accumulator hands over only through global memory.
std::set<std::string> matmul_results(const htp::TileKernel &k, const std::set<std::string> &acc) {
  std::set<std::string> results = acc;
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    if (bare_op(o.op) == "cast" && o.dst && o.arg_name(0) && results.count(*o.arg_name(0))) results.insert(*o.dst);
  });
  return results;
}

/// Whether `o` is a matmul taking one of `regs` as an operand.
bool takes(const htp::TileOp &o, const std::set<std::string> &regs) {
  return bare_op(o.op) == "matmul" &&
         ((o.arg_name(0) && regs.count(*o.arg_name(0))) || (o.arg_name(1) && regs.count(*o.arg_name(1))));
}

/// Calls f on `o` and on every statement nested in it.
template <class F> void each_nested(const htp::TileOp &o, F &&f) {
  f(o);
  for (const auto *body : {&o.body, &o.then_body, &o.else_body}) htp::for_each_op(*body, f);
}

/// Whether `o` or a statement nested in it is a matmul taking one of `regs` as an operand.
bool takes_nested(const htp::TileOp &o, const std::set<std::string> &regs) {
  bool out = false;
  each_nested(o, [&](const htp::TileOp &x) { out = out || takes(x, regs); });
  return out;
}

/// Adds to `out` the registers of `results` that a matmul (or a cast of a result) in `o` or nested in it
/// defines: what a later matmul reading them would read of the cube core's L0C (a load into the register
/// defines no result).
void results_defined(const htp::TileOp &o, const std::set<std::string> &results, std::set<std::string> &out) {
  each_nested(o, [&](const htp::TileOp &x) {
    const std::string op = bare_op(x.op);
    if (x.dst && results.count(*x.dst) && (op == "matmul" || op == "cast")) out.insert(*x.dst);
  });
}

/// Whether a matmul nested in statement `o` takes a matmul result (of `results`) in a way a cut between
/// statements cannot hand over: in a loop, any result; in a branch of an `if`, one an earlier statement of
/// that branch defines (`defined`: those defined before `o` in the branch around it).
bool chain_within(const htp::TileOp &o, const std::set<std::string> &results, const std::set<std::string> &defined) {
  const std::string op = bare_op(o.op);
  if (op == "for") return takes_nested(o, results);
  if (op != "if") return false;
  for (const auto *branch : {&o.then_body, &o.else_body}) {
    std::set<std::string> d = defined;
    for (const htp::TileOp &x : *branch) {
      if (takes(x, d) || chain_within(x, results, d)) return true;
      results_defined(x, results, d);
    }
  }
  return false;
}

Span span_of(const std::optional<htp::IrSpan> &s, const htp::IrSpan &fallback) {
  return Span::from(s ? *s : fallback);
}

/// Whether `o` or a statement nested in it stores to tensor `t`.
bool stores_to(const htp::TileOp &o, const std::string &t) {
  bool hit = false;
  htp::for_each_op(std::vector<htp::TileOp>{o}, [&](const htp::TileOp &x) { hit = hit || (bare_op(x.op) == "store" && x.dst == t); });
  return hit;
}

struct Segment {
  Side side = Side::None;
  std::vector<htp::TileOp> body;
};

/// The last statement of `ops[first, end)` touching register `reg`, when that statement is an `if` defining
/// `reg` in one branch only: its index, and true for the then branch; nullopt otherwise.
std::optional<std::pair<size_t, bool>> only_branch_defining(const std::vector<htp::TileOp> &ops, size_t first,
                                                            size_t end, const std::string &reg,
                                                            const htp::TileKernel &k) {
  for (size_t j = end; j-- > first;) {
    std::set<std::string> uses, defs;
    htp::registers_of(ops[j], k, uses, defs);
    if (!defs.count(reg) && !uses.count(reg)) continue;
    if (bare_op(ops[j].op) != "if" || !defs.count(reg)) return std::nullopt;
    std::set<std::string> tu, td, eu, ed;
    for (const htp::TileOp &x : ops[j].then_body)
      htp::registers_of(x, k, tu, td);
    for (const htp::TileOp &x : ops[j].else_body)
      htp::registers_of(x, k, eu, ed);
    if (td.count(reg) == ed.count(reg)) return std::nullopt;
    return std::pair<size_t, bool>(j, td.count(reg) > 0);
  }
  return std::nullopt;
}

/// The registers matmuls in `ops` (or nested in them) write (`acc`: an accumulator) and read as operands.
void cube_registers(const std::vector<htp::TileOp> &ops, std::set<std::string> &acc, std::set<std::string> &operands) {
  htp::for_each_op(ops, [&](const htp::TileOp &o) {
    if (bare_op(o.op) != "matmul") return;
    if (o.dst) acc.insert(*o.dst);
    for (size_t i = 0; i < 2; ++i)
      if (auto a = o.arg_name(i)) operands.insert(*a);
  });
}

/// Whether one register is an accumulator in the statements of one branch and a matmul operand in the other's:
/// in one cube `if` it would be both in one kernel (an operand lives in L1, an accumulator in L0C), so the two
/// go to `if`s of their own.
bool cube_roles_clash(const std::vector<htp::TileOp> &a, const std::vector<htp::TileOp> &b) {
  std::set<std::string> acc_a, op_a, acc_b, op_b;
  cube_registers(a, acc_a, op_a);
  cube_registers(b, acc_b, op_b);
  auto meet = [](const std::set<std::string> &x, const std::set<std::string> &y) {
    return std::any_of(x.begin(), x.end(), [&](const std::string &r) { return y.count(r) > 0; });
  };
  return meet(acc_a, op_b) || meet(op_a, acc_b);
}

/// `k` with each top-level `if` whose branches mix cube and vector work, under a condition of parameters and
/// constants, distributed into `if`s of one core type each, one after another under the same condition: `if
/// c: t = adds(b, 1.0); acc = matmul(a, t) else: acc = matmul(b, a)` becomes `if c: t = adds(b, 1.0)`
/// (vector) then `if c: acc = matmul(a, t) else: acc = matmul(b, a)` (cube), which the split below cuts
/// between. Each branch's statements keep their order, and one branch runs; data movement goes with the work
/// after it. A matmul of a branch taking what an earlier matmul of the branch defines goes to an `if` of its
/// own (an `if` of cube work alone is distributed for that too).
void distribute_mixed_ifs(htp::TileKernel &k) {
  const std::set<std::string> acc = accumulators(k);
  const std::set<std::string> results = matmul_results(k, acc);
  using Run = std::pair<Side, std::vector<htp::TileOp>>;
  // A branch's statements in runs of one side (nullopt: a statement mixing the two itself). A matmul taking
  // what an earlier one of its run defines starts a run of its own: an a2a3 accumulator leaves the cube core
  // only through global memory, so segments_of cuts between the two.
  auto runs_of = [&](const std::vector<htp::TileOp> &ops) -> std::optional<std::vector<Run>> {
    std::vector<Run> out;
    std::vector<htp::TileOp> pending; // data movement, waiting for the work it goes with
    std::set<std::string> run_results; // the matmul results the current run defines
    for (const htp::TileOp &o : ops) {
      bool c = false, v = false;
      sides(o, acc, c, v);
      if (c && v) return std::nullopt;
      if (!c && !v) {
        pending.push_back(o);
        continue;
      }
      const Side s = c ? Side::Cube : Side::Vector;
      if (out.empty() || out.back().first != s || (c && takes_nested(o, run_results))) {
        out.emplace_back(s, std::vector<htp::TileOp>{});
        run_results.clear();
      }
      results_defined(o, results, run_results);
      out.back().second.insert(out.back().second.end(), pending.begin(), pending.end());
      pending.clear();
      out.back().second.push_back(o);
    }
    if (!pending.empty()) {
      if (out.empty()) out.emplace_back(Side::None, std::vector<htp::TileOp>{});
      out.back().second.insert(out.back().second.end(), pending.begin(), pending.end());
    }
    return out;
  };
  // The `if`s of a list, those nested in a branch first (an inner `if` mixing the two is distributed within
  // its branch, so that the outer one's branches hold statements of one side each).
  std::function<void(std::vector<htp::TileOp> &)> distribute = [&](std::vector<htp::TileOp> &ops) {
    std::vector<htp::TileOp> body;
    for (htp::TileOp &nested : ops)
      if (bare_op(nested.op) == "if") {
        distribute(nested.then_body);
        distribute(nested.else_body);
      }
    for (size_t i = 0; i < ops.size(); ++i) {
      const htp::TileOp &o = ops[i];
      bool c = false, v = false;
      sides(o, acc, c, v);
      std::optional<std::vector<Run>> then_runs, else_runs;
      // (an `if` of cube work alone is distributed too when a matmul in a branch takes an earlier one's
      // result)
      if (bare_op(o.op) == "if" && c && (v || chain_within(o, results, {})) && o.cond &&
          invariant(json(*o.cond))) {
        then_runs = runs_of(o.then_body);
        else_runs = runs_of(o.else_body);
      }
      if (!then_runs || !else_runs) {
        body.push_back(o);
        continue;
      }
      // The then branch's runs, then the else branch's: the last of the first and the first of the second
      // share an `if` when they are on one side. A register a new cube statement redefines in one branch
      // keeps, on the other path, what an earlier part handed on: the cube part hands it on from that branch
      // only (split_core_types, `passed`), and a vector part hands on what it holds whichever branch ran.
      const std::vector<Run> &a = *then_runs, &b = *else_runs;
      auto make = [&](std::vector<htp::TileOp> then_body, std::vector<htp::TileOp> else_body) {
        htp::TileOp x = o;
        x.then_body = std::move(then_body);
        x.else_body = std::move(else_body);
        return x;
      };
      size_t next = 0; // of b
      for (size_t r = 0; r < a.size(); ++r) {
        const bool shared = r + 1 == a.size() && !b.empty() && b.front().first == a[r].first &&
                          !cube_roles_clash(a[r].second, b.front().second);
        body.push_back(make(a[r].second, shared ? b.front().second : std::vector<htp::TileOp>{}));
        if (shared) next = 1;
      }
      for (; next < b.size(); ++next)
        body.push_back(make({}, b[next].second));
    }
    ops = std::move(body);
  };
  distribute(k.body);
}

/// Whether statement `o` defines register `reg` on every path through it (a loop may run no iteration).
bool defines_always(const htp::TileOp &o, const std::string &reg, const htp::TileKernel &k) {
  const std::string op = bare_op(o.op);
  auto any = [&](const std::vector<htp::TileOp> &ops) {
    return std::any_of(ops.begin(), ops.end(), [&](const htp::TileOp &x) { return defines_always(x, reg, k); });
  };
  if (op == "if") return any(o.then_body) && any(o.else_body);
  if (op == "for") return false;
  std::set<std::string> uses, defs;
  htp::registers_of(o, k, uses, defs);
  return defs.count(reg) > 0;
}

/// Puts a copy of `store` after each statement of `ops[first, end)` from the last that always defines `reg`
/// on (defines_always), descending into the branches of an `if` that defines it on some paths only: what the
/// register holds last on each path is stored, and nothing where nothing defines it.
void store_after_definitions(std::vector<htp::TileOp> &ops, size_t first, const std::string &reg,
                             const htp::TileOp &store, const htp::TileKernel &k) {
  size_t from = first;
  for (size_t j = ops.size(); j-- > first;)
    if (defines_always(ops[j], reg, k)) {
      from = j;
      break;
    }
  for (size_t j = ops.size(); j-- > from;) {
    std::set<std::string> uses, defs;
    htp::registers_of(ops[j], k, uses, defs);
    if (!defs.count(reg)) continue;
    if (bare_op(ops[j].op) == "if" && !defines_always(ops[j], reg, k)) {
      store_after_definitions(ops[j].then_body, 0, reg, store, k);
      store_after_definitions(ops[j].else_body, 0, reg, store, k);
    } else {
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(j) + 1, store);
    }
  }
}

/// `ops` without the loops whose static bounds give no iteration (`range(0, 2, -1)`, `range(-(K // BK))`; the
/// checker warns tile.empty-loop): what they would define keeps its value before them, so an accumulator
/// they would have written still holds only its fill, which forward_accumulator_fills hands on as zeros (as
/// aie-npu1 stores them) instead of a store the run refuses.
void drop_empty_loops(std::vector<htp::TileOp> &ops, const htp::ExprEnv &constants) {
  std::erase_if(ops, [&](const htp::TileOp &o) {
    if (bare_op(o.op) != "for" || !o.start || !o.stop || !o.step) return false;
    auto start = htp::eval_int(*o.start, constants), stop = htp::eval_int(*o.stop, constants),
         step = htp::eval_int(*o.step, constants);
    return start && stop && step && *step != 0 && (*step > 0 ? *stop <= *start : *stop >= *start);
  });
  for (htp::TileOp &o : ops)
    for (auto *body : {&o.body, &o.then_body, &o.else_body}) drop_empty_loops(*body, constants);
}

/// The segments of a mixed kernel (nullopt: not mixed; an IrError for a mix that cannot be split).
std::optional<std::vector<Segment>> segments_of(const htp::TileKernel &k) {
  std::vector<Side> side(k.body.size(), Side::None);
  bool any_cube = false, any_vector = false;
  const std::set<std::string> acc = accumulators(k);
  // A matmul reading another's result — the accumulator, or a cast of it — as an operand: an a2a3 accumulator
  // leaves the cube core only through global memory, so the two matmuls go to parts of their own, the result
  // handed over through a tensor (the store converting a cast accumulator).
  const std::set<std::string> results = matmul_results(k, acc);
  bool chained = false;
  for (size_t i = 0; i < k.body.size(); ++i) {
    bool c = false, v = false;
    sides(k.body[i], acc, c, v);
    if (c && v)
      throw IrError("kernel '" + k.name + "' mixes cube work (pto.matmul) and vector work in one " + k.body[i].op +
                        " statement; backend-pto splits a kernel between statements: move the vector work out of it",
                    span_of(k.body[i].span, k.span), "pto.core-type");
    // (distribute_mixed_ifs has cut the branches of an `if` it could where such a chain starts)
    if (chain_within(k.body[i], results, {}))
      throw IrError("kernel '" + k.name + "' has a matmul taking another matmul's result in one " + k.body[i].op +
                        " statement; an a2a3 accumulator leaves the cube core only through global memory, and "
                        "backend-pto cuts a kernel between statements: move the second matmul out of it",
                    span_of(k.body[i].span, k.span), "pto.core-type");
    chained = chained || takes_nested(k.body[i], results);
    side[i] = c ? Side::Cube : v ? Side::Vector : Side::None;
    any_cube = any_cube || c;
    any_vector = any_vector || v;
  }
  if (!any_cube || (!any_vector && !chained)) return std::nullopt;
  // Data movement goes with its neighbours: a load or full with the first statement that reads what it
  // defines, anything else with the statement before it (a store with the value's producer).
  std::vector<std::set<std::string>> uses(k.body.size()), defs(k.body.size());
  for (size_t i = 0; i < k.body.size(); ++i) htp::registers_of(k.body[i], k, uses[i], defs[i]);
  for (size_t i = k.body.size(); i-- > 0;) {
    if (side[i] != Side::None) continue;
    for (size_t j = i + 1; j < k.body.size() && side[i] == Side::None; ++j)
      for (const std::string &d : defs[i])
        if (uses[j].count(d) && side[j] != Side::None) side[i] = side[j];
  }
  for (size_t i = 0; i < k.body.size(); ++i) {
    if (side[i] != Side::None) continue;
    side[i] = i ? side[i - 1] : Side::Vector;
    // A statement reading an accumulator that the cube `if` before it defines in one branch only (`p =
    // adds(a, 1.0)` then `if n == 0: p = matmul(a, b)`, then `store(y, p)`) reads it on the vector core: on
    // the other path p is the earlier value, which a cube part cannot read back into L0C.
    if (side[i] == Side::Cube && i > 0 && bare_op(k.body[i - 1].op) == "if")
      for (const std::string &r : uses[i])
        if (acc.count(r) && defs[i - 1].count(r) && only_branch_defining(k.body, i - 1, i, r, k))
          side[i] = Side::Vector;
  }
  // A load of a tensor parameter or a full reads no tile register, so it moves down to just before the first
  // statement reading what it defines, when nothing between redefines that register, changes a scalar its
  // offset reads or stores to the tensor: `matmul(load(a), transpose(load(b)))` is then two parts, and
  // `store(c, add(load(c), matmul(...)))` two, not a third that only hands `a` or `c` on.
  std::vector<size_t> order;
  std::vector<std::pair<size_t, size_t>> moved;  // (statement, the statement it goes before)
  for (size_t i = 0; i < k.body.size(); ++i) {
    const htp::TileOp &o = k.body[i];
    const std::string op = bare_op(o.op);
    const htp::TileParam *src = o.src ? k.param(*o.src) : nullptr;
    const bool free = (op == "load" && src && src->type.is_tensor()) || (op == "full" && uses[i].empty());
    size_t user = k.body.size();
    if (free && defs[i].size() == 1) {
      const std::string &reg = *defs[i].begin();
      for (size_t j = i + 1; j < k.body.size() && user == k.body.size(); ++j) {
        if (uses[j].count(reg)) user = j;
        else if (defs[j].count(reg) || (src && stores_to(k.body[j], src->name)) ||
                 std::any_of(uses[i].begin(), uses[i].end(), [&](const std::string &r) { return defs[j].count(r) > 0; }))
          break;
      }
    }
    if (user != k.body.size() && user != i + 1) moved.push_back({i, user});
    else order.push_back(i);
  }
  for (const auto &[stmt, before] : moved)  // (in statement order: two moved before one user keep theirs)
    order.insert(std::find(order.begin(), order.end(), before), stmt);
  std::vector<Segment> out;
  std::set<std::string> defined;  // matmul results (and casts of them) the current segment defines
  for (size_t i : order) {
    // (an `if` of matmuls, distribute_mixed_ifs's, may take what an earlier one defines in a branch)
    const bool chain =
        !out.empty() && out.back().side == Side::Cube && side[i] == Side::Cube && takes_nested(k.body[i], defined);
    if (out.empty() || out.back().side != side[i] || chain) {
      Segment next{side[i], {}};
      if (chain)  // the loads just before the matmul are its own (moved down to it): they go with it
        while (!out.back().body.empty() && bare_op(out.back().body.back().op) == "load" &&
               out.back().body.back().src && k.param(*out.back().body.back().src)) {
          next.body.insert(next.body.begin(), out.back().body.back());
          out.back().body.pop_back();
        }
      out.push_back(std::move(next));
      defined.clear();
    }
    out.back().body.push_back(k.body[i]);
    results_defined(k.body[i], results, defined);
  }
  return out;
}

/// The extent of each variable of loop `n`: a number when it is static, nothing when it is known only at
/// run time (a runtime expression, a ragged row's length, a CSR selection).
std::vector<std::optional<int64_t>> loop_extents(const htp::WspNode &n) {
  const htp::WspDomain &d = n.domain;
  std::vector<std::optional<int64_t>> out(n.vars.size());
  if (d.type == "sparse") return out;
  const std::vector<json> ext = d.type == "dense" ? d.extents : std::vector<json>{d.extent};
  for (size_t i = 0; i < out.size() && i < ext.size(); ++i)
    if (ext[i].is_number_integer()) out[i] = ext[i].get<int64_t>();
  return out;  // ragged: the rows' count, and nothing for the position in a row
}

/// A tile one part of a split kernel hands to a later one: stored by the first (`out`), loaded by the other.
struct Handoff {
  htp::TileLocal reg;
  bool out = false;
  friend bool operator==(const Handoff &, const Handoff &) = default;
};

/// The hand-off tensor of register `reg` of a kernel mapped as `f`: a tile per core, mesh axis i along
/// dimension i.
htp::Layout handoff_layout(const htp::LayoutFunction &f, const htp::TileLocal &reg) {
  std::vector<std::string> axes;
  for (const auto &[axis, extent] : f.mesh) axes.push_back(axis);
  return htp::core_slots(f, reg.shape, reg.dtype, axes);
}

/// The direction of the hand-off parameter of register `reg` in a part with hand-offs `hs`: a register the
/// part receives, redefines and passes on (cube, vector, cube again) is one InOut parameter.
std::string handoff_dir(const std::vector<Handoff> &hs, const std::string &reg) {
  bool in = false, out = false;
  for (const Handoff &h : hs)
    if (h.reg.name == reg) (h.out ? out : in) = true;
  return in && out ? "inout" : out ? "out" : "in";
}

/// Whether `h` is the first of `hs` for its register (a part declares each hand-off parameter once).
bool first_of_register(const std::vector<Handoff> &hs, const Handoff &h) {
  for (const Handoff &x : hs)
    if (x.reg.name == h.reg.name) return &x == &h;
  return false;
}

/// The load or store of a hand-off tensor `h_<register>` (the whole tile at offset 0).
htp::TileOp handoff_op(const Handoff &h, const htp::IrSpan &span) {
  htp::TileOp mv;
  mv.op = h.out ? "store" : "load";
  mv.span = span;
  mv.offset = std::vector<json>(h.reg.shape.size(), json(0));
  if (h.out) {
    mv.dst = "h_" + h.reg.name;
    mv.value = h.reg.name;
  } else {
    mv.dst = h.reg.name;
    mv.src = "h_" + h.reg.name;
  }
  return mv;
}

/// `k` with every matmul accumulating into a register something other than a matmul defines — loaded from
/// memory (a carry between parts, or `acc = load(C)`), copied from another (`c2 = matmul(a, b, acc=c1)` copies
/// c1 first), filled with another value than 0 (`acc = full(..., 1.5)`) or computed by vector work (`acc =
/// muls(x, 0.5)`) — made a fresh product added to it: a2a3 cannot load an accumulator into L0C nor copy one
/// there, and the add is vector work the split below gives the vector core.
void add_loaded_accumulators(htp::TileKernel &k) {
  std::set<std::string> loaded;  // (a fill of another value than 0 too: the cube core's reset is to 0)
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    const std::string op = bare_op(o.op);
    const bool zero_fill = op == "full" && o.value && o.value->is_number() && o.value->get<double>() == 0.0;
    if (o.dst && k.local(*o.dst) && op != "matmul" && !zero_fill && op != "for" && op != "if") loaded.insert(*o.dst);
  });
  std::function<void(std::vector<htp::TileOp> &)> walk = [&](std::vector<htp::TileOp> &ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      htp::TileOp &o = ops[i];
      walk(o.body);
      walk(o.then_body);
      walk(o.else_body);
      if (bare_op(o.op) != "matmul" || !o.dst || !o.args) continue;
      const bool three = o.args->size() > 2 && (*o.args)[2].is_string();
      const std::string acc = three ? (*o.args)[2].get<std::string>() : *o.dst;
      if (!(three || o.accumulate.value_or(false)) || !loaded.count(acc)) continue;
      const htp::TileLocal *l = k.local(*o.dst);
      if (!l) continue;
      std::string product = *o.dst + "_product";
      while (k.local(product) || k.param(product)) product += "_";
      k.locals.push_back(htp::TileLocal{product, "tile", l->shape, l->dtype});
      htp::TileOp mm = o, add;
      mm.dst = product;
      mm.args->resize(2);
      mm.accumulate = std::nullopt;
      add.op = "add";
      add.dst = o.dst;
      add.args = std::vector<json>{acc, product};
      add.span = o.span;
      ops[i] = std::move(mm);
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(add));
      ++i;
    }
  };
  walk(k.body);
}

/// `k` with every read of a matmul accumulator that holds only full()'s constant fill (no matmul has written it
/// since), other than the read of a matmul accumulating into it, reading a fill of its own instead: a copy of it
/// (`acc2 = acc`, or `matmul(a, b, acc=acc)` into another register) becomes that fill, and any other statement
/// reads a register filled alike just before it. An a2a3 accumulator lives in the cube core's L0C, which holds
/// full()'s value only as "the next matmul starts from zero": a vector op or a copy reading it would need it
/// handed over through memory and loaded back into L0C, which a2a3 cannot do. A store of it stores that fill
/// (zeros where it is a reset), as aie-npu1 does.
void forward_accumulator_fills(htp::TileKernel &k) {
  const std::set<std::string> acc = accumulators(k);
  if (acc.empty()) return;
  using Fills = std::map<std::string, htp::TileOp>;  // accumulator -> the full() it holds
  // A register filled as accumulator `r` holds, just before statement i of `ops` (which moves to i + 1).
  auto fill_before = [&](std::vector<htp::TileOp> &ops, size_t &i, const std::string &r, const Fills &fills) {
    const htp::TileLocal *l = k.local(r);
    if (!l) return std::optional<std::string>();
    std::string name = r + "_fill";
    while (k.local(name) || k.param(name)) name += "_";
    htp::TileOp fill = fills.at(r);
    fill.dst = name;
    fill.span = ops[i].span;
    k.locals.push_back(htp::TileLocal{name, l->kind, l->shape, l->dtype});
    ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i), std::move(fill));
    ++i;
    return std::optional<std::string>(name);
  };
  // The registers `ops` read once rewritten; a statement's are its own and its nested statements', gathered
  // as the walk returns, so a deep nest is walked once.
  std::function<std::set<std::string>(std::vector<htp::TileOp> &, Fills &)> walk = [&](std::vector<htp::TileOp> &ops,
                                                                                       Fills &fills) {
    std::set<std::string> block_uses;
    std::map<std::string, size_t> unread;  // accumulator -> its fill in `ops` that nothing has read yet
    // Statement i of `ops` done, reading `uses` and certainly writing `defs` (a statement without nested ones):
    // a fill it overwrites unread (every reader now has its own) is dropped, since it would otherwise stay a
    // definition of the accumulator on the vector core that the cube core is handed.
    auto retire = [&](size_t &i, const std::set<std::string> &uses, const std::set<std::string> &defs) {
      block_uses.insert(uses.begin(), uses.end());
      for (const std::string &u : uses) unread.erase(u);
      for (const std::string &d : defs) {
        auto it = unread.find(d);
        if (it == unread.end()) continue;
        const size_t dead = it->second;
        unread.erase(it);
        ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(dead));
        --i;
        for (auto &[r, at] : unread)
          if (at > dead) --at;
      }
      const htp::TileOp &s = ops[i];
      if (bare_op(s.op) == "full" && s.dst && fills.count(*s.dst) && fills.at(*s.dst) == s.shallow()) unread[*s.dst] = i;
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      htp::TileOp &o = ops[i];
      const std::string op = bare_op(o.op);
      std::set<std::string> uses, defs;
      if (op == "if" || !o.body.empty()) htp::registers_of(o.shallow(), k, uses, defs);  // its condition or bounds
      if (op == "if") {  // what both branches leave filled alike
        Fills then_fills = fills, else_fills = fills;
        const std::set<std::string> then_read = walk(o.then_body, then_fills), else_read = walk(o.else_body, else_fills);
        uses.insert(then_read.begin(), then_read.end());
        uses.insert(else_read.begin(), else_read.end());
        Fills both;
        for (const auto &[r, fill] : then_fills)
          if (auto it = else_fills.find(r); it != else_fills.end() && it->second == fill) both.emplace(r, fill);
        fills = std::move(both);
        retire(i, uses, {});
        continue;
      }
      if (!o.body.empty()) {  // a loop: its later iterations, and what follows it, see what its body writes
        if (!fills.empty()) {
          std::set<std::string> body_uses, body_defs;
          htp::registers_of(o, k, body_uses, body_defs);
          for (const std::string &d : body_defs) fills.erase(d);
        }
        Fills body = fills;
        const std::set<std::string> read = walk(o.body, body);
        uses.insert(read.begin(), read.end());
        retire(i, uses, {});
        continue;
      }
      if (op == "copy" && o.arg_name(0) && fills.count(*o.arg_name(0))) {
        const htp::TileOp &fill = fills.at(*o.arg_name(0));
        o.op = fill.op;
        o.value = fill.value;
        o.args.reset();
      } else if (op == "store" && o.value && o.value->is_string() && fills.count(o.value->get<std::string>())) {
        if (std::optional<std::string> f = fill_before(ops, i, o.value->get<std::string>(), fills)) ops[i].value = *f;
      } else if (op != "store" && o.args) {
        const size_t read = op == "matmul" ? std::min<size_t>(2, o.args->size()) : o.args->size();
        for (size_t a = 0; a < read; ++a) {
          const std::optional<std::string> r = ops[i].arg_name(a);  // (`o` moves with each fill inserted)
          if (!r || !fills.count(*r)) continue;
          const std::optional<std::string> f = fill_before(ops, i, *r, fills);
          for (size_t b = a; f && b < read; ++b)
            if (ops[i].arg_name(b) == r) (*ops[i].args)[b] = *f;
        }
      }
      htp::TileOp &s = ops[i];
      if (s.dst && bare_op(s.op) != "store") {
        if (bare_op(s.op) == "full" && acc.count(*s.dst) && s.value && s.value->is_number())
          fills[*s.dst] = s.shallow();
        else
          fills.erase(*s.dst);
      }
      htp::registers_of(s, k, uses, defs);
      retire(i, uses, defs);
    }
    return block_uses;
  };
  Fills fills;
  walk(k.body, fills);
}

/// Expr a + b, a alone when b is the constant 0.
json plus(const json &a, const json &b) {
  if (b == json(0)) return a;
  if (a == json(0)) return b;
  return json{{"op", "add"}, {"args", json::array({a, b})}};
}

/// Replaces each launch in workload `w` of a kernel `split` selects by `replace(launch, slot, slots)`: launch
/// instance i of a kernel (its enclosing loops' variables, row-major, after the instances of its earlier launch
/// sites) is slot i of the kernel's `slots` (the product of those loops' extents, summed over its sites). A
/// launch under a loop of runtime extent has no slot: then nothing is replaced, `dynamic(loop, launch)` is
/// called for the first (the outermost such loop) and the result is false.
bool replace_launches(htp::WspWorkload &w, const std::function<bool(const std::string &)> &split,
                      const std::function<void(const htp::WspNode &, const htp::WspNode &)> &dynamic,
                      const std::function<htp::WspNode(const htp::WspNode &, const json &, int64_t)> &replace) {
  std::map<std::string, int64_t> slots, instances;
  std::function<bool(const std::vector<htp::WspNode> &, int64_t, const htp::WspNode *)> count =
      [&](const std::vector<htp::WspNode> &body, int64_t mult, const htp::WspNode *runtime_loop) {
        for (const htp::WspNode &n : body) {
          if (n.is_task() && split(n.kernel)) {
            if (runtime_loop) {
              dynamic(*runtime_loop, n);
              return false;
            }
            slots[n.kernel] += mult;
          }
          int64_t m = mult;
          const htp::WspNode *rl = runtime_loop;
          if (n.is_loop())
            for (const std::optional<int64_t> &v : loop_extents(n)) {
              if (!v && !rl) rl = &n;
              m *= v.value_or(1);
            }
          if (!count(n.body, m, rl) || !count(n.then_body, m, rl) || !count(n.else_body, m, rl)) return false;
        }
        return true;
      };
  if (!count(w.body, 1, nullptr)) return false;
  std::function<void(std::vector<htp::WspNode> &, std::vector<std::pair<std::string, int64_t>>)> rewrite =
      [&](std::vector<htp::WspNode> &body, std::vector<std::pair<std::string, int64_t>> loops) {
        for (htp::WspNode &n : body) {
          if (n.is_task() && split(n.kernel)) {
            const std::string kname = n.kernel;
            json slot = instances[kname];
            int64_t stride = 1;
            for (size_t i = loops.size(); i-- > 0;) {
              slot = json{{"op", "add"}, {"args", json::array({slot, json{{"op", "mul"}, {"args", json::array({json{{"var", loops[i].first}}, stride})}}})}};
              stride *= loops[i].second;
            }
            instances[kname] += stride;
            n = replace(n, slot, slots.at(kname));
            continue;
          }
          auto inner = loops;
          if (n.is_loop()) {  // (a replaced launch is under static loops only: count() said so)
            const auto extents = loop_extents(n);
            for (size_t i = 0; i < n.vars.size(); ++i) inner.emplace_back(n.vars[i], extents[i].value_or(1));
          }
          rewrite(n.body, inner);
          rewrite(n.then_body, inner);
          rewrite(n.else_body, inner);
        }
      };
  rewrite(w.body, {});
  return true;
}

/// An ordered group at `span`: tasks that run one after another.
htp::WspNode ordered_group(const htp::IrSpan &span, std::vector<htp::WspNode> body = {}) {
  htp::WspNode group;
  group.kind = "group";
  group.order = "ordered";
  group.span = span;
  group.body = std::move(body);
  return group;
}

/// Each launch of a kernel cut into parts (htp::entry_parts_workload) as those parts, in an ordered group in
/// place of the launch: the parts' views of the kernel's tensors become views of the launch's views, their
/// scalars the launch's, their loop variables fresh names, and each carry tensor a workload intermediate
/// `_<kernel>_<carry>` of [slots, rows, cols], launch instance i using slot i (its loops' variables,
/// row-major). False with a problem when a launch is under a loop of runtime extent.
bool launch_parts(htp::WspWorkload &w, const std::map<std::string, htp::EntryParts> &cut,
                  std::vector<Problem> &problems) {
  int sites = 0;
  auto dynamic = [&](const htp::WspNode &, const htp::WspNode &launch) {
    problems.push_back({"pto.core-type", "kernel '" + launch.kernel + "' carries tiles through a loop mixing cube "
                        "and vector work and is launched under a loop whose extent is known only at run time "
                        "in workload '" + w.name + "'; backend-pto cuts it into parts for launches under static "
                        "loops only", Span::from(launch.span)});
  };
  auto replace = [&](const htp::WspNode &n, const json &slot, int64_t slots) {
    const htp::EntryParts &ep = cut.at(n.kernel);
    const std::string kname = n.kernel;
    const std::string prefix = "_" + kname + std::to_string(sites++) + "_";
    std::map<std::string, const htp::WspArg *> launch_args;
    for (const htp::WspArg &a : n.args) launch_args[a.param] = &a;
    std::function<json(const json &)> rename = [&](const json &e) -> json {
      if (e.is_object()) {
        if (e.size() == 1 && e.contains("var") && e["var"].is_string())
          return json{{"var", prefix + e["var"].get<std::string>()}};
        if (e.size() == 1 && e.contains("param") && e["param"].is_string()) {
          auto it = launch_args.find(e["param"].get<std::string>());
          if (it != launch_args.end() && it->second->scalar) return *it->second->scalar;
          return e;
        }
        json out = json::object();
        for (const auto &[key, x] : e.items()) out[key] = rename(x);
        return out;
      }
      if (e.is_array()) {
        json out = json::array();
        for (const json &x : e) out.push_back(rename(x));
        return out;
      }
      return e;
    };
    std::function<void(htp::WspNode &)> bind = [&](htp::WspNode &x) {
      for (std::string &v : x.vars) v = prefix + v;
      if (x.is_task()) {
        x.id = n.id + "_" + x.id;
        x.span = n.span;
        x.index.reset();
        for (htp::WspArg &a : x.args) {
          if (a.scalar) {
            a.scalar = rename(*a.scalar);
            continue;
          }
          std::vector<json> offset;
          for (const json &o : a.offset) offset.push_back(rename(o));
          auto l = launch_args.find(a.param);
          if (l != launch_args.end() && l->second->tensor) {  // a view of the launch's view
            const htp::WspArg &v = *l->second;
            const size_t lead = v.offset.size() - std::min(v.offset.size(), offset.size());
            a.tensor = v.tensor;
            std::vector<json> o = v.offset;
            std::vector<int64_t> shape = v.shape;
            for (size_t d = 0; d < offset.size() && lead + d < o.size(); ++d) {
              o[lead + d] = plus(o[lead + d], offset[d]);
              shape[lead + d] = a.shape[d];
            }
            a.offset = std::move(o);
            a.shape = std::move(shape);
          } else if (a.tensor) {  // a carry: this launch's slot of the intermediate
            const std::string tensor = "_" + kname + "_" + *a.tensor;
            std::vector<int64_t> whole = {slots};
            whole.insert(whole.end(), a.shape.begin(), a.shape.end());
            htp::add_intermediate(w, tensor, [&] {
              for (const htp::WspIntermediate &im : ep.workload.intermediates)
                if (im.name == *a.tensor) return im.type.dtype;
              return std::string("f32");
            }(), whole);
            a.tensor = tensor;
            offset.insert(offset.begin(), slot);
            a.offset = std::move(offset);
            a.shape.insert(a.shape.begin(), 1);
          }
        }
        x.reads.clear();
        x.writes.clear();
        for (const htp::WspArg &a : x.args)
          if (a.tensor) htp::record_view(x, a);
      }
      for (htp::WspNode &b : x.body) bind(b);
    };
    htp::WspNode group = ordered_group(n.span, ep.workload.body.at(0).body);
    for (htp::WspNode &x : group.body) bind(x);
    return group;
  };
  return replace_launches(w, [&](const std::string &k) { return cut.count(k) > 0; }, dynamic, replace);
}

}  // namespace

void split_core_types(htp::TileKernels &kernels, std::optional<htp::WspTaskGraph> &task_graph,
                      htp::LayoutSignatures *layouts, std::vector<Problem> &problems) {
  std::map<std::string, std::vector<htp::TileKernel>> parts;         // kernel -> its parts in order
  std::map<std::string, std::vector<std::vector<Handoff>>> handoffs;  // kernel -> per part, its hand-offs
  std::map<std::string, htp::LayoutFunction> mapped_kernels;           // split kernels mapped over a mesh
  std::set<std::string> launched = task_graph ? htp::launched_kernels(*task_graph) : std::set<std::string>{};
  // A single-core kernel entry that mixes cube and vector work runs as the workload that launches it once
  // (htp/kernel_entry.hpp), so that launch is split below like any other.
  // One whose body is a loop mixing them within its iterations (a GEMM and its activation per row tile), with
  // nothing carried between iterations, runs as the workload of its name launching the iteration kernel
  // once per iteration (htp::loop_workload), whose launches are split alike.
  for (htp::TileKernel &k : kernels.kernels)
    if (k.kind == "kernel") {
      drop_empty_loops(k.body, htp::loop_detail::constexpr_constants(k));
      split_register_webs(k); // (roles are placed per register: one register per value)
      forward_accumulator_fills(k);
      add_loaded_accumulators(k);
      distribute_mixed_ifs(k);
    }
  std::vector<htp::TileKernel> iterations;
  std::set<std::string> replaced;
  // Whether k mixes the two between its statements (nullopt: within one, which segments_of reports).
  auto mixes = [](const htp::TileKernel &k) -> std::optional<bool> {
    try {
      return segments_of(k).has_value();
    } catch (const IrError &) {
      return std::nullopt;
    }
  };
  // A launched kernel whose loop carries tiles across cube and vector work (a K-loop accumulating A Bᵀ through
  // a transpose, an online softmax per head) is cut into parts like an entry (htp::entry_parts_workload) and
  // each launch becomes its parts; each part mixing the two is split below like any other.
  std::map<std::string, htp::EntryParts> cut;
  for (const htp::TileKernel &k : kernels.kernels)
    if (k.kind == "kernel" && launched.count(k.name) && !(layouts && layouts->function(k.name)) && !mixes(k))
      if (auto ep = htp::entry_parts_workload(k, nullptr)) cut.emplace(k.name, std::move(*ep));
  if (!cut.empty() && task_graph) {
    for (htp::WspWorkload &w : task_graph->workloads) launch_parts(w, cut, problems);
    std::erase_if(kernels.kernels, [&](const htp::TileKernel &k) { return cut.count(k.name) > 0; });
    for (auto &[name, ep] : cut)
      for (htp::TileKernel &p : ep.kernels) {
        add_loaded_accumulators(p);
        launched.insert(p.name);
        kernels.kernels.push_back(std::move(p));
      }
  }
  for (const htp::TileKernel &k : kernels.kernels) {
    if (k.kind != "kernel" || launched.count(k.name)) continue;
    const std::optional<bool> mixed = mixes(k);
    if (!mixed) {
      const bool mapped = layouts && layouts->function(k.name);
      std::string lw_why, cl_why;
      // A loop whose iterations would move a view leaving its tensor under a branch the iteration number
      // decides (`if i > 0: t = add(t, load(X.tile(i - 1, ...)))`) is first cut where that branch changes
      // (htp::split_loop_at_conditions): each iteration task moves the views of its whole body, whichever
      // branch it takes, and the tile before X at i = 0 is no view. The pieces run as parts, below.
      const std::optional<htp::TileKernel> pieces = mapped ? std::nullopt : htp::split_loop_at_conditions(k);
      auto lw = mapped || pieces ? std::nullopt : htp::loop_workload(htp::sink_loads_into_loop(k), &lw_why);
      if (pieces) lw_why = "a view it moves under a branch on the loop variable leaves its tensor at some iteration";
      // (otherwise reported by the loop below only for launched kernels; the entry's own checks report it)
      // (an `if` of the iteration mixing the two, on the loop variable, reads a parameter of the iteration
      // kernel: distributed like any other)
      if (lw) distribute_mixed_ifs(lw->body);
      if (lw && mixes(lw->body) == std::optional<bool>(true)) {
        if (!task_graph) task_graph.emplace();
        task_graph->workloads.push_back(std::move(lw->workload));
        launched.insert(lw->body.name);
        replaced.insert(k.name);
        iterations.push_back(std::move(lw->body));
        continue;
      }
      // A loop whose iterations carry tiles (an online softmax's running max, sum and output; a K-loop's
      // accumulator fed by a transpose), or several loops, run as parts launched in order, the carries in
      // tensors between them (htp::entry_parts_workload); each part mixing the two is split below.
      auto cl = mapped || lw ? std::nullopt : htp::entry_parts_workload(pieces ? *pieces : k, &cl_why);
      if (!cl && !mapped && !lw) {
        // (why neither form takes it, where segments_of would only say that a loop mixes the two)
        const htp::TileOp *loop = nullptr;  // the loop mixing the two
        const std::set<std::string> acc = accumulators(k);
        for (const htp::TileOp &o : k.body) {
          bool c = false, v = false;
          sides(o, acc, c, v);
          if (!loop && c && v && o.is("for")) loop = &o;
        }
        if (loop) {
          problems.push_back({"pto.core-type",
                              "kernel '" + k.name + "' mixes cube work (pto.matmul) and vector work in a loop, which "
                              "backend-pto can neither run as tasks per iteration (" + lw_why + ") nor cut into parts "
                              "launched in order (" + cl_why + "): keep what crosses iterations in a tile, or split "
                              "the kernel into a cube kernel and a vector kernel that exchange tensors",
                              span_of(loop->span, k.span)});
          continue;
        }
      }
      if (cl)
        for (htp::TileKernel &p : cl->kernels) distribute_mixed_ifs(p);
      if (!cl || !std::any_of(cl->kernels.begin(), cl->kernels.end(), [&](const htp::TileKernel &p) {
            return mixes(p) != std::optional<bool>(false);
          }))
        continue;
      if (!task_graph) task_graph.emplace();
      task_graph->workloads.push_back(std::move(cl->workload));
      replaced.insert(k.name);
      for (htp::TileKernel &p : cl->kernels) {
        add_loaded_accumulators(p);
        launched.insert(p.name);
        iterations.push_back(std::move(p));
      }
      continue;
    }
    if (!*mixed) continue;
    if (!task_graph) task_graph.emplace();
    task_graph->workloads.push_back(htp::single_launch_workload(k));
    launched.insert(k.name);
  }
  std::erase_if(kernels.kernels, [&](const htp::TileKernel &k) { return replaced.count(k.name) > 0; });
  for (htp::TileKernel &k : iterations) kernels.kernels.push_back(std::move(k));
  htp::WspTaskGraph *tasks = task_graph ? &*task_graph : nullptr;
  for (const htp::TileKernel &k : kernels.kernels) {
    if (k.kind != "kernel" || !launched.count(k.name)) continue;
    std::optional<std::vector<Segment>> segs;
    try {
      segs = segments_of(k);
    } catch (const IrError &e) {
      problems.push_back({e.code(), e.what(), e.span()});
      continue;
    }
    if (!segs) continue;
    // (a copy: the parts' layouts are added to layouts->functions below)
    std::optional<htp::LayoutFunction> mapped;
    if (const htp::LayoutFunction *f = layouts ? layouts->function(k.name) : nullptr)
      if (f->mapping && f->mesh.size() <= 2) mapped = *f;
    if (layouts && layouts->function(k.name) && !mapped) {
      problems.push_back({"pto.core-type", "kernel '" + k.name + "' mixes cube and vector work and has layouts over " +
                                               "more than two mesh axes; backend-pto splits kernels mapped over one or two",
                          Span::from(k.span)});
      continue;
    }
    // Registers a later part reads from an earlier one travel through hand-off tensors.
    // (reads: what a part reads before it defines it; the rest of uses only declares its locals)
    std::vector<std::set<std::string>> uses(segs->size()), defs(segs->size()), passed(segs->size()),
        reads(segs->size());
    const std::set<std::string> acc_regs = accumulators(k);
    for (size_t s = 0; s < segs->size(); ++s) {
      for (const htp::TileOp &o : (*segs)[s].body) htp::registers_of(o, k, uses[s], defs[s]);
      // (a register only some branches of an `if` define keeps its earlier value on the others: a read)
      std::set<std::string> inputs, defined, maybe;
      htp::register_inputs((*segs)[s].body, k, inputs, defined, &maybe);
      reads[s] = inputs;
      reads[s].insert(maybe.begin(), maybe.end());
      // An accumulator a cube part defines in one branch only cannot be read in first (a2a3 loads nothing
      // into L0C): the part hands it on from that branch, and on the other path the hand-off tensor keeps
      // what the earlier part stored.
      if ((*segs)[s].side == Side::Cube)
        for (const std::string &r : maybe)
          if (!inputs.count(r) && acc_regs.count(r) &&
              only_branch_defining((*segs)[s].body, 0, (*segs)[s].body.size(), r, k))
            passed[s].insert(r);
    }
    std::vector<std::vector<Handoff>> hand(segs->size());
    bool ok = true;
    const auto handed = htp::register_handoffs(reads, defs);
    for (size_t s = 1; s < segs->size(); ++s)
      for (const auto &[r, from] : handed[s]) {
        const htp::TileLocal *l = k.local(r);
        if (!l || l->is_scalar()) {
          problems.push_back({"pto.core-type", "kernel '" + k.name + "' mixes cube and vector work and passes scalar '" +
                                                   r + "' between them; backend-pto hands over tiles only",
                              Span::from(k.span)});
          ok = false;
          break;
        }
        for (const Handoff &h : {Handoff{*l, true}, Handoff{*l, false}}) {
          if (!h.out && passed[s].count(r)) continue;
          auto &v = hand[h.out ? from : s];
          if (std::find(v.begin(), v.end(), h) == v.end()) v.push_back(h);
        }
      }
    if (!ok) continue;
    std::vector<htp::TileKernel> ks;
    for (size_t s = 0; s < segs->size(); ++s) {
      htp::TileKernel p;
      p.name = k.name + "__" + std::to_string(s) + ((*segs)[s].side == Side::Cube ? "_aic" : "_aiv");
      p.kind = "kernel";
      p.span = k.span;
      std::set<std::string> names;  // the tensors (and registers) the part's statements move
      htp::for_each_op((*segs)[s].body, [&](const htp::TileOp &x) {
        if (x.src) names.insert(*x.src);
        if (x.dst) names.insert(*x.dst);
      });
      for (const htp::TileParam &prm : k.params)  // the tensors this part moves; every scalar and constant
        if (!prm.type.is_tensor() || names.count(prm.name)) p.params.push_back(prm);
      htp::LayoutFunction part_layouts;
      if (mapped) {
        part_layouts = *mapped;
        part_layouts.collectives.clear();
        part_layouts.params.clear();
        for (const htp::TileParam &prm : p.params)
          if (const htp::Layout *l = mapped->param(prm.name)) part_layouts.params.emplace_back(prm.name, *l);
      }
      for (const Handoff &h : hand[s]) {
        if (!first_of_register(hand[s], h)) continue;
        const std::string dir = handoff_dir(hand[s], h.reg.name);
        if (!mapped) {
          p.params.push_back(htp::TileParam{"h_" + h.reg.name, dir,
                                            htp::TileType{"tensor", h.reg.shape, h.reg.dtype, json()}, std::nullopt});
          continue;
        }
        htp::Layout l = handoff_layout(*mapped, h.reg);
        l.dir = dir;
        p.params.push_back(htp::TileParam{"h_" + h.reg.name, l.dir, htp::TileType{"tensor", l.shape, h.reg.dtype, json()},
                                          l.local_shape});
        part_layouts.params.emplace_back("h_" + h.reg.name, l);
      }
      if (mapped) layouts->functions.emplace_back(p.name, part_layouts);
      for (const Handoff &h : hand[s])
        if (!h.out) p.body.push_back(handoff_op(h, k.span));
      const size_t first = p.body.size();
      for (const htp::TileOp &o : (*segs)[s].body) p.body.push_back(o);
      for (const Handoff &h : hand[s])
        if (h.out) {
          htp::TileOp store = handoff_op(h, k.span);
          // A register a cube part defines last in one branch of an `if` (distribute_mixed_ifs) is handed on
          // right after each statement that defines it, inside the branches: an operand the part read in, or an
          // accumulator no matmul wrote on this path, cannot be stored from the cube core, and on a path where
          // nothing defines it the hand-off tensor keeps what an earlier part stored. A vector part holds the
          // register on every path (defined before, or read in) and stores it after the `if`: `p = load(a);
          // if n > 0: p = adds(p, 1.0)` hands on p whichever branch ran.
          if ((*segs)[s].side == Side::Cube && only_branch_defining(p.body, first, p.body.size(), h.reg.name, k))
            store_after_definitions(p.body, first, h.reg.name, store, k);
          else
            p.body.push_back(std::move(store));
        }
      std::set<std::string> locals = uses[s];
      locals.insert(defs[s].begin(), defs[s].end());
      for (const htp::TileLocal &l : k.locals)
        if (locals.count(l.name)) p.locals.push_back(l);
      ks.push_back(std::move(p));
    }
    parts[k.name] = std::move(ks);
    handoffs[k.name] = std::move(hand);
    if (mapped) mapped_kernels[k.name] = *mapped;
  }
  if (parts.empty() || !tasks) return;
  // Each launch of a split kernel becomes its parts in order, the hand-offs of launch instance i in slot i
  // of a workload intermediate per register.
  for (htp::WspWorkload &w : tasks->workloads) {
    auto dynamic = [&](const htp::WspNode &loop, const htp::WspNode &) {
      problems.push_back({"pto.core-type", "a kernel that mixes cube and vector work is launched under a loop "
                                           "whose extent is known only at run time in workload '" + w.name +
                                           "'; backend-pto splits it for launches under static loops only: "
                                           "split it into a cube kernel and a vector kernel that exchange tensors",
                          Span::from(loop.span)});
    };
    auto replace = [&](const htp::WspNode &n, const json &slot, int64_t slots) {
      const std::string kname = n.kernel;
      htp::WspNode group = ordered_group(n.span);
      const auto &ks = parts.at(kname);
      for (size_t s = 0; s < ks.size(); ++s) {
        htp::WspNode t = htp::part_launch(n, ks[s], n.id + "_" + std::to_string(s));
        for (const Handoff &h : handoffs.at(kname)[s]) {
          if (!first_of_register(handoffs.at(kname)[s], h)) continue;
          const std::string tensor = "_" + kname + "_" + h.reg.name;
          htp::WspArg a;
          a.param = "h_" + h.reg.name;
          a.tensor = tensor;
          a.dir = handoff_dir(handoffs.at(kname)[s], h.reg.name);
          // A mapped kernel: a tile per core (handoff_layout), the whole tensor, shared by its launches
          // (the runtime orders a launch's writes after the previous one's reads of it).
          const auto m = mapped_kernels.find(kname);
          const std::vector<int64_t> whole =
              m != mapped_kernels.end() ? handoff_layout(m->second, h.reg).shape : std::vector<int64_t>{};
          std::vector<int64_t> shape = whole;  // the intermediate's; else [slots, rows, cols], this launch's slot
          if (whole.empty()) {
            shape = {slots};
            shape.insert(shape.end(), h.reg.shape.begin(), h.reg.shape.end());
          }
          a.offset.assign(shape.size(), json(0));
          a.shape = shape;
          if (whole.empty()) {
            a.offset[0] = slot;
            a.shape[0] = 1;
          }
          t.args.push_back(a);
          htp::record_view(t, a);
          htp::add_intermediate(w, tensor, h.reg.dtype, shape);
        }
        group.body.push_back(std::move(t));
      }
      return group;
    };
    if (!replace_launches(w, [&](const std::string &k) { return parts.count(k) > 0; }, dynamic, replace)) return;
  }
  for (auto &[name, ks] : parts) {  // the parts replace the kernel (no launch of it is left)
    kernels.kernels.erase(std::remove_if(kernels.kernels.begin(), kernels.kernels.end(),
                                         [&](const htp::TileKernel &k) { return k.name == name; }),
                          kernels.kernels.end());
    for (htp::TileKernel &p : ks) kernels.kernels.push_back(std::move(p));
  }
}

namespace {

/// The register a top-level `copy` statement reads, if it reads one register.
const std::string *copied_register(const htp::TileOp &o) {
  if (bare_op(o.op) != "copy" || !o.dst || !o.args || o.args->size() != 1 || !(*o.args)[0].is_string()) return nullptr;
  return (*o.args)[0].get_ptr<const std::string *>();
}

/// Fusing puts a copy of the producer's register where the consumer loaded it. A cube core has no copy
/// between L1 tiles (it moves a tile only on towards a matmul's operand buffers), so in a kernel with cube
/// work a copy of a register that is not an accumulator is forwarded: the statements after it read the
/// copied register itself, when neither register is written again.
void forward_copies(htp::TileKernel &k, const std::set<std::string> &acc) {
  for (size_t i = 0; i < k.body.size(); ++i) {
    const std::string *src = copied_register(k.body[i]);
    if (!src || acc.count(*src) || !k.local(*src)) continue;
    const std::string from = *k.body[i].dst, to = *src;
    bool rewritten = false;
    for (size_t j = i + 1; j < k.body.size() && !rewritten; ++j) {
      std::set<std::string> uses, defs;
      htp::registers_of(k.body[j], k, uses, defs);
      rewritten = defs.count(from) || defs.count(to);
    }
    if (rewritten) continue;
    const std::map<std::string, std::string> names{{from, to}};
    for (size_t j = i + 1; j < k.body.size(); ++j) htp::fuse_detail::rename_op(k.body[j], names);
    k.body.erase(k.body.begin() + static_cast<long>(i));
    k.locals.erase(std::remove_if(k.locals.begin(), k.locals.end(), [&](const htp::TileLocal &l) { return l.name == from; }),
                   k.locals.end());
    --i;
  }
}

/// Whether a matmul of `k` takes an accumulator (another matmul's result, or a copy of one) as an operand.
bool takes_accumulator(const htp::TileKernel &k, const std::set<std::string> &acc) {
  std::set<std::string> held = acc;  // accumulators and copies of them
  bool found = false;
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    if (const std::string *src = copied_register(o); src && held.count(*src)) held.insert(*o.dst);
    if (bare_op(o.op) != "matmul" || !o.args) return;
    for (size_t a = 0; a < std::min<size_t>(2, o.args->size()); ++a)
      found = found || ((*o.args)[a].is_string() && held.count((*o.args)[a].get<std::string>()));
  });
  return found;
}

}  // namespace

void fuse_buffered(htp::TileKernels &kernels, htp::WspTaskGraph &tasks, std::vector<Problem> &problems) {
  htp::fuse_buffers(
      kernels, tasks, [](const std::string &space) { return space != "GM"; },  // GM: where every workload tensor is
      [&](const htp::WspWorkload &w, const htp::WspBuffer &b, const std::variant<std::string, htp::FuseError> &fused) {
        if (auto *e = std::get_if<htp::FuseError>(&fused)) {
          problems.push_back({"pto.schedule-buffer", e->message, Span::from(e->span)});
          return;
        }
        const Span at = Span::from(htp::directive_span(w, b));
        htp::TileKernel &k = *kernels.find(std::get<std::string>(fused));
        const std::set<std::string> acc = accumulators(k);
        const std::string what = "buffer(\"" + b.tensor + "\", \"" + b.space + "\") of workload '" + w.name + "': ";
        if (takes_accumulator(k, acc)) {
          problems.push_back({"pto.schedule-buffer", what + "in the fused kernel '" + k.name + "' a matmul takes "
                                                     "another matmul's result as an operand; an a2a3 cube core moves a "
                                                     "result (L0C) out only to global memory, so '" + b.tensor +
                                                     "' has to travel through it (drop the directive)", at});
          return;
        }
        bool cube = false, vector = false;
        for (const htp::TileOp &o : k.body) sides(o, acc, cube, vector);
        if (cube) {
          forward_copies(k, acc);
          cube = vector = false;
          for (const htp::TileOp &o : k.body) sides(o, acc, cube, vector);
        }
        if (cube && vector)
          problems.push_back({"pto.schedule-buffer", what + "the fused kernel '" + k.name + "' mixes cube and vector work; "
                                                     "no core of a2a3 runs both, so '" + b.tensor + "' has to travel "
                                                     "through global memory (drop the directive)", at});
        else if (b.space != "local" && b.space != (cube ? "L1" : "UB"))
          problems.push_back({"pto.schedule-buffer", what + "the fused kernel '" + k.name + "' runs on " +
                                                     (cube ? "AIC cores, whose local memory is L1" : "AIV cores, whose local memory is UB") +
                                                     "; name that space or \"local\"", at});
      });
}

}  // namespace ptobe
