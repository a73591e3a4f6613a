// _htp.Context: a PluginHost (its plugins stay resident) and compiles through htp::Compiler with the GIL
// released. Diagnostics cross into Python rendered (`file:line:col: error: ...`) and as dicts.
#include "context_bindings.hpp"

#include "extension_bindings.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/json_reader.hpp"
#include "ast/json_writer.hpp"
#include "pass/pass_runner.hpp"
#include "compile/compiler.hpp"
#include "diag/diagnostic.hpp"
#include "loader/plugin_discovery.hpp"
#include "loader/plugin_host.hpp"
#include "loader/plugin_manifest.hpp"
#include "registry/component.hpp"
#include "run/runner.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace htp::python {

namespace {

/// htp-host beside the host library: `<libdir>/../bin` in the build tree, `<libdir>/HTP_LIBDIR_TO_BINDIR`
/// installed (pip's wheel included, which keeps the install prefix's layout).
std::string host_executable() {
  fs::path lib = host_library_dir();
  if (lib.empty()) return {};
  std::error_code ec;
  for (fs::path candidate : {lib / HTP_LIBDIR_TO_BINDIR / "htp-host", lib.parent_path() / "bin" / "htp-host"})
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
  return {};
}

// A tensor argument as the caller passed it: the DLPack capsule that keeps the exporter's memory alive
// for the run, and whether the run works in that memory (zero-copy) or in a host copy.
struct CallerTensor {
  py::object capsule;
  DLTensor *dl = nullptr;
  bool in_place = false;
};

std::string device_name(DLDevice d) {
  static const std::map<int, std::string> names = {
      {kDLCPU, "cpu"},     {kDLCUDA, "cuda"},     {kDLCUDAHost, "cuda_host"}, {kDLOpenCL, "opencl"},
      {kDLVulkan, "vulkan"}, {kDLMetal, "metal"}, {kDLVPI, "vpi"},           {kDLROCM, "rocm"},
      {kDLROCMHost, "rocm_host"}, {kDLExtDev, "ext_dev"}, {kDLCUDAManaged, "cuda_managed"}, {14 /* oneAPI */, "oneapi"},
      {15 /* WebGPU */, "webgpu"}, {16 /* Hexagon */, "hexagon"}};
  auto it = names.find(int(d.device_type));
  return (it != names.end() ? it->second : "device type " + std::to_string(int(d.device_type))) + ":" +
         std::to_string(d.device_id);
}

void check_device(const std::string &name, DLDevice d) {
  if (d.device_type == kDLCPU || d.device_type == kDLCUDAHost) return;  // host-addressable memory
  throw py::value_error("argument '" + name + "' is on device " + device_name(d) +
                        "; HTP's bindings read host memory: move it to the CPU first (e.g. tensor.cpu())");
}

// Copies a strided array element by element (strides in bytes); used when a caller's tensor is not
// C-contiguous, in both directions.
void strided_copy(const uint8_t *src, const int64_t *src_strides, uint8_t *dst, const int64_t *dst_strides,
                  const int64_t *shape, int ndim, size_t elem) {
  if (ndim == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  for (int64_t i = 0; i < shape[0]; ++i)
    strided_copy(src + i * src_strides[0], src_strides + 1, dst + i * dst_strides[0], dst_strides + 1, shape + 1,
                 ndim - 1, elem);
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t> &shape, size_t elem) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = int64_t(elem);
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return s;
}

// The byte strides of a DLTensor (DLPack strides count elements; null means C order).
std::vector<int64_t> byte_strides(const DLTensor &t, size_t elem) {
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  if (!t.strides) return contiguous_strides(shape, elem);
  std::vector<int64_t> s(t.strides, t.strides + t.ndim);
  for (auto &x : s) x *= int64_t(elem);
  return s;
}

bool is_c_contiguous(const DLTensor &t, size_t elem) {
  if (!t.strides) return true;
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim), want = contiguous_strides(shape, elem);
  auto have = byte_strides(t, elem);
  for (int i = 0; i < t.ndim; ++i)
    if (shape[i] > 1 && have[i] != want[i]) return false;
  return true;
}

// A tensor argument (any object with __dlpack__, or a DLPack capsule) as a host array: the caller's memory
// itself when it is on the CPU and C-contiguous, else a C-order copy. Wrong device or dtype: ValueError /
// TypeError naming the argument.
HostArray import_tensor(const std::string &name, const py::object &obj, CallerTensor &keep) {
  // (the tensor's own refusal to export — torch's "Can't export tensors that require gradient", a meta
  // tensor's unknown device — named with the argument)
  auto exporting = [&](auto &&call) {
    try {
      return call();
    } catch (py::error_already_set &e) {
      throw py::value_error("argument '" + name + "' cannot be passed through DLPack: " + std::string(py::str(e.value())));
    }
  };
  if (py::hasattr(obj, "__dlpack_device__")) {
    auto dev = exporting([&] { return obj.attr("__dlpack_device__")().cast<std::pair<int, int>>(); });
    check_device(name, DLDevice{DLDeviceType(dev.first), dev.second});
  }
  if (PyCapsule_CheckExact(obj.ptr())) keep.capsule = obj;
  else if (py::hasattr(obj, "__dlpack__")) keep.capsule = exporting([&] { return py::object(obj.attr("__dlpack__")()); });
  else throw py::type_error("argument '" + name + "' is a " + std::string(py::str(py::type::of(obj).attr("__name__"))) +
                            ", not a tensor (an object with __dlpack__, e.g. a NumPy array or a torch tensor)");
  auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(keep.capsule.ptr(), "dltensor"));
  if (!managed) throw py::error_already_set();
  DLTensor &t = managed->dl_tensor;
  keep.dl = &t;
  check_device(name, t.device);
  auto dtype = dtype_from_dlpack(t.dtype);
  if (!dtype)
    throw py::type_error("argument '" + name + "' has DLPack dtype (code " + std::to_string(t.dtype.code) + ", " +
                         std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                         " lanes), which HTP does not support");
  HostArray h;
  h.dtype = *dtype;
  h.shape.assign(t.shape, t.shape + t.ndim);
  const size_t elem = dtype_size(h.dtype);
  const int64_t n = h.elements();
  if (n < 0) throw py::value_error("argument '" + name + "' has a negative or overflowing shape " + h.describe());
  auto *base = static_cast<uint8_t *>(t.data) + t.byte_offset;
  if (n == 0) return h;
  if (is_c_contiguous(t, elem)) {
    h.external = base;
    keep.in_place = true;
    return h;
  }
  h.data.resize(size_t(n) * elem);
  auto src = byte_strides(t, elem), dst = contiguous_strides(h.shape, elem);
  strided_copy(base, src.data(), h.data.data(), dst.data(), h.shape.data(), t.ndim, elem);
  return h;
}

// Writes a host copy back into the caller's (non-contiguous) tensor after the run.
void export_to_caller(const HostArray &h, const CallerTensor &keep) {
  const DLTensor &t = *keep.dl;
  const size_t elem = dtype_size(h.dtype);
  if (h.elements() <= 0) return;
  auto src = contiguous_strides(h.shape, elem), dst = byte_strides(t, elem);
  strided_copy(h.bytes(), src.data(), static_cast<uint8_t *>(t.data) + t.byte_offset, dst.data(), h.shape.data(),
               t.ndim, elem);
}

py::array numpy_array(const HostArray &h) {
  py::dtype dt(dtype_to_numpy(h.dtype).value_or("|u1"));
  std::vector<py::ssize_t> shape(h.shape.begin(), h.shape.end());
  py::array out(dt, shape);
  std::memcpy(out.mutable_data(), h.bytes(), size_t(h.elements()) * dtype_size(h.dtype));
  return out;
}

}  // namespace

py::dict span_dict(const Span &s) {
  py::dict d;
  d["file"] = s.file;
  d["line"] = s.line;
  d["col"] = s.col;
  d["end_line"] = s.end_line;
  d["end_col"] = s.end_col;
  return d;
}

py::dict diag_dict(const Diagnostic &diag) {
  py::dict d;
  d["severity"] = severity_name(diag.severity);
  d["code"] = diag.code;
  d["message"] = diag.message;
  d["span"] = span_dict(diag.span);
  py::list notes;
  for (const auto &n : diag.notes) notes.append(diag_dict(n));
  d["notes"] = notes;
  d["rendered"] = diag.render();
  return d;
}

py::list diag_list(const DiagnosticList &diags) {
  py::list out;
  for (const auto &d : diags.items()) out.append(diag_dict(d));
  return out;
}

namespace {


py::dict component_dict(const Component &c, const std::string &plugin, const std::string &path) {
  py::dict d;
  d["kind"] = component_kind_name(c.kind);
  d["id"] = c.id;
  d["version"] = c.version;
  d["name"] = c.name;
  d["names"] = c.names;
  d["plugin"] = plugin;
  d["path"] = path;
  d["targets"] = c.targets;
  return d;
}

class Context {
public:
  Context(const std::vector<std::string> &specs, bool builtins, bool use_environment) {
    PluginSearch search;
    for (const auto &s : specs) search.specs.push_back(fs::absolute(s).lexically_normal().string());
    search.include_builtins = builtins;
    search.use_environment = use_environment;
    host_.load_all(search, load_diags_);
  }

  py::list load_diagnostics() const { return diag_list(load_diags_); }
  /// The Python extensions the search found (in a plugin set, HTP_PLUGIN_PATH), which htp.Context loads.
  std::vector<std::string> python_extensions_found() const {
    std::vector<std::string> out;
    for (const auto &p : host_.python_extensions_found()) out.push_back(p.string());
    return out;
  }

  py::list load_python_extension(const std::string &name, const std::string &version, const std::string &description,
                                 const std::string &source, const py::list &components) {
    return python::load_python_extension(host_, callables_, name, version, description, source, components);
  }

  py::list plugins() const {
    py::list out;
    for (const auto &p : host_.plugins()) {
      py::dict d;
      d["name"] = p->name;
      d["version"] = p->version;
      d["description"] = p->description;
      d["path"] = p->path.string();
      d["language"] = p->language.empty() ? std::string("c++") : p->language;
      d["sha256"] = p->sha256();
      py::list ids;
      for (const Component *c : p->components) ids.append(c->id);
      d["components"] = ids;
      out.append(d);
    }
    return out;
  }

  py::list components(std::optional<std::string> kind) const {
    ComponentKind k{};
    if (kind && !parse_component_kind(*kind, k)) throw py::value_error("unknown component kind '" + *kind + "'");
    py::list out;
    for (const auto &c : host_.registry().components())
      if (!kind || c->kind == k) out.append(component_dict(*c, c->plugin.name, c->plugin.path));
    return out;
  }

  py::dict compile(const std::string &module_json, const std::string &target, const std::string &out,
                   const py::dict &options) {
    CompileOptions o;
    o.target = target;
    o.out = fs::absolute(out).lexically_normal();
    for (auto item : options) {
      std::string key = py::str(item.first);
      py::handle v = item.second;
      if (v.is_none()) continue;
      if (key == "dump_ir") o.dump = DumpOptions::parse(v.cast<std::string>());
      else if (key == "force") o.force = v.cast<bool>();
      else if (key == "keep_failed") o.keep_failed = v.cast<bool>();
      else if (key == "pin_timings") o.pin_timings = v.cast<bool>();
      else if (key == "pass_time_limit") o.pass_time_limit_s = v.cast<double>();
      else if (key == "backend") o.backend = v.cast<std::string>();
      else if (key == "binding") o.binding = v.cast<std::string>();
      else if (key == "pipeline") o.passes = v.cast<std::vector<std::string>>();
      else if (key == "locked") o.locked = v.cast<std::string>();
      else if (key == "pass_options") {
        auto j = nlohmann::json::parse(v.cast<std::string>(), nullptr, false);
        if (j.is_discarded() || !j.is_object()) throw py::value_error("pass_options must be a JSON object");
        o.pass_options = std::move(j);
      } else
        throw py::value_error("unknown compile option '" + key + "'");
    }

    CompileResult r;
    DiagnosticList diags;
    {
      py::gil_scoped_release release;
      auto module = ast::load_json(module_json);
      if (!module) {
        diags.report(module.error());
      } else {
        Compiler compiler(host_);
        r = compiler.compile(std::move(*module), o);
        diags.append(r.diagnostics);
      }
    }
    py::dict d;
    d["ok"] = r.ok;
    d["failed_dir"] = r.failed ? r.failed->string() : std::string();
    d["package"] = r.ok ? r.package.string() : std::string();
    d["diagnostics"] = diag_list(diags);
    d["rendered"] = diags.render();
    return d;
  }

  /// Runs one registered pass over an htp.ast.v1 document `repeat` times (the same module, resident, as a
  /// compile holds it between passes), without resolving a plan: for testing and timing a pass.
  py::dict run_pass(const std::string &pass_id, const std::string &module_json, const std::string &options_json,
                    int repeat) {
    const Component *pass = host_.registry().find(pass_id);
    if (!pass || pass->kind != ComponentKind::Pass) throw py::value_error("no pass '" + pass_id + "' is loaded");
    auto options = nlohmann::json::parse(options_json.empty() ? "{}" : options_json, nullptr, false);
    if (options.is_discarded() || !options.is_object()) throw py::value_error("options must be a JSON object");
    if (!options.contains("target")) options["target"] = "none";
    std::vector<double> seconds;
    DiagnosticList diags;
    std::string out;
    bool ok = true;
    {
      py::gil_scoped_release release;
      auto module = ast::load_json(module_json);
      if (!module) {
        diags.report(module.error());
        ok = false;
      }
      for (int i = 0; ok && i < std::max(repeat, 1); ++i) {
        PassRun r = htp::run_pass(*pass, host_.api_for(pass->plugin.name), *module, options, nullptr, {});
        seconds.push_back(std::chrono::duration<double>(r.duration).count());
        diags.append(r.diagnostics);
        ok = r.ok;
      }
      if (ok) out = ast::dump_json(*module);
    }
    py::dict d;
    d["ok"] = ok;
    d["module"] = out;
    d["seconds"] = seconds;
    d["diagnostics"] = diag_list(diags);
    d["rendered"] = diags.render();
    return d;
  }

  py::dict run(const std::string &package, const std::string &entry, const py::dict &tensors,
               const py::dict &scalars, const std::string &cache_dir, const std::string &run_dir,
               const std::string &options_json, bool verify) {
    RunRequest req;
    req.package = fs::absolute(package).lexically_normal();
    req.entry = entry;
    std::map<std::string, CallerTensor> callers;
    for (auto item : tensors) {
      std::string name = py::str(item.first);
      req.tensors[name] = import_tensor(name, py::reinterpret_borrow<py::object>(item.second), callers[name]);
    }
    for (auto item : scalars) {
      std::string name = py::str(item.first);
      py::handle v = item.second;
      if (py::isinstance<py::bool_>(v)) req.scalars[name] = v.cast<bool>();
      else if (py::isinstance<py::int_>(v) && v > py::int_(INT64_MAX))
        req.scalars[name] = v.cast<uint64_t>();  // a u64 past INT64_MAX (run() refuses past 64 bits)
      else if (py::isinstance<py::int_>(v)) req.scalars[name] = v.cast<int64_t>();
      else req.scalars[name] = v.cast<double>();
    }
    if (!cache_dir.empty()) req.cache_dir = cache_dir;
    if (!run_dir.empty()) req.run_dir = run_dir;
    req.options = nlohmann::json::parse(options_json.empty() ? "{}" : options_json, nullptr, false);
    if (req.options.is_discarded() || !req.options.is_object()) throw py::value_error("options must be a JSON object");
    req.verify = verify;
    DiagnosticList diags;
    std::optional<RunOutcome> outcome;
    {
      py::gil_scoped_release release;
      outcome = run_package(host_, req, diags);
    }
    if (!outcome) {
      py::dict d;
      d["ok"] = false;
      d["diagnostics"] = diag_list(diags);
      d["rendered"] = diags.render();
      return d;
    }
    // Outputs the caller passed are written in its tensors (in place, or copied back into a strided one);
    // the others come back as NumPy arrays.
    py::dict outputs;
    py::list in_caller;
    for (const auto &[name, arr] : outcome->outputs) {
      auto it = callers.find(name);
      if (it == callers.end()) {
        outputs[py::str(name)] = numpy_array(arr);
        continue;
      }
      if (!it->second.in_place) export_to_caller(arr, it->second);
      in_caller.append(name);
    }
    py::dict d;
    d["ok"] = true;
    d["outputs"] = outputs;
    d["in_caller"] = in_caller;
    d["report"] = outcome->report.dump();
    d["run_dir"] = outcome->run_dir.string();
    d["binding"] = outcome->binding;
    d["diagnostics"] = diag_list(diags);
    return d;
  }

private:
  ExtensionCallables callables_;  // declared first: destroyed after the host whose components use them
  PluginHost host_;
  DiagnosticList load_diags_;
};

/// What the manifests of a plugin search declare, without loading any library: one dict per
/// component (kind, id, name, names, plugin, path) and the diagnostics of unreadable entries.
py::dict read_plugin_manifests(const std::vector<std::string> &specs, bool builtins, bool use_environment) {
  PluginSearch search;
  for (const auto &s : specs) search.specs.push_back(fs::absolute(s).lexically_normal().string());
  search.include_builtins = builtins;
  search.use_environment = use_environment;
  DiagnosticList diags;
  py::list comps;
  for (const auto &lib : discover_plugins(search, diags)) {
    if (lib.extension() == ".py") continue;  // a Python extension has no manifest (stubgen imports it)
    auto m = read_plugin_manifest(manifest_path_for(lib));
    if (!m) {
      diags.report(m.error());
      continue;
    }
    for (const auto &c : m->components) comps.append(component_dict(c, m->name, lib.string()));
  }
  py::dict d;
  d["components"] = comps;
  d["diagnostics"] = diag_list(diags);
  return d;
}

}  // namespace

void bind_context(py::module_ &m) {
  py::class_<Context>(m, "Context", "A loaded plugin set (plugins stay resident for the process).")
      .def(py::init<const std::vector<std::string> &, bool, bool>(), py::arg("plugins") = std::vector<std::string>{},
           py::arg("builtins") = true, py::arg("use_environment") = true,
           "Loads the built-in plugins (unless builtins=False) and those of `plugins` (absolute dirs, .so "
           "files, plugin-set JSON); load diagnostics are in load_diagnostics().")
      .def("load_diagnostics", &Context::load_diagnostics)
      .def("python_extensions_found", &Context::python_extensions_found)
      .def("load_python_extension", &Context::load_python_extension, py::arg("name"), py::arg("version"),
           py::arg("description"), py::arg("source"), py::arg("components"),
           "Registers a Python extension's components (dicts from htp.extension) as the script plugin `name` "
           "implemented by `source`; returns the load diagnostics.")
      .def("plugins", &Context::plugins)
      .def("components", &Context::components, py::arg("kind") = py::none())
      .def("dialects", [](const Context &c) { return c.components(std::string("dialect")); })
      .def("intrinsic_sets", [](const Context &c) { return c.components(std::string("intrinsic-set")); })
      .def("compile", &Context::compile, py::arg("module_json"), py::arg("target"), py::arg("out"),
           py::arg("options") = py::dict(),
           "Compiles an htp.ast.v1 document (GIL released); returns {ok, package, failed_dir, diagnostics, "
           "rendered}.")
      .def("run_pass", &Context::run_pass, py::arg("pass_id"), py::arg("module_json"), py::arg("options") = "{}",
           py::arg("repeat") = 1,
           "Runs one pass over an htp.ast.v1 document `repeat` times (GIL released); returns {ok, module (JSON), "
           "seconds (per run), diagnostics, rendered}.")
      .def("run", &Context::run, py::arg("package"), py::arg("entry") = "", py::arg("tensors") = py::dict(),
           py::arg("scalars") = py::dict(), py::arg("cache_dir") = "", py::arg("run_dir") = "",
           py::arg("options") = "{}", py::arg("verify") = true,
           "Runs a package entry with its binding (GIL released). `tensors` maps names to DLPack objects "
           "(used in place when on the CPU and C-contiguous); returns {ok, outputs (NumPy arrays of the outputs "
           "not passed), in_caller (outputs written into the caller's tensors), report (JSON text), run_dir, "
           "binding, diagnostics, rendered}.");
  m.def("read_plugin_manifests", &read_plugin_manifests, py::arg("plugins") = std::vector<std::string>{},
        py::arg("builtins") = true, py::arg("use_environment") = true,
        "Components declared by the manifests of a plugin search, without loading any library.");
  m.def("builtin_plugin_dir", [] { return builtin_plugin_dir().string(); });
  m.def("host_executable", &host_executable,
        "The htp-host executable beside the host library (build tree or install), or '' if there is none.");
}

}  // namespace htp::python
