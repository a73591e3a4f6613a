// A single-core kernel entry whose whole tensors do not fit its core, streamed: a body that is one loop
// `for i in range(...)` moving tiles of its tensors at offsets affine in i (a layernorm over row tiles)
// runs as the workload `for _ in P(1): for i in P.seq(n): <kernel>__iter(views of iteration i)` — the
// spatial mapping of one core whose FIFOs bring each iteration's tiles in and take them out, double
// buffered, instead of holding the tensors whole (docs/backends/aie.md §2).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <htp/kernel_entry.hpp>

#include "entry_plan.hpp"
#include "expr.hpp"
#include "validator.hpp"

namespace htp::aie {

namespace {

/// An access of a tensor parameter in the loop body: its offsets' constant parts and i-coefficients.
struct Access {
  std::vector<int64_t> base, step, shape;
};

/// Offsets of `o` as base + step * i over the loop variable, or nullopt when one is not affine in i alone.
std::optional<Access> affine(const htp::TileOp &o, const std::string &var, const std::vector<int64_t> &shape,
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

bool mentions(const Json &e, const std::string &var) {
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

/// The body of `k` as one `for` loop with static bounds: its variable, start, step and trip count (at least
/// one) under k's constexpr values.
struct StaticLoop {
  std::string var;
  int64_t start = 0, step = 1, trips = 1;
  ExprEnv constants;
};
std::optional<StaticLoop> static_loop(const htp::TileKernel &k) {
  if (k.body.size() != 1 || !k.body[0].is("for")) return std::nullopt;
  const htp::TileOp &loop = k.body[0];
  StaticLoop out;
  out.var = loop.var.value_or("");
  for (const htp::TileParam &p : k.params)
    if (p.type.is_constexpr() && !p.type.value.is_null()) out.constants.params[p.name] = p.type.value;
  auto start = eval_int(*loop.start, out.constants), stop = eval_int(*loop.stop, out.constants),
       step = eval_int(*loop.step, out.constants);
  if (!start || !stop || !step || *step <= 0 || *stop <= *start) return std::nullopt;
  out.start = *start;
  out.step = *step;
  out.trips = (*stop - *start + *step - 1) / *step;
  return out;
}

Json constant_or(int64_t base, int64_t step, const std::string &var) {
  if (step == 0) return base;
  Json scaled = step == 1 ? Json{{"var", var}} : Json{{"op", "mul"}, {"args", Json::array({step, Json{{"var", var}}})}};
  return base == 0 ? scaled : Json{{"op", "add"}, {"args", Json::array({base, scaled})}};
}

}  // namespace

std::optional<StreamedKernel> stream_kernel_loop(const htp::TileKernel &k, std::string *why) {
  auto no = [&](std::string reason) -> std::optional<StreamedKernel> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (k.mapping && checked_product(*k.mapping).value_or(2) != 1) return no("it is mapped over several cores");
  if (k.body.size() != 1 || !k.body[0].is("for")) return no("its body is not one `for` loop");
  const auto sl = static_loop(k);
  if (!sl) return no("its loop bounds are not static");
  const htp::TileOp &loop = k.body[0];
  const std::string &var = sl->var;
  const ExprEnv &constants = sl->constants;
  const int64_t start = sl->start, step = sl->step, trips = sl->trips;
  // Registers: each iteration defines what it reads (nothing carried from one iteration to the next).
  std::set<std::string> defined;
  for (const htp::TileOp &o : loop.body) {
    std::set<std::string> uses, defs;
    htp::registers_of(o, k, uses, defs);
    for (const std::string &r : uses)
      if (!defined.count(r)) return no("register '" + r + "' is carried from one iteration to the next");
    defined.insert(defs.begin(), defs.end());
  }
  // Each tensor's accesses: in the loop's own statements (not nested), at offsets affine in i, moving by the
  // same step; the view of an iteration covers them all.
  std::map<std::string, std::vector<Access>> accesses;
  bool ok = true;
  std::string problem;
  auto fail = [&](std::string reason) {
    ok = false;
    problem = std::move(reason);
  };
  htp::for_each_op(loop.body, [&](const htp::TileOp &o) {
    if (!ok) return;
    const bool load = o.is("load"), store = o.is("store");
    if (!load && !store) {  // any use of i but an offset would be a value the iteration kernel does not have
      bool uses = o.args && mentions(Json(*o.args), var);
      for (const auto *f : {&o.value, &o.scalar, &o.start, &o.stop, &o.step, &o.cond})
        uses = uses || (*f && mentions(**f, var));
      if (uses) fail("the loop variable '" + var + "' is used as a value");
      return;
    }
    const std::string tensor = load ? o.src.value_or("") : o.dst.value_or("");
    const htp::TileParam *p = k.param(tensor);
    const std::string reg = load ? o.dst.value_or("") : (o.value && o.value->is_string() ? o.value->get<std::string>() : "");
    const htp::TileLocal *l = k.local(reg);
    if (!p || !p->type.is_tensor() || !l) return fail("a statement moves '" + tensor + "' in a form it cannot stream");
    auto a = affine(o, var, l->shape, constants);
    if (!a || a->base.size() != p->type.shape.size())
      return fail("the offsets of '" + tensor + "' are not affine in '" + var + "' alone");
    accesses[tensor].push_back(*a);
  });
  if (!ok) return no(problem);
  StreamedKernel out;
  htp::TileKernel &body = out.body;
  body.name = k.name + "__iter";
  body.kind = "kernel";
  body.span = k.span;
  body.locals = k.locals;
  body.body = loop.body;
  htp::WspWorkload w = htp::single_launch_workload(k);
  htp::WspNode task = w.body.at(0);
  task.kernel = body.name;
  task.span = loop.span.value_or(k.span);
  std::map<std::string, std::vector<int64_t>> view_base;  // tensor -> the view's first element at i = 0
  for (const htp::TileParam &p : k.params) {
    htp::TileParam q = p;
    auto it = accesses.find(p.name);
    if (p.type.is_tensor() && it != accesses.end()) {
      const std::vector<Access> &as = it->second;
      const size_t rank = p.type.shape.size();
      std::vector<int64_t> lo(rank, INT64_MAX), hi(rank, INT64_MIN);
      for (const Access &a : as) {
        if (a.step != as[0].step) return no("'" + p.name + "' is moved at offsets that advance by different steps");
        for (size_t d = 0; d < rank; ++d) {
          lo[d] = std::min(lo[d], a.base[d]);
          hi[d] = std::max(hi[d], a.base[d] + a.shape[d]);
        }
      }
      std::vector<int64_t> shape(rank);
      for (size_t d = 0; d < rank; ++d) shape[d] = hi[d] - lo[d];
      const bool moves = std::any_of(as[0].step.begin(), as[0].step.end(), [](int64_t s) { return s != 0; });
      if (moves) {  // the view of iteration t: lo + step * (start + t * loop step)
        q.type.shape = shape;
        q.local_shape = std::nullopt;
        view_base[p.name] = lo;
        for (htp::WspArg &a : task.args) {
          if (a.param != p.name) continue;
          a.shape = shape;
          for (size_t d = 0; d < rank; ++d) {
            const int64_t per_trip = as[0].step[d] * step;
            a.offset[d] = constant_or(lo[d] + as[0].step[d] * start, per_trip, "i");
          }
        }
      }
    }
    body.params.push_back(q);
  }
  // Inside the iteration kernel every access is at a constant offset: within the view for a moving
  // tensor, within the whole tensor for the others.
  std::function<void(std::vector<htp::TileOp> &)> rebase = [&](std::vector<htp::TileOp> &ops) {
    for (htp::TileOp &o : ops) {
      if (o.is("load") || o.is("store")) {
        const bool load = o.is("load");
        const std::string tensor = load ? o.src.value_or("") : o.dst.value_or("");
        const htp::TileLocal *l = k.local(load ? o.dst.value_or("") : o.value->get<std::string>());
        const Access a = *affine(o, var, l->shape, constants);  // (checked above)
        auto b = view_base.find(tensor);
        for (size_t d = 0; d < a.base.size(); ++d) (*o.offset)[d] = a.base[d] - (b == view_base.end() ? 0 : b->second[d]);
      }
      rebase(o.body);
      rebase(o.then_body);
      rebase(o.else_body);
    }
  };
  rebase(body.body);
  htp::WspNode seq;
  seq.kind = "loop";
  seq.vars = {"i"};
  seq.dep = "sequential";
  seq.domain.type = "seq";
  seq.domain.extent = trips;
  seq.span = task.span;
  seq.body = {task};
  htp::WspNode grid;
  grid.kind = "loop";
  grid.vars = {"_core"};
  grid.dep = "independent";
  grid.domain.type = "dense";
  grid.domain.extents = {Json(1)};
  grid.span = task.span;
  grid.body = {seq};
  w.body = {grid};
  out.workload = std::move(w);
  return out;
}

namespace {

/// `k` with its loop's iterations cut into `parts` row blocks each: every tile of the iteration's R rows
/// (the tiles its moving loads bring and what is computed from them row by row) becomes R / parts rows, and
/// the loop runs parts times as often, each iteration a block of rows further — or nullopt when the body is
/// not row by row: a moving tensor whose row offset does not advance by R an iteration (or whose other
/// offsets move), an op that mixes rows (transpose, column reductions), a nested statement.
std::optional<htp::TileKernel> split_loop_rows(const htp::TileKernel &k, int64_t parts) {
  const auto sl = static_loop(k);
  if (parts <= 1 || !sl) return std::nullopt;
  const htp::TileOp &loop = k.body[0];
  const std::string &var = sl->var;
  const ExprEnv &constants = sl->constants;
  const int64_t start = sl->start, step = sl->step, trips = sl->trips;
  auto tile_of = [&](const htp::TileOp &o) -> const htp::TileLocal * {
    const bool load = o.is("load");
    const std::string reg = load ? o.dst.value_or("") : (o.value && o.value->is_string() ? o.value->get<std::string>() : "");
    return k.local(reg);
  };
  // The rows R of an iteration: those of the first tile a moving load or store moves.
  int64_t rows = 0;
  std::set<std::string> split;  // registers of R rows computed row by row from the moving tiles
  for (const htp::TileOp &o : loop.body) {
    if (!o.body.empty() || !o.then_body.empty() || !o.else_body.empty()) return std::nullopt;
    if ((o.is("load") || o.is("store")) && o.offset && mentions(Json(*o.offset), var)) {
      const htp::TileLocal *l = tile_of(o);
      if (!l || l->shape.size() != 2) return std::nullopt;
      if (rows == 0) rows = l->shape[0];
      if (l->shape[0] != rows) return std::nullopt;
    }
  }
  if (rows < 2 || rows % parts != 0) return std::nullopt;
  const int64_t block = rows / parts;
  auto is_split = [&](const Json &a) { return a.is_string() && split.count(a.get<std::string>()); };
  auto reg_rows = [&](const std::string &n) {
    const htp::TileLocal *l = k.local(n);
    return l && l->shape.size() == 2 ? l->shape[0] : int64_t(-1);
  };
  static const std::set<std::string> elementwise = {"add", "sub", "mul", "div", "max", "min"};
  static const std::set<std::string> unary = {"exp", "log", "sqrt", "rsqrt", "abs", "neg", "relu", "sigmoid", "tanh",
                                              "recip", "cast", "adds", "subs", "muls", "divs", "maxs", "mins"};
  static const std::set<std::string> by_row = {"rowsum", "rowmax", "rowmin", "rowexpand"};
  htp::TileKernel out = k;
  htp::TileOp &body_loop = out.body[0];
  for (htp::TileOp &o : body_loop.body) {
    if (o.scalar && mentions(*o.scalar, var)) return std::nullopt;
    if (o.is("load") || o.is("store")) {
      const htp::TileLocal *l = tile_of(o);
      if (!o.offset || !l) return std::nullopt;
      const bool moving = mentions(Json(*o.offset), var);
      const std::string reg = o.is("load") ? o.dst.value_or("") : o.value->get<std::string>();
      if (!moving) {  // a tensor read or written whole each iteration (gamma): not of the iteration's rows
        if (reg_rows(reg) == rows || split.count(reg)) return std::nullopt;
        continue;
      }
      auto a = affine(o, var, l->shape, constants);
      if (!a || a->base.size() < 2) return std::nullopt;
      const size_t row_dim = a->base.size() - 2;
      for (size_t d = 0; d < a->base.size(); ++d)
        if (d != row_dim && a->step[d] != 0) return std::nullopt;
      if (a->step[row_dim] * step != rows) return std::nullopt;  // row tiles that follow each other
      if (o.is("store") && !split.count(reg)) return std::nullopt;
      for (size_t d = 0; d < a->base.size(); ++d) (*o.offset)[d] = a->base[d] + a->step[d] * start;
      (*o.offset)[row_dim] = constant_or(a->base[row_dim] + a->step[row_dim] * start, block, var);
      if (o.is("load")) split.insert(reg);
      continue;
    }
    if (!o.dst) return std::nullopt;
    std::vector<Json> args = o.args.value_or(std::vector<Json>{});
    const bool any = std::any_of(args.begin(), args.end(), is_split);
    bool ok = false;
    if (o.is("full")) ok = reg_rows(*o.dst) == rows && !(o.value && mentions(*o.value, var));
    else if (!any) ok = reg_rows(*o.dst) != rows;  // computed from what every iteration reads whole
    else if (elementwise.count(o.op)) ok = args.size() == 2 && is_split(args[0]) && is_split(args[1]);
    else if (unary.count(o.op) || by_row.count(o.op)) ok = args.size() == 1;
    else if (o.op.rfind("rowexpand_", 0) == 0) ok = args.size() == 2 && is_split(args[0]) && is_split(args[1]);
    else if (o.op.rfind("colexpand_", 0) == 0)
      ok = args.size() == 2 && is_split(args[0]) && !is_split(args[1]) && args[1].is_string() && reg_rows(args[1]) == 1;
    else if (o.is("matmul")) ok = args.size() == 2 && is_split(args[0]) && !is_split(args[1]) && !o.accumulate.value_or(false);
    if (!ok) return std::nullopt;
    if (any || o.is("full")) {
      if (reg_rows(*o.dst) != rows) return std::nullopt;
      split.insert(*o.dst);
    }
  }
  for (htp::TileLocal &l : out.locals)
    if (split.count(l.name)) l.shape[0] = block;
  body_loop.start = 0;
  body_loop.stop = trips * parts;
  body_loop.step = 1;
  return out;
}

/// Whether the spatial design of streamed kernel `s` fits its core's memory.
bool streamed_design_fits(const StreamedKernel &s, const DeviceProfile &device) {
  htp::TileKernels kernels;
  kernels.kernels.push_back(s.body);
  std::vector<Problem> problems;
  auto plan = plan_workload_entry(s.workload, kernels, device, problems);
  if (!plan) return false;
  auto design = build_design(*plan, device, problems);
  if (!design) return false;
  for (const Violation &v : validate(*design, device))
    if (v.code == "aie.validate.memory") return false;
  return true;
}

}  // namespace

std::vector<std::pair<htp::TileKernel, int64_t>> stream_oversized_kernel_entries(ProgramDocs &docs,
                                                                                 const DeviceProfile &device) {
  std::vector<std::pair<htp::TileKernel, int64_t>> out;
  const std::set<std::string> launched = htp::launched_kernels(docs.tasks);
  const int64_t memory = device.resources(TileKind::Compute).memory_bytes;
  std::vector<htp::TileKernel> kept;
  for (const htp::TileKernel &k : docs.kernels.kernels) {
    int64_t bytes = 0;  // what the kernel entry's one core would hold
    for (const htp::TileParam &p : k.params)
      if (p.type.is_tensor()) bytes += product(p.type.shape) * dtype_bytes(p.type.dtype) * (p.dir == "inout" ? 2 : 1);
    std::optional<StreamedKernel> s;
    const htp::TileKernel sunk = htp::sink_loads_into_loop(k);
    if (k.kind == "kernel" && !launched.count(k.name) && !docs.layouts.function(k.name) && bytes > memory)
      s = stream_kernel_loop(sunk, nullptr);
    // An iteration whose tiles still do not fit (a 32 x 256 f32 softmax row tile: 32 KB in, 32 KB out, double
    // buffered) streams in blocks of fewer rows when its body works row by row.
    for (int64_t parts = 2; s && parts <= 64 && !streamed_design_fits(*s, device); parts *= 2) {
      auto rows = split_loop_rows(sunk, parts);
      if (!rows) break;
      auto smaller = stream_kernel_loop(*rows, nullptr);
      if (!smaller) break;
      s = std::move(smaller);
    }
    if (!s) {
      kept.push_back(k);
      continue;
    }
    out.emplace_back(k, s->workload.body[0].body[0].domain.extent.get<int64_t>());
    kept.push_back(std::move(s->body));
    docs.tasks.workloads.push_back(std::move(s->workload));
  }
  docs.kernels.kernels = std::move(kept);
  return out;
}

}  // namespace htp::aie
