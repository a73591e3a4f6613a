#include "orchestration_emitter.hpp"

#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <htp/dtype_range.hpp>

#include "dtype.hpp"
#include "expr_cpp.hpp"
#include "runtime_api.hpp"

namespace ptobe {

namespace {

/// A tensor argument of a task: the kernel parameter and the view of an orchestration tensor.
struct TaskTensor {
  const Param *param;
  std::string tensor;              ///< C++ variable of the whole tensor
  std::vector<std::string> offset; ///< per tensor dim (empty: the whole tensor)
  std::vector<std::string> shape;
  std::string where = {};          ///< the launch's source location: set when offsets depend on runtime data
  std::string name = {};           ///< the tensor's name in the program (for that check's message)
  /// Adjacent dimension swaps that move the unit dimensions an integer index dropped (`O[b, i, :]` for a
  /// rank-2 parameter) in front of the kept ones: kernels address a view by its last dimensions.
  std::vector<std::pair<int, int>> swaps = {};
};

/// The swaps that bring the view's dropped dimensions to the front (TaskTensor::swaps): `view` is the
/// view's static shape (the tensor's rank), `param` the kernel parameter's (its rank or fewer dims).
/// Dimensions are matched from the right; a unit view dimension the parameter lacks was dropped.
std::vector<std::pair<int, int>> dropped_dim_swaps(const std::vector<int64_t> &view, const std::vector<int64_t> &param) {
  std::vector<bool> dropped(view.size(), false);
  int j = static_cast<int>(param.size()) - 1;
  for (int d = static_cast<int>(view.size()) - 1; d >= 0; --d) {
    if (j >= 0 && view[static_cast<size_t>(d)] == param[static_cast<size_t>(j)]) --j;
    else if (view[static_cast<size_t>(d)] == 1) dropped[static_cast<size_t>(d)] = true;
    else return {};  // not a dropped-dimension view: left as it is
  }
  std::vector<std::pair<int, int>> swaps;
  int front = 0;
  for (int d = 0; d < static_cast<int>(view.size()); ++d) {
    if (!dropped[static_cast<size_t>(d)]) continue;
    for (int x = d; x > front; --x) swaps.emplace_back(x - 1, x);
    ++front;
  }
  return swaps;
}

/// Writes one orchestration source: parameter binding, then statements with indentation.
class OrchestrationWriter {
public:
  OrchestrationWriter(std::string entry, const Origin &origin) : entry_(std::move(entry)), origin_(origin) {
    names_.var = [](const std::string &n) { return "v_" + n; };
    names_.param = [](const std::string &n) { return "p_" + n; };
    names_.checked = true;
    names_.read = [this](const std::string &t, const std::vector<std::string> &idx) {
      auto it = tensor_dtype_.find(t);
      if (it == tensor_dtype_.end()) throw IrError("'" + entry_ + "' reads '" + t + "', which is not a tensor parameter");
      return rt::read_element(at_, "w_" + t, t, std::string(dtype(it->second).cpp), idx);
    };
  }

  /// Where the statements written next are in the program ("moe.py:38:9"), for the messages of tensor reads
  /// and of a division by 0.
  void at(std::string where) {
    names_.where = nlohmann::json(where).dump();
    at_ = std::move(where);
  }

  std::string expr(const json &e) const { return expr_to_cpp(e, names_); }
  const Origin &origin() const { return origin_; }
  void line(const std::string &text) { body_ << indent_ << text << "\n"; }
  void raw(const std::string &text) { body_ << text; }
  void open(const std::string &head) {
    line(head.empty() ? "{" : head + " {");
    indent_ += "    ";
    // every loop iteration polls the simulator's time limit (nothing on the device)
    if (head.rfind("for ", 0) == 0 || head.rfind("while ", 0) == 0) line("HTP_TICK();");
  }
  void close() { indent_.resize(indent_.size() - 4); line("}"); }
  const std::string &indent() const { return indent_; }
  std::string fresh(const std::string &stem) { return stem + std::to_string(counter_++); }

  /// Binds the entry parameters (tensors first, then scalars) and the dimension symbols; `at` is the entry's
  /// definition (its parameters carry no span of their own).
  std::vector<EntryParam> bind(std::vector<EntryParam> out, const Span &at) {
    for (const EntryParam &e : out)
      if (e.kind != "tensor" && e.kind != "scalar")
        throw IrError("entry '" + entry_ + "' parameter '" + e.name + "' is a " + e.kind + "; entries take tensors and scalars");
    int index = 0;
    for (const EntryParam &e : out) {
      if (e.kind != "tensor") continue;
      for (const json &d : e.shape)  // (pto-runtime's tensors hold uint32_t extents, as for intermediates)
        if (d.is_number_integer() && d.get<int64_t>() > int64_t{UINT32_MAX})
          throw IrError("parameter '" + e.name + "' of '" + entry_ + "' has the dimension " + d.dump() +
                            ", past the 4294967295 elements pto-runtime's tensors take per dimension: spread it over "
                            "one more dimension",
                        at, "pto.unsupported");
      tensor_dtype_[e.name] = e.dtype;
      raw(rt::entry_tensor(index++, "w_" + e.name));
      for (size_t d = 0; d < e.shape.size(); ++d)
        if (e.shape[d].is_string() && symbols_.insert(e.shape[d].get<std::string>()).second)
          raw("    const int64_t p_" + e.shape[d].get<std::string>() + " = " +
              rt::tensor_dim("w_" + e.name, static_cast<int>(d)) + ";\n");
    }
    // Scalars are numbered on their own: the runtime keeps them in a separate array (args.scalar(0) is
    // the first scalar, whatever the number of tensors before it).
    int scalar_index = 0;
    for (const EntryParam &e : out) {
      if (e.kind != "scalar") continue;
      DType t = dtype(e.dtype);
      raw(rt::entry_scalar(scalar_index++, "p_" + e.name, std::string(t.cpp), t.is_float));
    }
    arg_count_ = index + scalar_index;
    return out;
  }

  /// An intermediate tensor; a dimension may be a symbol a parameter's shape binds (`T: Tensor["R", 32, f32]`
  /// beside `X: In[Tensor["R", 32, f32]]`): allocated at run time at that size.
  void intermediate(const std::string &name, const std::vector<htp::IrDim> &dims, const std::string &dt,
                    const Span &span = {}) {
    std::vector<std::string> shape;
    for (const htp::IrDim &d : dims) {
      if (d.is_symbol() && !symbols_.count(d.symbol))
        throw IrError("intermediate '" + name + "' of '" + entry_ + "' has the dimension " + json(d).dump() +
                          ", which no parameter's shape binds: name it in a parameter's shape, or give a number",
                      span, "pto.unsupported");
      if (!d.is_symbol() && d.size > int64_t{UINT32_MAX})  // (TensorCreateInfo's extents are uint32_t)
        throw IrError("intermediate '" + name + "' of '" + entry_ + "' has the dimension " + std::to_string(d.size) +
                          ", past the 4294967295 elements pto-runtime's tensors take per dimension: spread it over "
                          "one more dimension",
                      span, "pto.unsupported");
      shape.push_back(d.is_symbol() ? "p_" + d.symbol : std::to_string(d.size));
    }
    tensor_dtype_[name] = dt;
    raw(rt::create_intermediate("w_" + name, shape, std::string(dtype(dt).runtime), indent_));
  }

  /// Tracks the pending readers of the tensors (C++ variables) that tasks both read and write, so that a
  /// write waits for them (pto-runtime orders writes after earlier writers only, rt::HtpReaders).
  void track(const std::set<std::string> &tensors) {
    tracked_ = tensors;
    for (const std::string &t : tracked_) raw(rt::readers_decl(readers(t), indent_));
  }

  /// Emits one task of kernel `unit` with its tensors (kernel order) and scalar values.
  void task(const KernelUnit &unit, const std::string &label, const std::vector<TaskTensor> &tensors,
            const std::vector<std::string> &scalars, const std::string &key, const std::string &stream) {
    if (tensors.size() > rt::kMaxTaskTensors || scalars.size() > rt::kMaxTaskScalars)
      throw IrError("kernel '" + unit.kernel.name + "' takes " + std::to_string(tensors.size()) + " tensors and " +
                    std::to_string(scalars.size()) + " scalars; a pto-runtime task takes at most 32 and 16",
                    unit.kernel.span, "pto.unsupported");
    const std::string t = fresh("task");
    line("{  // " + label);
    indent_ += "    ";
    // The view variable of argument i: run r > 0 of a repeated kernel gets "_r<r>".
    const size_t per_run = std::max<size_t>(1, unit.kernel.tensor_params().size());
    auto var = [&](size_t i) {
      return t + "_" + tensors[i].param->name + (i >= per_run ? "_r" + std::to_string(i / per_run) : "");
    };
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TaskTensor &a = tensors[i];
      if (a.offset.empty()) continue;
      if (!a.where.empty())
        line(rt::check_view(a.where, a.name, "kernel '" + unit.kernel.name + "', parameter '" + a.param->name + "'",
                            a.tensor, a.offset, a.shape));
      raw(rt::tensor_view(var(i), a.tensor, a.shape, a.offset, indent_));
      for (const auto &[x, y] : a.swaps)
        line(var(i) + " = " + var(i) + ".transpose(" + std::to_string(x) + ", " +
             std::to_string(y) + ");");
    }
    const std::vector<std::string> boxes = tracked_boxes(t, tensors);
    raw(indent_ + rt::task_args_decl(t + "_args"));
    write_after_read(t, tensors, boxes);
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TaskTensor &a = tensors[i];
      const std::string view = a.offset.empty() ? a.tensor : var(i);
      if (!boxes[i].empty() && a.param->dir == "in")
        raw(rt::task_add_tracked_read(t + "_args", view, readers(a.tensor), boxes[i] + "_tracked", indent_));
      else
        raw(indent_ + rt::task_add_tensor(t + "_args", a.param->dir, view));
    }
    const auto sp = unit.kernel.scalar_params();
    for (size_t i = 0; i < scalars.size(); ++i) {  // a repeated kernel's runs, one after the other
      DType d = dtype(sp[i % sp.size()]->dtype);
      raw(indent_ + rt::task_add_scalar(t + "_args", scalars.at(i), std::string(d.cpp), d.is_float));
    }
    if (!key.empty() || !stream.empty())
      raw(rt::sim_hint(t + "_args", key.empty() ? "-1" : key, stream.empty() ? "-1" : stream, indent_));
    raw(indent_ + rt::submit(unit.plan.core, unit.func_id, t + "_args", t + "_outs"));
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!boxes[i].empty() && tensors[i].param->dir == "in")
        raw(rt::record_read(readers(tensors[i].tensor), boxes[i] + "_tracked", t + "_outs", boxes[i], indent_));
    line("(void)" + t + "_outs;");
    close();
  }

  std::string finish(const std::string &description) const {
    std::ostringstream out;
    out << "// Orchestration of " << description << " (" << origin_.file << "): generated by HTP backend-pto for "
        << origin_.target << ".\n// pto-runtime " << rt::kRuntimeRevision << " (" << rt::kRuntimeVariant
        << "): tasks are ordered by the directions of their tensor arguments.\n"
        << rt::orchestration_prologue() << "\n"
        << (tracked_.empty() ? std::string() : rt::readers_helpers() + "\n")
        << expr_helpers_cpp() << "\n"
        << "extern \"C\" {\n\n"
        << rt::orchestration_config(arg_count_) << "\n"
        << rt::orchestration_entry_open() << body_.str() << rt::orchestration_close() << "\n}  // extern \"C\"\n";
    return out.str();
  }

  int arg_count() const { return arg_count_; }

private:
  static std::string readers(const std::string &tensor) { return "war_" + tensor; }

  /// The box of each argument of a tracked tensor (its variable name; empty for the others).
  std::vector<std::string> tracked_boxes(const std::string &t, const std::vector<TaskTensor> &tensors) {
    std::vector<std::string> boxes(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TaskTensor &a = tensors[i];
      if (!tracked_.count(a.tensor)) continue;
      if (a.offset.size() > rt::kMaxBoxRank)
        throw IrError("a task views '" + a.tensor.substr(2) + "' with rank " + std::to_string(a.offset.size()) +
                      "; backend-pto orders writes after reads of views up to rank " +
                      std::to_string(rt::kMaxBoxRank), {}, "pto.unsupported");
      boxes[i] = t + "_box" + std::to_string(i);
      raw(rt::box_decl(boxes[i], a.offset, a.shape, indent_));
    }
    return boxes;
  }

  /// A task that writes tracked tensors depends on their pending readers that its boxes overlap.
  void write_after_read(const std::string &t, const std::vector<TaskTensor> &tensors,
                        const std::vector<std::string> &boxes) {
    size_t writes = 0;
    for (size_t i = 0; i < tensors.size(); ++i) writes += !boxes[i].empty() && tensors[i].param->dir != "in";
    if (writes == 0) return;
    const std::string deps = t + "_deps";
    raw(rt::deps_decl(deps, writes, indent_));
    for (size_t i = 0; i < tensors.size(); ++i)
      if (!boxes[i].empty() && tensors[i].param->dir != "in")
        raw(rt::deps_add_readers(deps, readers(tensors[i].tensor), boxes[i], indent_));
    raw(rt::set_dependencies(t + "_args", deps, indent_));
  }

  std::set<std::string> tracked_;
  std::string entry_;
  std::string at_ = "<program>";
  Origin origin_;
  ExprNames names_;
  std::map<std::string, std::string> tensor_dtype_;
  std::set<std::string> symbols_;  ///< dimension symbols the entry parameters bind (p_<symbol>)
  std::ostringstream body_;
  std::string indent_ = "    ";
  int counter_ = 0;
  int arg_count_ = 0;
};

const KernelUnit &find_kernel(const KernelIndex &kernels, const std::string &name, const Span &span) {
  auto it = kernels.find(name);
  if (it == kernels.end()) throw IrError("task launches kernel '" + name + "', which tile.kernels does not define", span);
  return *it->second;
}

/// The tensors (C++ variables) some task reads (an "in" argument) and some task writes: their writes
/// must wait for the reads before them (OrchestrationWriter::track).
std::set<std::string> read_and_written(const std::set<std::string> &reads, const std::set<std::string> &writes) {
  std::set<std::string> both;
  for (const std::string &t : reads)
    if (writes.count(t)) both.insert(t);
  return both;
}

/// The tensors the tasks of a task-graph body read and write (undefined kernels are reported when emitted).
void collect_accesses(const std::vector<htp::WspNode> &nodes, const KernelIndex &kernels, std::set<std::string> &reads,
                      std::set<std::string> &writes) {
  htp::for_each_node(nodes, [&](const htp::WspNode &n) {
    if (!n.is_task()) return;
    auto k = kernels.find(n.kernel);
    if (k == kernels.end()) return;
    for (const htp::WspArg &a : n.args) {
      if (!a.is_view()) continue;
      for (const Param &p : k->second->kernel.params)
        if (p.is_tensor() && p.name == a.param) (p.dir == "in" ? reads : writes).insert("w_" + *a.tensor);
    }
  });
}

std::string span_label(const Span &s) { return s.line ? ":" + std::to_string(s.line) : std::string(); }

/// The submission counter of workloads whose schedule has streams(n) without stream_by.
constexpr const char *kTaskIndex = "htp_task_index";

/// `e` with every {"var": name} replaced by `with`.
json substitute(const json &e, const std::string &name, const json &with) {
  if (e.is_object()) {
    if (e.size() == 1 && e.contains("var") && e["var"] == name) return with;
    json out = json::object();
    for (const auto &[k, v] : e.items()) out[k] = substitute(v, name, with);
    return out;
  }
  if (e.is_array()) {
    json out = json::array();
    for (const json &v : e) out.push_back(substitute(v, name, with));
    return out;
  }
  return e;
}

json add_expr(const json &a, const json &b) { return {{"op", "add"}, {"args", json::array({a, b})}}; }

/// tile(axis, f) of a schedule: axis -> f.
std::map<std::string, int64_t> tile_factors(const htp::WspSchedule &s) {
  std::map<std::string, int64_t> out;
  if (s.tile)
    for (const htp::WspTileFactor &t : *s.tile) out[t.axis] = t.factor;
  return out;
}

/// The extent of loop variable `i` of loop `n` (dense: its own; seq: the loop's).
const json &loop_extent(const htp::WspNode &n, size_t i) {
  return n.domain.type == "dense" ? n.domain.extents.at(i) : n.domain.extent;
}

/// How loop `n` groups its iterations under tile(axis, f): the runs of one task from the tiled variables it
/// binds (1: none is tiled), and whether the last variable's extent leaves a remainder (not a multiple of
/// f, or known only at run time): its last iterations then run one per task after the blocks.
struct Tiling {
  int64_t runs = 1;
  bool remainder = false;
};

/// Tiling of loop `n`; throws IrError (pto.schedule-tile) for a tiled loop whose iterations cannot be grouped.
Tiling tiling_of(const htp::WspNode &n, const std::map<std::string, int64_t> &factors, const std::string &workload) {
  Tiling t;
  for (size_t i = 0; i < n.vars.size(); ++i) {
    auto f = factors.find(n.vars[i]);
    if (f == factors.end() || f->second == 1) continue;
    const std::string what = "tile(\"" + f->first + "\", " + std::to_string(f->second) + ") of workload '" + workload + "': ";
    auto fail = [&](const std::string &why) { throw IrError(what + why, Span::from(n.span), "pto.schedule-tile"); };
    if (n.domain.type != "dense" && n.domain.type != "seq")
      fail("axis '" + f->first + "' is a " + n.domain.type + " loop; backend-pto groups the iterations of dense and P.seq loops");
    const json &e = loop_extent(n, i);
    const bool exact = e.is_number_integer() && e.get<int64_t>() % f->second == 0;
    if (!exact) {
      const std::string extent = e.is_number_integer() ? "extent " + std::to_string(e.get<int64_t>()) + ", not a multiple of " +
                                                             std::to_string(f->second)
                                                       : "an extent known only at run time";
      if (i + 1 != n.vars.size() || t.runs > 1)
        fail("axis '" + f->first + "' has " + extent + ", and backend-pto runs a remainder only for the last variable "
             "of a loop, when no other is tiled");
      t.remainder = true;
    }
    for (const htp::WspNode &b : n.body)
      if (!b.is_task())
        fail("the loop over '" + f->first + "' holds a " + b.kind + "; backend-pto groups loops whose body is kernel launches");
    if (n.domain.type == "seq" && n.body.size() != 1)
      fail("the P.seq loop over '" + f->first + "' launches " + std::to_string(n.body.size()) +
           " kernels; grouping its iterations would reorder them (a sequential loop is grouped when it launches one)");
    t.runs *= f->second;
  }
  return t;
}

/// Calls f(task, runs) for every task of `body`, runs being the product of the tile factors of the loops
/// around it (and once more with the runs outside a loop that has a remainder, for the remainder's tasks).
template <class F>
void for_each_tiled_task(const std::vector<htp::WspNode> &body, const std::map<std::string, int64_t> &factors,
                         const std::string &workload, int64_t runs, F &&f) {
  for (const htp::WspNode &n : body) {
    if (n.is_task()) f(n, runs);
    const Tiling t = n.is_loop() ? tiling_of(n, factors, workload) : Tiling{};
    for (const auto *b : {&n.body, &n.then_body, &n.else_body}) {
      for_each_tiled_task(*b, factors, workload, runs * t.runs, f);
      if (t.remainder) for_each_tiled_task(*b, factors, workload, runs, f);
    }
  }
}

std::string repeated_name(const std::string &kernel, int64_t runs) { return kernel + "__x" + std::to_string(runs); }

/// An intermediate that pipeline(n) gives n slots: iteration v of its sequential loop uses slot v % n.
struct Rotation {
  std::string var;
  int64_t depth;
};

/// The intermediates of `w` that pipeline(depth) rotates: each is used only inside one P.seq loop (the
/// innermost such loop), whose body first writes it whole (an Out view of the whole tensor), so no
/// iteration reads what an earlier one wrote and n iterations can hold n copies.
std::map<std::string, Rotation> rotations(const htp::WspWorkload &w, int64_t depth) {
  std::map<std::string, Rotation> out;
  if (depth < 2) return out;
  std::map<std::string, int> total;
  htp::for_each_node(w.body, [&](const htp::WspNode &n) {
    for (const htp::WspArg &a : n.args)
      if (a.tensor) ++total[*a.tensor];
  });
  std::function<void(const std::vector<htp::WspNode> &)> walk = [&](const std::vector<htp::WspNode> &body) {
    for (const htp::WspNode &n : body) {
      for (const auto *b : {&n.body, &n.then_body, &n.else_body}) walk(*b);  // inner loops first
      if (!n.is_loop() || n.domain.type != "seq") continue;
      std::map<std::string, int> inside;
      std::map<std::string, const htp::WspArg *> first;
      htp::for_each_node(n.body, [&](const htp::WspNode &t) {
        for (const htp::WspArg &a : t.args)
          if (a.tensor && ++inside[*a.tensor] == 1) first[*a.tensor] = &a;
      });
      for (const htp::WspIntermediate &im : w.intermediates) {
        if (out.count(im.name) || !inside.count(im.name) || inside[im.name] != total[im.name]) continue;
        const htp::WspArg &a = *first[im.name];
        bool whole = a.dir == "out" && a.shape.size() == im.type.shape.size();
        for (size_t d = 0; whole && d < a.shape.size(); ++d)
          whole = a.offset[d] == json(0) && !im.type.shape[d].is_symbol() && a.shape[d] == im.type.shape[d].size;
        if (whole) out[im.name] = {n.vars.at(0), depth};
      }
    }
  };
  walk(w.body);
  return out;
}


/// The view of one core's part of a tensor under a dist layout: per tensor dimension, the offset (C++, in
/// the mesh coordinates `v_mesh<i>`) and the local extent. Replicated dimensions are whole.
std::pair<std::vector<std::string>, std::vector<std::string>> shard_view(const Param &p, const htp::Layout &l,
                                                                         const htp::LayoutFunction &f,
                                                                         const KernelUnit &k) {
  std::vector<std::string> offset(p.global_shape.size(), "0"), shape;
  for (int64_t d : p.shape) shape.push_back(std::to_string(d));
  std::set<int64_t> seen;
  if (!l.offset.empty())
    throw IrError("layout " + l.text + " of '" + p.name + "' of '" + k.kernel.name + "' places it at mesh offset " +
                      l.offset.front().first + " = " + std::to_string(l.offset.front().second) +
                      " (a sub-mesh); backend-pto lowers layouts over the whole mesh",
                  k.kernel.span, "pto.unsupported");
  for (const htp::LayoutIter &it : l.shard) {
    if (!it.dim || *it.dim < 0 || size_t(*it.dim) >= offset.size()) continue;
    if (!seen.insert(*it.dim).second)
      throw IrError("parameter '" + p.name + "' of '" + k.kernel.name + "' has layout " + l.text +
                        ", which splits dimension " + std::to_string(*it.dim) +
                        " over several mesh axes; backend-pto lowers one mesh axis per dimension",
                    k.kernel.span, "pto.unsupported");
    size_t axis = f.mesh.size();
    for (size_t a = 0; a < f.mesh.size(); ++a)
      if (f.mesh[a].first == it.axis) axis = a;
    if (axis == f.mesh.size())
      throw IrError("layout " + l.text + " of '" + p.name + "' shards over mesh axis '" + it.axis + "', which kernel '" +
                        k.kernel.name + "' is not mapped over",
                    k.kernel.span, "pto.unsupported");
    if (it.stride != 1 || it.extent != f.mesh[axis].second)
      throw IrError("layout " + l.text + " of '" + p.name + "' of '" + k.kernel.name + "' shards dimension " +
                        std::to_string(*it.dim) + " over " + std::to_string(it.extent) + " of the " +
                        std::to_string(f.mesh[axis].second) + " coordinates of mesh axis '" + it.axis + "' (stride " +
                        std::to_string(it.stride) + "); backend-pto lowers block shards over a whole mesh axis",
                    k.kernel.span, "pto.unsupported");
    offset[size_t(*it.dim)] = "v_mesh" + std::to_string(axis) + " * " + std::to_string(p.shape[size_t(*it.dim)]);
  }
  return {offset, shape};
}

/// The view of one core's part of tensor parameter `p` of mapped kernel `k` (`f` its layouts, shard_view), or
/// nullopt for a tensor without a dist layout, which every core sees whole.
std::optional<std::pair<std::vector<std::string>, std::vector<std::string>>> core_view(const Param &p,
                                                                                       const htp::LayoutFunction &f,
                                                                                       const KernelUnit &k,
                                                                                       const Span &span) {
  const htp::Layout *l = f.param(p.name);
  if (l && !l->shard.empty()) return shard_view(p, *l, f, k);
  if (p.shape != p.global_shape)
    throw IrError("parameter '" + p.name + "' of mapped kernel '" + k.kernel.name + "' has a local shape but no dist layout",
                  span, "pto.unsupported");
  return std::nullopt;
}

/// Opens the loops over the coordinates `v_mesh0`, `v_mesh1`, ... of `mesh` (one close() each).
void open_mesh(OrchestrationWriter &out, const std::vector<int64_t> &mesh) {
  for (size_t a = 0; a < mesh.size(); ++a)
    out.open("for (int64_t v_mesh" + std::to_string(a) + " = 0; v_mesh" + std::to_string(a) + " < " +
             std::to_string(mesh[a]) + "; ++v_mesh" + std::to_string(a) + ")");
}

/// Lowers the nodes of a workload body (docs/ir-contracts.md §5).
class WorkloadLowering {
public:
  WorkloadLowering(OrchestrationWriter &w, const KernelIndex &k, const htp::WspWorkload &workload,
                   std::map<std::string, Rotation> rotated, const htp::LayoutSignatures *layouts)
      : w_(w), kernels_(k), workload_(workload), schedule_(workload.schedule), factors_(tile_factors(schedule_)),
        rotated_(std::move(rotated)), layouts_(layouts) {}

  void nodes(const std::vector<htp::WspNode> &body) {
    for (const htp::WspNode &n : body) node(n);
  }

private:
  void node(const htp::WspNode &n) {
    w_.at(where(n));
    if (n.is_loop()) return loop(n);
    if (n.is_when()) return when(n);
    if (n.is_group()) {
      w_.open("");
      nodes(n.body);
      w_.close();
      return;
    }
    return task(n);
  }

  void for_range(const std::string &var, const std::string &lo, const std::string &hi, bool runtime_bound) {
    w_.open("for (int64_t v_" + var + " = " + lo + "; v_" + var + " < " + hi + "; ++v_" + var + ")");
    in_scope_.insert(var);
    if (runtime_bound) runtime_vars_.insert(var);
  }

  /// Whether expression `e` takes values the compile-time bounds check could not enumerate: it reads a
  /// tensor or a scalar parameter, or a loop variable over a runtime extent (ragged, sparse, DenseDyn).
  bool runtime_expr(const json &e) const {
    if (e.is_object()) {
      if (e.contains("read") || e.contains("param")) return true;
      if (e.contains("var")) return e["var"].is_string() && runtime_vars_.count(e["var"].get<std::string>()) > 0;
      for (const auto &[k, v] : e.items())
        if (runtime_expr(v)) return true;
      return false;
    }
    if (e.is_array())
      for (const json &v : e)
        if (runtime_expr(v)) return true;
    return false;
  }

  /// "moe.py:38:9": where a construct is in the source, for run-time messages (the file's name only, so
  /// generated code is the same on every machine).
  std::string where(const htp::WspNode &node) const {
    const Span s = Span::from(node.span);
    const std::string path = s.file.empty() ? w_.origin().file : s.file;  // task-graph spans carry no file
    const std::string file = path.substr(path.find_last_of('/') + 1);
    return (file.empty() ? std::string("<program>") : file) + ":" + std::to_string(s.line) + ":" +
           std::to_string(s.col + 1);
  }

  void loop(const htp::WspNode &n) {
    const htp::WspDomain &d = n.domain;
    const std::string &type = d.type;
    const std::vector<std::string> &vars = n.vars;
    int opened = 0;
    const size_t tiled_before = tiled_.size();
    const Tiling tiling = tiling_of(n, factors_, workload_.name);
    if (tiling.remainder) return tiled_loop_with_remainder(n);
    if (tiling.runs > 1) {  // tile(axis, f): a loop over blocks of f iterations
      for (size_t i = 0; i < vars.size(); ++i, ++opened) {
        auto f = factors_.find(vars[i]);
        if (f == factors_.end() || f->second == 1) {
          for_range(vars[i], "0", w_.expr(loop_extent(n, i)), runtime_expr(loop_extent(n, i)));
          continue;
        }
        open_blocks(vars[i], f->second, std::to_string(loop_extent(n, i).get<int64_t>() / f->second));
      }
    } else if (type == "dense") {
      if (d.extents.size() < vars.size())
        throw IrError("a dense loop over " + std::to_string(vars.size()) + " variables has " +
                      std::to_string(d.extents.size()) + " extents", Span::from(n.span));
      for (size_t i = 0; i < vars.size(); ++i, ++opened)
        for_range(vars[i], "0", w_.expr(d.extents[i]), runtime_expr(d.extents[i]));
    } else if (type == "seq") {
      for_range(vars.at(0), "0", w_.expr(d.extent), runtime_expr(d.extent));
      opened = 1;
    } else if (type == "ragged") {
      for_range(vars.at(0), "0", w_.expr(d.extent), runtime_expr(d.extent));
      const json len = {{"read", d.lengths}, {"index", json::array({json{{"var", vars.at(0)}}})}};
      const std::string length = w_.fresh("len");
      w_.line("const int64_t " + length + " = " + w_.expr(len) + ";");
      w_.line(rt::check_length(where(n), d.lengths, "v_" + vars.at(0), length));
      for_range(vars.at(1), "0", length, true);
      opened = 2;
    } else if (type == "sparse") {
      const json &row = d.row;
      const json row1 = {{"op", "add"}, {"args", json::array({row, 1})}};
      const std::string k = w_.fresh("nz");
      const json lo = {{"read", d.indptr}, {"index", json::array({row})}};
      const json hi = {{"read", d.indptr}, {"index", json::array({row1})}};
      const std::string &indices = d.indices;
      w_.line("const int64_t " + k + "_lo = " + w_.expr(lo) + ";");
      w_.line("const int64_t " + k + "_hi = " + w_.expr(hi) + ";");
      w_.line(rt::check_csr_row(where(n), d.indptr, w_.expr(row), k + "_lo",
                                k + "_hi", rt::tensor_dim("w_" + indices, 0)));
      w_.open("for (int64_t " + k + " = " + k + "_lo; " + k + " < " + k + "_hi; ++" + k + ")");
      w_.line("const int64_t v_" + vars.at(0) + " = " + rt::read_element(where(n), "w_" + indices, indices, "int32_t", {k}) + ";");
      in_scope_.insert(vars.at(0));
      runtime_vars_.insert(vars.at(0));
      opened = 1;
    } else {
      throw IrError("unknown loop domain '" + type + "'", Span::from(n.span));
    }
    nodes(n.body);
    for (int i = 0; i < opened; ++i) w_.close();
    tiled_.resize(tiled_before);
    for (const auto &v : vars) {
      in_scope_.erase(v);
      runtime_vars_.erase(v);
    }
  }

  /// Opens the loop over `blocks` blocks of f iterations of tiled variable `var` (tile(var, f)): its body
  /// sees v_<var> = the block's first iteration, and its tasks run f iterations each (close and pop tiled_).
  void open_blocks(const std::string &var, int64_t f, const std::string &blocks) {
    const std::string v = "v_" + var;
    w_.open("for (int64_t " + v + "__t = 0; " + v + "__t < " + blocks + "; ++" + v + "__t)");
    w_.line("const int64_t " + v + " = " + v + "__t * " + std::to_string(f) + ";  // tile(\"" + var + "\", " +
            std::to_string(f) + "): the block's first iteration");
    in_scope_.insert(var);
    tiled_.push_back({var, f});
  }

  /// A loop whose last variable is tiled by f and whose extent e is not a multiple of it (or known only at
  /// run time): blocks of f iterations as one task each, then the last e % f iterations one per task.
  void tiled_loop_with_remainder(const htp::WspNode &n) {
    const std::vector<std::string> &vars = n.vars;
    for (size_t i = 0; i + 1 < vars.size(); ++i)
      for_range(vars[i], "0", w_.expr(loop_extent(n, i)), runtime_expr(loop_extent(n, i)));
    const std::string &var = vars.back();
    const int64_t f = factors_.at(var);
    const json &extent = loop_extent(n, vars.size() - 1);
    const std::string v = "v_" + var, e = v + "__extent";
    w_.open("");  // (a scope of its own: another loop over a variable of this name declares its extent too)
    w_.line("const int64_t " + e + " = " + w_.expr(extent) + ";  // tile(\"" + var + "\", " + std::to_string(f) +
            "): blocks of " + std::to_string(f) + ", then the rest one by one");
    open_blocks(var, f, e + " / " + std::to_string(f));
    if (runtime_expr(extent)) runtime_vars_.insert(var);
    nodes(n.body);
    tiled_.pop_back();
    w_.close();
    w_.open("for (int64_t " + v + " = " + e + " / " + std::to_string(f) + " * " + std::to_string(f) + "; " + v + " < " +
            e + "; ++" + v + ")");
    nodes(n.body);
    w_.close();
    w_.close();  // (the extent's scope)
    for (size_t i = 0; i + 1 < vars.size(); ++i) w_.close();
    for (const auto &x : vars) {
      in_scope_.erase(x);
      runtime_vars_.erase(x);
    }
  }

  void when(const htp::WspNode &n) {
    w_.open("if (" + w_.expr(n.cond) + ")");
    nodes(n.then_body);
    if (!n.else_body.empty()) {
      w_.close();
      w_.open("else");
    }
    nodes(n.else_body);
    w_.close();
  }

  std::string key() const {
    if (!schedule_.dispatch || !schedule_.dispatch->axis) return "";
    const std::string &axis = *schedule_.dispatch->axis;
    return in_scope_.count(axis) ? "v_" + axis : "";
  }

  /// The task's issue stream: stream_by modulo streams, or (streams alone) tasks dealt to the streams in
  /// submission order.
  std::string stream() const {
    const bool by = schedule_.stream_by.has_value();
    const bool count = schedule_.streams.has_value();
    if (!by && !count) return "";
    // (a task outside a loop whose variable the key reads — a launch after the loop — goes on stream 0)
    std::function<bool(const json &)> bound = [&](const json &e) {
      if (e.is_object() && e.contains("var")) return e["var"].is_string() && in_scope_.count(e["var"].get<std::string>()) > 0;
      if (e.is_object() || e.is_array())
        for (const json &x : e)
          if (!bound(x)) return false;
      return true;
    };
    if (by && !bound(*schedule_.stream_by)) return "0";
    std::string s = by ? w_.expr(*schedule_.stream_by) : std::string(kTaskIndex) + "++";
    if (count) s = "htp_mod(" + s + ", " + std::to_string(*schedule_.streams) + ")";
    return s;
  }

  /// The tensors and scalars of one run of task `n` of kernel `unit`, with `subst` applied to its Exprs
  /// (a tiled loop variable -> the run's iteration), appended to `tensors` and `scalars`.
  void bind(const htp::WspNode &n, const KernelUnit &unit, const std::vector<std::pair<std::string, json>> &subst,
            std::vector<TaskTensor> &tensors, std::vector<std::string> &scalars) {
    const Span span = Span::from(n.span);
    auto at = [&](json e) {
      for (const auto &[var, with] : subst) e = substitute(e, var, with);
      return e;
    };
    std::map<std::string, const htp::WspArg *> by_param;
    for (const htp::WspArg &a : n.args) by_param[a.param] = &a;
    for (const Param &p : unit.kernel.params) {
      if (p.kind == "constexpr") continue;
      auto it = by_param.find(p.name);
      if (it == by_param.end())
        throw IrError("task " + n.id + " binds no argument to parameter '" + p.name + "' of kernel '" +
                      unit.kernel.name + "'", span);
      htp::WspArg a = *it->second;
      if (p.is_scalar() != a.is_scalar())
        throw IrError("task " + n.id + " binds " + (a.is_scalar() ? "a scalar" : "a tensor view") + " to the " +
                      (p.is_scalar() ? "scalar" : "tensor") + " parameter '" + p.name + "' of kernel '" +
                      unit.kernel.name + "'", span);
      if (p.is_scalar()) {
        const json scalar = at(*a.scalar);
        std::string value = w_.expr(scalar);
        // A 64-bit workload value given to a narrower integer parameter is checked, not wrapped.
        if (auto range = htp::narrow_integer_range(p.dtype); range && !scalar.is_number())
          value = "htp_narrow(" + value + ", " + std::to_string(range->first) + "LL, " + std::to_string(range->second) +
                  "LL, \"" + where(n) + ": scalar '" + p.name + "' of kernel '" + unit.kernel.name + "' (" + p.dtype +
                  ")\")";
        scalars.push_back(std::move(value));
        continue;
      }
      if (auto r = rotated_.find(*a.tensor); r != rotated_.end()) {  // pipeline(n): slot v % n of the tensor
        a.offset.insert(a.offset.begin(), json{{"op", "mod"}, {"args", json::array({json{{"var", r->second.var}}, r->second.depth})}});
        a.shape.insert(a.shape.begin(), 1);
      }
      TaskTensor t{&p, "w_" + *a.tensor, {}, {}};
      bool runtime = false;
      for (const json &o : a.offset) {
        t.offset.push_back(w_.expr(at(o)));
        runtime = runtime || runtime_expr(o);
      }
      if (runtime) {  // the compile-time bounds check (wsp) could not enumerate these offsets
        t.where = where(n);
        t.name = *a.tensor;
      }
      for (int64_t s : a.shape) t.shape.push_back(w_.expr(json(s)));
      if (a.shape.size() > p.shape.size()) t.swaps = dropped_dim_swaps(a.shape, p.shape);
      if (t.offset.size() != t.shape.size())
        throw IrError("task " + n.id + ": argument '" + p.name + "' has " + std::to_string(t.offset.size()) +
                      " offsets and " + std::to_string(t.shape.size()) + " extents",
                      span);
      tensors.push_back(std::move(t));
    }
  }

  void task(const htp::WspNode &n) {
    const Span span = Span::from(n.span);
    int64_t runs = 1;
    for (const auto &[var, f] : tiled_) runs *= f;
    const KernelUnit &unit = find_kernel(kernels_, runs > 1 ? repeated_name(n.kernel, runs) : n.kernel, span);
    std::vector<TaskTensor> tensors;
    std::vector<std::string> scalars;
    for (int64_t r = 0; r < runs; ++r) {  // run r: the tiled variables' iterations, the last one fastest
      std::vector<std::pair<std::string, json>> subst;
      int64_t rest = r;
      for (size_t i = tiled_.size(); i-- > 0;) {
        subst.push_back({tiled_[i].first, add_expr(json{{"var", tiled_[i].first}}, rest % tiled_[i].second)});
        rest /= tiled_[i].second;
      }
      bind(n, unit, subst, tensors, scalars);
    }
    std::string label = n.id + ": " + unit.kernel.name + span_label(span);
    const htp::LayoutFunction *layouts = layouts_ ? layouts_->function(n.kernel) : nullptr;
    if (!layouts || !layouts->mapping || layouts->mapping->empty()) {
      w_.task(unit, label, tensors, scalars, key(), stream());
      return;
    }
    // A kernel mapped over a mesh runs as one task per core coordinate, each on its shard of the views
    // the launch passes (as a kernel entry does on the whole tensors).
    if (runs > 1)
      throw IrError("task " + n.id + " launches kernel '" + n.kernel + "', which is mapped over a mesh, in a loop the "
                    "schedule tiles; backend-pto runs a mapped kernel one launch per task: drop the tile() directive "
                    "for this loop", span, "pto.unsupported");
    const std::vector<int64_t> &mesh = *layouts->mapping;
    open_mesh(w_, mesh);
    for (TaskTensor &t : tensors) {
      const Param &p = *t.param;
      auto view = core_view(p, *layouts, unit, span);
      if (!view) continue;
      if (t.offset.empty()) {  // the whole tensor
        t.offset.assign(p.global_shape.size(), "0");
        for (int64_t d : p.global_shape) t.shape.push_back(std::to_string(d));
      }
      if (!t.swaps.empty() || t.shape.size() != p.global_shape.size())
        throw IrError("task " + n.id + " passes a view of rank " + std::to_string(t.shape.size()) + " to parameter '" +
                      p.name + "' of mapped kernel '" + n.kernel + "', whose layout is over rank " +
                      std::to_string(p.global_shape.size()) + "; pass a view of the parameter's whole shape",
                      span, "pto.unsupported");
      const auto &[offset, shape] = *view;
      for (size_t d = 0; d < offset.size(); ++d)
        if (offset[d] != "0") t.offset[d] = "(" + t.offset[d] + ") + " + offset[d];
      t.shape = shape;
    }
    w_.task(unit, label + " on one core of its " + json(mesh).dump() + " mapping", tensors, scalars, key(), stream());
    for (size_t a = 0; a < mesh.size(); ++a) w_.close();
  }

  OrchestrationWriter &w_;
  const KernelIndex &kernels_;
  const htp::WspWorkload &workload_;
  const htp::WspSchedule &schedule_;
  std::map<std::string, int64_t> factors_;                 ///< tile(axis, f)
  std::map<std::string, Rotation> rotated_;                ///< pipeline(n)'s intermediates
  std::vector<std::pair<std::string, int64_t>> tiled_;     ///< the tiled loop variables in scope, outer first
  std::set<std::string> in_scope_;
  std::set<std::string> runtime_vars_;  ///< loop variables over runtime extents, in scope
  const htp::LayoutSignatures *layouts_;  ///< the kernels' layouts (mapped kernels), or null
};

json sim_config(const htp::WspSchedule &schedule) {
  json sim = json::object();
  if (schedule.dispatch) sim["dispatch"] = schedule.dispatch->policy;
  if (schedule.task_window) sim["task_window"] = *schedule.task_window;
  if (schedule.timing && schedule.timing->mode == "batched" && schedule.timing->n) sim["batch"] = *schedule.timing->n;
  return sim;
}

/// The entry parameters of a workload (htp::WspParam) or a CSP program (htp::CspParam).
template <class Param> std::vector<EntryParam> entry_params(const std::vector<Param> &params) {
  std::vector<EntryParam> out;
  for (const Param &p : params) {
    EntryParam e{p.name, p.type.kind, p.dir, json(), p.type.dtype};
    if (p.type.is_tensor()) {
      e.shape = json::array();
      for (const htp::IrDim &d : p.type.shape) e.shape.push_back(json(d));
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

EntryUnit emit_workload_entry(const htp::WspWorkload &w, const KernelIndex &kernels, const Origin &origin,
                              const htp::LayoutSignatures *layouts) {
  EntryUnit e;
  e.name = w.name;
  e.kind = "workload";
  e.path = rt::orchestration_path(e.name);
  OrchestrationWriter out(e.name, origin);
  e.params = out.bind(entry_params(w.params), Span::from(w.span));
  const htp::WspSchedule &schedule = w.schedule;
  std::map<std::string, Rotation> rotated = rotations(w, schedule.pipeline_depth.value_or(1));
  if (schedule.pipeline_depth) {
    std::string what;
    for (const auto &[name, r] : rotated)
      what += (what.empty() ? "" : ", ") + name + " (slot " + r.var + " % " + std::to_string(r.depth) + ")";
    out.line("// schedule pipeline(" + std::to_string(*schedule.pipeline_depth) + "): " +
             (what.empty() ? std::string("no intermediate of a sequential loop to rotate; iterations overlap as far as "
                                         "their tensors allow")
                           : "intermediates rotated over slots so that iterations overlap: " + what));
  }
  for (const htp::WspIntermediate &i : w.intermediates) {
    std::vector<htp::IrDim> shape = i.type.shape;
    if (auto r = rotated.find(i.name); r != rotated.end()) shape.insert(shape.begin(), htp::IrDim{r->second.depth, {}});
    out.intermediate(i.name, shape, i.type.dtype, Span::from(w.span));
  }
  if (schedule.streams && !schedule.stream_by)
    out.raw(std::string("#ifdef HTP_PTOSIM\n    int64_t ") + kTaskIndex + " = 0;\n#endif\n");
  std::set<std::string> reads, writes;
  collect_accesses(w.body, kernels, reads, writes);
  out.track(read_and_written(reads, writes));
  WorkloadLowering(out, kernels, w, std::move(rotated), layouts).nodes(w.body);
  e.sim = sim_config(schedule);
  e.source = out.finish("workload '" + e.name + "'");
  return e;
}

std::vector<Kernel> repeated_kernels(const htp::WspWorkload &w, const std::vector<Kernel> &kernels) {
  std::vector<Kernel> out;
  std::set<std::string> made;
  const auto factors = tile_factors(w.schedule);
  if (factors.empty()) return out;
  for_each_tiled_task(w.body, factors, w.name, 1, [&](const htp::WspNode &t, int64_t runs) {
    if (runs == 1 || !made.insert(repeated_name(t.kernel, runs)).second) return;
    for (const Kernel &k : kernels)
      if (k.name == t.kernel) {
        Kernel r = k;
        r.name = repeated_name(k.name, runs);
        r.repeat = runs;
        out.push_back(std::move(r));
      }
  });
  return out;
}

std::optional<Problem> untileable(const htp::WspWorkload &w) {
  try {
    for_each_tiled_task(w.body, tile_factors(w.schedule), w.name, 1, [](const htp::WspNode &, int64_t) {});
  } catch (const IrError &e) {
    if (e.code() != "pto.schedule-tile") throw;
    return Problem{e.code(), e.what(), e.span()};
  }
  return std::nullopt;
}

std::set<std::string> untiled_launches(const htp::WspWorkload &w) {
  std::set<std::string> out;
  for_each_tiled_task(w.body, tile_factors(w.schedule), w.name, 1, [&](const htp::WspNode &t, int64_t runs) {
    if (runs == 1) out.insert(t.kernel);
  });
  return out;
}

namespace {

/// The steps of one iteration of `proc`: its steps, or its one kernel.
std::vector<CspStep> steps_of(const CspProcess &proc) {
  return proc.steps.empty() ? std::vector<CspStep>{CspStep{proc.kernel, proc.channels}} : proc.steps;
}

/// Item k * first + second of channel `ch` is what replica `replica` of `proc` moves at iteration k.
std::pair<int64_t, int64_t> item_of(const CspProcess &proc, const std::string &ch, int64_t replica) {
  auto it = proc.items.find(ch);
  return it != proc.items.end() ? it->second : std::pair<int64_t, int64_t>{proc.replicas, replica};
}

/// How many of an iteration's steps `steps` move an item of channel `ch` in direction `dir`, and which of them
/// `step` is: an iteration sending twice on one channel (csp_lowering's steps) moves items k * n + j. (1, 0)
/// for a step not among them (statements before or after the loop).
template <class Step>
std::pair<int64_t, int64_t> uses_in_iteration(const std::vector<Step> &steps, const Step *step, const std::string &ch,
                                              const std::string &dir) {
  int64_t n = 0, j = -1;
  for (const Step &s : steps)
    if (std::find(s.channels.begin(), s.channels.end(), std::make_pair(ch, dir)) != s.channels.end()) {
      if (&s == step) j = n;
      ++n;
    }
  return j < 0 ? std::pair<int64_t, int64_t>{1, 0} : std::pair<int64_t, int64_t>{n, j};
}

/// A process instance's tasks in order: its statements before its loop (once), each iteration's steps, its
/// statements after the loop (once). `at(next)` is the step at position `next` and the iteration whose items
/// it moves (0 before and after the loop: a channel they use is used by no iteration).
struct CspRun {
  const CspProcess *proc;
  std::vector<CspStep> steps;
  int64_t before = 0, after = 0;  ///< 1 with statements before / after the loop
  explicit CspRun(const CspProcess &p) : proc(&p), steps(steps_of(p)), before(p.before ? 1 : 0), after(p.after ? 1 : 0) {}
  int64_t per_iteration() const { return static_cast<int64_t>(steps.size()); }
  int64_t total(int64_t trip) const { return before + trip * per_iteration() + after; }
  std::pair<const CspStep *, int64_t> at(int64_t next, int64_t trip) const {
    if (before && next == 0) return {&*proc->before, 0};
    const int64_t i = next - before;
    if (i < trip * per_iteration()) return {&steps[static_cast<size_t>(i % per_iteration())], i / per_iteration()};
    return {&*proc->after, 0};
  }
  /// Where position `next` stands, for a message.
  std::string where(int64_t next, int64_t trip) const {
    if (before && next == 0) return "its statements before its loop";
    const int64_t i = next - before;
    if (i >= trip * per_iteration()) return "its statements after its loop";
    return "its iteration " + std::to_string(i / per_iteration()) + " of " + std::to_string(trip);
  }
};

/// When every process's loop bounds are constants, runs the schedule the orchestration runs (below) on
/// counters, so that a program no task order can run is a compile error naming the process, not a run error;
/// then the number of items each channel carries (by channel_index), else nullopt.
std::optional<std::vector<int64_t>> check_csp_schedule(const CspProgram &p,
                                                       const std::map<std::string, size_t> &channel_index) {
  struct Instance {
    CspRun run;
    int64_t replica, trip, next = 0;  ///< next: the next task, over before, every iteration's steps and after
  };
  std::vector<Instance> instances;
  for (const CspProcess &proc : p.processes) {
    if (!proc.start.is_number_integer() || !proc.stop.is_number_integer() || !proc.step.is_number_integer())
      return std::nullopt;
    const int64_t start = proc.start.get<int64_t>(), stop = proc.stop.get<int64_t>(), step = proc.step.get<int64_t>();
    const int64_t trip = step > 0 && stop > start ? (stop - start + step - 1) / step : 0;
    for (int64_t r = 0; r < proc.replicas; ++r) instances.push_back({CspRun(proc), r, trip, 0});
  }
  // The check costs a step per task: past a few million tasks it is left to the run, which checks as it goes
  // (a compile takes time for the program's size, not for its constants).
  constexpr int64_t kMaxSteps = int64_t{1} << 22;
  int64_t total = 0;
  for (const Instance &q : instances) {
    const int64_t n = q.trip > kMaxSteps ? kMaxSteps : q.run.total(q.trip);
    if ((total += n) > kMaxSteps) return std::nullopt;
  }
  std::vector<int64_t> made(channel_index.size(), 0), taken(channel_index.size(), 0);
  std::map<std::string, int64_t> depth;
  for (const CspChannel &c : p.channels) depth[c.name] = c.depth;
  for (bool more = true; more;) {
    more = false;
    for (Instance &q : instances)
      for (; q.next < q.run.total(q.trip); ++q.next, more = true) {
        bool ready = true;
        const auto [step, k] = q.run.at(q.next, q.trip);
        for (const auto &[ch, dir] : step->channels) {
          const size_t c = channel_index.at(ch);
          const auto [mult, add] = item_of(*q.run.proc, ch, q.replica);
          const auto [n, j] = uses_in_iteration(q.run.steps, step, ch, dir);
          const int64_t item = (k * mult + add) * n + j;
          ready = ready && (dir == "out" ? item == made[c] && item < taken[c] + depth.at(ch) : item == taken[c] && item < made[c]);
        }
        if (!ready) break;
        for (const auto &[ch, dir] : step->channels) ++(dir == "out" ? made : taken)[channel_index.at(ch)];
      }
  }
  for (const Instance &q : instances)
    if (q.next < q.run.total(q.trip))
      throw IrError("CSP program '" + p.name + "': process '" + q.run.proc->name +
                        (q.run.proc->replicas > 1 ? "[" + std::to_string(q.replica) + "]" : "") + "' cannot run " +
                        q.run.where(q.next, q.trip) +
                        ": no order of the processes' tasks gives it its items (their counts do not balance, or the "
                        "channels' depths leave no way on)",
                    p.span, "pto.csp");
  return made;
}

}  // namespace

EntryUnit emit_csp_entry(const CspProgram &program, const KernelIndex &kernels, const Origin &origin) {
  // A channel never holds more items than it carries: a depth past that count (static loops) is that count, so
  // its ring is allocated for what can be in it (a depth of 2**32 for two items was a ring past the memory).
  CspProgram clamped = program;
  std::map<std::string, size_t> channel_index;
  for (const CspChannel &c : clamped.channels) channel_index.emplace(c.name, channel_index.size());
  if (auto carried = check_csp_schedule(clamped, channel_index))
    for (CspChannel &c : clamped.channels)
      c.depth = std::min(c.depth, std::max<int64_t>(1, (*carried)[channel_index.at(c.name)]));
  for (const CspChannel &c : clamped.channels) {
    int64_t elements = c.depth;
    for (int64_t d : c.shape)
      if (__builtin_mul_overflow(elements, d, &elements)) elements = INT64_MAX;
    if (elements > (int64_t{1} << 45))
      throw IrError("CSP program '" + clamped.name + "': channel '" + c.name + "' of depth " + std::to_string(c.depth) +
                        " needs a ring of " + std::to_string(c.depth) +
                        " items, past the 2**45 elements backend-pto allocates; give it a smaller depth (a channel "
                        "whose processes' loops are static needs no more slots than the items it carries)",
                    clamped.span, "pto.csp");
  }
  const CspProgram &p = clamped;
  EntryUnit e;
  e.name = p.name;
  e.kind = "csp-program";
  e.path = rt::orchestration_path(e.name);
  OrchestrationWriter out(e.name, origin);
  e.params = out.bind(entry_params(p.params), p.span);
  for (const CspChannel &c : p.channels) {  // one ring of `depth` slots per channel
    std::vector<htp::IrDim> ring;
    for (int64_t d : c.shape) ring.push_back({d, ""});
    ring[0].size *= c.depth;
    out.intermediate("ring_" + c.name, ring, c.dtype);
  }
  std::map<std::string, const CspChannel *> channels;
  for (const CspChannel &c : p.channels) channels[c.name] = &c;
  // A register a process carries from one of its tasks to the next: a tensor of one tile per replica.
  auto carry_tensor = [](const CspProcess &proc, const CspChannel &c) { return "carry_" + proc.name + "__" + c.name; };
  for (const CspProcess &proc : p.processes)
    for (const CspChannel &c : proc.carries) {
      std::vector<htp::IrDim> dims;
      for (int64_t d : c.shape) dims.push_back({d, ""});
      dims[0].size *= proc.replicas;
      out.intermediate(carry_tensor(proc, c), dims, c.dtype);
    }
  struct StepTask {
    const KernelUnit *unit;
    std::string label;
    std::vector<TaskTensor> tensors;
    std::vector<std::string> scalars;
    std::vector<std::pair<std::string, std::string>> channels;
    std::vector<std::pair<size_t, int64_t>> carries;  ///< (tensor, rows of a replica's tile): at replica * rows
    /// The task of replica r.
    std::vector<TaskTensor> of_replica(int64_t r) const {
      std::vector<TaskTensor> ts = tensors;
      for (const auto &[t, rows] : carries) ts[t].offset[0] = std::to_string(r * rows);
      return ts;
    }
  };
  struct ProcessTask {
    const CspProcess *proc;
    std::vector<StepTask> steps;
    std::optional<StepTask> before, after;
  };
  std::vector<ProcessTask> tasks;
  std::set<std::string> reads, writes;
  for (const CspProcess &proc : p.processes) {
    std::map<std::string, const htp::CspBinding *> bound;
    for (const htp::CspBinding &a : proc.args) bound[a.param] = &a;
    ProcessTask pt{&proc, {}, {}, {}};
    auto step_task = [&](const CspStep &step) {
      const KernelUnit &unit = find_kernel(kernels, step.kernel, p.span);
      std::vector<TaskTensor> tensors;
      std::vector<std::string> scalars;
      std::vector<std::pair<size_t, int64_t>> carried;
      for (const Param &prm : unit.kernel.params) {
        if (prm.kind == "constexpr") continue;
        auto carry = std::find_if(proc.carries.begin(), proc.carries.end(),
                                  [&](const CspChannel &c) { return c.name == prm.name; });
        if (carry != proc.carries.end() && prm.is_tensor()) {
          carried.emplace_back(tensors.size(), carry->shape[0]);
          tensors.push_back({&prm, "w_" + carry_tensor(proc, *carry), {"0", "0"},
                             {std::to_string(carry->shape[0]), std::to_string(carry->shape[1])}});
        } else if (prm.name.rfind("ch_", 0) == 0 && channels.count(prm.name.substr(3))) {
          const CspChannel &c = *channels.at(prm.name.substr(3));
          const std::string slot = "htp_mod(htp_item" + std::to_string(channel_index.at(c.name)) + ", " +
                                   std::to_string(c.depth) + ") * " + std::to_string(c.shape[0]);
          tensors.push_back({&prm, "w_ring_" + c.name, {slot, "0"}, {std::to_string(c.shape[0]), std::to_string(c.shape[1])}});
        } else if (prm.is_scalar()) {
          auto it = bound.find(prm.name);
          if (prm.name != proc.loop_var && it != bound.end() && !it->second->scalar)
            throw IrError("process '" + proc.name + "' binds a tensor to the scalar parameter '" + prm.name + "'", p.span,
                          "pto.csp");
          scalars.push_back(prm.name == proc.loop_var ? "v_" + proc.loop_var
                                                      : (it != bound.end() ? out.expr(*it->second->scalar) : "0"));
        } else {
          auto it = bound.find(prm.name);
          if (it == bound.end() || !it->second->tensor)
            throw IrError("process '" + proc.name + "' binds no tensor to parameter '" + prm.name + "'", p.span, "pto.csp");
          tensors.push_back({&prm, "w_" + *it->second->tensor, {}, {}});
        }
      }
      for (const TaskTensor &t : tensors) (t.param->dir == "in" ? reads : writes).insert(t.tensor);
      return StepTask{&unit, "process " + proc.name + ": " + unit.kernel.name, std::move(tensors), std::move(scalars),
                      step.channels, std::move(carried)};
    };
    for (const CspStep &step : steps_of(proc)) pt.steps.push_back(step_task(step));
    if (proc.before) pt.before = step_task(*proc.before);
    if (proc.after) pt.after = step_task(*proc.after);
    tasks.push_back(std::move(pt));
  }
  out.track(read_and_written(reads, writes));
  // Processes iterate on their own counts (replicas sharing a channel take its items round robin: replica r's
  // iteration k moves item k * replicas + r), an iteration in its steps' order. Tasks are submitted in an order
  // in which every channel's items are produced and consumed in order and a producer stays within the
  // channel's depth ahead of its consumers: each slot's writers are then producer of item i, its consumer,
  // producer of item i + depth, ... which is the order pto-runtime gives tasks passing one tensor. Each round
  // submits every task that can go.
  size_t instances = 0;
  for (const ProcessTask &t : tasks) instances += static_cast<size_t>(t.proc->replicas);  // (checked above)
  const std::string nch = std::to_string(std::max<size_t>(1, p.channels.size()));
  out.open("");
  out.line("int64_t htp_next[" + std::to_string(instances) + "] = {0}, htp_trip[" + std::to_string(instances) + "];");
  out.line("int64_t htp_made[" + nch + "] = {0}, htp_taken[" + nch + "] = {0};");
  size_t q = 0;
  for (const ProcessTask &t : tasks)
    for (int64_t r = 0; r < t.proc->replicas; ++r, ++q) {
      const std::string start = out.expr(t.proc->start), stop = out.expr(t.proc->stop), step = out.expr(t.proc->step);
      out.line("htp_trip[" + std::to_string(q) + "] = (" + step + ") > 0 && (" + stop + ") > (" + start + ") ? ((" + stop +
               ") - (" + start + ") + (" + step + ") - 1) / (" + step + ") : 0;");
    }
  out.open("for (bool htp_more = true; htp_more;)");
  out.line("htp_more = false;");
  q = 0;
  // One task: its channels' items (iteration `k`'s; "0" before and after the loop) must be next and have room.
  auto submit = [&](const ProcessTask &t, const StepTask &st, int64_t r, const std::string &k) {
    std::string ready;
    for (const auto &[ch, dir] : st.channels) {
      const std::string c = std::to_string(channel_index.at(ch)), item = "htp_item" + c;
      const auto [mult, add] = item_of(*t.proc, ch, r);
      const auto [n, j] = uses_in_iteration(t.steps, &st, ch, dir);
      const std::string base = k + " * " + std::to_string(mult) + " + " + std::to_string(add);
      out.line("const int64_t " + item + " = " +
               (n == 1 ? base : "(" + base + ") * " + std::to_string(n) + " + " + std::to_string(j)) + ";");
      ready += (ready.empty() ? "" : " || ") +
               (dir == "out" ? item + " != htp_made[" + c + "] || " + item + " >= htp_taken[" + c + "] + " +
                                   std::to_string(channels.at(ch)->depth)
                             : item + " != htp_taken[" + c + "] || " + item + " >= htp_made[" + c + "]");
    }
    if (!ready.empty()) out.line("if (" + ready + ") break;");
    out.task(*st.unit, st.label, st.of_replica(r), st.scalars, "", "");
    for (const auto &[ch, dir] : st.channels)
      out.line(std::string(dir == "out" ? "++htp_made[" : "++htp_taken[") + std::to_string(channel_index.at(ch)) + "];");
  };
  // Instance qi's task counter in C++: `pos`, its position among the loop's tasks (with statements before the
  // loop, position 0 is theirs and iteration k starts at 1 + k * steps); `iterations`, the loop's tasks; `total`,
  // every task.
  struct Positions {
    std::string pos, iterations, total;
  };
  auto positions = [](const ProcessTask &t, const std::string &qi) {
    Positions p;
    p.pos = t.before ? "(htp_next[" + qi + "] - 1)" : "htp_next[" + qi + "]";
    p.iterations = "htp_trip[" + qi + "]" + (t.steps.size() > 1 ? " * " + std::to_string(t.steps.size()) : "");
    p.total = p.iterations + (t.before ? " + 1" : "") + (t.after ? " + 1" : "");
    return p;
  };
  for (const ProcessTask &t : tasks)
    for (int64_t r = 0; r < t.proc->replicas; ++r, ++q) {
      const std::string qi = std::to_string(q), steps = std::to_string(t.steps.size());
      const bool stepped = t.steps.size() > 1;
      const auto [pos, iterations, total] = positions(t, qi);
      out.line("// " + t.proc->name + (t.proc->replicas > 1 ? "[" + std::to_string(r) + "]" : "") + ": its next " +
               (t.before || t.after ? "tasks" : "iterations") + (stepped ? ", " + steps + " steps each" : ""));
      out.open("while (htp_next[" + qi + "] < " + total + ")");
      const std::string v = "const int64_t v_" + t.proc->loop_var + " = " + out.expr(t.proc->start);
      for (const auto *once : {&t.before, &t.after}) {
        if (!*once) continue;
        out.open(once == &t.before ? "if (htp_next[" + qi + "] == 0)"
                                   : "if (" + pos + " == " + iterations + ")");
        out.line(v + ";");
        submit(t, **once, r, "0");
        out.line("++htp_next[" + qi + "];");
        out.line("htp_more = true;");
        out.line("continue;");
        out.close();
      }
      out.line("const int64_t htp_k = " + pos + (stepped ? " / " + steps : "") + ";");
      out.line(v + " + htp_k * " + out.expr(t.proc->step) + ";");
      for (size_t s = 0; s < t.steps.size(); ++s) {
        if (stepped) out.open("if (" + pos + " % " + steps + " == " + std::to_string(s) + ")");
        submit(t, t.steps[s], r, "htp_k");
        if (stepped) out.close();
      }
      out.line("++htp_next[" + qi + "];");
      out.line("htp_more = true;");
      out.close();
    }
  out.close();
  q = 0;
  for (const ProcessTask &t : tasks)
    for (int64_t r = 0; r < t.proc->replicas; ++r, ++q) {
      const std::string qi = std::to_string(q), steps = std::to_string(t.steps.size());
      const std::string who = t.proc->name + (t.proc->replicas > 1 ? "[" + std::to_string(r) + "]" : "");
      const std::string fail = "htp_fail(\"CSP program '" + p.name + "': process '" + who + "' is stopped ";
      const std::string why = ": no order of the processes' tasks gives it its next items (their counts do not balance, "
                              "or the channels' depths leave no way on)\"";
      const auto [pos, iterations, total] = positions(t, qi);
      if (t.before) out.line("if (htp_next[" + qi + "] == 0) " + fail + "before its loop" + why + ");");
      const std::string next = t.steps.size() > 1 ? pos + " / " + steps : pos;
      out.line(std::string(t.before ? "else " : "") + "if (" + next + " < htp_trip[" + qi + "]) " + fail +
               "at iteration %lld of %lld" + why + ", (long long)(" + next + "), (long long)htp_trip[" + qi + "]);");
      if (t.after) out.line("else if (htp_next[" + qi + "] < " + total + ") " + fail + "after its loop" + why + ");");
    }
  out.close();
  e.sim = json::object();
  e.source = out.finish("CSP program '" + e.name + "'");
  return e;
}

EntryUnit emit_kernel_entry(const KernelUnit &k, const Origin &origin, const htp::LayoutFunction *layouts) {
  EntryUnit e;
  e.name = k.kernel.name;
  e.kind = "kernel";
  e.path = rt::orchestration_path(e.name);
  OrchestrationWriter out(e.name, origin);
  // A kernel mapped over a mesh (`@kernel(mapping=[...])`) with dist layouts runs as one task per core
  // coordinate, each on its shard of every tensor: the entry takes the whole tensors.
  const bool spmd = layouts && layouts->mapping && !layouts->mapping->empty();
  std::vector<EntryParam> params;
  for (const Param &p : k.kernel.params) {
    if (p.kind == "constexpr") continue;
    params.push_back({p.name, p.kind, p.dir, p.is_tensor() ? json(spmd ? p.global_shape : p.shape) : json(), p.dtype});
  }
  e.params = out.bind(params, k.kernel.span);
  std::vector<std::string> scalars;
  for (const Param *p : k.kernel.scalar_params()) scalars.push_back("p_" + p->name);
  if (!spmd) {
    std::vector<TaskTensor> tensors;
    for (const Param *p : k.kernel.tensor_params()) tensors.push_back({p, "w_" + p->name, {}, {}});
    out.task(k, "kernel " + k.kernel.name, tensors, scalars, "", "");
  } else {
    const std::vector<int64_t> &mesh = *layouts->mapping;
    std::set<std::string> reads, writes;
    for (const Param *p : k.kernel.tensor_params()) (p->dir == "in" ? reads : writes).insert("w_" + p->name);
    out.track(read_and_written(reads, writes));
    open_mesh(out, mesh);
    std::vector<TaskTensor> tensors;
    for (const Param *p : k.kernel.tensor_params()) {
      auto view = core_view(*p, *layouts, k, k.kernel.span);
      tensors.push_back({p, "w_" + p->name, view ? view->first : std::vector<std::string>{},
                         view ? view->second : std::vector<std::string>{}});
    }
    out.task(k, "kernel " + k.kernel.name + " on one core of its " + json(mesh).dump() + " mapping", tensors, scalars,
             "", "");
    for (size_t a = 0; a < mesh.size(); ++a) out.close();
  }
  e.sim = json::object();
  e.source = out.finish("kernel '" + e.name + "'");
  return e;
}

}  // namespace ptobe
