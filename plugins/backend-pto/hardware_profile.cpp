#include "hardware_profile.hpp"

#include <stdexcept>

namespace ptobe {

const MemorySpace &HardwareProfile::space(const std::string &space_name) const {
  auto it = memory.find(space_name);
  if (it == memory.end()) throw std::out_of_range("hardware profile '" + name + "' has no memory space " + space_name);
  return it->second;
}

namespace {

const nlohmann::json &member(const nlohmann::json &obj, const char *key, const std::string &path) {
  if (!obj.is_object() || !obj.contains(key))
    throw std::runtime_error("hardware profile: missing key " + path + "/" + key);
  return obj.at(key);
}

template <class T> T number(const nlohmann::json &obj, const char *key, const std::string &path) {
  const nlohmann::json &v = member(obj, key, path);
  if (!v.is_number_unsigned()) throw std::runtime_error("hardware profile: " + path + "/" + key + " must be a count");
  return v.get<T>();
}

std::vector<std::string> strings(const nlohmann::json &v) {
  std::vector<std::string> out;
  for (const auto &s : v) out.push_back(s.get<std::string>());
  return out;
}

PerformanceProfile parse_performance(const nlohmann::json &perf) {
  auto num = [&](const char *key) { return htp::ProfileNumber::from_json(member(perf, key, "/performance"), "hardware profile: /performance/" + std::string(key)); };
  PerformanceProfile p;
  p.clock = num("clock");
  for (const auto &[dtype, n] : member(perf, "cube_flops_per_cycle", "/performance").items())
    p.cube_flops_per_cycle[dtype] = htp::ProfileNumber::from_json(n, "hardware profile: /performance/cube_flops_per_cycle/" + dtype);
  p.vector_bytes_per_cycle = num("vector_bytes_per_cycle");
  p.transcendental_bytes_per_cycle = num("transcendental_bytes_per_cycle");
  p.hbm_bandwidth = num("hbm_bandwidth");
  p.l2_bandwidth = num("l2_bandwidth");
  p.gm_sharing_cores = num("gm_sharing_cores");
  p.launch = num("launch");
  return p;
}

}  // namespace

htp::RooflineRates PerformanceProfile::rates() const {
  htp::RooflineRates r;
  const double ghz = clock.value;  // cycles per ns
  for (const auto &[dtype, n] : cube_flops_per_cycle) r.matmul_flops_per_ns[dtype] = n.value * ghz;
  r.vector_bytes_per_ns = vector_bytes_per_cycle.value * ghz;
  r.transcendental_bytes_per_ns = transcendental_bytes_per_cycle.value * ghz;
  r.load_bytes_per_ns = hbm_bandwidth.value / gm_sharing_cores.value;  // GB/s = B/ns
  r.store_bytes_per_ns = r.load_bytes_per_ns;
  r.launch_ns = launch.value;
  return r;
}

nlohmann::json PerformanceProfile::to_json() const {
  nlohmann::json cube = nlohmann::json::object();
  for (const auto &[dtype, n] : cube_flops_per_cycle) cube[dtype] = n.to_json();
  return {{"clock", clock.to_json()},
          {"cube_flops_per_cycle", cube},
          {"vector_bytes_per_cycle", vector_bytes_per_cycle.to_json()},
          {"transcendental_bytes_per_cycle", transcendental_bytes_per_cycle.to_json()},
          {"hbm_bandwidth", hbm_bandwidth.to_json()},
          {"l2_bandwidth", l2_bandwidth.to_json()},
          {"gm_sharing_cores", gm_sharing_cores.to_json()},
          {"launch", launch.to_json()}};
}

HardwareProfile parse_hardware_profile(const nlohmann::json &doc) {
  if (member(doc, "schema", "") != "htp.pto.hardware.v1")
    throw std::runtime_error("hardware profile: schema must be htp.pto.hardware.v1");
  HardwareProfile p;
  p.name = member(doc, "name", "").get<std::string>();
  p.aic_cores = number<int>(member(doc, "cores", ""), "aic", "/cores");
  p.aiv_cores = number<int>(member(doc, "cores", ""), "aiv", "/cores");
  for (const auto &[name, space] : member(doc, "memory", "").items()) {
    const std::string path = "/memory/" + name;
    p.memory[name] = MemorySpace{name, number<uint64_t>(space, "capacity", path),
                                 number<uint32_t>(space, "alignment", path),
                                 member(space, "core", path).get<std::string>()};
  }
  p.block_bytes = number<uint32_t>(member(doc, "vector", ""), "block_bytes", "/vector");
  const nlohmann::json &cube = member(doc, "cube", "");
  p.m_align = number<uint32_t>(cube, "m_align", "/cube");
  p.k_align_bytes = number<uint32_t>(cube, "k_align_bytes", "/cube");
  p.n_align = number<uint32_t>(cube, "n_align", "/cube");
  p.cube_input_dtypes = strings(member(cube, "input_dtypes", "/cube"));
  p.acc_dtypes = strings(member(cube, "acc_dtypes", "/cube"));
  p.performance = parse_performance(member(doc, "performance", ""));
  return p;
}

const HardwareProfile &a2a3_profile() {
  static const HardwareProfile profile = parse_hardware_profile(nlohmann::json::parse(a2a3_profile_json()));
  return profile;
}

}  // namespace ptobe
