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

/// One stage of the orchestration: the kernel of a process's iteration and the loop launching it.
struct Stage {
  htp::TileKernel kernel;
  htp::WspNode node;
};

/// The stage of process `proc` (its function `k`, or a kernel htp::cut_process cut from it: `carries` binds its
/// carry parameters to the workload's tensors), or nullopt with `why` set. Its task is numbered `task_number`.
std::optional<Stage> process_stage(const htp::CspProgram &program, const htp::CspProcess &proc, const htp::TileKernel &k,
                                   const std::map<std::string, htp::CspParam> &carries, int task_number,
                                   std::string &why) {
  auto no = [&](std::string reason) -> std::optional<Stage> {
    why = "process '" + proc.name + "': " + std::move(reason);
    return std::nullopt;
  };
  ExprEnv constants = constexpr_env(k);
  // The process's scalar parameters as the program's Exprs they are bound to (the host evaluates a bound
  // known only at run time: `for i in range(n)` with n a scalar of the program).
  std::function<Json(const Json &)> bound = [&](const Json &e) -> Json {
    if (e.is_object() && e.size() == 1 && e.contains("param") && e["param"].is_string())
      for (const htp::CspBinding &b : proc.args)
        if (b.param == e["param"] && b.scalar) return *b.scalar;
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
  // Loads and stores may sit under an `if` (the task's kernel evaluates the condition); a send or receive
  // may not (the host queues a fixed number of items per task), nor any data movement in a nested loop.
  std::function<std::optional<std::string>(const std::vector<htp::TileOp> &, bool)> nesting =
      [&](const std::vector<htp::TileOp> &ops, bool in_if) -> std::optional<std::string> {
    for (const htp::TileOp &o : ops) {
      if (in_if && (o.is("csp.send") || o.is("csp.recv"))) return "it sends or receives inside a condition";
      bool moves = false;
      htp::for_each_op(o.body, [&](const htp::TileOp &x) { moves = moves || is_data_movement(x); });
      if (moves) return "it moves data inside a nested loop";
      for (const auto *branch : {&o.then_body, &o.else_body})
        if (auto why = nesting(*branch, true)) return why;
    }
    return std::nullopt;
  };
  for (const htp::TileOp &o : body)
    if (o.is("for") && var.empty() && body.size() > 1) return no("its body is not one counted loop or straight-line code");
  if (auto why = nesting(body, false)) return no(*why);
  // The iteration kernel: the process's locals, its scalar and constexpr parameters, and a parameter per
  // data movement, each at offset 0 of its own object; the loop variable, where the body reads it as a
  // value, a scalar parameter of its name.
  Stage st;
  htp::TileKernel &ik = st.kernel;
  ik.name = k.name + "__iter";
  ik.kind = "kernel";
  ik.span = k.span;
  ik.locals = k.locals;
  htp::WspNode task;
  task.kind = "task";
  task.id = "t" + std::to_string(task_number);
  task.kernel = ik.name;
  task.span = k.body.size() == 1 && k.body[0].span ? *k.body[0].span : k.span;  // the loop, or the process
  // A WSP loop counts 0, 1, ...: the process's value of its variable is start + step * that.
  const Json value = var.empty() ? Json(0) : htp::loop_detail::iteration_value(start, step, var);
  for (const htp::TileParam &p : k.params) {
    if (p.type.is_constexpr()) {
      ik.params.push_back(p);
      continue;
    }
    if (!p.type.is_scalar()) continue;
    const htp::CspBinding *b = nullptr;
    for (const htp::CspBinding &x : proc.args)
      if (x.param == p.name && x.scalar) b = &x;
    if (!b) return no("its scalar parameter '" + p.name + "' is not bound to a scalar");
    ik.params.push_back(p);
    htp::WspArg a;
    a.param = p.name;
    a.scalar = *b->scalar;
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
  if (var.empty()) {
    st.node = std::move(task);
    return st;
  }
  htp::WspNode loop;
  loop.kind = "loop";
  loop.vars = {var};
  loop.dep = "sequential";
  loop.domain.type = "seq";
  loop.domain.extent = trips;
  loop.span = task.span;
  loop.body = {std::move(task)};
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
        auto stage = process_stage(program, *proc, *part, carries, task_number++, why);
        if (!stage) return std::nullopt;
        if (!task_docs.kernels.find(stage->kernel.name)) task_docs.kernels.kernels.push_back(stage->kernel);
        // Replicas share a channel round robin, as on the other mappings: replica r's k-th item is k * n + r
        // (the orchestrator numbers each replica's items over its tasks before, in and after its loop).
        const htp::WspNode &task = stage->node.is_task() ? stage->node : stage->node.body.at(0);
        if (proc->replicas > 1)
          for (const htp::WspArg &a : task.args)
            if (a.is_channel())
              channels[*a.channel]["deal"][task.id] = {proc->replicas, r, proc->name + "[" + std::to_string(r) + "]"};
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
