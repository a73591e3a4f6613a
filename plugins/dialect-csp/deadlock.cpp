#include "deadlock.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <set>

namespace csp {

namespace {

struct Frame {
  const std::vector<Op> *list;
  size_t pc = 0;
  int64_t remaining = 1; ///< passes over `list` still to run, this one included
};

struct Instance {
  const SimProcess *proc;
  int64_t replica;
  std::vector<Frame> frames;
  bool done = false;
  bool offered = false; ///< waiting at an event send for a receiver
};

struct ChannelState {
  const ChannelDecl *decl;
  int64_t used = 0, received = 0;
  std::deque<Instance *> offers; ///< event senders waiting for a receiver
};

class Simulator {
public:
  Simulator(const ProgramDecl &program, const std::vector<SimProcess> &processes, int64_t param_value,
            bool take_else)
      : param_value_(param_value), take_else_(take_else) {
    for (const auto &c : program.channels)
      channels_[c.name].decl = &c;
    for (const auto &p : processes)
      for (int64_t r = 0; r < p.decl->replicas; ++r) {
        instances_.push_back(std::make_unique<Instance>(Instance{&p, r, {{p.ops, 0, 1}}}));
      }
  }

  SimResult run() {
    int64_t steps = 0;
    for (bool progress = true; progress;) {
      progress = false;
      for (auto &inst : instances_) {
        while (!inst->done && steps < kSimulationBudget) {
          const Op *op = next(*inst);
          if (!op) {
            inst->done = true;
            break;
          }
          if (!step(*inst, *op)) break;
          progress = true;
          ++steps;
        }
      }
      if (steps >= kSimulationBudget) return {std::nullopt, true}; // too long to decide by running it
    }
    return {cycle(), false};
  }

private:
  int64_t trips(const Poly &p) const {
    auto v = p.evaluate([&](const Json &atom) -> std::optional<int64_t> {
      return evaluate_expr(atom, [&](const std::string &) -> std::optional<int64_t> { return param_value_; });
    });
    return v ? std::max<int64_t>(*v, 0) : 0;
  }

  /// The next send or receive of `inst`, entering loops and branches; null when it has finished.
  const Op *next(Instance &inst) {
    while (!inst.frames.empty()) {
      Frame &f = inst.frames.back();
      if (f.pc >= f.list->size()) {
        if (--f.remaining > 0) {
          f.pc = 0;
          continue;
        }
        inst.frames.pop_back();
        if (!inst.frames.empty()) ++inst.frames.back().pc;
        continue;
      }
      const Op &op = (*f.list)[f.pc];
      if (op.kind == Op::Kind::Send || op.kind == Op::Kind::Recv) return &op;
      if (op.kind == Op::Kind::If) {
        inst.frames.push_back({take_else_ ? &op.orelse : &op.body, 0, 1});
        continue;
      }
      int64_t n = trips(op.trips);
      if (n == 0 || op.body.empty()) {
        ++f.pc;
        continue;
      }
      inst.frames.push_back({&op.body, 0, n});
    }
    return nullptr;
  }

  static void advance(Instance &inst) { ++inst.frames.back().pc; }

  /// Performs `op` when its slot token is available; false when `inst` must wait.
  bool step(Instance &inst, const Op &op) {
    ChannelState &c = channels_.at(op.channel);
    bool event = c.decl->kind == "event";
    if (op.kind == Op::Kind::Send) {
      if (event) {
        if (inst.offered) return false;
        inst.offered = true;
        c.offers.push_back(&inst);
        return true;
      }
      if (c.used >= c.decl->depth) return false; // no Free token
      ++c.used;
      advance(inst);
      return true;
    }
    if (event) {
      if (c.offers.empty()) return false;
      Instance *sender = c.offers.front();
      c.offers.pop_front();
      sender->offered = false;
      advance(*sender);
    } else {
      if (c.used == 0) return false; // no Used token
      --c.used;
    }
    ++c.received;
    advance(inst);
    return true;
  }

  std::string name_of(const Instance &i) const { return i.proc->decl->name; }

  bool is_end(const Instance &i, const std::string &channel, bool producer) const {
    const auto &ends = producer ? i.proc->decl->produces : i.proc->decl->consumes;
    return std::find(ends.begin(), ends.end(), channel) != ends.end();
  }

  /// The first cycle of waiting instances (Tarjan's SCCs over "waits for"), by declaration order.
  std::optional<Deadlock> cycle() {
    std::vector<Instance *> blocked;
    for (auto &i : instances_)
      if (!i->done) blocked.push_back(i.get());
    if (blocked.empty()) return std::nullopt;
    std::map<Instance *, std::vector<Instance *>> edges;
    for (Instance *i : blocked) {
      const Op *op = next(*i);
      bool sending = op->kind == Op::Kind::Send;
      for (Instance *j : blocked)
        if (is_end(*j, op->channel, !sending)) edges[i].push_back(j);
    }
    std::map<Instance *, int> index, low;
    std::vector<Instance *> stack;
    std::set<Instance *> on_stack;
    std::vector<std::vector<Instance *>> sccs;
    int counter = 0;
    std::function<void(Instance *)> connect = [&](Instance *v) {
      index[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack.insert(v);
      for (Instance *w : edges[v]) {
        if (!index.count(w)) {
          connect(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
      if (low[v] == index[v]) {
        std::vector<Instance *> scc;
        Instance *w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack.erase(w);
          scc.push_back(w);
        } while (w != v);
        sccs.push_back(scc);
      }
    };
    for (Instance *v : blocked)
      if (!index.count(v)) connect(v);
    for (auto &scc : sccs) {
      bool loops = scc.size() > 1 || std::count(edges[scc[0]].begin(), edges[scc[0]].end(), scc[0]);
      if (!loops) continue;
      std::sort(scc.begin(), scc.end(), [&](Instance *a, Instance *b) {
        return std::make_pair(a->proc, a->replica) < std::make_pair(b->proc, b->replica);
      });
      Deadlock d;
      std::set<std::string> seen;
      for (Instance *i : scc) {
        if (!seen.insert(name_of(*i)).second) continue; // one entry per process, not per replica
        const Op *op = next(*i);
        Waiter w{
            name_of(*i), i->replica, op, channels_.at(op->channel).used, channels_.at(op->channel).received,
            {}};
        std::set<std::string> peers;
        for (Instance *j : edges[i])
          if (std::count(scc.begin(), scc.end(), j)) peers.insert(name_of(*j));
        w.waits_on.assign(peers.begin(), peers.end());
        d.cycle.push_back(std::move(w));
      }
      return d;
    }
    return std::nullopt; // stopped without a cycle: a count mismatch, reported by the balance check
  }

  int64_t param_value_;
  bool take_else_;
  std::map<std::string, ChannelState> channels_;
  std::vector<std::unique_ptr<Instance>> instances_;
};

} // namespace

SimResult find_deadlock(const ProgramDecl &program, const std::vector<SimProcess> &processes,
                        int64_t param_value, bool take_else) {
  int64_t instances = 0;
  for (const auto &p : processes)
    instances += p.decl->replicas;
  if (instances > kSimulationInstances) return {std::nullopt, true};
  return Simulator(program, processes, param_value, take_else).run();
}

} // namespace csp
