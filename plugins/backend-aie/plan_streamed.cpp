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
  const htp::TileOp &loop = k.body[0];
  const std::string var = loop.var.value_or("");
  ExprEnv constants;
  for (const htp::TileParam &p : k.params)
    if (p.type.is_constexpr() && !p.type.value.is_null()) constants.params[p.name] = p.type.value;
  auto start = eval_int(*loop.start, constants), stop = eval_int(*loop.stop, constants), step = eval_int(*loop.step, constants);
  if (!start || !stop || !step || *step <= 0 || *stop <= *start) return no("its loop bounds are not static");
  const int64_t trips = (*stop - *start + *step - 1) / *step;
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
            const int64_t per_trip = as[0].step[d] * *step;
            a.offset[d] = constant_or(lo[d] + as[0].step[d] * *start, per_trip, "i");
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
    if (k.kind == "kernel" && !launched.count(k.name) && !docs.layouts.function(k.name) && bytes > memory)
      s = stream_kernel_loop(k, nullptr);
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
