// htp/device_estimate.hpp — estimated device time: a roofline per task from a target's hardware profile,
// and the run's critical path over the task graph. An estimate from published (or stated-as-assumed)
// peak rates, never a measurement; docs/packages.md "Estimated device time" states the model and its limits.
//
//   htp::KernelWork w = htp::count_kernel_work(kernel.body, local_shape, constants);   // per call
//   htp::WorkEstimate e = htp::estimate_work(w, rates);   // launch + max(compute, memory)
//   htp::EstimatedSchedule s = htp::schedule_estimate(tasks);   // ASAP along the dependencies
//   report["estimate"] = htp::estimate_summary_json(tasks, s, profile_name);
//   trace_events += htp::estimate_trace_events(tasks, s, /*pid=*/1);
//
// Header-only and target-neutral: a backend supplies the rates (from its profile) and the task graph.
#pragma once

#include <htp/interval.hpp>
#include <htp/tile_kernels.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace htp {

/// The label every estimate carries, in reports and traces.
inline constexpr const char *kEstimateTrackName = "estimated device time (model)";

/// One number of a hardware profile with where it comes from: a public document, or "assumed: why".
struct ProfileNumber {
  double value = 0;
  std::string unit;
  std::string source;
  bool assumed = false;

  nlohmann::json to_json() const {
    return {{"value", value}, {"unit", unit}, {"source", source}, {"assumed", assumed}};
  }
  /// Reads {"value", "unit", "source", "assumed"?}; throws std::runtime_error naming `where`.
  static ProfileNumber from_json(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object() || !j.contains("value") || !j["value"].is_number() || !(j["value"].get<double>() > 0) ||
        !j.contains("source") || !j["source"].is_string() || j["source"].get<std::string>().empty())
      throw std::runtime_error(where + " must be {\"value\": a positive number, \"unit\": ..., \"source\": a non-empty "
                                       "string, \"assumed\": bool}");
    ProfileNumber n;
    n.value = j["value"].get<double>();
    n.unit = j.value("unit", "");
    n.source = j["source"].get<std::string>();
    n.assumed = j.value("assumed", false);
    return n;
  }
};

/// Bytes of one element of an HTP dtype (f32 4, bf16 2, i8 1, ...); 4 when unknown.
inline double dtype_size(const std::string &dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "u64") return 8;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16" || dtype == "u16") return 2;
  if (dtype == "i8" || dtype == "u8" || dtype == "bool") return 1;
  return 4;
}

/// The work of one call of a kernel, by op class, counted from its tile IR.
struct KernelWork {
  double matmul_flops = 0;          ///< 2*M*N*K per matmul
  std::string matmul_dtype;         ///< input dtype of the (first) matmul; empty without one
  double vector_bytes = 0;          ///< elementwise, reduction, expand, cast, transpose, full: elements x dtype bytes
  double transcendental_bytes = 0;  ///< exp log sqrt rsqrt sigmoid tanh div recip: elements x dtype bytes
  double bytes_loaded = 0;          ///< load, csp.recv: bytes brought into the core
  double bytes_stored = 0;          ///< store, csp.send: bytes written out of the core
  bool dynamic_trip_counts = false; ///< a loop's trip count was not known at compile time (counted once)

  nlohmann::json to_json() const {
    nlohmann::json j = {{"matmul_flops", matmul_flops},     {"vector_bytes", vector_bytes},
                        {"transcendental_bytes", transcendental_bytes}, {"bytes_loaded", bytes_loaded},
                        {"bytes_stored", bytes_stored},     {"dynamic_trip_counts", dynamic_trip_counts}};
    if (!matmul_dtype.empty()) j["matmul_dtype"] = matmul_dtype;
    return j;
  }
  static KernelWork from_json(const nlohmann::json &j) {
    KernelWork w;
    w.matmul_flops = j.value("matmul_flops", 0.0);
    w.matmul_dtype = j.value("matmul_dtype", "");
    w.vector_bytes = j.value("vector_bytes", 0.0);
    w.transcendental_bytes = j.value("transcendental_bytes", 0.0);
    w.bytes_loaded = j.value("bytes_loaded", 0.0);
    w.bytes_stored = j.value("bytes_stored", 0.0);
    w.dynamic_trip_counts = j.value("dynamic_trip_counts", false);
    return w;
  }
  void add(const KernelWork &o, double times) {
    matmul_flops += o.matmul_flops * times;
    if (matmul_dtype.empty()) matmul_dtype = o.matmul_dtype;
    vector_bytes += o.vector_bytes * times;
    transcendental_bytes += o.transcendental_bytes * times;
    bytes_loaded += o.bytes_loaded * times;
    bytes_stored += o.bytes_stored * times;
    dynamic_trip_counts = dynamic_trip_counts || o.dynamic_trip_counts;
  }
  double weight() const { return matmul_flops + vector_bytes + transcendental_bytes + bytes_loaded + bytes_stored; }
};

/// A register's tile shape and dtype, as the counter needs it.
struct TileShape {
  int64_t rows = 1, cols = 1;
  std::string dtype;
  double elements() const { return static_cast<double>(rows) * static_cast<double>(cols); }
  double bytes() const { return elements() * dtype_size(dtype); }
};

namespace device_estimate_detail {

inline bool is_transcendental(const std::string &op) {
  for (const char *n : {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "div", "divs", "recip", "rowexpand_div",
                        "colexpand_div"})
    if (op == n) return true;
  return false;
}

/// `e` with every {"param": p} of `constants` replaced by its value.
inline nlohmann::json substitute(const nlohmann::json &e, const nlohmann::json &constants) {
  if (e.is_object() && e.contains("param") && e["param"].is_string() && constants.is_object() &&
      constants.contains(e["param"].get<std::string>()) && constants[e["param"].get<std::string>()].is_number_integer())
    return constants[e["param"].get<std::string>()];
  if (e.is_object() && e.contains("args") && e["args"].is_array()) {
    nlohmann::json out = e;
    for (auto &a : out["args"]) a = substitute(a, constants);
    return out;
  }
  return e;
}

struct Counter {
  const std::function<std::optional<TileShape>(const std::string &)> &shape_of;
  const nlohmann::json &constants;
  std::map<std::string, Interval> vars;

  std::optional<Interval> range(const std::optional<nlohmann::json> &e) {
    if (!e) return std::nullopt;
    return expr_range(substitute(*e, constants), vars).interval;
  }

  /// The loop's mean trip count, or nullopt when a bound is unknown.
  std::optional<double> trips(const TileOp &o) {
    const auto start = range(o.start), stop = range(o.stop), step = range(o.step);
    if (!start || !stop || !step || step->lo != step->hi || step->lo <= 0) return std::nullopt;
    const double s = static_cast<double>(step->lo);
    const double mean_span = (static_cast<double>(stop->lo) + static_cast<double>(stop->hi)) / 2 -
                             (static_cast<double>(start->lo) + static_cast<double>(start->hi)) / 2;
    return std::max(0.0, std::ceil(mean_span / s));
  }

  std::optional<TileShape> reg(const std::optional<std::string> &name) {
    if (!name) return std::nullopt;
    return shape_of(*name);
  }

  KernelWork count(const std::vector<TileOp> &ops) {
    KernelWork w;
    for (const TileOp &o : ops) w.add(count(o), 1);
    return w;
  }

  KernelWork count(const TileOp &o) {
    KernelWork w;
    const std::string &op = o.op;
    if (op == "for") {
      const std::optional<double> n = trips(o);
      const auto start = range(o.start), stop = range(o.stop);
      std::optional<Interval> saved;
      if (o.var) {
        if (auto it = vars.find(*o.var); it != vars.end()) saved = it->second;
        if (start && stop && stop->hi > start->lo) vars[*o.var] = Interval{start->lo, stop->hi - 1};
        else vars.erase(*o.var);
      }
      KernelWork body = count(o.body);
      if (o.var) {
        if (saved) vars[*o.var] = *saved;
        else vars.erase(*o.var);
      }
      w.add(body, n.value_or(1));
      if (!n) w.dynamic_trip_counts = true;
      return w;
    }
    if (op == "if") {
      KernelWork a = count(o.then_body), b = count(o.else_body);
      return a.weight() >= b.weight() ? a : b;  // the heavier branch
    }
    if (op == "load" || op == "csp.recv") {
      if (auto t = reg(o.dst)) w.bytes_loaded = t->bytes();
      return w;
    }
    if (op == "store" || op == "csp.send") {
      // store names its register in `value`; csp.send among its operands (after the channel).
      std::optional<TileShape> t;
      if (o.value && o.value->is_string()) t = reg(o.value->get<std::string>());
      for (size_t i = 0; !t && o.args && i < o.args->size(); ++i) t = reg(o.arg_name(i));
      if (t) w.bytes_stored = t->bytes();
      return w;
    }
    if (op == "matmul") {
      const auto a = reg(o.arg_name(0)), b = reg(o.arg_name(1));
      if (a && b) {
        w.matmul_flops = 2.0 * static_cast<double>(a->rows) * static_cast<double>(a->cols) * static_cast<double>(b->cols);
        w.matmul_dtype = a->dtype;
      }
      return w;
    }
    if (op == "scalar") return w;  // scalar arithmetic: not modelled
    // Every other tile op is vector work over the larger of its result and its first operand.
    const auto d = reg(o.dst), a = reg(o.arg_name(0));
    double bytes = 0;
    if (d) bytes = d->bytes();
    if (a) bytes = std::max(bytes, a->bytes());
    (is_transcendental(op) ? w.transcendental_bytes : w.vector_bytes) = bytes;
    return w;
  }
};

}  // namespace device_estimate_detail

/// The work of one call of a kernel whose body is `body`: `shape_of` gives a tile register's shape (nullopt
/// for a scalar or an unknown name), `constants` the constexpr parameters ({"K": 4}). Loop trip counts
/// come from constant bounds (mean over outer loops' ranges); an unknown one counts the body once and sets
/// `dynamic_trip_counts`. An `if` counts its heavier branch.
inline KernelWork count_kernel_work(const std::vector<TileOp> &body,
                                    const std::function<std::optional<TileShape>(const std::string &)> &shape_of,
                                    const nlohmann::json &constants = nlohmann::json::object()) {
  device_estimate_detail::Counter c{shape_of, constants, {}};
  return c.count(body);
}

/// What a core can do per nanosecond, from a hardware profile.
struct RooflineRates {
  std::map<std::string, double> matmul_flops_per_ns;  ///< by input dtype
  double vector_bytes_per_ns = 0;
  double transcendental_bytes_per_ns = 0;
  double load_bytes_per_ns = 0;   ///< into the core (GM -> L1/UB, or DMA into the tile)
  double store_bytes_per_ns = 0;  ///< out of the core
  double launch_ns = 0;           ///< fixed cost of starting a task / kernel call
};

/// One task's estimate: launch + max(compute, memory).
struct WorkEstimate {
  double compute_ns = 0;  ///< matmul + vector + transcendental, one after the other on the core
  double memory_ns = 0;   ///< max(loads / load rate, stores / store rate): the two directions overlap
  double launch_ns = 0;
  double total_ns = 0;
  std::string bound;      ///< "compute" or "memory"

  nlohmann::json to_json() const {
    return {{"compute_ns", compute_ns}, {"memory_ns", memory_ns}, {"launch_ns", launch_ns},
            {"estimated_device_ns", total_ns}, {"bound", bound}};
  }
};

/// The roofline of `w` at `r`. A matmul dtype without a rate uses the slowest rate the profile states.
inline WorkEstimate estimate_work(const KernelWork &w, const RooflineRates &r) {
  auto per = [](double amount, double rate) { return amount > 0 && rate > 0 ? amount / rate : 0.0; };
  double mm_rate = 0;
  if (auto it = r.matmul_flops_per_ns.find(w.matmul_dtype); it != r.matmul_flops_per_ns.end()) mm_rate = it->second;
  else
    for (const auto &[dtype, rate] : r.matmul_flops_per_ns) mm_rate = mm_rate == 0 ? rate : std::min(mm_rate, rate);
  WorkEstimate e;
  e.compute_ns = per(w.matmul_flops, mm_rate) + per(w.vector_bytes, r.vector_bytes_per_ns) +
                 per(w.transcendental_bytes, r.transcendental_bytes_per_ns);
  e.memory_ns = std::max(per(w.bytes_loaded, r.load_bytes_per_ns), per(w.bytes_stored, r.store_bytes_per_ns));
  e.launch_ns = r.launch_ns;
  e.bound = e.compute_ns >= e.memory_ns ? "compute" : "memory";
  e.total_ns = e.launch_ns + std::max(e.compute_ns, e.memory_ns);
  return e;
}

/// A task of the estimated timeline: its name (kernel), the track it belongs to (core type or core), its
/// estimated time, the tasks it waits for (indices into the task list) and extra trace arguments.
struct EstimatedTask {
  std::string name;
  std::string track;
  double ns = 0;
  std::vector<size_t> preds;
  nlohmann::json args = nlohmann::json::object();
};

/// The tasks laid out as soon as their dependencies allow (no limit on cores): start and end of each, the
/// sum of all estimates, and the longest dependency chain.
struct EstimatedSchedule {
  std::vector<double> start_ns, end_ns;
  double total_ns = 0;
  double critical_path_ns = 0;
  std::vector<size_t> critical_path;  ///< task indices, first to last
};

/// Lays `tasks` out along their dependencies; throws std::runtime_error on a cycle or a bad index.
inline EstimatedSchedule schedule_estimate(const std::vector<EstimatedTask> &tasks) {
  const size_t n = tasks.size();
  EstimatedSchedule s;
  s.start_ns.assign(n, 0);
  s.end_ns.assign(n, 0);
  std::vector<size_t> indegree(n, 0), via(n, SIZE_MAX), order;
  std::vector<std::vector<size_t>> succ(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t p : tasks[i].preds) {
      if (p >= n) throw std::runtime_error("estimated task " + std::to_string(i) + " waits for unknown task " + std::to_string(p));
      succ[p].push_back(i);
      ++indegree[i];
    }
  order.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    s.end_ns[i] = s.start_ns[i] + tasks[i].ns;
    s.total_ns += tasks[i].ns;
    for (size_t j : succ[i]) {
      if (via[j] == SIZE_MAX || s.end_ns[i] > s.start_ns[j]) {
        s.start_ns[j] = s.end_ns[i];
        via[j] = i;
      }
      if (--indegree[j] == 0) order.push_back(j);
    }
  }
  if (order.size() != n) throw std::runtime_error("the estimated task graph has a cycle");
  size_t last = SIZE_MAX;
  for (size_t i = 0; i < n; ++i)
    if (last == SIZE_MAX || s.end_ns[i] > s.end_ns[last]) last = i;
  if (last != SIZE_MAX) {
    s.critical_path_ns = s.end_ns[last];
    for (size_t i = last; i != SIZE_MAX; i = via[i]) s.critical_path.push_back(i);
    std::reverse(s.critical_path.begin(), s.critical_path.end());
  }
  return s;
}

/// The run-level `estimate` object of a report: label, profile, total, critical path (its length and, up to
/// 256 entries, the task ids `id_of` gives), and per track the summed time and, with `cores_per_track`, the
/// time those cores need at best (sum / cores); `makespan_lower_bound_ns` is the largest of all of these.
inline nlohmann::json estimate_summary_json(const std::vector<EstimatedTask> &tasks, const EstimatedSchedule &s,
                                            const std::string &profile,
                                            const std::map<std::string, int> &cores_per_track = {},
                                            const std::function<nlohmann::json(size_t)> &id_of = nullptr) {
  nlohmann::json path = nlohmann::json::array();
  for (size_t k = 0; k < s.critical_path.size() && k < 256; ++k)
    path.push_back(id_of ? id_of(s.critical_path[k]) : nlohmann::json(s.critical_path[k]));
  std::map<std::string, double> by_track;
  for (const EstimatedTask &t : tasks) by_track[t.track] += t.ns;
  double bound = s.critical_path_ns;
  nlohmann::json tracks = nlohmann::json::object();
  for (const auto &[track, ns] : by_track) {
    nlohmann::json j = {{"total_ns", ns}};
    if (auto it = cores_per_track.find(track); it != cores_per_track.end() && it->second > 0) {
      j["cores"] = it->second;
      j["throughput_bound_ns"] = ns / it->second;
      bound = std::max(bound, ns / it->second);
    }
    tracks[track] = j;
  }
  return {{"kind", "estimate"},
          {"label", std::string(kEstimateTrackName) +
                        ": a roofline per task from the target's hardware profile, not a measurement"},
          {"model", "task = launch + max(compute, memory); compute = matmul flops / cube peak + vector bytes / vector "
                    "rate + transcendental bytes / their rate; memory = max(bytes loaded / load bandwidth, bytes "
                    "stored / store bandwidth); critical path = longest dependency chain"},
          {"profile", profile},
          {"tasks", tasks.size()},
          {"total_ns", s.total_ns},
          {"critical_path_ns", s.critical_path_ns},
          {"critical_path_tasks", s.critical_path.size()},
          {"critical_path", path},
          {"tracks", tracks},
          {"makespan_lower_bound_ns", bound}};
}

/// Chrome trace events of the estimated timeline in process `pid`, named kEstimateTrackName: per track as
/// many lanes (trace threads, from `first_tid`) as overlapping tasks need; ts/dur in microseconds.
inline nlohmann::json estimate_trace_events(const std::vector<EstimatedTask> &tasks, const EstimatedSchedule &s,
                                            int pid, int first_tid = 1) {
  nlohmann::json ev = nlohmann::json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", kEstimateTrackName}}}});
  ev.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"args", {{"sort_index", 1000}}}});
  std::vector<size_t> by_start(tasks.size());
  for (size_t i = 0; i < by_start.size(); ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) { return s.start_ns[a] < s.start_ns[b]; });
  std::map<std::string, std::vector<std::pair<double, int>>> lanes;  // track -> (end of last task, tid)
  int next_tid = first_tid;
  for (size_t i : by_start) {
    const EstimatedTask &t = tasks[i];
    auto &ls = lanes[t.track];
    int tid = -1;
    for (auto &[end, id] : ls)
      if (end <= s.start_ns[i] + 1e-9) {
        end = s.end_ns[i];
        tid = id;
        break;
      }
    if (tid < 0) {
      tid = next_tid++;
      ls.emplace_back(s.end_ns[i], tid);
      ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                    {"args", {{"name", "est " + t.track + " #" + std::to_string(ls.size() - 1)}}}});
    }
    nlohmann::json args = t.args;
    args["estimated_device_ns"] = t.ns;
    args["estimate"] = true;
    ev.push_back({{"name", t.name}, {"cat", "estimate"}, {"ph", "X"}, {"pid", pid}, {"tid", tid},
                  {"ts", s.start_ns[i] / 1000.0}, {"dur", t.ns / 1000.0}, {"args", args}});
  }
  return ev;
}

/// What a run's report and trace get of the estimate.
struct RunEstimate {
  nlohmann::json summary;                             ///< report "estimate"
  nlohmann::json tasks = nlohmann::json::array();     ///< report "task_estimates"
  nlohmann::json trace_events = nlohmann::json::array();  ///< the trace's estimate track
};

/// An estimate that cannot be made: the report says why instead of giving numbers.
inline RunEstimate estimate_unavailable(const std::string &reason) {
  return RunEstimate{{{"kind", "estimate"}, {"available", false}, {"reason", reason}}};
}

/// The estimate of the laid-out `tasks`: the summary (estimate_summary_json, marked available), one
/// task_estimates entry per task (`id_of` names it, else its index: task, kernel, core, estimated_device_ns,
/// start_ns) and the trace events in process `pid`.
inline RunEstimate estimate_run_json(const std::vector<EstimatedTask> &tasks, const EstimatedSchedule &s,
                                     const std::string &profile, const std::map<std::string, int> &cores_per_track,
                                     const std::function<nlohmann::json(size_t)> &id_of, int pid) {
  RunEstimate e;
  e.summary = estimate_summary_json(tasks, s, profile, cores_per_track, id_of);
  e.summary["available"] = true;
  for (size_t i = 0; i < tasks.size(); ++i)
    e.tasks.push_back({{"task", id_of ? id_of(i) : nlohmann::json(i)},
                       {"kernel", tasks[i].name},
                       {"core", tasks[i].track},
                       {"estimated_device_ns", tasks[i].ns},
                       {"start_ns", s.start_ns[i]}});
  e.trace_events = estimate_trace_events(tasks, s, pid);
  return e;
}

}  // namespace htp
