// axe.lower (lower stage): the collectives of a mapped kernel's body (allreduce, allgather, reduce_scatter,
// relayout) become exchanges through global memory, so that every backend that runs mapped kernels and
// workloads runs them. A kernel with collectives is cut at each one into parts, each a mapped kernel over
// the same mesh: a part ends by storing what a later part needs into scratch tensors, the next part begins
// by loading it with a layout that gives each core what the collective owes it:
//
//   allreduce(x, axis=a, op=o)   every core stores x into its own slot of a scratch tensor (one slot per core
//                                of the mesh); the next part reads the slots of its peers along a (the slot
//                                dims of a are replicated in its layout) and combines them with o
//   allgather / relayout         x is stored into a scratch tensor of its logical shape with its own layout
//                                and loaded back with the layout the collective gives it
//   reduce_scatter               an allreduce, then a relayout to the scattered layout
//
// Any other register a later part reads travels the same way as an allreduce's slots (each core its own).
// The kernel's launches become the parts' launches in order (an ordered group of a workload, the scratch
// tensors its intermediates); a kernel entry becomes the workload that launches it once
// (htp/kernel_entry.hpp). tile.kernels, layout.signatures and wsp.task_graph are rewritten in place.
#include <htp/kernel_entry.hpp>
#include <htp/layout_signatures.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "passes.hpp"

namespace htp::axe {

namespace {

using json = nlohmann::json;

/// A located reason why a kernel's collectives cannot be lowered.
struct LowerError {
  std::string message;
  std::optional<IrSpan> span;
};

bool is_collective_op(const TileOp &o) { return o.op.rfind("layout.", 0) == 0; }

std::string collective_name(const TileOp &o) { return o.op.substr(std::string("layout.").size()); }

/// A scratch tensor a part stores and a later part loads: its parameter in both parts, its shape (the whole
/// tensor), the layout each side declares and the workload intermediate that holds it.
struct Scratch {
  std::string param;         ///< the parts' parameter name
  std::string tensor;        ///< the workload intermediate
  std::vector<int64_t> shape;
  std::string dtype;
  Layout written, read;      ///< the writer's and the reader's layouts (dir set by the side)
};

/// What one part of a split kernel does besides its own statements.
struct PartPlan {
  std::vector<TileOp> prologue;  ///< loads of scratch tensors and the combining of an allreduce
  std::vector<TileOp> body;      ///< the kernel's statements between two collectives
  std::vector<TileOp> epilogue;  ///< stores into scratch tensors
  std::vector<std::pair<size_t, bool>> scratch;  ///< (index into scratch, written here?)
  std::vector<TileLocal> extra_locals;
};

class KernelSplit {
public:
  KernelSplit(const TileKernel &k, const LayoutFunction &lf) : k_(k), lf_(lf) {}

  /// The parts, or a LowerError.
  std::vector<TileKernel> run(std::vector<LayoutFunction> &layouts, std::vector<Scratch> &scratch) {
    const std::vector<int64_t> mesh = k_.mapping.value_or(std::vector<int64_t>{});
    if (mesh.empty() || mesh.size() > 2 || lf_.mesh.size() != mesh.size())
      throw LowerError{"kernel '" + k_.name + "' is mapped over " + json(mesh).dump() +
                           "; axe.lower lowers the collectives of kernels mapped over one or two mesh axes",
                       k_.span};
    // Statements cut at each top-level collective; reduce_scatter is an allreduce and a relayout.
    std::vector<std::vector<TileOp>> segments(1);
    std::vector<TileOp> cuts;
    for (const TileOp &o : k_.body) {
      for_each_op(o.body, [&](const TileOp &x) { nested(x, o); });
      for_each_op(o.then_body, [&](const TileOp &x) { nested(x, o); });
      for_each_op(o.else_body, [&](const TileOp &x) { nested(x, o); });
      if (!is_collective_op(o)) {
        segments.back().push_back(o);
        continue;
      }
      for (TileOp &c : expand(o)) {
        cuts.push_back(std::move(c));
        segments.emplace_back();
      }
    }
    const size_t n = segments.size();
    // Registers each part reads before writing them, and those it writes (a collective belongs to the
    // part it starts: it reads its operand through the exchange, not as a register).
    std::vector<std::set<std::string>> uses(n), defs(n);
    for (size_t c = 0; c < cuts.size(); ++c) defs[c + 1].insert(*cuts[c].dst);  // before the part's statements
    for (size_t p = 0; p < n; ++p)
      for (const TileOp &o : segments[p]) {
        std::set<std::string> u, d;
        registers_of(o, k_, u, d);
        for (const std::string &r : u)
          if (!defs[p].count(r)) uses[p].insert(r);
        defs[p].insert(d.begin(), d.end());
      }
    for (size_t c = 0; c < cuts.size(); ++c) {
      // The part before a collective stores its operand: one defined in an earlier part is handed to it.
      if (cuts[c].args && !cuts[c].args->empty() && (*cuts[c].args)[0].is_string()) {
        const std::string x = (*cuts[c].args)[0].get<std::string>();
        if (!defs[c].count(x)) uses[c].insert(x);
      }
    }
    std::vector<PartPlan> parts(n);
    for (size_t p = 0; p < n; ++p) parts[p].body = segments[p];
    // Collectives: the writer is the part before, the reader the part after.
    for (size_t c = 0; c < cuts.size(); ++c) exchange(cuts[c], c, parts[c], parts[c + 1], scratch);
    // Hand-offs: a register part s reads that an earlier part wrote.
    const auto handed = register_handoffs(uses, defs);
    for (size_t s = 1; s < n; ++s)
      for (const auto &[r, from] : handed[s]) handoff(r, from, s, parts, scratch);
    std::vector<TileKernel> out;
    for (size_t p = 0; p < n; ++p) {
      TileKernel part;
      part.name = k_.name + "__" + std::to_string(p);
      part.kind = "kernel";
      part.span = k_.span;
      part.mapping = k_.mapping;
      for (const TileOp &o : parts[p].prologue) part.body.push_back(o);
      for (const TileOp &o : parts[p].body) part.body.push_back(o);
      for (const TileOp &o : parts[p].epilogue) part.body.push_back(o);
      std::set<std::string> moved, regs;  // tensors the statements move; registers they name
      for_each_op(part.body, [&](const TileOp &x) {
        if (x.src) moved.insert(*x.src);
        if (x.dst) moved.insert(*x.dst);
        std::set<std::string> d;
        registers_of(x, k_, regs, d);
        regs.insert(d.begin(), d.end());
      });
      LayoutFunction f;
      f.mapping = lf_.mapping;
      f.mesh = lf_.mesh;
      f.footprint = lf_.footprint;
      for (const TileParam &prm : k_.params) {
        if (prm.type.is_tensor() && !moved.count(prm.name)) continue;
        part.params.push_back(prm);
        if (const Layout *l = lf_.param(prm.name)) f.params.emplace_back(prm.name, *l);
      }
      // A scratch tensor this part reads and writes (a register handed on, redefined, handed on) is one
      // InOut parameter; a collective's slots are never both.
      std::map<size_t, std::pair<bool, bool>> access;  // scratch -> (read, written)
      std::vector<size_t> order;
      for (const auto &[i, written] : parts[p].scratch) {
        if (!access.count(i)) order.push_back(i);
        (written ? access[i].second : access[i].first) = true;
      }
      for (size_t i : order) {
        const Scratch &x = scratch[i];
        const auto [read, written] = access[i];
        Layout l = written ? x.written : x.read;
        l.dir = read && written ? "inout" : written ? "out" : "in";
        part.params.push_back(TileParam{x.param, l.dir, TileType{"tensor", x.shape, x.dtype, json()}, l.local_shape});
        f.params.emplace_back(x.param, l);
      }
      for (const TileLocal &l : k_.locals)
        if (regs.count(l.name)) part.locals.push_back(l);
      for (const TileLocal &l : parts[p].extra_locals) part.locals.push_back(l);
      out.push_back(std::move(part));
      layouts.push_back(std::move(f));
    }
    return out;
  }

private:
  void nested(const TileOp &x, const TileOp &outer) const {
    if (is_collective_op(x))
      throw LowerError{"'" + collective_name(x) + "' inside a '" + outer.op + "' statement of kernel '" + k_.name +
                           "': axe.lower cuts a kernel at collectives in its top-level statements; move it out of "
                           "the '" + outer.op + "' (a loop's partial results can be combined after the loop)",
                       x.span ? x.span : outer.span};
  }

  Layout layout_of(const json &j, const char *what, const TileOp &o) const {
    try {
      return layout_reader::read_layout(layout_reader::Reader<json>(std::string(kTileKernelsAttribute)), j, what);
    } catch (const IrDocumentError &e) {
      throw LowerError{"the '" + std::string(what) + "' layout of '" + collective_name(o) + "' in kernel '" + k_.name +
                           "' is unreadable (" + e.what() + "; a layout-axe bug)",
                       o.span};
    }
  }

  /// reduce_scatter(x) = allreduce(x) into a register replicated over the axes, then a relayout.
  std::vector<TileOp> expand(const TileOp &o) {
    if (collective_name(o) != "reduce_scatter") return {o};
    if (!o.attrs || !o.attrs->is_object() || !o.attrs->contains("from") || !o.attrs->contains("to") || !o.dst)
      throw LowerError{"reduce_scatter of kernel '" + k_.name + "' has no layouts or no result (a layout-axe bug)", o.span};
    const json &attrs = *o.attrs;
    json mid = attrs.at("from");
    json replica = mid.value("replica", json::array());
    for (const json &p : mid.value("pending", json::array()))
      replica.push_back({{"axis", p.at("axis")}, {"extent", p.at("extent")}, {"stride", 1}});
    mid["replica"] = replica;
    mid["pending"] = json::array();
    mid["text"] = mid.value("dist", mid.value("text", std::string()));
    const TileLocal *dst = k_.local(*o.dst);
    if (!dst) throw LowerError{"reduce_scatter writes '" + *o.dst + "', which is no register of '" + k_.name + "'", o.span};
    const std::string reg = fresh("_" + *o.dst + "_reduced");
    TileLocal mid_reg = *dst;
    mid_reg.name = reg;
    mid_reg.shape = mid.contains("local_shape") ? mid["local_shape"].get<std::vector<int64_t>>() : dst->shape;
    k_.locals.push_back(mid_reg);
    TileOp all = o, re = o;
    all.op = "layout.allreduce";
    all.dst = reg;
    all.attrs = json{{"from", attrs.at("from")}, {"to", mid}, {"axes", attrs.value("axes", json::array())},
                     {"reduce", attrs.value("reduce", std::string("sum"))}};
    re.op = "layout.relayout";
    re.args = std::vector<json>{json(reg)};
    re.attrs = json{{"from", mid}, {"to", attrs.at("to")}};
    return {all, re};
  }

  const TileLocal &reg(const std::string &name) const {
    if (const TileLocal *l = k_.local(name)) return *l;
    throw LowerError{"'" + name + "' is no register of kernel '" + k_.name + "'", k_.span};
  }

  /// The mesh axis of each dim of a tile for per-core slots: the dims `from` shards keep their axes, the
  /// other axes take the free dims in mesh order.
  std::vector<std::string> slot_axes(const Layout *from, const TileOp &at) const {
    std::vector<std::string> axis_of(2);
    std::set<std::string> placed;
    if (from)
      for (const LayoutIter &it : from->shard) {
        if (!it.dim || *it.dim < 0 || *it.dim > 1 || !axis_of[size_t(*it.dim)].empty())
          throw LowerError{"'" + collective_name(at) + "' of kernel '" + k_.name + "' reads a value whose layout " +
                               from->text + " splits a dimension over several mesh axes; axe.lower exchanges "
                               "values sharded one mesh axis per dimension",
                           at.span};
        axis_of[size_t(*it.dim)] = it.axis;
        placed.insert(it.axis);
      }
    for (const auto &[axis, extent] : lf_.mesh) {
      if (placed.count(axis)) continue;
      auto free = std::find(axis_of.begin(), axis_of.end(), std::string());
      if (free == axis_of.end())
        throw LowerError{"kernel '" + k_.name + "' has more mesh axes than a tile has dimensions", at.span};
      *free = axis;
    }
    return axis_of;
  }

  int64_t extent(const std::string &axis) const {
    for (const auto &[a, e] : lf_.mesh)
      if (a == axis) return e;
    return 1;
  }

  static TileOp move(const char *op, const std::string &tensor, const std::string &reg, std::vector<int64_t> offset,
                     const std::optional<IrSpan> &span) {
    TileOp m;
    m.op = op;
    m.span = span;
    m.offset = std::vector<json>(offset.begin(), offset.end());
    if (std::string(op) == "store") {
      m.dst = tensor;
      m.value = reg;
    } else {
      m.dst = reg;
      m.src = tensor;
    }
    return m;
  }

  /// `name`, or with a suffix when the kernel already has a parameter or register of that name.
  std::string fresh(std::string name) const {
    while (k_.param(name) || k_.local(name)) name += "_";
    return name;
  }

  size_t add_scratch(std::vector<Scratch> &scratch, Scratch s) {
    scratch.push_back(std::move(s));
    return scratch.size() - 1;
  }

  void exchange(const TileOp &c, size_t index, PartPlan &writer, PartPlan &reader, std::vector<Scratch> &scratch) {
    const std::string name = collective_name(c);
    if (!c.attrs || !c.args || c.args->size() != 1 || !(*c.args)[0].is_string() || !c.dst)
      throw LowerError{"'" + name + "' of kernel '" + k_.name + "' is not a one-operand collective", c.span};
    const std::string x = (*c.args)[0].get<std::string>();
    const TileLocal &xr = reg(x), &dr = reg(*c.dst);
    if (xr.shape.size() != 2 || dr.shape.size() != 2)
      throw LowerError{"'" + name + "' of kernel '" + k_.name + "' moves '" + x + "', which is no tile", c.span};
    const Layout from = layout_of(c.attrs->at("from"), "from", c), to = layout_of(c.attrs->at("to"), "to", c);
    const std::string tag = "_c" + std::to_string(index) + "_" + x;
    Scratch s;
    s.param = fresh("x" + tag);
    s.tensor = "_" + k_.name + tag;
    s.dtype = xr.dtype;
    if (name == "allreduce") {
      if (dr.shape != xr.shape)
        throw LowerError{"allreduce of kernel '" + k_.name + "' changes the tile shape " + json(xr.shape).dump() + " -> " +
                             json(dr.shape).dump(), c.span};
      const std::vector<std::string> axes = slot_axes(&from, c);
      std::set<std::string> reduced;
      for (const LayoutPending &p : from.pending) reduced.insert(p.axis);
      if (c.attrs->contains("axes")) {
        reduced.clear();
        for (const json &a : c.attrs->at("axes")) reduced.insert(a.get<std::string>());
      }
      std::string op = c.attrs->value("reduce", std::string("sum"));
      static const std::map<std::string, std::string> combine = {{"sum", "add"}, {"max", "max"}, {"min", "min"}, {"prod", "mul"}};
      if (!combine.count(op))
        throw LowerError{"allreduce with op '" + op + "' in kernel '" + k_.name + "': axe.lower combines sum, max, min and prod",
                         c.span};
      s.written = core_slots(lf_, xr.shape, xr.dtype, axes);
      s.read = core_slots(lf_, xr.shape, xr.dtype, axes, reduced);
      s.shape = s.written.shape;
      const size_t i = add_scratch(scratch, s);
      writer.epilogue.push_back(move("store", s.param, x, {0, 0}, c.span));
      writer.scratch.push_back({i, true});
      reader.scratch.push_back({i, false});
      // Every peer's slot along the reduced axes, row-major, combined into the destination.
      std::vector<int64_t> count(2, 1);
      for (size_t d = 0; d < 2; ++d)
        if (!axes[d].empty() && reduced.count(axes[d])) count[d] = extent(axes[d]);
      // The first slot and each peer's land in registers of their own, defined once (a backend may keep such
      // a register in the object it was loaded from), and the last combination defines the destination.
      std::vector<std::vector<int64_t>> slots;
      for (int64_t a = 0; a < count[0]; ++a)
        for (int64_t b = 0; b < count[1]; ++b) slots.push_back({a * xr.shape[0], b * xr.shape[1]});
      if (slots.size() == 1) {
        reader.prologue.push_back(move("load", s.param, *c.dst, slots[0], c.span));
        return;
      }
      auto local = [&](const std::string &base) {
        TileLocal l = xr;
        l.name = fresh(base + tag);
        reader.extra_locals.push_back(l);
        return l.name;
      };
      const std::string own = local("_own"), peer = local("_peer"), acc = slots.size() > 2 ? local("_acc") : "";
      reader.prologue.push_back(move("load", s.param, own, slots[0], c.span));
      for (size_t k = 1; k < slots.size(); ++k) {
        reader.prologue.push_back(move("load", s.param, peer, slots[k], c.span));
        TileOp add;
        add.op = combine.at(op);
        add.dst = k + 1 == slots.size() ? *c.dst : acc;
        add.args = std::vector<json>{json(k == 1 ? own : acc), json(peer)};
        add.span = c.span;
        reader.prologue.push_back(add);
      }
      return;
    }
    if (name != "allgather" && name != "relayout")
      throw LowerError{"'" + name + "' in kernel '" + k_.name + "' is no collective axe.lower knows", c.span};
    if (!from.pending.empty())
      throw LowerError{name + " of a value that owes a reduction in kernel '" + k_.name + "'", c.span};
    if (from.shape.size() != 2 || !from.local_shape || !to.local_shape || *from.local_shape != xr.shape ||
        *to.local_shape != dr.shape)
      throw LowerError{name + " of kernel '" + k_.name + "': the layouts " + from.text + " -> " + to.text +
                           " do not give the tiles' shapes (" + json(xr.shape).dump() + " -> " + json(dr.shape).dump() + ")",
                       c.span};
    if (!from.offset.empty() || !to.offset.empty())
      throw LowerError{name + " of kernel '" + k_.name + "' between layouts placed at mesh offsets; axe.lower moves "
                                                         "layouts over the whole mesh", c.span};
    s.shape = from.shape;
    s.written = from;
    s.read = to;
    for (Layout *l : {&s.written, &s.read}) {  // a tensor of x's logical shape in global memory, row-major
      l->mem = LayoutMem{};
      l->space = "GM";
      l->pending.clear();
      l->tile.clear();
      l->shape = from.shape;
      l->dtype = xr.dtype;
    }
    const size_t i = add_scratch(scratch, s);
    writer.epilogue.push_back(move("store", s.param, x, {0, 0}, c.span));
    writer.scratch.push_back({i, true});
    reader.scratch.push_back({i, false});
    reader.prologue.push_back(move("load", s.param, *c.dst, {0, 0}, c.span));
  }

  void handoff(const std::string &r, size_t from, size_t to, std::vector<PartPlan> &parts, std::vector<Scratch> &scratch) {
    const TileLocal &l = reg(r);
    if (l.is_scalar())
      throw LowerError{"scalar '" + r + "' of kernel '" + k_.name + "' is computed before a collective and used after "
                                                                    "it; axe.lower hands tiles between the parts, so "
                                                                    "compute it after the collective",
                       k_.span};
    auto it = handoffs_.find(r);
    if (it == handoffs_.end()) {
      Scratch s;
      s.param = fresh("carry_" + r);  // (backend-pto's own cut at cube/vector work names its hand-offs h_*)
      s.tensor = "_" + k_.name + "_carry_" + r;
      s.dtype = l.dtype;
      if (l.shape.size() != 2)
        throw LowerError{"register '" + r + "' of kernel '" + k_.name + "' is no tile", k_.span};
      s.written = core_slots(lf_, l.shape, l.dtype, slot_axes(nullptr, TileOp{}));
      s.read = s.written;
      s.shape = s.written.shape;
      it = handoffs_.emplace(r, add_scratch(scratch, s)).first;
    }
    const Scratch &s = scratch[it->second];
    auto has = [](const PartPlan &p, size_t i, bool w) {
      return std::find(p.scratch.begin(), p.scratch.end(), std::make_pair(i, w)) != p.scratch.end();
    };
    if (!has(parts[from], it->second, true)) {
      parts[from].epilogue.push_back(move("store", s.param, r, {0, 0}, k_.span));
      parts[from].scratch.push_back({it->second, true});
    }
    if (!has(parts[to], it->second, false)) {
      parts[to].prologue.insert(parts[to].prologue.begin(), move("load", s.param, r, {0, 0}, k_.span));
      parts[to].scratch.push_back({it->second, false});
    }
  }

  TileKernel k_;                              ///< the kernel, with the registers reduce_scatter's expansion adds
  const LayoutFunction &lf_;
  std::map<std::string, size_t> handoffs_;    ///< register -> its scratch
};

/// The launches of kernel `k` in `w`'s body become ordered groups of its parts' launches; false (with a
/// LowerError) for a launch under a loop or condition.
void relaunch(WspWorkload &w, const std::string &k, const std::vector<TileKernel> &parts,
              const std::vector<Scratch> &scratch, std::vector<WspNode> &body, bool nested, int64_t &next_id) {
  for (WspNode &n : body) {
    if (n.is_task() && n.kernel == k) {
      if (nested)
        throw LowerError{"workload '" + w.name + "' launches '" + k + "', whose collectives axe.lower cuts it at, "
                         "inside a loop or condition; axe.lower relaunches such a kernel at the top level of a "
                         "workload (or as a kernel entry) only", n.span};
      WspNode group;
      group.kind = "group";
      group.order = "ordered";
      group.span = n.span;
      for (size_t p = 0; p < parts.size(); ++p) {
        WspNode t = part_launch(n, parts[p], "t" + std::to_string(next_id++));  // (task ids: t<number>, unique)
        for (const TileParam &prm : parts[p].params)
          for (const Scratch &s : scratch) {
            if (s.param != prm.name) continue;
            WspArg a;
            a.param = prm.name;
            a.tensor = s.tensor;
            a.dir = prm.dir;
            a.offset.assign(s.shape.size(), json(0));
            a.shape = s.shape;
            t.args.push_back(a);
            record_view(t, a);
            add_intermediate(w, s.tensor, s.dtype, s.shape);
          }
        group.body.push_back(std::move(t));
      }
      n = std::move(group);
      continue;
    }
    relaunch(w, k, parts, scratch, n.body, nested || n.is_loop(), next_id);
    relaunch(w, k, parts, scratch, n.then_body, true, next_id);
    relaunch(w, k, parts, scratch, n.else_body, true, next_id);
  }
}

}  // namespace

void lower(htp::PassContext &ctx) {
  ModuleRef module = ctx.module();
  std::optional<TileKernels> kernels;
  std::optional<LayoutSignatures> layouts;
  std::optional<WspTaskGraph> tasks;
  try {
    kernels = tile_kernels(module);
    layouts = layout_signatures(module);
    tasks = wsp_task_graph(module);
  } catch (const std::exception &e) {
    ctx.error(module.root(), "layout.internal", std::string("axe.lower cannot read its input: ") + e.what());
    return;
  }
  if (!kernels || !layouts) return;
  bool changed = false;
  std::vector<TileKernel> out;
  for (const TileKernel &k : kernels->kernels) {
    const LayoutFunction *lf = layouts->function(k.name);
    const bool has = k.kind == "kernel" && std::any_of(k.body.begin(), k.body.end(), [](const TileOp &o) {
      bool found = false;
      for_each_op(std::vector<TileOp>{o}, [&](const TileOp &x) { found = found || is_collective_op(x); });
      return found;
    });
    if (!has || !lf) {
      out.push_back(k);
      continue;
    }
    try {
      std::vector<LayoutFunction> part_layouts;
      std::vector<Scratch> scratch;
      const LayoutFunction f = *lf;
      std::vector<TileKernel> parts = KernelSplit(k, f).run(part_layouts, scratch);
      const bool launched = tasks && launched_kernels(*tasks).count(k.name);
      if (!launched) {  // a kernel entry: the workload that launches it once
        if (!tasks) tasks.emplace();
        tasks->workloads.push_back(single_launch_workload(k));
      }
      for (WspWorkload &w : tasks->workloads) {
        int64_t next_id = 0;
        for_each_node(w.body, [&](const WspNode &x) {
          if (x.is_task() && x.id.size() > 1) next_id = std::max<int64_t>(next_id, std::stoll(x.id.substr(1)) + 1);
        });
        relaunch(w, k.name, parts, scratch, w.body, false, next_id);
      }
      auto &fns = layouts->functions;
      fns.erase(std::remove_if(fns.begin(), fns.end(), [&](const auto &e) { return e.first == k.name; }), fns.end());
      for (size_t p = 0; p < parts.size(); ++p) fns.emplace_back(parts[p].name, part_layouts[p]);
      for (TileKernel &p : parts) out.push_back(std::move(p));
      changed = true;
    } catch (const LowerError &e) {
      const IrSpan at = e.span.value_or(k.span);
      Host(ctx.api()).error(ctx.diag(), "layout.lower", e.message, at.source_span(module.file()));
      out.push_back(k);
    } catch (const std::exception &e) {  // a malformed attribute of layout-axe's own making
      Host(ctx.api()).error(ctx.diag(), "layout.internal",
                            "axe.lower cannot lower kernel '" + k.name + "' (a layout-axe bug): " + e.what(),
                            k.span.source_span(module.file()));
      out.push_back(k);
    }
  }
  if (!changed) return;
  kernels->kernels = std::move(out);
  nlohmann::ordered_json tk, ls, tg;
  to_json(tk, *kernels);
  to_json(ls, *layouts);
  to_json(tg, *tasks);
  try {  // what the backends will read: a document the SDK's readers reject is an axe.lower bug
    (void)read_tile_kernels(tk);
    (void)read_layout_signatures(ls);
    (void)read_wsp_task_graph(tg);
  } catch (const IrDocumentError &e) {
    ctx.error(module.root(), "layout.internal", std::string("axe.lower built an invalid document (a layout-axe bug): ") + e.what());
    return;
  }
  module.set_attr(kTileKernelsAttribute, tk.dump());
  module.set_attr(kLayoutSignaturesAttribute, ls.dump());
  module.set_attr(kWspTaskGraphAttribute, tg.dump());
}

} // namespace htp::axe
