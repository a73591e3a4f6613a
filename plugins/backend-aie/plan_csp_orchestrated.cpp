// Front-end for CSP programs the spatial mapping (plan_csp.cpp) does not take: more process replicas than
// the device has cores, or cores whose FIFO buffers exceed their memory or whose channels exceed their DMA
// channels (a generator feeding four workers 16 KB items: docs/dialects/csp.md). Such a program runs
// host-orchestrated like a workload's P.pipe: each process replica is a stage whose iterations are tasks of
// one single-core kernel — the iteration body, its loads and stores views of the program's tensors, the
// items it receives and sends channel arguments — and the stages run one after another in producer-to-
// consumer order, each to its end, a channel's items queued between them (docs/backends/aie.md §2).
#include <functional>
#include <map>
#include <set>

#include <htp/kernel_entry.hpp>

#include "entry_plan.hpp"
#include "expr.hpp"
#include "kernel_emitter.hpp"

namespace htp::aie {

namespace {

/// A view a task stores: tensor, offsets (Exprs), shape.
struct StoredView {
  std::string tensor;
  Json offset;
  std::vector<int64_t> shape;
  bool operator==(const StoredView &) const = default;
};

/// One stage of the orchestration: the kernels of a process's iteration (one, or one per branch the host
/// decides) and the loop launching them.
struct Stage {
  std::vector<htp::TileKernel> kernels;
  htp::WspNode node;
};

/// Most iteration kernels one process's stage is split into by conditions the host decides.
constexpr size_t kMaxVariants = 8;

/// Whether `ops` (or an op nested in them) moves data: a load, store, send or receive.
bool moves_data(const std::vector<htp::TileOp> &ops) {
  bool moves = false;
  htp::for_each_op(ops, [&](const htp::TileOp &x) { moves = moves || is_data_movement(x); });
  return moves;
}

/// The stage of process `proc` (its function `k`, or a kernel htp::cut_process cut from it: `carries` binds its
/// carry parameters to the workload's tensors), or nullopt with `why` set. Its tasks are numbered from
/// `task_number`, which counts them.
std::optional<Stage> process_stage(const htp::CspProgram &program, const htp::CspProcess &proc, const htp::TileKernel &k,
                                   const std::map<std::string, htp::CspParam> &carries, int &task_number,
                                   std::string &why) {
  auto no = [&](std::string reason) {
    why = "process '" + proc.name + "': " + std::move(reason);
    return std::nullopt;
  };
  ExprEnv constants = constexpr_env(k);
  // The program's Expr the process's scalar parameter `name` is bound to, or nullptr.
  auto scalar_of = [&](const std::string &name) -> const Json * {
    for (const htp::CspBinding &b : proc.args)
      if (b.param == name && b.scalar) return &*b.scalar;
    return nullptr;
  };
  // The process's scalar parameters as the program's Exprs they are bound to (the host evaluates a bound
  // known only at run time: `for i in range(n)` with n a scalar of the program).
  std::function<Json(const Json &)> bound = [&](const Json &e) -> Json {
    if (e.is_object() && e.size() == 1 && e.contains("param") && e["param"].is_string())
      if (const Json *x = scalar_of(e["param"].get<std::string>())) return *x;
    if (e.is_object() || e.is_array()) {
      Json out = e;
      for (auto &x : out) x = bound(x);
      return out;
    }
    return e;
  };
  std::string var;
  Json start = 0, step = 1, trips = 1;
  std::vector<htp::TileOp> body = k.body;
  if (body.size() == 1 && body[0].is("for")) {
    const htp::TileOp &f = body[0];
    auto b = eval_int(*f.start, constants), e = eval_int(*f.stop, constants), s = eval_int(*f.step, constants);
    if (!s || *s <= 0) return no("its loop step is not a positive constant");
    var = f.var.value_or("");
    step = *s;
    if (b && e) {
      start = *b;
      trips = std::max<int64_t>(0, (*e - *b + *s - 1) / *s);
    } else {  // ceil((stop - start) / step), evaluated by the host
      start = b ? Json(*b) : bound(*f.start);
      trips = htp::loop_detail::trips_expr(start, bound(*f.stop), *s);
    }
    body = std::vector<htp::TileOp>(f.body);  // (f is an element of body)
  }
  // In an iteration kernel, loads and stores may sit under an `if` (the kernel evaluates the condition); a
  // send or receive may not (the host queues a fixed number of items per task), nor any data movement in a
  // nested loop.
  std::function<std::optional<std::string>(const std::vector<htp::TileOp> &, bool)> nesting =
      [&](const std::vector<htp::TileOp> &ops, bool in_if) -> std::optional<std::string> {
    for (const htp::TileOp &o : ops) {
      if (in_if && (o.is("csp.send") || o.is("csp.recv")))
        return "it sends or receives inside a condition the host cannot decide (one reading a register; the host "
               "decides conditions of the loop variable, constants and the program's scalars)";
      if (moves_data(o.body)) return "it moves data inside a nested loop";
      for (const auto *branch : {&o.then_body, &o.else_body})
        if (auto why = nesting(*branch, true)) return why;
    }
    return std::nullopt;
  };
  for (const htp::TileOp &o : body)
    if (o.is("for") && var.empty() && body.size() > 1) return no("its body is not one counted loop or straight-line code");
  // A WSP loop counts 0, 1, ...: the process's value of its variable is start + step * that.
  const Json value = var.empty() ? Json(0) : htp::loop_detail::iteration_value(start, step, var);
  const htp::IrSpan span = k.body.size() == 1 && k.body[0].span ? *k.body[0].span : k.span;  // the loop, or the process
  Stage st;
  // An iteration kernel: the process's locals, its scalar and constexpr parameters, and a parameter per data
  // movement, each at offset 0 of its own object; the loop variable, where the body reads it as a value, a
  // scalar parameter of its name. Its task launches it.
  auto iteration = [&](std::vector<htp::TileOp> body, const std::string &suffix) -> std::optional<htp::WspNode> {
    if (auto nested = nesting(body, false)) return no(*nested);
    htp::TileKernel ik;
    ik.name = k.name + "__iter" + suffix;
    ik.kind = "kernel";
    ik.span = k.span;
    ik.locals = k.locals;
    htp::WspNode task;
    task.kind = "task";
    task.id = "t" + std::to_string(task_number++);
    task.kernel = ik.name;
    task.span = span;
    for (const htp::TileParam &p : k.params) {
      if (p.type.is_constexpr()) {
        ik.params.push_back(p);
        continue;
      }
      if (!p.type.is_scalar()) continue;
      const Json *x = scalar_of(p.name);
      if (!x) return no("its scalar parameter '" + p.name + "' is not bound to a scalar");
      ik.params.push_back(p);
      htp::WspArg a;
      a.param = p.name;
      a.scalar = *x;
      task.args.push_back(a);
    }
    auto tensor_of = [&](const std::string &param) {
      for (const htp::CspBinding &a : proc.args)
        if (a.param == param && a.tensor) return *a.tensor;
      return param;
    };
    std::set<std::string> taken;  // parameter names: the process's own, then one per data movement
    for (const htp::TileParam &p : k.params) taken.insert(p.name);
    for (const htp::TileLocal &l : k.locals) taken.insert(l.name);
    auto unique = [&](const std::string &base) {
      std::string n = base;
      for (int i = 2; taken.count(n); ++i) n = base + "_" + std::to_string(i);
      taken.insert(n);
      return n;
    };
    // A view stored under a condition is gathered before the task (its parameter is inout), so an untaken store
    // leaves the tensor as it was; stores of that view elsewhere in the task share the parameter, and it must be
    // the only view of its tensor the task writes, or its unchanged contents could overwrite another's write-back.
    std::vector<std::pair<std::string, StoredView>> stores;  // (param, view) of each stored view, in order
    std::set<std::string> always;                             // params a store outside a condition writes
    std::vector<std::pair<htp::TileOp *, bool>> moves;           // (op, under a condition), in program order
    std::function<void(std::vector<htp::TileOp> &, bool)> collect = [&](std::vector<htp::TileOp> &ops, bool in_if) {
      for (htp::TileOp &o : ops) {
        if (is_data_movement(o)) moves.emplace_back(&o, in_if);
        collect(o.then_body, true);
        collect(o.else_body, true);
      }
    };
    collect(body, false);
    for (auto [op, in_if] : moves) {
      htp::TileOp &o = *op;
      const std::string ch = o.attrs.value_or(Json::object()).value("channel", "");
      const std::string pn = unique(o.is("csp.send")   ? "send_" + ch
                                    : o.is("csp.recv") ? "recv_" + ch
                                    : o.is("load")     ? "in_" + tensor_of(o.src.value_or(""))
                                                       : "out_" + tensor_of(o.dst.value_or("")));
      htp::WspArg a;
      a.param = pn;
      htp::TileParam p;
      p.name = pn;
      p.type.kind = "tensor";
      if (o.is("csp.send") || o.is("csp.recv")) {
        const htp::CspChannel *c = program.channel(ch);
        if (!c || c->is_event() || !c->elem) return no("it signals event '" + ch + "', which a queue of items does not carry");
        for (const htp::IrDim &d : c->elem->shape) p.type.shape.push_back(d.size);
        p.type.dtype = c->elem->dtype;
        a.channel = ch;
        a.shape = p.type.shape;
        const Json zeros(std::vector<Json>(p.type.shape.size(), Json(0)));
        if (o.is("csp.recv")) {
          p.dir = "in";
          a.dir = "in";
          if (!o.dst) return no("it receives from channel '" + ch + "' without keeping the item");
          o = htp::TileOp{.op = "load", .dst = o.dst, .src = pn, .offset = zeros.get<std::vector<Json>>(), .span = o.span};
        } else {
          p.dir = "out";
          a.dir = "out";
          const auto reg = o.arg_name(0);
          if (!reg) return no("it sends on channel '" + ch + "' a value that is not a register");
          o = htp::TileOp{.op = "store", .dst = pn, .offset = zeros.get<std::vector<Json>>(), .value = Json(*reg), .span = o.span};
        }
      } else {
        const bool load = o.is("load");
        const std::string param = o.moved_tensor();
        const htp::TileParam *kp = k.param(param);
        const htp::TileLocal *l = k.local(o.moved_register().value_or(""));
        std::string tensor = tensor_of(param);
        const htp::CspParam *tp = nullptr;
        for (const htp::CspParam &x : program.params)
          if (x.name == tensor && x.type.is_shaped()) tp = &x;
        if (auto c = carries.find(param); c != carries.end()) {
          tp = &c->second;
          tensor = tp->name;
        }
        if (!kp || !l || !tp || !o.offset) return no("it moves '" + param + "' in a form a task cannot take");
        // The object: the register's tile, in the tensor's rank (a row vector of a 1-D tensor: its elements).
        const size_t rank = tp->type.shape.size();
        std::vector<int64_t> shape = l->shape;
        if (rank == 1) shape = {product(l->shape)};
        while (shape.size() < rank) shape.insert(shape.begin(), 1);
        if (shape.size() != rank) return no("its view of '" + tensor + "' has another rank than the tensor");
        Json offset = Json::array();
        for (const Json &e : *o.offset) offset.push_back(bound(var.empty() ? e : htp::loop_detail::substitute(e, var, value)));
        offset.get_ref<Json::array_t &>().resize(rank, Json(0));
        const StoredView view{tensor, offset, shape};
        if (load) {
          // A view the task stored before (in program order) is read from the stored view's object, which the
          // host gathers before the task (inout): the load sees the store, or the tensor's contents when a
          // store under a condition was not taken. A separate input object would hold the contents from before
          // the task.
          auto stored = std::find_if(stores.begin(), stores.end(), [&](const auto &s) { return s.second == view; });
          if (stored != stores.end()) {
            for (htp::TileParam &q : ik.params)
              if (q.name == stored->first) q.dir = "inout";
            for (htp::WspArg &q : task.args)
              if (q.param == stored->first && q.dir == "out") {
                q.dir = "inout";
                task.reads.push_back(tensor);
              }
            o.offset = std::vector<Json>(o.offset->size(), Json(0));
            o.src = stored->first;
            continue;
          }
        } else {
          // A view stored under a condition and stored again (in the other branch, or unconditionally) is one
          // parameter: the task writes it back once.
          auto same = std::find_if(stores.begin(), stores.end(), [&](const auto &s) {
            return s.second == view && (in_if || !always.count(s.first));
          });
          if (same != stores.end()) {
            if (!in_if) always.insert(same->first);
            o.offset = std::vector<Json>(o.offset->size(), Json(0));
            o.dst = same->first;
            continue;
          }
          stores.emplace_back(pn, view);
          if (!in_if) always.insert(pn);
        }
        p.dir = load ? "in" : in_if ? "inout" : "out";
        p.type.shape = shape;
        p.type.dtype = tp->type.dtype;
        a.tensor = tensor;
        a.dir = p.dir;
        a.shape = shape;
        a.offset = offset.get<std::vector<Json>>();
        o.offset = std::vector<Json>(o.offset->size(), Json(0));
        (load ? o.src : o.dst) = pn;
        htp::record_view(task, a);
      }
      ik.params.push_back(p);
      task.args.push_back(a);
    }
    for (const auto &[param, view] : stores)
      if (!always.count(param))
        for (const auto &other : stores)
          if (other.first != param && other.second.tensor == view.tensor)
            return no("it stores a view of '" + view.tensor + "' under a condition and another view of it; the task "
                      "writes back every view it stores, and a view whose store was not taken would write back its "
                      "old contents over the other");
    if (!var.empty() && htp::loop_detail::mentions(Json(body), var)) {  // the variable read as a value (a mask, a scale)
      htp::loop_detail::loop_variable_as_scalar(body, ik.params, task, var, unique("it_" + var), value);
    }
    ik.body = std::move(body);
    st.kernels.push_back(std::move(ik));
    return task;
  };
  // A condition the host can evaluate: of the loop variable, constants, the program's scalars and scalar
  // registers set from those earlier in the iteration (`known`; not of a tile, an inner loop's variable or a
  // tensor element), as the host's Expr.
  using Known = std::map<std::string, std::optional<Json>>;
  std::function<std::optional<Json>(const Json &, const Known &)> host_value =
      [&](const Json &e, const Known &known) -> std::optional<Json> {
    if (!e.is_object()) return e;
    if (e.contains("var")) {
      if (!var.empty() && e["var"] == var) return value;
      auto it = e["var"].is_string() ? known.find(e["var"].get<std::string>()) : known.end();
      return it == known.end() ? std::nullopt : it->second;
    }
    if (e.contains("param") && e["param"].is_string()) {
      const std::string name = e["param"];
      if (auto c = constants.params.find(name); c != constants.params.end()) return c->second;
      if (const Json *x = scalar_of(name)) return *x;
      if (auto it = known.find(name); it != known.end()) return it->second;
      return std::nullopt;
    }
    if (!e.contains("op") || !e.contains("args") || !e["args"].is_array()) return std::nullopt;
    Json out = e;
    for (Json &x : out["args"]) {
      auto v = host_value(x, known);
      if (!v) return std::nullopt;
      x = std::move(*v);
    }
    return out;
  };
  // A top-level `if` whose condition the host can evaluate and whose branches move data is decided by the
  // host: the stage launches an iteration kernel per branch (`<process>__iter_then`, `..._else`) under a
  // `when`. So a branch may send or receive, and a view only one branch moves (the previous tile under
  // `if i == 0: ... else:`) is computed only in the iterations taking that branch. A branch moving no data
  // launches nothing.
  size_t variants = 1;
  std::function<std::optional<std::vector<htp::WspNode>>(std::vector<htp::TileOp>, const std::string &)> decide =
      [&](std::vector<htp::TileOp> body, const std::string &suffix) -> std::optional<std::vector<htp::WspNode>> {
    if (!suffix.empty() && !moves_data(body)) return std::vector<htp::WspNode>{};
    Known known;  // scalar registers set so far in the iteration: their values, nullopt where the host has none
    for (size_t i = 0; i < body.size() && variants < kMaxVariants; ++i) {
      const htp::TileOp &o = body[i];
      if (o.is("scalar") && o.dst) {
        known[*o.dst] = o.value ? host_value(*o.value, known) : std::nullopt;
        continue;
      }
      htp::for_each_op(std::vector<htp::TileOp>{o}, [&](const htp::TileOp &x) {
        if (x.is("scalar") && x.dst) known[*x.dst] = std::nullopt;
      });
      if (!o.is("if") || !o.cond || !(moves_data(o.then_body) || moves_data(o.else_body))) continue;
      auto cond = host_value(*o.cond, known);
      if (!cond) continue;
      ++variants;
      auto branch = [&](const std::vector<htp::TileOp> &ops) {
        std::vector<htp::TileOp> out(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(i));
        out.insert(out.end(), ops.begin(), ops.end());
        out.insert(out.end(), body.begin() + static_cast<std::ptrdiff_t>(i) + 1, body.end());
        return out;
      };
      htp::WspNode when;
      when.kind = "when";
      when.dep = "conditional";
      when.cond = std::move(*cond);
      when.span = o.span.value_or(span);
      auto then_nodes = decide(branch(o.then_body), suffix + "_then");
      if (!then_nodes) return std::nullopt;
      auto else_nodes = decide(branch(o.else_body), suffix + "_else");
      if (!else_nodes) return std::nullopt;
      when.then_body = std::move(*then_nodes);
      when.else_body = std::move(*else_nodes);
      return std::vector<htp::WspNode>{std::move(when)};
    }
    auto task = iteration(std::move(body), suffix);
    if (!task) return std::nullopt;
    return std::vector<htp::WspNode>{std::move(*task)};
  };
  auto nodes = decide(std::move(body), "");
  if (!nodes) return std::nullopt;
  if (var.empty()) {
    st.node = std::move(nodes->at(0));
    return st;
  }
  htp::WspNode loop;
  loop.kind = "loop";
  loop.vars = {var};
  loop.dep = "sequential";
  loop.domain.type = "seq";
  loop.domain.extent = trips;
  loop.span = span;
  loop.body = std::move(*nodes);
  st.node = std::move(loop);
  return st;
}

}  // namespace

std::optional<std::vector<const htp::CspProcess *>> producer_order(const htp::CspProgram &program, std::string &why) {
  std::vector<const htp::CspProcess *> pending, out;
  for (const htp::CspProcess &proc : program.processes) pending.push_back(&proc);
  std::set<std::string> done;  // processes placed; one goes once every producer of what it consumes is
  while (!pending.empty()) {
    auto ready = std::find_if(pending.begin(), pending.end(), [&](const htp::CspProcess *proc) {
      for (const std::string &ch : proc->consumes)
        if (const htp::CspChannel *c = program.channel(ch))
          for (const std::string &producer : c->producers)
            if (!done.count(producer) && producer != proc->name) return false;
      return true;
    });
    if (ready == pending.end()) {
      why = "its processes form a cycle through their channels, and a host-orchestrated program runs each to its "
            "end in turn";
      return std::nullopt;
    }
    out.push_back(*ready);
    done.insert((*ready)->name);
    pending.erase(ready);
  }
  return out;
}

std::optional<OrchestrationPlan> plan_orchestrated_program(const htp::CspProgram &program, const ProgramDocs &docs,
                                                          const DeviceProfile &device, std::string &why) {
  if (!program.links.empty()) {
    why = "it links channels with connect(...), which a host-orchestrated program does not take";
    return std::nullopt;
  }
  htp::WspWorkload w = program_workload(program);
  const htp::CspChannel *event = nullptr;
  Json channels = channel_items(program, false, event);
  if (event) {
    why = "event '" + event->name + "' is a rendezvous, which processes run one after another cannot make";
    return std::nullopt;
  }
  auto order = producer_order(program, why);
  if (!order) return std::nullopt;
  ProgramDocs task_docs{docs.kernels, docs.layouts, {}, {}};
  int task_number = 0;
  for (const htp::CspProcess *proc : *order) {  // each replica a stage of its own
    const htp::TileKernel *k = docs.kernels.find(proc->function);
    if (!k) {
      why = "process '" + proc->name + "' runs '" + proc->function + "', which tile.kernels does not define";
      return std::nullopt;
    }
    // Statements before and after the loop: a task each, registers they share with the loop (or an iteration
    // with the next) carried through a workload tensor per replica.
    std::string cut_why;
    const auto cut = htp::cut_process(*k, &cut_why);
    if (!cut && !cut_why.empty()) {
      why = "process '" + proc->name + "': " + cut_why;
      return std::nullopt;
    }
    std::vector<const htp::TileKernel *> parts{k};
    if (cut) {
      parts = {&cut->iteration};
      if (cut->before) parts.insert(parts.begin(), &*cut->before);
      if (cut->after) parts.push_back(&*cut->after);
    }
    for (int64_t r = 0; r < proc->replicas; ++r) {
      std::map<std::string, htp::CspParam> carries;
      for (const htp::TileParam &c : cut ? cut->carries : std::vector<htp::TileParam>{}) {
        const std::string tensor =
            "carry_" + proc->name + (proc->replicas > 1 ? "_" + std::to_string(r) : "") + "__" + c.name;
        htp::add_intermediate(w, tensor, c.type.dtype, c.type.shape);
        htp::CspParam t{tensor, "inout", {}};
        t.type.kind = "tensor";
        t.type.dtype = c.type.dtype;
        for (int64_t d : c.type.shape) t.type.shape.push_back(htp::IrDim{d, {}});
        carries[c.name] = t;
      }
      for (const htp::TileKernel *part : parts) {
        auto stage = process_stage(program, *proc, *part, carries, task_number, why);
        if (!stage) return std::nullopt;
        for (const htp::TileKernel &ik : stage->kernels)
          if (!task_docs.kernels.find(ik.name)) task_docs.kernels.kernels.push_back(ik);
        // Replicas share a channel round robin, as on the other mappings: replica r's k-th item is k * n + r
        // (the orchestrator numbers each replica's items over its tasks before, in and after its loop, and
        // over the branches the host decides).
        if (proc->replicas > 1)
          htp::for_each_node(std::vector<htp::WspNode>{stage->node}, [&](const htp::WspNode &task) {
            if (task.is_task())
              for (const htp::WspArg &a : task.args)
                if (a.is_channel())
                  channels[*a.channel]["deal"][task.id] = {proc->replicas, r,
                                                          proc->name + "[" + std::to_string(r) + "]"};
          });
        w.body.push_back(std::move(stage->node));
      }
    }
  }
  std::vector<Problem> problems;  // (of the task designs: the first says why the host cannot run it)
  auto plan = plan_orchestration(w, channels, task_docs, device, problems);
  if (!problems.empty()) {
    why = problems.front().message;
    return std::nullopt;
  }
  return plan;
}

}  // namespace htp::aie
