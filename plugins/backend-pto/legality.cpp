#include "legality.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "intrinsics.hpp"
#include "memory_plan.hpp"

namespace ptobe {

namespace {

void check_statements(const Kernel &k, std::vector<Problem> &out) {
  for_each_op(k.body, [&](const Op &o) {
    if (o.op == "for" || o.op == "if" || o.op == "scalar") return;
    const IntrinsicContract *c = find_intrinsic(o.op);
    if (!c) {
      out.push_back({"pto.unsupported",
                     "'" + o.op + "' is not an operation backend-pto can lower (" + k.kind + " '" + k.name + "')", o.span});
      return;
    }
    if (auto e = check_contract(k, o, *c)) {
      out.push_back({"pto.contract", *e, o.span.line ? o.span : k.span});
      return;
    }
    const json value = o.ir.value.value_or(json());
    if (c->kind == OpKind::Full && !(value.is_number() && value.get<double>() == 0.0)) {
      bool acc = false;
      for_each_op(k.body, [&](const Op &m) { acc = acc || (m.op == "matmul" && m.dst == o.dst); });
      if (acc)
        out.push_back({"pto.contract",
                       "pto.full: accumulator '" + o.dst + "' can only be reset to 0 (the cube unit has no fill)", o.span});
    }
  });
}

/// An accumulator's state: reset by full() (the next matmul overwrites it; its zeros are never written), written
/// by a matmul, or either (after a loop that may not run, or an if).
enum class AccState { Reset, Written, Either };

AccState join(AccState a, AccState b) { return a == b ? a : AccState::Either; }

/// Stores of an accumulator while surely reset (`acc = full(..., 0.0)` then `store(z, acc)`): the cube core
/// would store whatever its L0C held, since the reset is lazy. An accumulator that may or may not be written
/// (a loop of a run-time trip count) is checked at run time on the simulator (HTP_CHECK_ACC_WRITTEN).
class AccumulatorStores {
public:
  AccumulatorStores(const Kernel &k, std::vector<Problem> &out) : k_(k), out_(out) {
    for_each_op(k.body, [&](const Op &o) {
      if (o.op == "matmul" || (o.op == "cast" && !o.args.empty() && accs_.count(o.args[0]))) accs_.insert(o.dst);
    });
  }
  void run() {
    std::map<std::string, AccState> state;
    walk(k_.body, state, true);
  }

private:
  using State = std::map<std::string, AccState>;
  static State joined(const State &a, const State &b) {
    State out = a;
    for (const auto &[reg, s] : b) out[reg] = out.count(reg) ? join(out[reg], s) : AccState::Either;
    for (auto &[reg, s] : out)
      if (!b.count(reg)) s = AccState::Either;
    return out;
  }
  static bool runs_once_at_least(const Op &loop) {
    const htp::TileOp &l = loop.ir;
    if (!l.start || !l.stop || !l.step || !l.start->is_number_integer() || !l.stop->is_number_integer() ||
        !l.step->is_number_integer())
      return false;
    const int64_t start = *l.start, stop = *l.stop, step = *l.step;
    return step > 0 ? start < stop : step < 0 && start > stop;
  }
  void walk(const std::vector<Op> &ops, State &state, bool report) {
    for (const Op &o : ops) {
      if (o.op == "for") {
        // At the start of an iteration: as before the loop, or as a previous iteration left it: an accumulator
        // the body resets may be either (one it only writes stays written). One walk per loop, not one per
        // iteration state: nests stay linear.
        State before = state, entry = state;
        for_each_op(o.body, [&](const Op &m) {
          if (!accs_.count(m.dst) || (m.op != "full" && m.op != "matmul" && m.op != "cast")) return;
          const AccState left = m.op == "full"     ? AccState::Reset
                                : m.op == "matmul" ? AccState::Written
                                                   : AccState::Either;
          auto it = entry.find(m.dst);
          entry[m.dst] = it == entry.end() ? AccState::Either : join(it->second, left);
        });
        walk(o.body, entry, report);
        state = runs_once_at_least(o) ? entry : joined(before, entry);
      } else if (o.op == "if") {
        State then_state = state, else_state = state;
        walk(o.then_body, then_state, report);
        walk(o.else_body, else_state, report);
        state = joined(then_state, else_state);
      } else if (o.op == "store" && accs_.count(o.stored())) {
        auto it = state.find(o.stored());
        if (report && it != state.end() && it->second == AccState::Reset)
          out_.push_back({"pto.contract",
                          "pto.store: accumulator '" + o.stored() + "' is stored before a matmul writes it: it holds "
                          "full()'s zeros only lazily (the next matmul overwrites it; the cube core has no fill), so "
                          "the store would write what the core's L0C last held; store the accumulator after a "
                          "matmul, or zeros from a vector kernel",
                          o.span.line ? o.span : k_.span});
      } else if (o.op == "cast" && accs_.count(o.dst) && state.count(o.args[0])) {
        state[o.dst] = state[o.args[0]];  // a cast of an accumulator is stored from its buffer
      } else if (o.op == "full" && accs_.count(o.dst)) {
        state[o.dst] = AccState::Reset;
      } else if (o.op == "matmul") {
        state[o.dst] = AccState::Written;
      }
    }
  }

  const Kernel &k_;
  std::vector<Problem> &out_;
  std::set<std::string> accs_;
};

bool allows(const std::vector<std::string_view> &spaces, const std::string &space) {
  return std::find(spaces.begin(), spaces.end(), space) != spaces.end();
}

/// Every tile operand and result of every statement lives in a space its contract allows.
void check_spaces(const Kernel &k, const KernelPlan &plan, std::vector<Problem> &out) {
  for_each_op(k.body, [&](const Op &o) {
    const IntrinsicContract *c = find_intrinsic(o.op);
    if (!c) return;
    const MemorySpaces m = memory_spaces(*c);
    auto check = [&](const std::string &reg, const std::vector<std::string_view> &spaces, const char *role) {
      if (!plan.by_register.count(reg)) return;  // a tensor parameter (GM) or a scalar
      const std::string &space = plan.buffer(reg).space;
      if (!allows(spaces, space)) {
        std::string hint;  // an accumulator started from memory: the cube's L0C is filled by matmuls only
        if (c->kind == OpKind::Load && space == "L0C")
          hint = "; a matmul accumulator cannot be loaded on a2a3: start it with full((R, C), 0.0) and add the "
                 "loaded tile to the result (store(c, add(load(c), matmul(a, b))))";
        out.push_back({"pto.memory-space",
                       "pto." + o.op + ": " + role + " '" + reg + "' is planned in " + space +
                           " but the contract places it in " + memory_spaces_text(m) + hint,
                       o.span.line ? o.span : k.span});
      }
    };
    if (c->kind != OpKind::Store) check(o.dst, m.out, "result");
    for (size_t i = 0; i < o.args.size(); ++i)  // matmul's third operand is its accumulator (the result)
      check(o.args[i], c->kind == OpKind::Matmul && i == 2 ? m.out : m.in, "operand");
    if (c->kind == OpKind::Store) check(o.stored(), m.in, "stored value");
  });
}

}  // namespace

std::vector<Problem> check_kernel(const Kernel &k, const HardwareProfile &hw) {
  std::vector<Problem> out;
  for (const Param &p : k.params)
    if (p.kind == "constexpr" && !(p.value.is_number() || p.value.is_boolean()))
      out.push_back({"pto.unsupported",
                     "constexpr parameter '" + p.name + "' of " + k.kind + " '" + k.name +
                         "' has no value to compile with; give it a default (" + p.name + ": Constexpr = ...)",
                     k.span});
  check_statements(k, out);
  AccumulatorStores(k, out).run();
  if (!out.empty()) return out;
  try {
    KernelPlan plan = plan_memory(k, hw);
    check_spaces(k, plan, out);
    for (std::string &m : check_memory(k, plan, hw)) out.push_back({"pto.memory", std::move(m), k.span});
  } catch (const IrError &e) {
    out.push_back({e.code(), e.what(), e.span().line ? e.span() : k.span});
  }
  return out;
}

}  // namespace ptobe
