// htp_ptosim: the task timeline as Chrome trace-event JSON (one trace thread per simulated core, one complete
// event per task on the core that ran it).
#include <nlohmann/json.hpp>

#include "runtime.hpp"

namespace htp_ptosim {

namespace {
constexpr int kOrchestratorTid = 0;
nlohmann::json thread_name(int tid, const std::string &name) {
  return {{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", tid}, {"args", {{"name", name}}}};
}
/// A task event's args; `thread` names the core whose OS thread executed the task on behalf of the event's
/// core, when that was another core's thread.
nlohmann::json task_args(const TaskRecord &r, const Runtime &rt) {
  nlohmann::json args = {{"task", r.id}, {"func_id", r.func_id}, {"key", r.key}};
  if (r.thread >= 0 && r.thread != r.worker) args["thread"] = rt.worker_name(r.thread);
  return args;
}
} // namespace

std::string Runtime::trace_json(const nlohmann::json &extra_events) const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(thread_name(kOrchestratorTid, "AICPU orchestrator"));
  for (size_t i = 0; i < cores_.size(); ++i)
    events.push_back(thread_name(static_cast<int>(i) + 1, worker_name(i)));
  if (orchestration_start_us_ >= 0 && orchestration_end_us_ >= orchestration_start_us_)
    events.push_back({{"name", "orchestration"},
                      {"cat", "aicpu"},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", kOrchestratorTid},
                      {"ts", orchestration_start_us_},
                      {"dur", orchestration_end_us_ - orchestration_start_us_},
                      {"args", {{"tasks", task_count()}}}});
  std::vector<std::string> names;
  for (const auto &k : kernels_)
    names.push_back(k.name);
  for (const TaskRecord &r : records()) {
    const std::string name =
        r.func_id >= 0 && static_cast<size_t>(r.func_id) < names.size() && !names[r.func_id].empty()
            ? names[r.func_id]
            : (r.func_id >= 0 ? "func_" + std::to_string(r.func_id) : "dummy");
    events.push_back({{"name", name},
                      {"cat", r.core == CoreType::AIC ? "aic" : (r.core == CoreType::AIV ? "aiv" : "dummy")},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", r.worker >= 0 ? r.worker + 1 : kOrchestratorTid},
                      {"ts", r.start_us},
                      {"dur", r.end_us - r.start_us},
                      {"args", task_args(r, *this)}});
  }
  for (const auto &e : extra_events)
    events.push_back(e);
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump();
}

} // namespace htp_ptosim
