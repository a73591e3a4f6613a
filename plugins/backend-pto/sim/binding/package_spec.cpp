#include "package_spec.hpp"

#include <algorithm>

#include <fstream>
#include <set>

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const fs::path &path) {
  std::ifstream f(path);
  if (!f) throw RunFailure("pto.sim.package", "the package has no " + path.string());
  try {
    return json::parse(f);
  } catch (const json::exception &e) {
    throw RunFailure("pto.sim.package", path.string() + ": not valid JSON: " + e.what());
  }
}

std::string string_field(const json &obj, const char *key, const std::string &where,
                         const char *fallback = nullptr) {
  if (!obj.contains(key)) {
    if (fallback) return fallback;
    throw RunFailure("pto.sim.package", where + ": missing \"" + key + "\"");
  }
  if (!obj[key].is_string())
    throw RunFailure("pto.sim.package", where + ": \"" + key + "\" must be a string");
  return obj[key].get<std::string>();
}

/// A package-relative path that stays inside codegen/pto.
std::string checked_source(const json &obj, const std::string &where) {
  std::string s = string_field(obj, "source", where);
  const fs::path p(s);
  if (p.is_absolute() || s.find("..") != std::string::npos || s.empty())
    throw RunFailure("pto.sim.package",
                     where + ": source '" + s + "' must be a relative path inside codegen/pto");
  return s;
}

OrchestrationSpec read_orchestration(const json &obj, const std::string &where) {
  if (!obj.is_object()) throw RunFailure("pto.sim.package", where + " must be an object");
  OrchestrationSpec o;
  o.source = checked_source(obj, where);
  o.function_name = string_field(obj, "function_name", where, "aicpu_orchestration_entry");
  o.config_name = string_field(obj, "config_name", where, "aicpu_orchestration_config");
  if (obj.contains("staging")) {
    if (!obj["staging"].is_object()) throw RunFailure("pto.sim.package", where + ": \"staging\" must be an object");
    for (const auto &[name, s] : obj["staging"].items()) {
      const bool ok = s.is_object() && s.contains("extents") && s.contains("strides") && s["extents"].is_array() &&
                      s["strides"].is_array() && s["extents"].size() == s["strides"].size() &&
                      std::all_of(s["extents"].begin(), s["extents"].end(), [](const json &v) { return v.is_number_integer() && v.get<int64_t>() > 0; }) &&
                      std::all_of(s["strides"].begin(), s["strides"].end(), [](const json &v) { return v.is_number_integer() && v.get<int64_t>() >= 0; });
      if (!ok)
        throw RunFailure("pto.sim.package", where + ": staging." + name + " must be {\"extents\": [positive ints], "
                                            "\"strides\": [ints]} of one length");
    }
    o.staging = obj["staging"];
  }
  return o;
}

std::vector<std::string> read_signature(const json &k, const std::string &where) {
  std::vector<std::string> out;
  if (!k.contains("signature")) return out;
  if (!k["signature"].is_array())
    throw RunFailure("pto.sim.package", where + ": \"signature\" must be an array of \"in\", \"out\", \"inout\"");
  for (const json &d : k["signature"]) {
    const std::string s = d.is_string() ? d.get<std::string>() : "";
    if (s != "in" && s != "out" && s != "inout")
      throw RunFailure("pto.sim.package", where + ": signature entry " + d.dump() +
                                              " must be \"in\", \"out\" or \"inout\"");
    out.push_back(s);
  }
  return out;
}

std::vector<KernelSpec> read_kernels(const json &reg, const std::string &file) {
  if (!reg.contains("kernels") || !reg["kernels"].is_array())
    throw RunFailure("pto.sim.package", file + ": \"kernels\" must be an array");
  std::vector<KernelSpec> out;
  std::set<int32_t> ids;
  for (size_t i = 0; i < reg["kernels"].size(); ++i) {
    const json &k = reg["kernels"][i];
    const std::string where = file + ": kernels[" + std::to_string(i) + "]";
    if (!k.is_object() || !k.contains("func_id") || !k["func_id"].is_number_integer())
      throw RunFailure("pto.sim.package", where + ": missing integer \"func_id\"");
    KernelSpec s;
    s.func_id = k["func_id"].get<int32_t>();
    if (s.func_id < 0 || s.func_id >= 1024 || !ids.insert(s.func_id).second)
      throw RunFailure("pto.sim.package",
                       where + ": func_id " + std::to_string(s.func_id) + " must be unique and in [0, 1024)");
    s.source = checked_source(k, where);
    s.name = string_field(k, "name", where, "");
    if (s.name.empty()) s.name = fs::path(s.source).stem().string();
    const std::string core = string_field(k, "core_type", where);
    if (core != "aiv" && core != "aic")
      throw RunFailure("pto.sim.package", where + ": core_type '" + core + "' must be \"aiv\" or \"aic\"");
    s.core = core == "aic" ? CoreType::AIC : CoreType::AIV;
    s.signature = read_signature(k, where);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ParamSpec> read_params(const fs::path &package_dir, const std::string &entry) {
  const fs::path manifest = package_dir / "manifest.json";
  if (!fs::exists(manifest)) return {};
  const json m = read_json(manifest);
  if (!m.contains("entrypoints") || !m["entrypoints"].is_array()) return {};
  for (const json &e : m["entrypoints"]) {
    if (!e.is_object() || e.value("name", "") != entry || !e.contains("params") || !e["params"].is_array())
      continue;
    std::vector<ParamSpec> out;
    for (const json &p : e["params"])
      if (p.is_object())
        out.push_back(ParamSpec{p.value("name", ""), p.value("kind", ""), p.value("dir", ""), p.value("dtype", "")});
    return out;
  }
  return {};
}

} // namespace

PackageSpec read_package(const fs::path &package_dir, const std::string &entry) {
  PackageSpec spec;
  spec.codegen_dir = package_dir / "codegen" / "pto";
  const fs::path file = spec.codegen_dir / "kernel_registry.json";
  const json reg = read_json(file);
  const std::string where = file.string();
  if (!reg.is_object() || reg.value("schema", "") != "htp.pto.kernel_registry.v1")
    throw RunFailure("pto.sim.package", where + ": schema must be \"htp.pto.kernel_registry.v1\"");
  if (reg.contains("entries") && reg["entries"].is_object() && reg["entries"].contains(entry))
    spec.orchestration = read_orchestration(reg["entries"][entry], where + ": entries." + entry);
  else if (reg.contains("orchestration"))
    spec.orchestration = read_orchestration(reg["orchestration"], where + ": orchestration");
  else
    throw RunFailure("pto.sim.package", where + ": no orchestration for entry '" + entry + "'");
  spec.kernels = read_kernels(reg, where);
  if (reg.contains("runtime_config")) {
    if (!reg["runtime_config"].is_object())
      throw RunFailure("pto.sim.package", where + ": \"runtime_config\" must be an object");
    spec.runtime_config = reg["runtime_config"];
  }
  spec.params = read_params(package_dir, entry);
  spec.runtime_revision = string_field(reg, "pto_runtime_revision", where, "");
  spec.isa_revision = string_field(reg, "pto_isa_revision", where, "");
  return spec;
}

} // namespace htp_ptosim
