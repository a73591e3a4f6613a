// A kernel entry seen as a workload: one launch of the kernel on its whole tensors, with its runtime
// scalars passed through. Backends whose task-graph machinery does more than their kernel-entry path
// (backend-pto splits a kernel mixing cube and vector work into parts; backend-aie multiplexes a core's
// objects through packed FIFOs) give a kernel entry that machinery by planning this workload instead.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <htp/csp_graph.hpp>
#include <htp/expr_eval.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

namespace htp {

/// The workload named like `kernel` that launches it once (task "t0"): a parameter per tensor and scalar
/// parameter of the kernel (compile-time parameters stay the kernel's), each tensor bound whole.
inline WspWorkload single_launch_workload(const TileKernel &kernel) {
  WspWorkload w;
  w.name = kernel.name;
  w.span = kernel.span;
  WspNode task;
  task.kind = "task";
  task.id = "t0";
  task.kernel = kernel.name;
  task.span = kernel.span;
  for (const TileParam &p : kernel.params) {
    if (p.type.is_constexpr()) continue;
    WspType type{p.type.kind, {}, p.type.dtype};
    WspArg arg;
    arg.param = p.name;
    if (p.type.is_tensor()) {
      for (int64_t d : p.type.shape) type.shape.push_back(IrDim{d, {}});
      arg.tensor = p.name;
      arg.dir = p.dir;
      arg.offset.assign(p.type.shape.size(), nlohmann::json(0));
      arg.shape = p.type.shape;
      if (p.dir != "out") task.reads.push_back(p.name);
      if (p.dir != "in") task.writes.push_back(p.name);
    } else {
      arg.scalar = nlohmann::json{{"param", p.name}};
    }
    w.params.push_back(WspParam{p.name, p.dir, std::move(type)});
    task.args.push_back(std::move(arg));
  }
  w.body.push_back(std::move(task));
  return w;
}

/// Records view argument `a` among the reads and the writes of task `t` (an InOut view: both).
inline void record_view(WspNode &t, const WspArg &a) {
  if (a.dir != "out") t.reads.push_back(*a.tensor);
  if (a.dir != "in") t.writes.push_back(*a.tensor);
}

/// The launch of `part`, one of the kernels a kernel was cut into, in place of launch `n` of that kernel:
/// n's arguments for the part's parameters, the tensors they view among its reads and writes, id `id`.
/// The hand-off arguments between the parts are the caller's to add (with record_view).
inline WspNode part_launch(const WspNode &n, const TileKernel &part, std::string id) {
  WspNode t = n;
  t.id = std::move(id);
  t.kernel = part.name;
  t.args.clear();
  t.reads.clear();
  t.writes.clear();
  for (const WspArg &a : n.args)
    if (part.param(a.param)) {
      t.args.push_back(a);
      if (a.tensor) record_view(t, a);
    }
  return t;
}

/// Adds intermediate tensor `name` of `shape` to `w`, unless `w` has one of that name.
inline void add_intermediate(WspWorkload &w, const std::string &name, const std::string &dtype,
                             const std::vector<int64_t> &shape) {
  for (const WspIntermediate &i : w.intermediates)
    if (i.name == name) return;
  WspIntermediate im;
  im.name = name;
  im.type.kind = "tensor";
  im.type.dtype = dtype;
  for (int64_t d : shape) im.type.shape.push_back(IrDim{d, {}});
  w.intermediates.push_back(std::move(im));
}

/// Calls f(kernel) on the function of every process of `csp` that is not a pipe stage (once per process).
template <class F> void for_each_process_function(TileKernels &kernels, const CspGraph &csp, F &&f) {
  for (const CspProgram &program : csp.programs)
    for (const CspProcess &proc : program.processes)
      if (!proc.stage)
        for (TileKernel &k : kernels.kernels)
          if (k.name == proc.function) f(k);
}

/// Every process function of `csp` (not a pipe stage) in `kernels` with its loads before its loop moved into
/// it (sink_loads_into_loop): a process that reads a weight once before `for t in consume(ch):` becomes one
/// loop, the form both backends turn into tasks or a core loop.
inline void sink_process_loads(TileKernels &kernels, const CspGraph &csp) {
  for_each_process_function(kernels, csp, [](TileKernel &k) { k = sink_loads_into_loop(k); });
}

/// Store-to-load forwarding in each statement list of `ops` (a loop body, a branch): a load of exactly the view
/// (tensor and offsets) that the latest store to that tensor, or the latest load of it, in the same list moved,
/// of that register's shape, with the register unchanged since, becomes a copy of the register. A backend
/// whose loads do not see the stores before them (AIE cores stream a process's loads from the start of the
/// run) then reads what the program stored, and a view loaded twice in an iteration is moved once. A store
/// of a view that a later store in the list overwrites, nothing reading the tensor between, is dropped (an
/// AIE core moves each view once an iteration). Nothing is forwarded across a receive that follows a send
/// (the steps of a round trip, round_trip_steps, are kernel calls of their own). `kernel` gives the
/// registers' shapes.
inline void forward_views_to_loads(std::vector<TileOp> &ops, const TileKernel &kernel) {
  std::map<std::string, size_t> last;  // tensor -> index of the latest load or store of it in this list
  std::vector<size_t> dead;            // stores a later store of the same view overwrites unread
  auto writes = [](const TileOp &o, const std::string &reg) {
    bool w = false;
    for_each_op(std::vector<TileOp>{o}, [&](const TileOp &x) { w = w || (x.dst && *x.dst == reg); });
    return w;
  };
  bool sent = false;  // a receive after a send starts another step of a round trip (a kernel call of its own)
  for (size_t i = 0; i < ops.size(); ++i) {
    TileOp &o = ops[i];
    forward_views_to_loads(o.body, kernel);
    forward_views_to_loads(o.then_body, kernel);
    forward_views_to_loads(o.else_body, kernel);
    bool receives = false, sends = false;
    for_each_op(std::vector<TileOp>{o}, [&](const TileOp &x) {
      receives = receives || x.op == "csp.recv";
      sends = sends || x.op == "csp.send";
    });
    if (receives && sent) {  // (round_trip_steps cuts here): nothing forwards across
      last.clear();
      sent = false;
    }
    sent = sent || sends;
    if (o.is("store") && o.dst) {
      // A store of the view the latest store to the tensor wrote, nothing reading it between: that one is dead.
      auto it = last.find(*o.dst);
      if (it != last.end() && ops[it->second].is("store") && ops[it->second].offset == o.offset) {
        const TileLocal *a = kernel.local(ops[it->second].moved_register().value_or(""));
        const TileLocal *b = kernel.local(o.moved_register().value_or(""));
        if (a && b && a->shape == b->shape) dead.push_back(it->second);
      }
      last[*o.dst] = i;
      continue;
    }
    if (!o.is("load") || !o.src || !o.dst) {  // a nested store leaves its tensor's latest view unknown
      for_each_op(std::vector<TileOp>{o}, [&](const TileOp &x) {
        if (x.is("store") && x.dst) last.erase(*x.dst);
      });
      continue;
    }
    const std::string tensor = *o.src;
    auto it = last.find(tensor);
    const size_t prior = it == last.end() ? ops.size() : it->second;
    last[tensor] = i;
    if (prior == ops.size()) continue;
    const TileOp &before = ops[prior];
    const std::optional<std::string> reg = before.moved_register();
    const TileLocal *held = reg ? kernel.local(*reg) : nullptr, *loaded = kernel.local(*o.dst);
    if (!held || !loaded || held->shape != loaded->shape || held->dtype != loaded->dtype ||
        before.offset != o.offset || *reg == *o.dst)
      continue;
    bool changed = false;
    for (size_t j = prior + 1; j < i && !changed; ++j) changed = writes(ops[j], *reg);
    if (changed) continue;
    TileOp copy;
    copy.op = "copy";
    copy.dst = o.dst;
    copy.args = std::vector<nlohmann::json>{*reg};
    copy.span = o.span;
    o = std::move(copy);
    last[tensor] = prior;  // the view is still the one `reg` holds
  }
  std::sort(dead.begin(), dead.end());
  for (size_t d = dead.size(); d-- > 0;) ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(dead[d]));
}

/// `k` with a straight-line body (no loop at its top level) as one loop of one iteration, `for _it in
/// range(1)`, the form of a process whose iterations become tasks; `k` itself otherwise.
inline TileKernel as_one_iteration(const TileKernel &k) {
  for (const TileOp &o : k.body)
    if (o.is("for")) return k;
  TileKernel out = k;
  TileOp loop;
  loop.op = "for";
  loop.var = "_it";
  loop.start = 0;
  loop.stop = 1;
  loop.step = 1;
  loop.body = k.body;
  loop.span = k.span;
  out.body = {std::move(loop)};
  return out;
}

namespace loop_detail {

using Json = nlohmann::json;

/// An access of a tensor parameter in the loop body: its offsets' constant parts and i-coefficients.
struct Access {
  std::vector<int64_t> base, step, shape;
};

/// Offsets of `o` as base + step * i over the loop variable, or nullopt when one is not affine in i alone.
inline std::optional<Access> affine(const TileOp &o, const std::string &var, const std::vector<int64_t> &shape,
                                    const ExprEnv &constants) {
  if (!o.offset || o.offset->size() < shape.size()) return std::nullopt;
  Access a;
  a.shape = shape;  // the tile's; a view of a higher-rank tensor has leading extents 1
  a.shape.insert(a.shape.begin(), o.offset->size() - shape.size(), 1);
  for (const Json &e : *o.offset) {
    ExprEnv env = constants;
    int64_t v[3];
    for (int64_t i = 0; i < 3; ++i) {
      env.vars[var] = i;
      auto x = eval_int(e, env);
      if (!x) return std::nullopt;
      v[i] = *x;
    }
    if (v[2] - v[1] != v[1] - v[0]) return std::nullopt;
    a.base.push_back(v[0]);
    a.step.push_back(v[1] - v[0]);
  }
  return a;
}

/// Whether Expr (or operand list) `e` reads variable `var`.
inline bool mentions(const Json &e, const std::string &var) {
  if (e.is_object()) {
    if (auto v = e.find("var"); v != e.end() && *v == var) return true;
    for (const auto &[k, x] : e.items())
      if (mentions(x, var)) return true;
  } else if (e.is_array()) {
    for (const Json &x : e)
      if (mentions(x, var)) return true;
  }
  return false;
}

/// The expressions of statement `o` (not those of the statements nested in it) as one JSON array: its
/// operands, value, scalar, bounds and condition, and its offsets when `offsets`.
inline nlohmann::json expressions_of(const TileOp &o, bool offsets) {
  nlohmann::json all = nlohmann::json::array();
  if (o.args) all.push_back(nlohmann::json(*o.args));
  if (offsets && o.offset) all.push_back(nlohmann::json(*o.offset));
  for (const auto *f : {&o.value, &o.scalar, &o.start, &o.stop, &o.step, &o.cond})
    if (*f) all.push_back(**f);
  return all;
}

/// `for _core in P(1): <body>`: the one-core grid a kernel entry's workload runs its launches in.
inline WspNode single_core_grid(const IrSpan &span, std::vector<WspNode> body) {
  WspNode grid;
  grid.kind = "loop";
  grid.vars = {"_core"};
  grid.dep = "independent";
  grid.domain.type = "dense";
  grid.domain.extents = {nlohmann::json(1)};
  grid.span = span;
  grid.body = std::move(body);
  return grid;
}

/// Whether `k` is mapped over more than one core (a kernel entry's workload runs on one).
inline bool mapped_over_cores(const TileKernel &k) {
  return k.mapping && std::any_of(k.mapping->begin(), k.mapping->end(), [](int64_t m) { return m != 1; });
}

/// The values of `k`'s Constexpr parameters, to evaluate its loop bounds with.
inline ExprEnv constexpr_constants(const TileKernel &k) {
  ExprEnv env;
  for (const TileParam &p : k.params)
    if (p.type.is_constexpr() && !p.type.value.is_null()) env.params[p.name] = p.type.value;
  return env;
}

/// ceil((stop - start) / step) of a loop whose bounds an Expr gives, for step > 0 (evaluated at run time).
inline Json trips_expr(const Json &start, const Json &stop, int64_t step) {
  const Json span = Json{{"op", "sub"}, {"args", Json::array({stop, start})}};
  return step == 1 ? span
                   : Json{{"op", "floordiv"},
                          {"args", Json::array({Json{{"op", "add"}, {"args", Json::array({span, step - 1})}}, step})}};
}

/// The body of `k` as one `for` loop with static bounds: its variable, start, step and trip count (at least
/// one) under k's constexpr values.
struct StaticLoop {
  std::string var;
  int64_t start = 0, step = 1, trips = 1;
  ExprEnv constants;
};
inline std::optional<StaticLoop> static_loop(const TileKernel &k) {
  if (k.body.size() != 1 || !k.body[0].is("for")) return std::nullopt;
  const TileOp &loop = k.body[0];
  StaticLoop out;
  out.var = loop.var.value_or("");
  out.constants = constexpr_constants(k);
  auto start = eval_int(*loop.start, out.constants), stop = eval_int(*loop.stop, out.constants),
       step = eval_int(*loop.step, out.constants);
  if (!start || !stop || !step || *step <= 0 || *stop <= *start) return std::nullopt;
  out.start = *start;
  out.step = *step;
  out.trips = (*stop - *start + *step - 1) / *step;
  return out;
}

/// base + step * var as an Expr (base alone when step is 0).
inline Json constant_or(int64_t base, int64_t step, const std::string &var) {
  if (step == 0) return base;
  Json scaled = step == 1 ? Json{{"var", var}} : Json{{"op", "mul"}, {"args", Json::array({step, Json{{"var", var}}})}};
  return base == 0 ? scaled : Json{{"op", "add"}, {"args", Json::array({base, scaled})}};
}

/// `e` with {"var": var} replaced by `with`.
inline Json substitute(const Json &e, const std::string &var, const Json &with) {
  if (e.is_object()) {
    if (auto v = e.find("var"); v != e.end() && *v == var && e.size() == 1) return with;
    Json out = Json::object();
    for (const auto &[key, x] : e.items()) out[key] = substitute(x, var, with);
    return out;
  }
  if (e.is_array()) {
    Json out = Json::array();
    for (const Json &x : e) out.push_back(substitute(x, var, with));
    return out;
  }
  return e;
}

/// Substitutes {"var": var} in every Expr of `ops` (nested statements too).
inline void substitute_ops(std::vector<TileOp> &ops, const std::string &var, const Json &with) {
  for (TileOp &o : ops) {
    if (o.args) o.args = substitute(Json(*o.args), var, with).get<std::vector<Json>>();
    if (o.offset) o.offset = substitute(Json(*o.offset), var, with).get<std::vector<Json>>();
    for (auto *f : {&o.value, &o.scalar, &o.start, &o.stop, &o.step, &o.cond})
      if (*f) **f = substitute(**f, var, with);
    substitute_ops(o.body, var, with);
    substitute_ops(o.then_body, var, with);
    substitute_ops(o.else_body, var, with);
  }
}

/// start + step * {"var": var}: the value of a loop variable of `start` and `step` at iteration `var` of a loop
/// counting 0, 1, ... (a WSP loop).
inline Json iteration_value(const Json &start, const Json &step, const std::string &var) {
  return Json{{"op", "add"}, {"args", Json::array({start, Json{{"op", "mul"}, {"args", Json::array({Json{{"var", var}}, step})}}})}};
}

/// Makes loop variable `var`, which `ops` read as a value, the scalar parameter `name` of their kernel
/// (`params`), passed by `task` as `value`.
inline void loop_variable_as_scalar(std::vector<TileOp> &ops, std::vector<TileParam> &params, WspNode &task,
                                    const std::string &var, const std::string &name, const Json &value) {
  substitute_ops(ops, var, Json{{"param", name}});
  params.push_back(TileParam{name, "in", TileType{"scalar", {}, "i32", Json()}, std::nullopt});
  WspArg a;
  a.param = name;
  a.scalar = value;
  task.args.push_back(std::move(a));
}

}  // namespace loop_detail

/// Offsets through scalar registers: in a load or store whose offset reads a scalar register assigned once in
/// the kernel, earlier in the statement's own list or in one around it, from loop variables, parameters and
/// literals (or other such registers), the read becomes the register's expression: `r = 2 * i + 1` then
/// `load(x.tile(r, 0, ...))` loads at `(2 * i + 1) * 32`. A backend that needs offsets it can evaluate from
/// the loop variables (AIE streams and core loops, loop workloads) then sees them. The scalar statement stays,
/// for the register's other uses.
inline void inline_scalar_offsets(TileKernel &k) {
  using Json = nlohmann::json;
  std::map<std::string, int> assigned, loops_of;
  for_each_op(k.body, [&](const TileOp &o) {
    if (o.dst) ++assigned[*o.dst];
    if (o.is("for") && o.var) ++loops_of[*o.var];
  });
  std::set<std::string> loop_vars;  // variables of exactly one loop (a name two loops bind could be rebound between)
  for (const auto &[v, n] : loops_of)
    if (n == 1) loop_vars.insert(v);
  // Whether every variable `e` reads is a loop variable no statement assigns.
  std::function<bool(const Json &)> pure = [&](const Json &e) {
    if (e.is_object()) {
      if (auto v = e.find("var"); v != e.end())
        return v->is_string() && loop_vars.count(v->get<std::string>()) && !assigned.count(v->get<std::string>());
      for (const auto &[key, x] : e.items())
        if (!pure(x)) return false;
    } else if (e.is_array()) {
      for (const Json &x : e)
        if (!pure(x)) return false;
    }
    return true;
  };
  using Env = std::map<std::string, Json>;
  auto apply = [](Json e, const Env &env) {
    for (const auto &[reg, value] : env) e = loop_detail::substitute(e, reg, value);
    return e;
  };
  std::function<void(std::vector<TileOp> &, Env)> walk = [&](std::vector<TileOp> &ops, Env env) {
    for (TileOp &o : ops) {
      if ((o.is("load") || o.is("store")) && o.offset && !env.empty())
        for (Json &e : *o.offset) e = apply(e, env);
      if (o.is("scalar") && o.dst && o.value && assigned[*o.dst] == 1 && !loops_of.count(*o.dst)) {
        const TileLocal *l = k.local(*o.dst);
        Json value = apply(*o.value, env);
        if (l && l->is_scalar() && pure(value)) env[*o.dst] = std::move(value);
      }
      walk(o.body, env);
      walk(o.then_body, env);
      walk(o.else_body, env);
    }
  };
  walk(k.body, {});
}

/// A kernel entry whose body is one loop `for i in range(...)` (or a perfect nest of up to three, `for i: for
/// j: ...`, each loop's body the next loop) moving tiles of its tensors at offsets affine in the nest's
/// variables, with nothing carried from one iteration to the next, as a workload of its name and parameters
/// `for _ in P(1): for i in P.seq(n): [for i1 in P.seq(n1): ...] <kernel>__iter(views of the iteration)`:
/// `body` is the iteration kernel, every access within its view (at a constant offset, or at an offset in
/// the variables of loops inside the iteration, a K-loop's). backend-aie streams such a loop through a
/// core's FIFOs; backend-pto runs each iteration as tasks it can split between core types.
struct LoopWorkload {
  TileKernel body;
  WspWorkload workload;
  int64_t trips = 1;  ///< iterations in all; 0 when the outer loop's stop is known only at run time
};

namespace loop_detail {

/// A loop with static bounds: its variable and range.
struct NestLoop {
  std::string var;
  int64_t start = 0, step = 1, trips = 1;
};

/// The static range of `for` statement `loop` under `constants`, or nullopt.
inline std::optional<NestLoop> static_range(const TileOp &loop, const ExprEnv &constants) {
  if (!loop.start || !loop.stop || !loop.step) return std::nullopt;
  auto start = eval_int(*loop.start, constants), stop = eval_int(*loop.stop, constants),
       step = eval_int(*loop.step, constants);
  if (!start || !stop || !step || *step <= 0 || *stop <= *start) return std::nullopt;
  return NestLoop{loop.var.value_or(""), *start, *step, (*stop - *start + *step - 1) / *step};
}

/// The access of a tensor by a load or store inside the iteration: per dimension the lowest first element
/// over the values of the loops around it inside the iteration at nest variables 0 (`base`), the extent
/// its accesses span (`shape`), and per nest variable the elements the access moves per unit (`step`).
struct NestAccess {
  std::vector<int64_t> base, shape;
  std::vector<std::vector<int64_t>> step;  ///< [nest variable][dimension]
  bool inner = false;                      ///< an offset reads a loop variable of the iteration
};

/// The access of `o`, whose tile has `shape`, inside loops `inner` of the iteration, or nullopt when an offset
/// is not affine in the nest's variables with coefficients the inner loops do not change (or reads a
/// variable of unknown range).
inline std::optional<NestAccess> nest_access(const TileOp &o, const std::vector<NestLoop> &nest,
                                             const std::vector<std::optional<NestLoop>> &inner,
                                             const std::vector<std::string> &inner_vars,
                                             const std::vector<int64_t> &shape, const ExprEnv &constants) {
  using Json = nlohmann::json;
  if (!o.offset || o.offset->size() < shape.size()) return std::nullopt;
  NestAccess a;
  a.shape = shape;  // the tile's; a view of a higher-rank tensor has leading extents 1
  a.shape.insert(a.shape.begin(), o.offset->size() - shape.size(), 1);
  const size_t rank = o.offset->size();
  // The inner loops an offset reads, and every combination of their values (at most 4096).
  std::vector<const NestLoop *> loops;
  for (size_t l = 0; l < inner.size(); ++l)
    if (mentions(Json(*o.offset), inner_vars[l])) {
      if (!inner[l]) return std::nullopt;
      loops.push_back(&*inner[l]);
    }
  int64_t combos = 1;
  for (const NestLoop *l : loops)
    if (__builtin_mul_overflow(combos, l->trips, &combos) || combos > 4096) return std::nullopt;
  a.inner = !loops.empty();
  a.base.assign(rank, INT64_MAX);
  std::vector<int64_t> hi(rank, INT64_MIN);
  a.step.assign(nest.size(), std::vector<int64_t>(rank, 0));
  for (int64_t c = 0; c < combos; ++c) {
    ExprEnv env = constants;
    for (int64_t r = c, l = static_cast<int64_t>(loops.size()) - 1; l >= 0; --l) {
      const NestLoop &x = *loops[static_cast<size_t>(l)];
      env.vars[x.var] = x.start + (r % x.trips) * x.step;
      r /= x.trips;
    }
    auto at = [&](const std::vector<int64_t> &values, size_t d) -> std::optional<int64_t> {
      ExprEnv e = env;
      for (size_t v = 0; v < nest.size(); ++v) e.vars[nest[v].var] = values[v];
      return eval_int((*o.offset)[d], e);
    };
    for (size_t d = 0; d < rank; ++d) {
      std::vector<int64_t> zero(nest.size(), 0), ones(nest.size(), 1);
      auto b = at(zero, d), all = at(ones, d);
      if (!b || !all) return std::nullopt;
      int64_t sum = *b;
      for (size_t v = 0; v < nest.size(); ++v) {
        std::vector<int64_t> one = zero, two = zero;
        one[v] = 1;
        two[v] = 2;
        auto x1 = at(one, d), x2 = at(two, d);
        if (!x1 || !x2 || *x2 - *x1 != *x1 - *b) return std::nullopt;
        const int64_t coefficient = *x1 - *b;
        if (c > 0 && coefficient != a.step[v][d]) return std::nullopt;  // the inner loops change how it moves
        a.step[v][d] = coefficient;
        sum += coefficient;
      }
      if (*all != sum) return std::nullopt;  // a product of nest variables
      a.base[d] = std::min(a.base[d], *b);
      hi[d] = std::max(hi[d], *b + a.shape[d]);
    }
  }
  for (size_t d = 0; d < rank; ++d) a.shape[d] = hi[d] - a.base[d];
  return a;
}

/// base + sum of coefficient * variable as an Expr (constant_or for one variable).
inline nlohmann::json affine_sum(int64_t base, const std::vector<std::pair<int64_t, std::string>> &terms) {
  using Json = nlohmann::json;
  std::vector<std::pair<int64_t, std::string>> used;
  for (const auto &t : terms)
    if (t.first != 0) used.push_back(t);
  if (used.size() == 1) return constant_or(base, used[0].first, used[0].second);
  Json out = base;
  for (const auto &[c, v] : used) {
    Json scaled = c == 1 ? Json{{"var", v}} : Json{{"op", "mul"}, {"args", Json::array({c, Json{{"var", v}}})}};
    out = out == Json(0) ? scaled : Json{{"op", "add"}, {"args", Json::array({out, scaled})}};
  }
  return out;
}

}  // namespace loop_detail

/// `ops` with every `for` loop of static bounds and a negative step (`range(15, -1, -1)`) counting up instead,
/// its variable read as start + step * var in its body: `for i in range(0, 16): ... X.tile(15 - i ...)`. The
/// iterations run in the same order; loop workloads (which walk a loop's iterations forwards) then take it.
inline void forward_static_loops(std::vector<TileOp> &ops, const ExprEnv &constants) {
  using Json = nlohmann::json;
  for (TileOp &o : ops) {
    forward_static_loops(o.body, constants);
    forward_static_loops(o.then_body, constants);
    forward_static_loops(o.else_body, constants);
    if (!o.is("for") || !o.var || !o.start || !o.stop || !o.step) continue;
    auto start = eval_int(*o.start, constants), stop = eval_int(*o.stop, constants), step = eval_int(*o.step, constants);
    if (!start || !stop || !step || *step >= 0 || *stop >= *start) continue;
    const int64_t trips = (*start - *stop + (-*step) - 1) / (-*step);
    loop_detail::substitute_ops(o.body, *o.var, loop_detail::iteration_value(*start, *step, *o.var));
    o.start = Json(0);
    o.stop = Json(trips);
    o.step = Json(1);
  }
}

/// The loop workload of `k`, or nullopt with `why` set. With `runtime_stop`, the outer loop's stop may be known
/// only at run time (`for i in range(n)`, n a scalar parameter): the workload loop's extent is then that Expr
/// (at least 0) and `trips` is 0 (known at run time).
inline std::optional<LoopWorkload> loop_workload(const TileKernel &kernel, std::string *why,
                                                 bool runtime_stop = false) {
  using namespace loop_detail;
  using Json = nlohmann::json;
  TileKernel k = kernel;
  forward_static_loops(k.body, loop_detail::constexpr_constants(k));  // (range(15, -1, -1) as well)
  inline_scalar_offsets(k);  // (offsets through scalar registers of the loop variables are affine too)
  auto no = [&](std::string reason) -> std::optional<LoopWorkload> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (mapped_over_cores(k)) return no("it is mapped over several cores");
  if (k.body.size() != 1 || !k.body[0].is("for")) return no("its body is not one `for` loop");
  std::optional<StaticLoop> sl = static_loop(k);
  std::optional<Json> runtime_extent;  // ceil((stop - start) / step), at least 0, evaluated by the host
  if (!sl && runtime_stop) {
    const TileOp &loop = k.body[0];
    StaticLoop r;
    r.var = loop.var.value_or("");
    r.constants = constexpr_constants(k);
    auto start = eval_int(*loop.start, r.constants), step = eval_int(*loop.step, r.constants);
    if (start && step && *step > 0 && loop.stop && !eval_int(*loop.stop, r.constants)) {
      r.start = *start;
      r.step = *step;
      runtime_extent = Json{{"op", "max"}, {"args", Json::array({0, trips_expr(*start, *loop.stop, *step)})}};
      sl = std::move(r);
    }
  }
  if (!sl) return no("its loop bounds are not static");
  const ExprEnv &constants = sl->constants;
  // The nest: the loop and, while a loop's body is one loop of static bounds, that loop too.
  std::vector<NestLoop> nest = {NestLoop{sl->var, sl->start, sl->step, sl->trips}};
  const TileOp *innermost = &k.body[0];
  while (nest.size() < 3 && innermost->body.size() == 1 && innermost->body[0].is("for")) {
    auto r = static_range(innermost->body[0], constants);
    if (!r || std::any_of(nest.begin(), nest.end(), [&](const NestLoop &l) { return l.var == r->var; })) break;
    nest.push_back(*r);
    innermost = &innermost->body[0];
  }
  const std::vector<TileOp> &iteration = innermost->body;
  std::set<std::string> nest_vars;
  for (const NestLoop &l : nest) nest_vars.insert(l.var);
  // Registers: each iteration defines what it reads (nothing carried from one iteration to the next).
  std::set<std::string> carried, defined;
  register_inputs(iteration, k, carried, defined);
  if (!carried.empty()) return no("register '" + *carried.begin() + "' is carried from one iteration to the next");
  // Each tensor's accesses, at offsets affine in the nest's variables, moving alike; the view of an
  // iteration covers them all, over the values of the loops inside the iteration too.
  std::map<std::string, std::vector<NestAccess>> accesses;
  std::string problem;
  std::set<std::string> value_use;  // nest variables read as values (scalar parameters of the iteration)
  std::vector<std::optional<NestLoop>> inner;
  std::vector<std::string> inner_vars;
  std::function<bool(const std::vector<TileOp> &)> walk = [&](const std::vector<TileOp> &ops) {
    for (const TileOp &o : ops) {
      if (o.is("load") || o.is("store")) {
        const std::string tensor = o.moved_tensor();
        const TileParam *p = k.param(tensor);
        const TileLocal *l = k.local(o.moved_register().value_or(""));
        if (!p || !p->type.is_tensor() || !l) {
          problem = "a statement moves '" + tensor + "' in a form it cannot stream";
          return false;
        }
        auto a = nest_access(o, nest, inner, inner_vars, l->shape, constants);
        if (!a || a->base.size() != p->type.shape.size()) {
          problem = "the offsets of '" + tensor + "' are not affine in '" + nest[0].var + "'" +
                    (nest.size() > 1 ? " and the loops nested in it" : " alone");
          return false;
        }
        accesses[tensor].push_back(*a);
        continue;
      }
      // Any use of a nest variable but an offset is a value the iteration kernel does not have.
      const Json all = expressions_of(o, false);
      for (const std::string &v : nest_vars)
        if (mentions(all, v)) value_use.insert(v);
      if (o.is("for")) {
        inner.push_back(static_range(o, constants));
        inner_vars.push_back(o.var.value_or(""));
      }
      const bool ok = walk(o.body) && walk(o.then_body) && walk(o.else_body);
      if (o.is("for")) {
        inner.pop_back();
        inner_vars.pop_back();
      }
      if (!ok) return false;
    }
    return true;
  };
  if (!walk(iteration)) return no(problem);
  LoopWorkload out;
  TileKernel &body = out.body;
  body.name = k.name + "__iter";
  body.kind = "kernel";
  body.span = k.span;
  body.locals = k.locals;
  body.body = iteration;
  WspWorkload w = single_launch_workload(k);
  WspNode task = w.body.at(0);
  task.kernel = body.name;
  task.span = innermost->span.value_or(k.span);
  // The workload's loop variables: "i" for the outer loop, "i1", "i2" for the loops nested in it.
  std::vector<std::string> wvars;
  for (size_t v = 0; v < nest.size(); ++v) wvars.push_back(v == 0 ? "i" : "i" + std::to_string(v));
  std::map<std::string, std::vector<int64_t>> view_base;  // tensor -> the view's first element at 0
  for (const TileParam &p : k.params) {
    TileParam q = p;
    auto it = accesses.find(p.name);
    bool moved = false;  // (anywhere in the kernel)
    for_each_op(k.body, [&](const TileOp &o) { moved = moved || o.moved_tensor() == p.name; });
    if (p.type.is_tensor() && !moved) {  // a tensor the kernel never moves: no iteration takes it
      std::erase_if(task.args, [&](const WspArg &a) { return a.param == p.name; });
      continue;
    }
    if (p.type.is_tensor() && it != accesses.end()) {
      const std::vector<NestAccess> &as = it->second;
      const size_t rank = p.type.shape.size();
      std::vector<int64_t> lo(rank, INT64_MAX), hi(rank, INT64_MIN);
      for (const NestAccess &a : as) {
        if (a.step != as[0].step) return no("'" + p.name + "' is moved at offsets that advance by different steps");
        for (size_t d = 0; d < rank; ++d) {
          lo[d] = std::min(lo[d], a.base[d]);
          hi[d] = std::max(hi[d], a.base[d] + a.shape[d]);
        }
      }
      std::vector<int64_t> shape(rank);
      for (size_t d = 0; d < rank; ++d) shape[d] = hi[d] - lo[d];
      bool moves = false;
      for (const auto &per_var : as[0].step)
        moves = moves || std::any_of(per_var.begin(), per_var.end(), [](int64_t x) { return x != 0; });
      // A tensor every iteration reads or writes at the same part of (`X[0:8, :]` of a [144, 128] X): that
      // part, not the tensor whole (a core holds 8 rows). Read whole (a layernorm's gamma), it stays whole.
      const bool part = shape != p.type.shape;
      if (moves || part) {  // the view of iteration (t, t1, ...): lo + sum of step * (start + t * loop step)
        q.type.shape = shape;
        q.local_shape = std::nullopt;
        view_base[p.name] = lo;
        for (WspArg &a : task.args) {
          if (a.param != p.name) continue;
          a.shape = shape;
          for (size_t d = 0; d < rank; ++d) {
            int64_t base = lo[d];
            std::vector<std::pair<int64_t, std::string>> terms;
            for (size_t v = 0; v < nest.size(); ++v) {
              base += as[0].step[v][d] * nest[v].start;
              terms.emplace_back(as[0].step[v][d] * nest[v].step, wvars[v]);
            }
            a.offset[d] = affine_sum(base, terms);
          }
        }
      }
    }
    body.params.push_back(q);
  }
  // Inside the iteration kernel every access is within its view: at a constant offset, or at the offset
  // the loops inside the iteration give it (the nest's variables at 0, less the view's first element).
  std::vector<std::optional<NestLoop>> no_inner;
  std::function<void(std::vector<TileOp> &, std::vector<std::optional<NestLoop>> &, std::vector<std::string> &)> rebase =
      [&](std::vector<TileOp> &ops, std::vector<std::optional<NestLoop>> &in, std::vector<std::string> &in_vars) {
        for (TileOp &o : ops) {
          if (o.is("load") || o.is("store")) {
            const std::string tensor = o.moved_tensor();
            const TileLocal *l = k.local(o.moved_register().value_or(""));
            const NestAccess a = *nest_access(o, nest, in, in_vars, l->shape, constants);  // (checked above)
            auto b = view_base.find(tensor);
            for (size_t d = 0; d < a.base.size(); ++d) {
              const int64_t first = b == view_base.end() ? 0 : b->second[d];
              Json e = (*o.offset)[d];
              bool reads_inner = false;
              for (const std::string &v : in_vars) reads_inner = reads_inner || mentions(e, v);
              if (!reads_inner) {
                (*o.offset)[d] = a.base[d] - first;
                continue;
              }
              for (const NestLoop &n : nest) e = substitute(e, n.var, Json(0));
              (*o.offset)[d] = first == 0 ? e : Json{{"op", "sub"}, {"args", Json::array({e, first})}};
            }
          }
          if (o.is("for")) {
            in.push_back(static_range(o, constants));
            in_vars.push_back(o.var.value_or(""));
          }
          rebase(o.body, in, in_vars);
          rebase(o.then_body, in, in_vars);
          rebase(o.else_body, in, in_vars);
          if (o.is("for")) {
            in.pop_back();
            in_vars.pop_back();
          }
        }
      };
  std::vector<std::string> no_vars;
  rebase(body.body, no_inner, no_vars);
  for (size_t v = 0; v < nest.size(); ++v) {
    if (!value_use.count(nest[v].var)) continue;
    // the nest variable read as a value (a per-row scale): the iteration's start + step * t
    std::string name = "it_" + nest[v].var;
    while (body.param(name) || body.local(name)) name += "_";
    loop_variable_as_scalar(body.body, body.params, task, nest[v].var, name,
                            iteration_value(nest[v].start, nest[v].step, wvars[v]));
  }
  WspNode inner_node = task;
  for (size_t v = nest.size(); v-- > 0;) {
    WspNode seq;
    seq.kind = "loop";
    seq.vars = {wvars[v]};
    seq.dep = "sequential";
    seq.domain.type = "seq";
    seq.domain.extent = v == 0 && runtime_extent ? *runtime_extent : Json(nest[v].trips);
    seq.span = task.span;
    seq.body = {std::move(inner_node)};
    inner_node = std::move(seq);
    out.trips *= v == 0 && runtime_extent ? 0 : nest[v].trips;
  }
  w.body = {single_core_grid(task.span, {std::move(inner_node)})};
  out.workload = std::move(w);
  return out;
}

/// A kernel entry whose loops of static range (each at the top of its body; statements around them stay) have
/// their iterations cut where a condition of an `if` directly in a loop's body changes value: `for i in
/// range(32): ... if i == 0: A else: B ...` becomes `for i in range(0, 1): ... A ...` then `for i in range(1,
/// 32): ... B ...`, each loop with the branch its iterations take in place of the `if`. The `if`s that count:
/// their conditions read the loop variable and constants only (what the iteration number decides), and one of
/// their branches moves a view that leaves its tensor at some iteration of the loop (or one the iteration
/// number does not place); at most `max_loops` loops from one (`i % 3 == 0` changes every iteration: that
/// loop stays whole). A backend that moves each iteration's tiles whatever branch it takes (AIE's streams)
/// then moves only what each loop's iterations read: the first iteration of `X.tile(i - 1)` under `else`
/// would otherwise move the tile before the tensor. An `if` whose branches move views inside their tensors
/// (`if i % 3 != 1:`, storing one result or another to Y.tile(i)) stays in the loop. An `if` in a branch a
/// piece takes is cut at in turn (`if i > 0: if i < 31: ...`). nullopt: nothing cut.
inline std::optional<TileKernel> split_loop_at_conditions(const TileKernel &kernel, size_t max_loops = 3) {
  const ExprEnv constants = loop_detail::constexpr_constants(kernel);
  TileKernel k = kernel;
  forward_static_loops(k.body, constants);  // (range(7, -1, -1) as well)
  // Whether a load or store in `ops` moves, at iteration t of `range`, a view outside its tensor, or one whose
  // offsets the iteration number alone does not give.
  auto leaves_at = [&](const std::vector<TileOp> &ops, const loop_detail::NestLoop &range, int64_t t) {
    bool out = false;
    ExprEnv env = constants;
    env.vars[range.var] = range.start + t * range.step;
    for_each_op(ops, [&](const TileOp &o) {
      if (out || !(o.is("load") || o.is("store"))) return;
      const TileParam *p = k.param(o.moved_tensor());
      const TileLocal *l = k.local(o.moved_register().value_or(""));
      if (!p || !p->type.is_tensor() || !l || !o.offset || o.offset->size() != p->type.shape.size() ||
          l->shape.size() > o.offset->size()) {
        out = true;
        return;
      }
      // (the tile's shape; a view of a higher-rank tensor has leading extents 1)
      std::vector<int64_t> shape = l->shape;
      shape.insert(shape.begin(), o.offset->size() - l->shape.size(), 1);
      for (size_t d = 0; d < shape.size() && !out; ++d) {
        const std::optional<int64_t> at = eval_int((*o.offset)[d], env);
        out = !at || *at < 0 || *at + shape[d] > p->type.shape[d];
      }
    });
    return out;
  };
  // The loop's pieces, or nullopt: each a copy of `loop` over a run of iterations, the decided ifs inlined.
  auto cut = [&](const TileOp &loop) -> std::optional<std::vector<TileOp>> {
    if (!loop.is("for") || !loop.var) return std::nullopt;
    const std::optional<loop_detail::NestLoop> range = loop_detail::static_range(loop, constants);
    if (!range || range->trips > 4096) return std::nullopt;
    // The decided `if`s: the value of each one's condition at every iteration; `bad`, the iterations where a
    // view of one of their branches leaves its tensor.
    std::vector<size_t> decided;
    std::vector<std::vector<bool>> values;
    std::vector<bool> bad(static_cast<size_t>(range->trips), false);
    for (size_t s = 0; s < loop.body.size(); ++s) {
      const TileOp &o = loop.body[s];
      if (!o.is("if") || !o.cond) continue;
      std::vector<bool> leaving(static_cast<size_t>(range->trips));
      for (int64_t t = 0; t < range->trips; ++t)
        leaving[static_cast<size_t>(t)] =
            leaves_at(o.then_body, *range, t) || leaves_at(o.else_body, *range, t);
      if (std::find(leaving.begin(), leaving.end(), true) == leaving.end()) continue;
      std::vector<bool> at;
      ExprEnv env = constants;
      for (int64_t t = 0; t < range->trips; ++t) {
        env.vars[range->var] = range->start + t * range->step;
        const std::optional<int64_t> v = eval_int(*o.cond, env);
        if (!v) break;
        at.push_back(*v != 0);
      }
      if (static_cast<int64_t>(at.size()) != range->trips) continue;  // not decided by the iteration alone
      decided.push_back(s);
      values.push_back(std::move(at));
      for (size_t t = 0; t < bad.size(); ++t)
        bad[t] = bad[t] || leaving[t];
    }
    if (decided.empty()) return std::nullopt;
    // Runs of iterations that take the same branches.
    std::vector<std::pair<int64_t, int64_t>> runs;  // [first, end) iteration numbers
    auto same = [&](int64_t a, int64_t b) {
      for (const auto &v : values)
        if (v[static_cast<size_t>(a)] != v[static_cast<size_t>(b)]) return false;
      return true;
    };
    for (int64_t t = 0; t < range->trips; ++t)
      if (runs.empty() || !same(runs.back().first, t)) runs.emplace_back(t, t + 1);
      else runs.back().second = t + 1;
    // A condition changing more often (`if i % 2 == 1: X.tile(i - 1)`): only the iterations where a view of
    // a decided `if` leaves its tensor need their branches decided; they are peeled off in runs of one
    // branch choice, and the loop keeps its `if`s over the iterations between them, where every view of
    // both branches lies inside its tensor.
    std::vector<bool> kept_whole;  // per run: the `if`s stay (no view leaves in it)
    if (runs.size() > max_loops) {
      runs.clear();
      for (int64_t t = 0; t < range->trips; ++t) {
        const bool b = bad[static_cast<size_t>(t)];
        if (!runs.empty() && kept_whole.back() == !b && (!b || same(runs.back().first, t)))
          runs.back().second = t + 1;
        else {
          runs.emplace_back(t, t + 1);
          kept_whole.push_back(!b);
        }
      }
    }
    kept_whole.resize(runs.size(), false);
    if (runs.size() < 2 || runs.size() > max_loops) return std::nullopt;
    std::vector<TileOp> pieces;
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto &[first, end] = runs[r];
      TileOp part = loop;
      part.start = range->start + first * range->step;
      part.stop = range->start + end * range->step;
      part.step = range->step;
      part.body.clear();
      for (size_t s = 0; s < loop.body.size(); ++s) {
        auto d = std::find(decided.begin(), decided.end(), s);
        if (d == decided.end() || kept_whole[r]) {
          part.body.push_back(loop.body[s]);
          continue;
        }
        const TileOp &branch_of = loop.body[s];
        const bool taken = values[static_cast<size_t>(d - decided.begin())][static_cast<size_t>(first)];
        for (const TileOp &o : taken ? branch_of.then_body : branch_of.else_body) part.body.push_back(o);
      }
      pieces.push_back(std::move(part));
    }
    return pieces;
  };
  // A piece with another such `if` in a branch now inlined (`if i > 0: if i < 31: ...X.tile(i + 1)`) is cut
  // again, while the loop's pieces stay within max_loops.
  auto cut_nested = [&](const TileOp &loop) {
    std::optional<std::vector<TileOp>> pieces = cut(loop);
    for (bool again = pieces.has_value(); again;) {
      again = false;
      for (size_t i = 0; i < pieces->size() && !again; ++i) {
        std::optional<std::vector<TileOp>> more = cut((*pieces)[i]);
        if (!more || pieces->size() - 1 + more->size() > max_loops) continue;
        const auto at = pieces->begin() + static_cast<std::ptrdiff_t>(i);
        pieces->insert(pieces->erase(at), more->begin(), more->end());
        again = true;
      }
    }
    return pieces;
  };
  // Every loop of the body that cuts, in place (statements before, between and after them stay).
  TileKernel out = k;
  out.body.clear();
  bool any = false;
  for (const TileOp &o : k.body) {
    std::optional<std::vector<TileOp>> pieces = cut_nested(o);
    any = any || pieces.has_value();
    if (pieces)
      out.body.insert(out.body.end(), pieces->begin(), pieces->end());
    else
      out.body.push_back(o);
  }
  if (!any) return std::nullopt;
  return out;
}

/// A kernel entry whose body is a sequence of loops and statements — loops one after another, a loop whose
/// iterations carry tile registers (an accumulator, an online softmax's running max and sum), statements before
/// and after — as the workload of its name launching a kernel per part in order: `<k>__<p>` for a run of
/// statements, and for a loop the iterations of `<k>__<p>__iter` over the views each reads
/// (htp::loop_workload), `for i in P.seq(n)` (nested for a perfect nest). A register crossing from one part to
/// a later one, or from an iteration to the next, travels through an intermediate tensor `carry_<register>`:
/// stored where it is defined (at the end of each iteration), loaded where it is read (at the start of each).
/// Each part is then a kernel of its own: backend-pto splits each between its cube and vector cores,
/// backend-aie runs each within a core's memory.
struct EntryParts {
  std::vector<TileKernel> kernels;  ///< the parts' kernels, in launch order
  WspWorkload workload;
};

/// The registers of `k` that statements `ops` name (a part's, of a kernel cut into parts).
inline std::vector<TileLocal> locals_used(const TileKernel &k, const std::vector<TileOp> &ops) {
  std::set<std::string> uses, defs;
  for (const TileOp &o : ops) registers_of(o, k, uses, defs);
  std::vector<TileLocal> out;
  for (const TileLocal &l : k.locals)
    if (uses.count(l.name) || defs.count(l.name)) out.push_back(l);
  return out;
}

/// The tile registers that cross between the parts of a kernel body cut into parts that run one after another
/// (a part: a run of statements, or one loop, whose iterations are cut apart too), as EntryParts and ProcessCut
/// cut them: each travels through a tensor `carry_<register>`, loaded by a part that reads it from before (at
/// the start of each iteration of a loop) and stored by one that defines it for a later part or its own next
/// iteration (at the end of each iteration).
struct CarryPlan {
  std::set<std::string> handed;                     ///< the carried registers
  std::vector<std::set<std::string>> reads, writes;  ///< per part: carries loaded at its start, stored at its end
  std::map<std::string, std::string> carry;          ///< register -> its carry tensor (a name `k` does not use)
  /// Per part: scalar statements it computes again first (at the start of each iteration of a loop): a
  /// scalar register set once before, from parameters and constants (`c = s * 2.0`), is recomputed where it
  /// is read instead of carried.
  std::vector<std::vector<TileOp>> recompute;
};

/// The carries of `parts` of `k` (a part is a loop when its first statement is a `for`), or nullopt with `why`
/// set: a register read before any part defines it, or defined on some paths only and read after them, or a
/// scalar register crossing (carries are tiles).
inline std::optional<CarryPlan> plan_carries(const TileKernel &k, const std::vector<std::vector<TileOp>> &parts,
                                             std::string *why) {
  auto no = [&](std::string reason) -> std::optional<CarryPlan> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  const size_t n = parts.size();
  auto is_loop = [&](size_t p) { return parts[p].front().is("for"); };
  // Registers each part needs from before it (for a loop: from before it or the iteration before) and defines.
  std::vector<std::set<std::string>> inputs(n), defs(n), maybe(n);
  for (size_t p = 0; p < n; ++p)
    register_inputs(is_loop(p) ? parts[p].front().body : parts[p], k, inputs[p], defs[p], &maybe[p]);
  CarryPlan out;
  out.reads.resize(n);
  out.writes.resize(n);
  std::set<std::string> defined;
  for (size_t p = 0; p < n; ++p) {
    for (const std::string &r : inputs[p]) {
      if (!defined.count(r)) return no("register '" + r + "' is read before it is defined");
      out.handed.insert(r);
    }
    defined.insert(defs[p].begin(), defs[p].end());
  }
  // What each part stores: the registers it defines that a later part, or its own next iteration, reads. One
  // it defines on some paths only is read first, so the others store the value it came in with.
  for (size_t p = 0; p < n; ++p)
    for (const std::string &r : defs[p]) {
      bool later = is_loop(p) && inputs[p].count(r);
      for (size_t q = p + 1; q < n && !later; ++q) later = inputs[q].count(r) > 0;
      if (!later) continue;
      out.writes[p].insert(r);
      if (!maybe[p].count(r) || inputs[p].count(r)) continue;
      bool before = false;
      for (size_t q = 0; q < p && !before; ++q) before = defs[q].count(r) > 0;
      if (!before) return no("register '" + r + "' is defined on some paths only and read after them");
      inputs[p].insert(r);
      out.handed.insert(r);
    }
  // Scalar registers set once, at the top of a run of statements, from parameters, constants and other such
  // registers: the parts reading them compute them again (in definition order) instead of carrying them.
  std::map<std::string, std::pair<size_t, size_t>> set_once;  // register -> (part, statement)
  {
    std::map<std::string, int> sets;
    for_each_op(k.body, [&](const TileOp &o) {
      if (o.dst && k.local(*o.dst)) ++sets[*o.dst];
    });
    for (size_t p = 0; p < n; ++p)
      if (!is_loop(p))
        for (size_t i = 0; i < parts[p].size(); ++i) {
          const TileOp &o = parts[p][i];
          const TileLocal *l = o.dst ? k.local(*o.dst) : nullptr;
          if (!o.is("scalar") || !l || !l->is_scalar() || sets[*o.dst] != 1 || !o.value) continue;
          std::set<std::string> names;
          tile_detail::names_in(*o.value, names);
          std::function<bool(const nlohmann::json &)> reads_data = [&](const nlohmann::json &e) {
            if (e.is_object() && e.contains("read")) return true;
            if (e.is_object() || e.is_array())
              for (const auto &x : e)
                if (reads_data(x)) return true;
            return false;
          };
          const bool pure = !reads_data(*o.value) &&
                            std::all_of(names.begin(), names.end(), [&](const std::string &x) {
                              return !k.local(x) || set_once.count(x);
                            });
          if (pure) set_once[*o.dst] = {p, i};
        }
  }
  out.recompute.resize(n);
  for (size_t p = 0; p < n; ++p) {
    std::set<std::string> need;  // the recomputed registers part p reads from before it, with what they read
    std::function<void(const std::string &)> add = [&](const std::string &r) {
      if (!need.insert(r).second) return;
      const auto [q, i] = set_once.at(r);
      std::set<std::string> names;
      tile_detail::names_in(*parts[q][i].value, names);
      for (const std::string &x : names)
        if (set_once.count(x)) add(x);
    };
    for (const std::string &r : inputs[p])
      if (set_once.count(r) && set_once.at(r).first < p) add(r);
    std::vector<std::pair<size_t, size_t>> at;
    for (const std::string &r : need) at.push_back(set_once.at(r));
    std::sort(at.begin(), at.end());
    for (const auto &[q, i] : at) out.recompute[p].push_back(parts[q][i]);
  }
  for (const auto &[r, where] : set_once) out.handed.erase(r);
  for (const std::string &r : out.handed)
    if (const TileLocal *l = k.local(r); !l || l->is_scalar() || l->shape.empty()) {
      std::string line;  // where it is set first
      for_each_op(k.body, [&](const TileOp &o) {
        if (line.empty() && o.dst == r && o.span) line = " (set on line " + std::to_string(o.span->line) + ")";
      });
      return no("scalar register '" + r + "'" + line + " is carried across a loop's iterations or around it; only "
                "tile registers are carried: compute it where it is used, from the loop variable, or keep it in a tile");
    }
  for (size_t p = 0; p < n; ++p) {
    for (const std::string &x : inputs[p])
      if (out.handed.count(x)) out.reads[p].insert(x);
    std::erase_if(out.writes[p], [&](const std::string &x) { return !out.handed.count(x); });
  }
  for (const std::string &r : out.handed) {
    std::string name = "carry_" + r;
    while (k.param(name) || k.local(name)) name += "_";
    out.carry[r] = name;
  }
  return out;
}

/// Part `ops` of `k` as a kernel `name` of its own: its statements framed by the loads of the carries it reads
/// (`reads`) and the stores of those it writes (`stores`) — inside the loop, at the start and end of each
/// iteration, when `ops` is one loop and `per_iteration` is set; its registers; the parameters of `k` it names
/// (and every compile-time one); and a tensor parameter per carry it moves (in, out or inout).
inline TileKernel carry_framed_kernel(const TileKernel &k, const std::string &name, const std::vector<TileOp> &ops,
                                      size_t part, const CarryPlan &plan, bool per_iteration = false) {
  const std::set<std::string> &reads = plan.reads.at(part), &stores = plan.writes.at(part);
  auto carry_op = [&](const std::string &op, const std::string &r) {
    TileOp o;
    o.op = op;
    if (op == "load") {
      o.dst = r;
      o.src = plan.carry.at(r);
    } else {
      o.dst = plan.carry.at(r);
      o.value = r;
    }
    o.offset = std::vector<nlohmann::json>(k.local(r)->shape.size(), nlohmann::json(0));
    return o;
  };
  auto frame = [&](const std::vector<TileOp> &body) {
    std::vector<TileOp> out = plan.recompute.at(part);
    for (const std::string &r : reads) out.push_back(carry_op("load", r));
    out.insert(out.end(), body.begin(), body.end());
    for (const std::string &r : stores) out.push_back(carry_op("store", r));
    return out;
  };
  TileKernel pk;
  pk.name = name;
  pk.kind = "kernel";
  pk.span = k.span;
  if (per_iteration && ops.size() == 1 && ops.front().is("for")) {
    TileOp loop = ops.front();
    loop.body = frame(loop.body);
    pk.body = {std::move(loop)};
  } else {
    pk.body = frame(ops);
  }
  pk.locals = locals_used(k, pk.body);
  std::set<std::string> used;  // tensors moved and names read ({"param": n} among them)
  for_each_op(pk.body, [&](const TileOp &o) {
    for (const auto *f : {&o.src, &o.dst})
      if (*f) used.insert(**f);
    tile_detail::names_in(loop_detail::expressions_of(o, true), used);
  });
  for (const TileParam &q : k.params)
    if (used.count(q.name) || q.type.is_constexpr()) pk.params.push_back(q);
  std::set<std::string> moved(reads.begin(), reads.end());
  moved.insert(stores.begin(), stores.end());
  for (const std::string &r : moved) {
    const bool in = reads.count(r) > 0, o = stores.count(r) > 0;
    pk.params.push_back(TileParam{plan.carry.at(r), in && o ? "inout" : in ? "in" : "out",
                                  TileType{"tensor", k.local(r)->shape, k.local(r)->dtype, nlohmann::json()},
                                  std::nullopt});
  }
  return pk;
}

/// A CSP process whose body has statements before or after its one counted loop (an accumulator set up before
/// it, stored or sent after it), or whose iterations carry a tile register to the next, cut into kernels run
/// one after another: `<k>__before` once, `k` itself (its loop; each iteration framed by the carries), then
/// `<k>__after` once. A register crossing travels through a tensor `carry_<register>` (CarryPlan), a tensor
/// parameter of each kernel that moves it, which the backend binds to storage of its own per process replica.
struct ProcessCut {
  std::optional<TileKernel> before, after;
  TileKernel iteration;
  std::vector<TileParam> carries;  ///< the carry tensors (dir: inout)
};

/// The cut of process function `k`, or nullopt with `why` set when its body is not statements around one
/// loop (a body that is one loop carrying nothing, or straight-line code, needs no cut: `why` is empty then).
inline std::optional<ProcessCut> cut_process(const TileKernel &k, std::string *why) {
  auto no = [&](std::string reason) -> std::optional<ProcessCut> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::vector<size_t> loops;
  for (size_t i = 0; i < k.body.size(); ++i)
    if (k.body[i].is("for")) loops.push_back(i);
  if (loops.empty()) return no("");
  if (loops.size() > 1) return no("its body has " + std::to_string(loops.size()) + " loops; a process runs one");
  const size_t at = loops[0];
  std::vector<std::vector<TileOp>> parts;
  if (at > 0) parts.emplace_back(k.body.begin(), k.body.begin() + static_cast<std::ptrdiff_t>(at));
  parts.push_back({k.body[at]});
  if (at + 1 < k.body.size()) parts.emplace_back(k.body.begin() + static_cast<std::ptrdiff_t>(at) + 1, k.body.end());
  auto plan = plan_carries(k, parts, why);
  if (!plan) return std::nullopt;
  if (parts.size() == 1 && plan->handed.empty()) return no("");
  ProcessCut out;
  size_t p = 0;
  if (at > 0) {
    out.before = carry_framed_kernel(k, k.name + "__before", parts[p], p, *plan);
    ++p;
  }
  out.iteration = carry_framed_kernel(k, k.name, parts[p], p, *plan, true);
  ++p;
  if (p < parts.size())
    out.after = carry_framed_kernel(k, k.name + "__after", parts[p], p, *plan);
  for (TileKernel *x : {out.before ? &*out.before : nullptr, &out.iteration, out.after ? &*out.after : nullptr})
    if (x) x->kind = k.kind;
  for (const std::string &r : plan->handed)
    out.carries.push_back(TileParam{plan->carry.at(r), "inout",
                                    TileType{"tensor", k.local(r)->shape, k.local(r)->dtype, nlohmann::json()},
                                    std::nullopt});
  return out;
}

/// The parts workload of `k`, or nullopt with `why` set. `runtime_stop`: a part's loop may run to a bound known
/// only at run time (its trip count an Expr the orchestrating host evaluates; loop_workload's runtime_stop).
inline std::optional<EntryParts> entry_parts_workload(const TileKernel &kernel, std::string *why,
                                                      bool runtime_stop = false) {
  using namespace loop_detail;
  using Json = nlohmann::json;
  TileKernel k = kernel;
  forward_static_loops(k.body, constexpr_constants(k));  // (range(15, -1, -1) as well)
  auto no = [&](std::string reason) -> std::optional<EntryParts> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (mapped_over_cores(k)) return no("it is mapped over several cores");
  // The parts: each top-level loop, and each run of statements between loops.
  std::vector<std::vector<TileOp>> parts;
  for (const TileOp &o : k.body) {
    if (o.is("for") || parts.empty() || parts.back().front().is("for")) parts.emplace_back();
    parts.back().push_back(o);
  }
  const size_t n = parts.size();
  auto is_loop = [&](size_t p) { return parts[p].front().is("for"); };
  if (std::none_of(parts.begin(), parts.end(), [](const auto &p) { return p.front().is("for"); }))
    return no("its body has no loop at its top level");
  auto plan = plan_carries(k, parts, why);
  if (!plan) return std::nullopt;
  if (n == 1 && plan->handed.empty()) return no("nothing crosses from one part or iteration to the next");
  EntryParts out;
  WspWorkload w = single_launch_workload(k);
  for (const std::string &r : plan->handed) add_intermediate(w, plan->carry.at(r), k.local(r)->dtype, k.local(r)->shape);
  std::vector<WspNode> steps;
  int tasks = 0;
  for (size_t p = 0; p < n; ++p) {
    const std::string name = k.name + "__" + std::to_string(p);
    if (!is_loop(p)) {
      TileKernel pk = carry_framed_kernel(k, name, parts[p], p, *plan);
      // Moved through views of what it reads and writes, as a loop of one iteration (a store of X[0:8, :] before
      // a loop over X's tiles: a core holds 8 rows, not X whole), when its accesses allow.
      TileOp once;
      once.op = "for";
      once.var = "__once";
      once.start = Json(0);
      once.stop = Json(1);
      once.step = Json(1);
      once.span = parts[p].front().span;
      once.body = pk.body;
      TileKernel framed_once = pk;
      framed_once.body = {std::move(once)};
      if (auto lw = loop_workload(framed_once, nullptr, runtime_stop)) {
        // (its one iteration's launch, unwrapped: the part keeps its name and runs once)
        WspNode t = lw->workload.body.at(0).body.at(0).body.at(0);
        for (WspArg &a : t.args)
          for (Json &e : a.offset) e = substitute(e, "i", Json(0));
        t.kernel = name;
        t.id = "t" + std::to_string(tasks++);
        lw->body.name = name;
        steps.push_back(std::move(t));
        out.kernels.push_back(std::move(lw->body));
        continue;
      }
      // (else its launch binds each parameter to the workload's tensor, or intermediate, of its name, whole)
      WspNode t = single_launch_workload(pk).body.at(0);
      t.id = "t" + std::to_string(tasks++);
      steps.push_back(std::move(t));
      out.kernels.push_back(std::move(pk));
      continue;
    }
    // A loop: its body framed by the carries, as a one-loop kernel whose iterations run over their views.
    TileOp loop = parts[p].front();
    TileKernel framed = carry_framed_kernel(k, name, loop.body, p, *plan);
    loop.body = std::move(framed.body);
    framed.body = {std::move(loop)};
    std::string reason;
    auto lw = loop_workload(framed, &reason, runtime_stop);
    if (!lw) return no("its loop at part " + std::to_string(p) + ": " + reason);
    // (lw's workload: `for _ in P(1): <its loop nest around one launch>`; its launch binds the tensors by name)
    WspNode nest = lw->workload.body.at(0).body.at(0);
    std::function<void(WspNode &)> renumber = [&](WspNode &x) {
      if (x.is_task()) x.id = "t" + std::to_string(tasks++);
      for (WspNode &b : x.body) renumber(b);
    };
    renumber(nest);
    steps.push_back(std::move(nest));
    out.kernels.push_back(std::move(lw->body));
  }
  w.body = {single_core_grid(k.span, std::move(steps))};
  out.workload = std::move(w);
  return out;
}

}  // namespace htp
