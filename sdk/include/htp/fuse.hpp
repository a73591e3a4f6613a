// Fusing the two kernel launches that pass a workload intermediate, so that the intermediate stays in the
// memory of the core that runs them: how a backend honours the schedule directive `buffer(tensor, space)`
// for a core-local space (docs/dialects/wsp.md §2). The producer launch (writing the whole intermediate)
// and the consumer launch right after it (reading the whole intermediate) become one launch of a fused
// kernel `<producer>__<consumer>`: the producer's body without its store of the intermediate, then the
// consumer's body whose load of it is a copy of the stored register. The intermediate leaves the workload.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

namespace htp {

/// Why the launches passing an intermediate cannot be fused, and where.
struct FuseError {
  std::string message;
  IrSpan span;
};

namespace fuse_detail {

inline void rename_expr(nlohmann::json &e, const std::map<std::string, std::string> &names) {
  if (e.is_string()) {
    auto it = names.find(e.get<std::string>());
    if (it != names.end()) e = it->second;
  } else if (e.is_object()) {
    for (const char *key : {"var", "param"})
      if (e.contains(key) && e[key].is_string()) {
        auto it = names.find(e[key].get<std::string>());
        if (it != names.end()) e[key] = it->second;
      }
    for (auto &[k, v] : e.items())
      if (k != "var" && k != "param") rename_expr(v, names);
  } else if (e.is_array()) {
    for (auto &v : e) rename_expr(v, names);
  }
}

inline void rename_name(std::optional<std::string> &s, const std::map<std::string, std::string> &names) {
  if (!s) return;
  auto it = names.find(*s);
  if (it != names.end()) s = it->second;
}

/// Renames the registers and parameters `o` (and its nested statements) names.
inline void rename_op(TileOp &o, const std::map<std::string, std::string> &names) {
  rename_name(o.dst, names);
  rename_name(o.src, names);
  rename_name(o.var, names);
  if (o.args)
    for (auto &a : *o.args) rename_expr(a, names);
  if (o.offset)
    for (auto &a : *o.offset) rename_expr(a, names);
  for (auto *f : {&o.value, &o.scalar, &o.start, &o.stop, &o.step, &o.cond})
    if (*f) rename_expr(**f, names);
  for (auto *body : {&o.body, &o.then_body, &o.else_body})
    for (TileOp &c : *body) rename_op(c, names);
}

inline bool whole(const std::optional<std::vector<nlohmann::json>> &offset) {
  if (!offset) return true;
  for (const auto &o : *offset)
    if (o != nlohmann::json(0)) return false;
  return true;
}

/// The one top-level statement of `body` that is `op` on tensor parameter `param` (`store` writes it,
/// `load` reads it) at offset 0, when it is the only statement of `body` touching `param`.
inline std::optional<size_t> only_access(const std::vector<TileOp> &body, const std::string &op, const std::string &param) {
  size_t touches = 0;
  for_each_op(body, [&](const TileOp &o) { touches += (o.src && *o.src == param) || (o.dst && *o.dst == param); });
  if (touches != 1) return std::nullopt;
  for (size_t i = 0; i < body.size(); ++i) {
    const TileOp &o = body[i];
    const auto &name = op == "store" ? o.dst : o.src;
    if (o.op == op && name && *name == param && whole(o.offset)) return i;
  }
  return std::nullopt;
}

/// Where the task nodes launching with tensor `t` are: (the body holding it, its index).
inline void find_launches(std::vector<WspNode> &body, const std::string &t,
                          std::vector<std::pair<std::vector<WspNode> *, size_t>> &out) {
  for (size_t i = 0; i < body.size(); ++i) {
    WspNode &n = body[i];
    if (n.is_task()) {
      for (const WspArg &a : n.args)
        if (a.tensor && *a.tensor == t) {
          out.push_back({&body, i});
          break;
        }
    }
    for (auto *b : {&n.body, &n.then_body, &n.else_body}) find_launches(*b, t, out);
  }
}

}  // namespace fuse_detail

/// Where a message about buffer directive `b` of workload `w` points: the directive's call, else (a task graph
/// written without directive spans) the @schedule function, else the workload.
inline const IrSpan &directive_span(const WspWorkload &w, const WspBuffer &b) {
  return b.span ? *b.span : w.schedule.span ? *w.schedule.span : w.span;
}

/// Fuses the launches of workload `w` that pass intermediate `tensor` (see above); adds the fused kernel to
/// `kernels` (once per pair of kernels) and returns its name, or the reason it cannot.
inline std::variant<std::string, FuseError> fuse_through(TileKernels &kernels, WspWorkload &w, const std::string &tensor,
                                                         const IrSpan &directive, std::set<std::string> *fused_kernels = nullptr) {
  using namespace fuse_detail;
  const std::string what = "buffer(\"" + tensor + "\") of workload '" + w.name + "': ";
  auto fail = [&](const std::string &why, const IrSpan &at) -> std::variant<std::string, FuseError> {
    return FuseError{what + why, at};
  };
  auto im = std::find_if(w.intermediates.begin(), w.intermediates.end(),
                         [&](const WspIntermediate &i) { return i.name == tensor; });
  if (im == w.intermediates.end())
    return fail("'" + tensor + "' is a parameter; a parameter lives in the caller's memory (a core's memory holds an "
                "intermediate that two launches pass between them)", directive);
  std::vector<std::pair<std::vector<WspNode> *, size_t>> sites;
  find_launches(w.body, tensor, sites);
  if (sites.size() != 2 || sites[0].first != sites[1].first || sites[1].second != sites[0].second + 1)
    return fail("'" + tensor + "' stays in a core's memory when one launch writes it and the next launch in the same "
                "block reads it; it is passed by " + std::to_string(sites.size()) + " launch" +
                (sites.size() == 1 ? "" : "es") + (sites.size() == 2 ? " that are not consecutive" : ""), directive);
  std::vector<WspNode> &body = *sites[0].first;
  WspNode &prod = body[sites[0].second];
  const WspNode &cons = body[sites[1].second];
  auto arg_of = [&](const WspNode &n) -> const WspArg & {
    return *std::find_if(n.args.begin(), n.args.end(), [&](const WspArg &a) { return a.tensor && *a.tensor == tensor; });
  };
  for (const WspNode *n : {static_cast<const WspNode *>(&prod), &cons}) {  // (fusing drops one argument of each)
    std::vector<std::string> params;
    for (const WspArg &a : n->args)
      if (a.tensor && *a.tensor == tensor) params.push_back(a.param);
    if (params.size() > 1)
      return fail("the launch of '" + n->kernel + "' at line " + std::to_string(n->span.line) + " passes '" + tensor +
                  "' as '" + params[0] + "' and '" + params[1] + "'; fused launches pass it once (pass it once and "
                  "use it twice in the kernel, or drop the directive)", directive);
  }
  const WspArg &pa = arg_of(prod), &ca = arg_of(cons);
  std::vector<int64_t> shape;
  for (const IrDim &d : im->type.shape) shape.push_back(d.size);
  for (const WspArg *a : {&pa, &ca}) {
    bool is_whole = a->shape == shape;
    for (const auto &o : a->offset) is_whole = is_whole && o == nlohmann::json(0);
    if (!is_whole) return fail("the launch at line " + std::to_string((a == &pa ? prod : cons).span.line) +
                               " passes a part of '" + tensor + "'; fused launches pass it whole", directive);
  }
  if (pa.dir != "out" || ca.dir != "in")
    return fail("the first launch must write '" + tensor + "' (Out) and the second read it (In)", prod.span);
  const TileKernel *kp = kernels.find(prod.kernel), *kc = kernels.find(cons.kernel);
  if (!kp || !kc) return fail("a launched kernel is not in tile.kernels", prod.span);
  if (kp->mapping || kc->mapping)
    return fail("kernel '" + (kp->mapping ? kp->name : kc->name) + "' is mapped over a mesh; fused kernels are not",
                prod.span);
  auto store = only_access(kp->body, "store", pa.param);
  auto load = only_access(kc->body, "load", ca.param);
  if (!store) return fail("kernel '" + kp->name + "' must write '" + pa.param + "' by one whole store at the top of its "
                          "body (and not read it)", kp->span);
  if (!load) return fail("kernel '" + kc->name + "' must read '" + ca.param + "' by one whole load at the top of its "
                         "body", kc->span);
  const std::string value = kp->body[*store].value && kp->body[*store].value->is_string()
                                ? kp->body[*store].value->template get<std::string>() : "";
  if (value.empty()) return fail("kernel '" + kp->name + "' stores something other than a register", kp->span);
  const TileLocal *stored = kp->local(value);
  const TileLocal *loaded = kc->body[*load].dst ? kc->local(*kc->body[*load].dst) : nullptr;
  if (!stored || !loaded || stored->dtype != loaded->dtype || stored->shape != loaded->shape)
    return fail("kernel '" + kp->name + "' stores a register of another type or shape than kernel '" + kc->name +
                "' loads (the store converts it); fused, nothing would", kp->span);

  TileKernel f;
  f.name = kp->name + "__" + kc->name;
  f.kind = "kernel";
  f.span = kp->span;
  std::set<std::string> taken;
  for (const TileParam &p : kp->params) taken.insert(p.name);
  for (const TileLocal &l : kp->locals) taken.insert(l.name);
  std::map<std::string, std::string> names;  // the consumer's names that the producer's already use
  for (const TileParam &p : kc->params)
    if (taken.count(p.name)) names[p.name] = p.name + "__" + kc->name;
  for (const TileLocal &l : kc->locals)
    if (taken.count(l.name)) names[l.name] = l.name + "__" + kc->name;
  for (const TileParam &p : kp->params)
    if (p.name != pa.param) f.params.push_back(p);
  for (TileParam p : kc->params)
    if (p.name != ca.param) {
      if (names.count(p.name)) p.name = names[p.name];
      f.params.push_back(p);
    }
  f.locals = kp->locals;
  for (TileLocal l : kc->locals) {
    if (names.count(l.name)) l.name = names[l.name];
    f.locals.push_back(l);
  }
  for (size_t i = 0; i < kp->body.size(); ++i)
    if (i != *store) f.body.push_back(kp->body[i]);
  for (size_t i = 0; i < kc->body.size(); ++i) {
    TileOp o = kc->body[i];
    rename_op(o, names);
    if (i == *load) {  // the register the producer stored, instead of a load from global memory
      TileOp copy;
      copy.op = "copy";
      copy.dst = o.dst;
      copy.args = std::vector<nlohmann::json>{value};
      copy.span = o.span;
      o = copy;
    }
    f.body.push_back(o);
  }

  WspNode fused = prod;
  fused.kernel = f.name;
  fused.args.clear();
  fused.reads.clear();
  fused.writes.clear();
  const WspNode *first = &prod;
  for (const WspNode *n : {first, &cons})
    for (WspArg a : n->args) {
      if (a.tensor && *a.tensor == tensor) continue;
      if (n == &cons && names.count(a.param)) a.param = names[a.param];
      if (a.tensor) (a.dir == "in" ? fused.reads : fused.writes).push_back(*a.tensor);
      fused.args.push_back(a);
    }
  if (fused_kernels) fused_kernels->insert({kp->name, kc->name});
  const size_t at = sites[0].second;
  body[at] = std::move(fused);
  body.erase(body.begin() + static_cast<long>(at) + 1);
  w.intermediates.erase(im);
  const std::string name = f.name;
  if (!kernels.find(name)) kernels.kernels.push_back(std::move(f));
  return name;
}

/// Removes from `kernels` those of `names` that no workload of `tasks` launches any more (the kernels
/// fuse_through fused, when the fused launch was their only one).
inline void drop_unlaunched(TileKernels &kernels, const WspTaskGraph &tasks, const std::set<std::string> &names) {
  const std::set<std::string> launched = launched_kernels(tasks);
  std::erase_if(kernels.kernels, [&](const TileKernel &k) { return names.count(k.name) && !launched.count(k.name); });
}

/// Honours the buffer(T, space) directives of every workload of `tasks` whose space `keep(space)` says is a
/// core's memory: fuses through T (fuse_through), calls done(workload, directive, result) for each, then
/// drops the kernels no launch is left of.
template <class Keep, class Done>
void fuse_buffers(TileKernels &kernels, WspTaskGraph &tasks, Keep &&keep, Done &&done) {
  std::set<std::string> fused;
  for (WspWorkload &w : tasks.workloads) {
    if (!w.schedule.buffer) continue;
    for (const WspBuffer &b : *w.schedule.buffer)
      if (keep(b.space)) done(w, b, fuse_through(kernels, w, b.tensor, directive_span(w, b), &fused));
  }
  drop_unlaunched(kernels, tasks, fused);
}

}  // namespace htp
