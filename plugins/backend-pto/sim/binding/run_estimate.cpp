#include "run_estimate.hpp"

#include <htp/device_estimate.hpp>

#include <fstream>
#include <map>

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char *track_of(CoreType c) { return c == CoreType::AIC ? "AIC" : c == CoreType::AIV ? "AIV" : "dummy"; }

} // namespace

RunEstimate estimate_run(const PackageSpec &pkg, const std::vector<TaskRecord> &records) {
  const fs::path path = pkg.codegen_dir / "kernel_costs.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return htp::estimate_unavailable("the package has no codegen/pto/kernel_costs.json");
  const json costs = json::parse(in, nullptr, false);
  if (!costs.is_object() || !costs.contains("kernels") || !costs["kernels"].is_object())
    return htp::estimate_unavailable("codegen/pto/kernel_costs.json is not an htp.pto.kernel_costs.v1 document");
  std::map<int32_t, std::string> names;
  for (const KernelSpec &k : pkg.kernels) names[k.func_id] = k.name;
  std::vector<htp::EstimatedTask> tasks;
  tasks.reserve(records.size());
  for (const TaskRecord &r : records) {
    htp::EstimatedTask t;
    t.track = track_of(r.core);
    t.name = "dummy";
    if (r.func_id >= 0) {
      auto it = names.find(r.func_id);
      t.name = it != names.end() ? it->second : "func_" + std::to_string(r.func_id);
      const json *k = costs["kernels"].contains(t.name) ? &costs["kernels"][t.name] : nullptr;
      if (!k || !(*k)["estimated_device_ns"].is_number())
        return htp::estimate_unavailable("codegen/pto/kernel_costs.json has no estimate of kernel " + t.name);
      t.ns = (*k)["estimated_device_ns"].get<double>();
    }
    for (uint64_t p : r.preds) t.preds.push_back(static_cast<size_t>(p));
    t.args = {{"task", r.id}};
    tasks.push_back(std::move(t));
  }
  const htp::EstimatedSchedule s = htp::schedule_estimate(tasks);
  std::map<std::string, int> cores;
  if (costs.contains("cores") && costs["cores"].is_object())
    for (const auto &[track, n] : costs["cores"].items())
      if (n.is_number_integer()) cores[track] = n.get<int>();
  RunEstimate e = htp::estimate_run_json(tasks, s, costs.value("profile", ""), cores,
                                         [&](size_t i) { return json(records[i].id); }, /*pid=*/1);
  e.summary["kernels"] = costs["kernels"];
  if (costs.contains("performance")) e.summary["profile_numbers"] = costs["performance"];
  return e;
}

} // namespace htp_ptosim
