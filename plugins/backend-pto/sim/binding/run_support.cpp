#include "run_support.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "runtime.hpp"

namespace htp_ptosim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
/// The run options the bindings read, in the order an unknown option's message lists them.
const std::vector<std::string> kOptionKeys = {"dispatch", "batch", "batch_wait_us", "aiv_cores", "aic_cores",
                                              "aicpu_thread_num", "task_window", "trace", "cxx", "sim_include",
                                              "runtime", "check_revision", "device_id", "timeout_s"};
} // namespace

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check_options(const json &options) {
  if (!options.is_object()) throw RunFailure("pto.sim.option", "the binding options must be a JSON object");
  for (const auto &[k, v] : options.items())
    if (std::find(kOptionKeys.begin(), kOptionKeys.end(), k) == kOptionKeys.end()) {
      std::string known;
      for (const std::string &key : kOptionKeys) known += (known.empty() ? "" : ", ") + key;
      throw RunFailure("pto.sim.option", "unknown option '" + k + "' (known: " + known + ")");
    }
}

std::string runtime_choice(const json &options) {
  const json r = options.value("runtime", json("auto"));
  if (!r.is_string() || (r != "auto" && r != "sim" && r != "pto-runtime"))
    throw RunFailure("pto.sim.option", "option runtime must be \"auto\", \"sim\" or \"pto-runtime\", not " + r.dump());
  return r.get<std::string>();
}

bool revision_check(const json &options) {
  if (!options.contains("check_revision")) return true;
  if (!options["check_revision"].is_boolean())
    throw RunFailure("pto.sim.option", "option check_revision must be true or false");
  return options["check_revision"].get<bool>();
}

double timeout_seconds(const json &options) {
  if (!options.contains("timeout_s")) return kDefaultTimeoutSeconds;
  const json &t = options["timeout_s"];
  if (!t.is_number() || t.get<double>() < 0)
    throw RunFailure("pto.sim.option", "option timeout_s must be a number of seconds >= 0 (0: no limit), not " + t.dump());
  return t.get<double>();
}

std::string compiler_name(const json &options) {
  const char *env_cxx = std::getenv("CXX");
  return options.value("cxx", std::string(env_cxx && *env_cxx ? env_cxx : "c++"));
}

uint64_t scalar_bits(const RunArgument &a, const std::string &dtype) {
  if (dtype == "f64") return to_u64(a.scalar_float);
  if (!dtype.empty() && (dtype[0] == 'f' || dtype == "bf16"))
    return to_u64(static_cast<float>(a.scalar_float));
  if (dtype.empty() && a.scalar_int == 0 && a.scalar_float != 0)
    return to_u64(static_cast<float>(a.scalar_float));
  return to_u64(a.scalar_int);
}

std::string param_dtype(const PackageSpec &pkg, const std::string &name) {
  for (const ParamSpec &p : pkg.params)
    if (p.name == name) return p.dtype;
  return "";
}

void write_text(const fs::path &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw RunFailure("pto.sim.io", "cannot write " + path.string());
}

Library::Library(const std::string &path, const std::string &label, const char *code)
    : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)), code_(code) {
  if (!handle_) throw RunFailure(code_, "cannot load the build of " + label + ": " + ::dlerror());
}

Library::~Library() { ::dlclose(handle_); }

void *Library::symbol(const std::string &name, const std::string &label) const {
  void *s = ::dlsym(handle_, name.c_str());
  if (!s) throw RunFailure(code_, label + " does not export '" + name + "'");
  return s;
}

void *Library::find(const std::string &name) const { return ::dlsym(handle_, name.c_str()); }

} // namespace htp_ptosim
