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

using namespace htp::loop_detail;

namespace {

/// The steps per unit of `var` of `o`'s offsets (a tile of `shape`), one per dimension, or nullopt when one is
/// not affine in `var` with the same step whatever the loops around it (`outer`) read.
std::optional<std::vector<int64_t>> var_steps(const htp::TileOp &o, const std::string &var,
                                              const std::vector<int64_t> &shape,
                                              const std::vector<std::string> &outer, const ExprEnv &constants) {
  std::optional<std::vector<int64_t>> steps;
  for (size_t moved = 0; moved <= outer.size(); ++moved) { // the outer variables at 0, then each at 1
    ExprEnv env = constants;
    for (size_t j = 0; j < outer.size(); ++j)
      env.vars[outer[j]] = j + 1 == moved ? 1 : 0;
    auto a = affine(o, var, shape, env);
    if (!a || (steps && *steps != a->step)) return std::nullopt;
    steps = a->step;
  }
  return steps;
}

/// `k` with its loop's iterations cut into `parts` row blocks each: every tile of the iteration's R rows
/// (the tiles its moving loads bring and what is computed from them row by row) becomes R / parts rows, and
/// the loop runs parts times as often, each iteration a block of rows further — or nullopt when the body is
/// not row by row: a moving tensor whose row offset does not advance by R an iteration (or whose other
/// offsets move), an op that mixes rows (transpose, column reductions), a nested loop. An `if` is taken with
/// its branches held to the same rules; a condition reading the loop variable reads the iteration a row
/// block belongs to. In a nest of loops each the whole body of the one around it (`for _ in range(2): for r
/// in range(4): ...`, as loop workloads nest them), the innermost loop is cut and the loops around it stay;
/// offsets may read their variables.
std::optional<htp::TileKernel> split_loop_rows(const htp::TileKernel &k, int64_t parts) {
  if (parts <= 1 || k.body.size() != 1 || !k.body[0].is("for")) return std::nullopt;
  const ExprEnv constants = constexpr_constants(k);
  std::vector<std::string> outer;  // the variables of the loops around the one cut
  const htp::TileOp *cut = &k.body[0];
  auto range = static_range(*cut, constants);
  if (!range) return std::nullopt;
  while (outer.size() < 2 && cut->body.size() == 1 && cut->body[0].is("for")) {
    auto inner = static_range(cut->body[0], constants);
    if (!inner || inner->var == range->var ||
        std::find(outer.begin(), outer.end(), inner->var) != outer.end())
      return std::nullopt;
    outer.push_back(range->var);
    cut = &cut->body[0];
    range = inner;
  }
  const htp::TileOp &loop = *cut;
  const std::string &var = range->var;
  const int64_t start = range->start, step = range->step, trips = range->trips;
  auto tile_of = [&](const htp::TileOp &o) { return k.local(o.moved_register().value_or("")); };
  // The rows R of an iteration: those of the first tile a moving load or store moves.
  int64_t rows = 0;
  std::set<std::string> split;  // registers of R rows computed row by row from the moving tiles
  bool row_wise = true;
  htp::for_each_op(loop.body, [&](const htp::TileOp &o) {
    if (!o.body.empty() || o.is("for")) row_wise = false;
    if ((o.is("load") || o.is("store")) && o.offset && mentions(Json(*o.offset), var)) {
      const htp::TileLocal *l = tile_of(o);
      if (!l || l->shape.size() != 2)
        row_wise = false;
      else if (rows == 0)
        rows = l->shape[0];
      else if (l->shape[0] != rows)
        row_wise = false;
    }
  });
  if (!row_wise || rows < 2 || rows % parts != 0) return std::nullopt;
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
  htp::TileOp *cut_loop = &out.body[0];
  for (size_t d = 0; d < outer.size(); ++d) cut_loop = &cut_loop->body[0];
  htp::TileOp &body_loop = *cut_loop;
  // (the iteration a row block belongs to, as the loop variable read it: start + (block // parts) * step)
  const Json block_of = Json{{"op", "floordiv"}, {"args", Json::array({Json{{"var", var}}, parts})}};
  const Json iteration =
      Json{{"op", "add"},
           {"args", Json::array({start, Json{{"op", "mul"}, {"args", Json::array({block_of, step})}}})}};
  std::function<bool(std::vector<htp::TileOp> &)> rewrite = [&](std::vector<htp::TileOp> &ops) {
    for (htp::TileOp &o : ops) {
      if (o.is("if")) {
        if (!o.cond) return false;
        if (mentions(*o.cond, var)) *o.cond = substitute(*o.cond, var, iteration);
        if (!rewrite(o.then_body) || !rewrite(o.else_body)) return false;
        continue;
      }
      if (o.scalar && mentions(*o.scalar, var)) return false;
      if (o.is("load") || o.is("store")) {
        const htp::TileLocal *l = tile_of(o);
        if (!o.offset || !l) return false;
        const bool moving = mentions(Json(*o.offset), var);
        const std::string reg = o.moved_register().value_or("");
        if (!moving) { // a tensor read or written whole each iteration (gamma): not of the iteration's rows
          if (reg_rows(reg) == rows || split.count(reg)) return false;
          continue;
        }
        auto steps = var_steps(o, var, l->shape, outer, constants);
        if (!steps || steps->size() < 2) return false;
        const size_t row_dim = steps->size() - 2;
        for (size_t d = 0; d < steps->size(); ++d)
          if (d != row_dim && (*steps)[d] != 0) return false;
        if ((*steps)[row_dim] * step != rows) return false; // row tiles that follow each other
        if (o.is("store") && !split.count(reg)) return false;
        // Each offset at the loop's first iteration (reading the loops around it as it did), the row offset
        // then advancing a block of rows an iteration.
        for (size_t d = 0; d < steps->size(); ++d) {
          Json first = substitute((*o.offset)[d], var, Json(start));
          if (auto x = eval_int(first, constants)) first = *x;
          (*o.offset)[d] = d != row_dim              ? first
                           : first.is_number_integer() ? constant_or(first.get<int64_t>(), block, var)
                                                       : Json{{"op", "add"}, {"args", Json::array({first, constant_or(0, block, var)})}};
        }
        if (o.is("load")) split.insert(reg);
        continue;
      }
      if (!o.dst) return false;
      std::vector<Json> args = o.args.value_or(std::vector<Json>{});
      const bool any = std::any_of(args.begin(), args.end(), is_split);
      bool ok = false;
      if (o.is("full"))
        ok = reg_rows(*o.dst) == rows && !(o.value && mentions(*o.value, var));
      else if (!any)
        ok = reg_rows(*o.dst) != rows; // computed from what every iteration reads whole
      else if (elementwise.count(o.op))
        ok = args.size() == 2 && is_split(args[0]) && is_split(args[1]);
      else if (unary.count(o.op) || by_row.count(o.op))
        ok = args.size() == 1;
      else if (o.op.rfind("rowexpand_", 0) == 0)
        ok = args.size() == 2 && is_split(args[0]) && is_split(args[1]);
      else if (o.op.rfind("colexpand_", 0) == 0)
        ok = args.size() == 2 && is_split(args[0]) && !is_split(args[1]) && args[1].is_string() &&
             reg_rows(args[1]) == 1;
      else if (o.is("matmul"))
        ok = args.size() == 2 && is_split(args[0]) && !is_split(args[1]) && !o.accumulate.value_or(false);
      if (!ok) return false;
      if (any || o.is("full")) {
        if (reg_rows(*o.dst) != rows) return false;
        split.insert(*o.dst);
      }
    }
    return true;
  };
  if (!rewrite(body_loop.body)) return std::nullopt;
  for (htp::TileLocal &l : out.locals)
    if (split.count(l.name)) l.shape[0] = block;
  body_loop.start = 0;
  body_loop.stop = trips * parts;
  body_loop.step = 1;
  return out;
}

/// Whether the design of `plan` fits its cores' memory; `unplanned` when there is no plan or design (their
/// own errors say why, appended to `problems`).
bool fits(const std::optional<EntryPlan> &plan, const DeviceProfile &device, bool unplanned,
          std::vector<Problem> &problems) {
  auto design = plan ? build_design(*plan, device, problems) : std::nullopt;
  if (!design) return unplanned;
  for (const Violation &v : validate(*design, device))
    if (v.code == "aie.validate.memory") return false;
  return true;
}

/// Whether the single-core design of kernel entry `k` fits its core's memory.
bool entry_fits(const htp::TileKernel &k, const htp::LayoutSignatures &layouts, const DeviceProfile &device) {
  if (std::none_of(k.body.begin(), k.body.end(), [](const htp::TileOp &o) { return o.is("for"); }))
    return true;  // nothing to stream
  std::vector<Problem> problems;
  return fits(plan_kernel_entry(k, layouts, device, problems), device, true, problems);
}

/// The spatial design of streamed kernel `s`, built once: whether it fits its core's memory, and whether it
/// moves, at some iteration, a view that leaves its tensor (aie.view: an iteration's tiles are moved whether
/// the body reads them or not, so `X.tile(i - 1)` under `else` of `if i == 0` moves the tile before X at 0).
struct StreamedDesign {
  bool fits = false;
  bool views_leave = false;
};
StreamedDesign streamed_design(const htp::LoopWorkload &s, const DeviceProfile &device) {
  htp::TileKernels kernels;
  kernels.kernels.push_back(s.body);
  std::vector<Problem> problems;
  StreamedDesign out;
  out.fits = fits(plan_workload_entry(s.workload, kernels, device, problems), device, false, problems);
  out.views_leave = std::any_of(problems.begin(), problems.end(), [](const Problem &p) { return p.code == "aie.view"; });
  return out;
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
    // (Tensors that fit whole may still not fit beside the body's registers: then too.)
    const bool oversized = k.kind == "kernel" && !launched.count(k.name) && !docs.layouts.function(k.name) &&
                           (bytes > memory || !entry_fits(k, docs.layouts, device));
    if (!oversized) {
      kept.push_back(k);
      continue;
    }
    const htp::TileKernel sunk = htp::sink_loads_into_loop(k);
    std::optional<htp::LoopWorkload> s = htp::loop_workload(sunk, nullptr, /*runtime_stop=*/true);
    // An iteration whose tiles still do not fit (a 32 x 256 f32 softmax row tile: 32 KB in, 32 KB out, double
    // buffered) streams in blocks of fewer rows when its body works row by row.
    StreamedDesign design = s ? streamed_design(*s, device) : StreamedDesign{};
    for (int64_t parts = 2; s && parts <= 64 && !design.fits; parts *= 2) {
      auto rows = split_loop_rows(sunk, parts);
      if (!rows) break;
      auto smaller = htp::loop_workload(*rows, nullptr, /*runtime_stop=*/true);
      if (!smaller) break;
      s = std::move(smaller);
      design = streamed_design(*s, device);
    }
    // A loop whose iterations move a view outside the tensor only under a branch the iteration number decides
    // (`if i == 0: ... else: X.tile(i - 1)`) is cut where the branch changes: loops one after another, below.
    // Loops that run as parts (several loops, or one carrying an accumulator) move each iteration's tiles
    // alike too, and nothing checks their views before they run: each of them is cut the same way.
    std::optional<htp::TileKernel> split;
    if ((!s || design.views_leave) && (split = htp::split_loop_at_conditions(k))) s.reset();
    if (!s) {
      // Loops one after another, or a loop carrying a register (an accumulator, a running max), over tensors
      // that do not fit: its parts run one after another, each within a core, the carries in tensors between
      // them (htp::entry_parts_workload; a workload of several launches runs host-orchestrated).
      std::optional<htp::EntryParts> parts = htp::entry_parts_workload(split ? *split : k, nullptr,
                                                                       /*runtime_stop=*/true);
      if (!parts) {
        kept.push_back(k);
        continue;
      }
      std::function<int64_t(const std::vector<htp::WspNode> &)> launches = [&](const std::vector<htp::WspNode> &nodes) {
        int64_t count = 0;
        for (const htp::WspNode &n : nodes)
          count += n.is_task() ? 1
                               : (n.is_loop() && n.domain.extent.is_number_integer() ? n.domain.extent.get<int64_t>() : 1) *
                                     launches(n.body);
        return count;
      };
      out.emplace_back(k, launches(parts->workload.body.at(0).body));
      for (htp::TileKernel &p : parts->kernels) kept.push_back(std::move(p));
      docs.tasks.workloads.push_back(std::move(parts->workload));
      continue;
    }
    out.emplace_back(k, s->trips);
    kept.push_back(std::move(s->body));
    docs.tasks.workloads.push_back(std::move(s->workload));
  }
  docs.kernels.kernels = std::move(kept);
  return out;
}

}  // namespace htp::aie
