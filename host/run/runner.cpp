#include "run/runner.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <htp/dtype_range.hpp>
#include <htp/plugin.hpp>

#include "cache/cache_dir.hpp"
#include "diag/crash_report.hpp"
#include "loader/host_api.hpp"
#include "io/atomic_file.hpp"
#include "io/safe_read.hpp"
#include "package/package_manifest.hpp"

namespace htp {

namespace fs = std::filesystem;

namespace {

std::string shape_text(const nlohmann::json &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i].is_string() ? shape[i].get<std::string>() : shape[i].dump());
  return s + "]";
}

std::string param_text(const nlohmann::json &p) {
  std::string dir = p.value("dir", "in");
  if (p.value("kind", "tensor") == "scalar") return dir + " scalar " + p.value("dtype", "?");
  return dir + " " + p.value("dtype", "?") + shape_text(p.value("shape", nlohmann::json::array()));
}

/// The range of an integer dtype ("i32", "u8", ..., "i64", "u64") as [lo, hi] in 128 bits, or nullopt.
std::optional<std::pair<__int128, __int128>> integer_range(const std::string &dtype) {
  if (auto r = narrow_integer_range(dtype)) return std::pair<__int128, __int128>{r->first, r->second};
  if (dtype == "i64") return std::pair<__int128, __int128>{INT64_MIN, INT64_MAX};
  if (dtype == "u64") return std::pair<__int128, __int128>{0, UINT64_MAX};
  return std::nullopt;
}

/// Converts the number given for scalar parameter `name` of `dtype` into `a`: an integer parameter takes
/// an integral number within its dtype's range (run.argument.dtype for 2.5, run.argument.range for 2**31
/// given to an i32), which Python's run() and `htp-host run -s` share; false with a diagnostic.
bool convert_scalar(const std::string &name, const std::string &dtype, const nlohmann::json &v, HtpRunArg &a,
                    DiagnosticList &diags) {
  if (v.is_boolean()) {
    a.scalar_int = v.get<bool>();
    a.scalar_float = a.scalar_int;
    return true;
  }
  a.scalar_float = v.get<double>();
  const auto range = integer_range(dtype);
  // A finite number too large for a float parameter would round to infinity silently (1e40 for an f32): it is
  // a range error like an integer's; infinity itself is passed as inf.
  const double overflow = dtype == "f32"    ? std::ldexp(2.0 - std::ldexp(1.0, -24), 127)
                          : dtype == "bf16" ? std::ldexp(2.0 - std::ldexp(1.0, -8), 127)
                          : dtype == "f16"  ? 65520.0
                                            : 0.0;
  if (overflow > 0 && std::isfinite(a.scalar_float) && std::fabs(a.scalar_float) >= overflow) {
    diags.report(Diagnostic::error("run.argument.range", "scalar argument '" + name + "' is an " + dtype +
                                                             " parameter; " + v.dump() +
                                                             " rounds to infinity in it (pass inf for infinity)"));
    return false;
  }
  if (!range) {
    a.scalar_int = v.is_number_unsigned() ? int64_t(v.get<uint64_t>())
                   : v.is_number_integer() ? v.get<int64_t>()
                   : std::fabs(a.scalar_float) < 9.2e18 ? int64_t(a.scalar_float) : 0;
    return true;
  }
  __int128 value = 0;
  if (v.is_number_unsigned()) {
    value = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
      diags.report(Diagnostic::error("run.argument.dtype", "scalar argument '" + name + "' is an integer parameter (" +
                                                               dtype + "), got " + v.dump() + ": pass an integer"));
      return false;
    }
    value = std::fabs(d) < 1.8e19 ? __int128(d) : (d < 0 ? -(__int128(1) << 100) : (__int128(1) << 100));
  }
  if (value < range->first || value > range->second) {  // (the bounds fit int64 below and uint64 above)
    diags.report(Diagnostic::error("run.argument.range",
                                   "scalar argument '" + name + "' is an " + dtype + " parameter; " + v.dump() +
                                       " is outside its range [" + std::to_string(static_cast<int64_t>(range->first)) +
                                       ", " + std::to_string(static_cast<uint64_t>(range->second)) + "]"));
    return false;
  }
  a.scalar_int = static_cast<int64_t>(static_cast<uint64_t>(value));
  return true;
}

// Checks `a` against a tensor parameter, binding symbolic dims; false with a diagnostic on mismatch.
bool check_tensor(const nlohmann::json &p, const HostArray &a, std::map<std::string, int64_t> &dims,
                  std::map<std::string, std::string> &bound_by, DiagnosticList &diags) {
  const std::string name = p.value("name", "?");
  const std::string dtype = p.value("dtype", "");
  bool dtype_ok = a.dtype == dtype || (dtype == "bf16" && a.dtype == "u16");
  const auto &shape = p.value("shape", nlohmann::json::array());
  bool shape_ok = shape.size() == a.shape.size();
  for (size_t i = 0; shape_ok && i < shape.size(); ++i) {
    if (shape[i].is_number_integer()) {
      shape_ok = shape[i].get<int64_t>() == a.shape[i];
    } else if (shape[i].is_string()) {
      auto [it, fresh] = dims.emplace(shape[i].get<std::string>(), a.shape[i]);
      if (fresh) bound_by[it->first] = name;
      shape_ok = fresh || it->second == a.shape[i];
    }
  }
  if (dtype_ok && shape_ok) return true;
  // (what an earlier argument bound the symbolic dims to: "expects in f32[N] (N = 8 from 'x')")
  std::string bindings;
  for (const auto &d : shape)
    if (d.is_string() && bound_by.count(d.get<std::string>()) && bound_by[d.get<std::string>()] != name)
      bindings += std::string(bindings.empty() ? " (" : ", ") + d.get<std::string>() + " = " +
                  std::to_string(dims[d.get<std::string>()]) + " from '" + bound_by[d.get<std::string>()] + "'";
  if (!bindings.empty()) bindings += ")";
  // Distinct codes, so that the Python binding raises TypeError for a dtype and ValueError for a shape.
  diags.report(Diagnostic::error(dtype_ok ? "run.argument.shape" : "run.argument.dtype",
                                 "argument '" + name + "' is " + a.describe() + ", but the entry expects " + param_text(p) +
                                     bindings));
  return false;
}

// The zero-filled array for an output parameter, its symbolic dims bound by the inputs.
std::optional<HostArray> allocate(const nlohmann::json &p, const std::map<std::string, int64_t> &dims,
                                  DiagnosticList &diags) {
  HostArray a;
  a.dtype = p.value("dtype", "");
  if (!dtype_size(a.dtype)) {
    diags.report(Diagnostic::error("run.argument", "output '" + p.value("name", "?") + "' has unsupported dtype '" +
                                                       a.dtype + "'"));
    return std::nullopt;
  }
  for (const auto &d : p.value("shape", nlohmann::json::array())) {
    if (d.is_number_integer()) {
      a.shape.push_back(d.get<int64_t>());
      continue;
    }
    auto it = d.is_string() ? dims.find(d.get<std::string>()) : dims.end();
    if (it == dims.end()) {
      diags.report(Diagnostic::error("run.argument", "cannot size output '" + p.value("name", "?") + "': dimension " +
                                                         d.dump() + " is not bound by any input; pass the output"));
      return std::nullopt;
    }
    a.shape.push_back(it->second);
  }
  const uint64_t bytes = uint64_t(a.elements()) * dtype_size(a.dtype);
  try {
    a.data.assign(bytes, 0);
  } catch (const std::exception &) {  // std::bad_alloc, std::length_error past what a vector holds
    diags.report(Diagnostic::error("run.memory", "cannot allocate output '" + p.value("name", "?") + "' (" +
                                                     a.describe() + ", " + std::to_string(bytes) +
                                                     " bytes): out of host memory; pass an array of your own for it"));
    return std::nullopt;
  }
  return a;
}

const nlohmann::json *find_entry(const nlohmann::json &entrypoints, const std::string &name, DiagnosticList &diags) {
  std::string names;
  if (entrypoints.is_array())
    for (const auto &e : entrypoints) {
      std::string n = e.value("name", "");
      if (n == name || (name.empty() && entrypoints.size() == 1)) return &e;
      names += (names.empty() ? "" : ", ") + n;
    }
  if (name.empty())
    diags.report(Diagnostic::error("run.entry", names.empty() ? "the package has no entrypoints"
                                                               : "the package has several entrypoints (" + names +
                                                                     "); choose one with --entry"));
  else
    diags.report(Diagnostic::error("run.entry", "the package has no entrypoint '" + name + "' (it has: " +
                                                    (names.empty() ? "none" : names) + ")"));
  return nullptr;
}

const Component *find_binding(PluginHost &host, const PackageManifest &m, DiagnosticList &diags) {
  std::string id = m.document.contains("plan") ? m.document["plan"].value("binding", "") : "";
  if (id.empty()) {
    diags.report(Diagnostic::error("run.binding", "the package's plan names no binding"));
    return nullptr;
  }
  const Component *c = host.registry().find(id);
  if (!c || c->kind != ComponentKind::Binding) {
    diags.report(Diagnostic::error("run.binding", "binding '" + id + "' of target " + m.target +
                                                      " is not loaded; load its plugin with --plugins"));
    return nullptr;
  }
  if (!c->binding_run) {
    diags.report(Diagnostic::error("run.binding", "binding '" + id + "' (plugin '" + c->plugin.name +
                                                      "') cannot run packages: it registers no run callback"));
    return nullptr;
  }
  return c;
}

}  // namespace

std::optional<RunOutcome> run_package(PluginHost &host, const RunRequest &req, DiagnosticList &diags) {
  const fs::path pkg = fs::absolute(req.package).lexically_normal();
  auto manifest = read_package_manifest(pkg);
  if (!manifest) {
    diags.report(manifest.error());
    return std::nullopt;
  }
  if (req.verify) {
    std::vector<PluginRef> loaded;
    for (const auto &p : host.plugins()) loaded.push_back(p->ref());
    DiagnosticList v = verify_package(pkg, &loaded);
    if (v.has_errors()) {
      diags.append(v);
      diags.report(Diagnostic::error("run.unverified", "refusing to run '" + pkg.string() +
                                                           "': the package does not verify (see above)"));
      return std::nullopt;
    }
  }
  if (DiagnosticList ep = check_entrypoints(manifest->entrypoints); ep.has_errors()) {  // also when not verifying
    diags.append(ep);
    return std::nullopt;
  }
  const nlohmann::json *entry = find_entry(manifest->entrypoints, req.entry, diags);
  const Component *binding = find_binding(host, *manifest, diags);
  if (!entry || !binding) return std::nullopt;

  // Arguments in parameter order: inputs checked, outputs allocated, scalars converted.
  const auto &params = entry->value("params", nlohmann::json::array());
  RunOutcome out;
  std::map<std::string, HostArray> arrays;
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> dim_bound_by;  // symbolic dim -> the argument that bound it
  std::set<std::string> known;
  bool ok = true;
  for (const auto &p : params) {
    const std::string name = p.value("name", "");
    known.insert(name);
    if (p.value("kind", "tensor") == "scalar") {
      if (!req.scalars.count(name)) {
        // (given as a tensor: say so, not that it is missing)
        diags.report(Diagnostic::error(
            "run.argument", req.tensors.count(name)
                                ? "scalar argument '" + name + "' (" + param_text(p) + ") is given as a tensor; give it as "
                                  "a number (htp-host run -s " + name + "=...)"
                                : "missing scalar argument '" + name + "' (" + param_text(p) + ")"));
        ok = false;
      }
      continue;
    }
    auto it = req.tensors.find(name);
    if (it != req.tensors.end()) {
      ok = check_tensor(p, it->second, dims, dim_bound_by, diags) && ok;
      arrays[name] = it->second;
    } else if (req.scalars.count(name)) {
      diags.report(Diagnostic::error("run.argument", "tensor argument '" + name + "' (" + param_text(p) +
                                                         ") is given as a number; give it as an array (htp-host run -i " +
                                                         name + "=file.npy)"));
      ok = false;
    } else if (p.value("dir", "in") != "out") {
      diags.report(Diagnostic::error("run.argument", "missing input '" + name + "' (" + param_text(p) + ")"));
      ok = false;
    }
  }
  auto reject_unknown = [&](const auto &given) {
    for (const auto &[name, _] : given)
      if (!known.count(name)) {
        diags.report(Diagnostic::error("run.argument", "entry '" + entry->value("name", "") + "' has no parameter '" + name + "'"));
        ok = false;
      }
  };
  reject_unknown(req.tensors);
  reject_unknown(req.scalars);
  if (!ok) return std::nullopt;
  for (const auto &p : params)
    if (p.value("kind", "tensor") != "scalar" && !arrays.count(p.value("name", ""))) {
      auto a = allocate(p, dims, diags);
      if (!a) return std::nullopt;
      arrays[p.value("name", "")] = std::move(*a);
    }

  std::vector<DLTensor> tensors(params.size());
  std::vector<HtpRunArg> args(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto &p = params[i];
    const std::string &name = p["name"].get_ref<const std::string &>();
    HtpRunArg &a = args[i];
    a.struct_size = sizeof(HtpRunArg);
    a.name = to_htp_str(name);
    if (p.value("kind", "tensor") == "scalar") {
      const auto &v = req.scalars.at(name);
      if (!v.is_number() && !v.is_boolean()) {
        diags.report(Diagnostic::error("run.argument", "scalar argument '" + name + "' must be a number, not " + v.dump()));
        return std::nullopt;
      }
      if (!convert_scalar(name, p.value("dtype", ""), v, a, diags)) return std::nullopt;
      continue;
    }
    HostArray &arr = arrays[name];
    DLTensor &t = tensors[i];
    t.data = arr.bytes();
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(arr.shape.size());
    std::string dtype = p.value("dtype", arr.dtype);
    if (!dtype_to_dlpack(dtype, t.dtype)) {
      diags.report(Diagnostic::error("run.argument", "argument '" + name + "' has unsupported dtype '" + dtype + "'"));
      return std::nullopt;
    }
    t.shape = arr.shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    a.tensor = &t;
  }

  fs::path cache = req.cache_dir.empty() ? default_cache_dir() : fs::absolute(req.cache_dir);
  fs::path run_dir = req.run_dir.empty() ? pkg / "logs" / "run" : fs::absolute(req.run_dir);
  // Run outputs go into real directories only: a symlinked logs/ (or run dir) would send report.json and
  // trace.json, and the removal of the previous run, outside the package.
  for (const fs::path &d : req.run_dir.empty() ? std::vector<fs::path>{pkg / "logs", run_dir} : std::vector<fs::path>{run_dir}) {
    const std::string kind = file_kind(d);
    if (kind != "nothing" && kind != "a directory") {
      diags.report(Diagnostic::error("run.dir", "'" + d.string() + "' is " + kind +
                                                    ", not a directory; refusing to write run outputs through it"));
      return std::nullopt;
    }
  }
  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) {
    diags.report(Diagnostic::error("run.cache", "cannot create the build cache '" + cache.string() + "': " + ec.message()));
    return std::nullopt;
  }
  // Runs of one package into its default run directory take turns: each replaces logs/run/ and reads its
  // report back, so two at once removed each other's files ("cannot write .../report.json"). A run with a
  // run directory of its own does not wait.
  std::optional<FileLock> lock;
  if (req.run_dir.empty()) {
    fs::create_directories(pkg / "logs", ec);
    const fs::path lock_file = pkg / "logs" / ".run.lock";
    if (!lock.emplace(lock_file).locked()) {
      diags.report(Diagnostic::error("run.dir", "cannot lock '" + lock_file.string() + "': " +
                                                    std::strerror(lock->error())));
      return std::nullopt;
    }
  }
  fs::remove_all(run_dir, ec);
  fs::create_directories(run_dir, ec);
  if (ec) {
    diags.report(Diagnostic::error("run.dir", "cannot create the run directory '" + run_dir.string() + "': " + ec.message()));
    return std::nullopt;
  }

  const std::string pkg_s = pkg.string(), target = manifest->target, entry_name = entry->value("name", "");
  const std::string cache_s = cache.string(), run_s = run_dir.string(), options = req.options.dump();
  HtpRunRequest r{};
  r.struct_size = sizeof r;
  r.package_dir = to_htp_str(pkg_s);
  r.target = to_htp_str(target);
  r.entry = to_htp_str(entry_name);
  r.args = args.data();
  r.arg_count = args.size();
  r.cache_dir = to_htp_str(cache_s);
  r.run_dir = to_htp_str(run_s);
  r.options_json = to_htp_str(options);

  const HtpHostApi *api = host.api_for(binding->plugin.name);
  HtpDiag sink{&diags, binding->plugin.name};
  const size_t reported_before = diags.size();
  crash::Scope crash_scope("binding '" + binding->id + "' of plugin '" + binding->plugin.name + "' running entry '" +
                           entry_name + "' of " + pkg_s);
  HtpStatus status = binding->binding_run(binding->user_data, api, &r, &sink);
  if (status != HTP_OK) {
    bool binding_reported = false;
    for (size_t i = reported_before; i < diags.size(); ++i)
      binding_reported = binding_reported || diags.items()[i].severity == Severity::Error;
    if (!binding_reported)
      diags.report(Diagnostic::error("run.failed", "binding '" + binding->id + "' failed with status " +
                                                       std::to_string(int(status)) + " and no diagnostic"));
    return std::nullopt;
  }

  if (auto text = read_regular_file(run_dir / "report.json", kMaxDocumentBytes)) {
    out.report = nlohmann::json::parse(*text, nullptr, false);
    if (out.report.is_discarded()) {
      diags.report(Diagnostic::warning("run.report", "binding '" + binding->id + "' wrote a report.json that is not JSON"));
      out.report = nullptr;
    }
  }
  // Where each tensor argument lived during the run, so a caller can tell whether its memory was used in
  // place (zero-copy) or copied.
  if (out.report.is_object()) {
    nlohmann::json where = nlohmann::json::object();
    for (const auto &p : params) {
      if (p.value("kind", "tensor") == "scalar") continue;
      const std::string &name = p["name"].get_ref<const std::string &>();
      const bool given = req.tensors.count(name) != 0;
      where[name] = arrays[name].external ? "caller memory (zero-copy)" : given ? "host copy" : "allocated by the host";
    }
    out.report["arguments"] = std::move(where);
    (void)atomic_write_file(run_dir / "report.json", out.report.dump(2) + "\n");
  }
  for (const auto &p : params)
    if (p.value("kind", "tensor") != "scalar" && p.value("dir", "in") != "in")
      out.outputs[p["name"].get<std::string>()] = std::move(arrays[p["name"].get<std::string>()]);
  out.run_dir = run_dir;
  out.binding = binding->id;
  return out;
}

}  // namespace htp
