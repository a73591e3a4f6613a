#include "run_estimate.hpp"

#include <htp/device_estimate.hpp>

#include <map>
#include <optional>
#include <set>

namespace htp::aie {

namespace {

constexpr size_t kMaxEvents = 1'000'000;  // core program steps laid out at most

/// A core program step with its loops unrolled.
struct Step {
  const CoreOp *op;
};

bool flatten(const std::vector<CoreOp> &body, std::vector<Step> &out, size_t &budget) {
  for (const CoreOp &op : body) {
    if (op.kind == CoreOp::Kind::Loop) {
      for (int64_t i = 0; i < op.trip; ++i)
        if (!flatten(op.body, out, budget)) return false;
      continue;
    }
    if (budget == 0) return false;
    --budget;
    out.push_back({&op});
  }
  return true;
}

/// Where one core is in its program.
struct CoreState {
  const Core *core = nullptr;
  std::vector<Step> steps;
  size_t pc = 0;
  std::optional<size_t> last_call;
  std::vector<size_t> pending;          // calls the next call waits for (objects acquired since the last call)
  std::map<std::string, int64_t> held;  // consumed FIFO -> objects held
  std::map<std::string, size_t> next;   // consumed FIFO -> index of the next object to acquire
};

}  // namespace

htp::RunEstimate estimate_design(const Design &d) {
  const DeviceProfile *profile = device_named(d.device);
  if (!profile) return htp::estimate_unavailable("no hardware profile for device " + d.device);
  const DeviceProfile &dev = *profile;
  const htp::RooflineRates rates = dev.performance.rates(dev.compute.dma_in, dev.compute.dma_out);
  std::map<std::string, htp::WorkEstimate> per_kernel;
  Json kernels = Json::object();
  for (const KernelFunc &k : d.kernels) {
    if (!k.work.is_object()) return htp::estimate_unavailable("mapping.json states no work for kernel " + k.name);
    const htp::KernelWork w = htp::KernelWork::from_json(k.work);
    per_kernel[k.name] = htp::estimate_work(w, rates);
    kernels[k.name] = per_kernel[k.name].to_json();
    kernels[k.name]["work"] = k.work;
  }
  std::set<TileCoord> core_tiles;
  for (const Core &c : d.cores) core_tiles.insert(c.tile);
  std::map<std::string, std::vector<std::optional<size_t>>> produced;  // core-produced FIFO -> filler call per object
  for (const ObjectFifo &f : d.fifos)
    if (core_tiles.count(f.producer)) produced[f.name];

  std::vector<CoreState> cores;
  size_t budget = kMaxEvents;
  for (const Core &c : d.cores) {
    CoreState s;
    s.core = &c;
    if (!flatten(c.body, s.steps, budget)) return htp::estimate_unavailable("the design has more than 1000000 core program steps");
    cores.push_back(std::move(s));
  }
  std::vector<htp::EstimatedTask> tasks;
  bool progress = true;
  while (progress) {
    progress = false;
    for (CoreState &s : cores) {
      while (s.pc < s.steps.size()) {
        const CoreOp &op = *s.steps[s.pc].op;
        if (op.kind == CoreOp::Kind::Call) {
          auto it = per_kernel.find(op.callee);
          if (it == per_kernel.end()) return htp::estimate_unavailable("core " + s.core->name + " calls unknown kernel " + op.callee);
          htp::EstimatedTask t;
          t.name = op.callee;
          t.track = s.core->name;
          t.ns = it->second.total_ns;
          if (s.last_call) t.preds.push_back(*s.last_call);
          for (size_t p : s.pending)
            if (std::find(t.preds.begin(), t.preds.end(), p) == t.preds.end()) t.preds.push_back(p);
          t.args = {{"core", s.core->name}, {"tile", s.core->tile.text()}};
          s.pending.clear();
          s.last_call = tasks.size();
          tasks.push_back(std::move(t));
        } else if (auto f = produced.find(op.fifo); f != produced.end()) {
          if (op.kind == CoreOp::Kind::Acquire && op.port == "Consume") {
            const int64_t need = std::max<int64_t>(0, op.count - s.held[op.fifo]);
            size_t &next = s.next[op.fifo];
            if (f->second.size() < next + static_cast<size_t>(need)) break;  // its producer has not filled them yet
            for (int64_t i = 0; i < need; ++i)
              if (const auto &filler = f->second[next + i]) s.pending.push_back(*filler);
            next += static_cast<size_t>(need);
            s.held[op.fifo] += need;
          } else if (op.kind == CoreOp::Kind::Release && op.port == "Consume") {
            s.held[op.fifo] = std::max<int64_t>(0, s.held[op.fifo] - op.count);
          } else if (op.kind == CoreOp::Kind::Release && op.port == "Produce") {
            for (int64_t i = 0; i < op.count; ++i) f->second.push_back(s.last_call);
          }
        }
        ++s.pc;
        progress = true;
      }
    }
  }
  for (const CoreState &s : cores)
    if (s.pc < s.steps.size())
      return htp::estimate_unavailable("core " + s.core->name + " waits for objects no core produces (the model cannot lay it out)");

  const htp::EstimatedSchedule sched = htp::schedule_estimate(tasks);
  std::map<std::string, int> one_each;
  for (const Core &c : d.cores) one_each[c.name] = 1;
  htp::RunEstimate e = htp::estimate_run_json(tasks, sched, dev.name, one_each, nullptr, /*pid=*/2);
  e.summary["kernels"] = kernels;
  e.summary["profile_numbers"] = dev.performance.to_json();
  return e;
}

}  // namespace htp::aie
