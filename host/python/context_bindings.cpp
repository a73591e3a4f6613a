// _htp.Context: a PluginHost (its plugins stay resident) and compiles through htp::Compiler with the GIL
// released. Diagnostics cross into Python rendered (`file:line:col: error: ...`) and as dicts.
#include "context_bindings.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/json_reader.hpp"
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

struct PluginError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A NumPy array as a host array (copied, C order); dtype must be one HTP knows.
HostArray host_array(const std::string &name, const py::array &in) {
  std::string descr = py::str(in.dtype().attr("str"));
  auto dtype = dtype_from_numpy(descr);
  if (!dtype) throw py::value_error("argument '" + name + "' has dtype " + descr + ", which HTP does not support");
  py::array a = py::array::ensure(in, py::array::c_style);
  HostArray h;
  h.dtype = *dtype;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) h.shape.push_back(a.shape(i));
  const auto *p = static_cast<const uint8_t *>(a.data());
  h.data.assign(p, p + a.nbytes());
  return h;
}

py::array numpy_array(const HostArray &h) {
  py::dtype dt(dtype_to_numpy(h.dtype).value_or("|u1"));
  std::vector<py::ssize_t> shape(h.shape.begin(), h.shape.end());
  py::array out(dt, shape);
  std::memcpy(out.mutable_data(), h.data.data(), h.data.size());
  return out;
}

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
  d["rendered"] = diag.render();
  return d;
}

py::list diag_list(const DiagnosticList &diags) {
  py::list out;
  for (const auto &d : diags.items()) out.append(diag_dict(d));
  return out;
}

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
  Context(std::optional<std::vector<std::string>> specs, bool use_environment) {
    PluginSearch search;
    if (specs) {
      for (const auto &s : *specs) search.specs.push_back(fs::absolute(s).lexically_normal().string());
      search.default_when_empty = false;
    }
    search.use_environment = use_environment;
    host_.load_all(search, load_diags_);
    if (load_diags_.has_errors()) throw PluginError(load_diags_.render());
  }

  py::list load_diagnostics() const { return diag_list(load_diags_); }

  py::list plugins() const {
    py::list out;
    for (const auto &p : host_.plugins()) {
      py::dict d;
      d["name"] = p->name;
      d["version"] = p->version;
      d["description"] = p->description;
      d["path"] = p->path.string();
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
    if (!r.ok) {
      std::string text = diags.render();
      if (r.failed) text += "kept the failed compile in " + r.failed->string() + "\n";
      throw CompileError(text.empty() ? std::string("compile failed") : text);
    }
    py::dict d;
    d["package"] = r.package.string();
    d["diagnostics"] = diag_list(diags);
    d["rendered"] = diags.render();
    return d;
  }

  py::dict run(const std::string &package, const std::string &entry, const py::dict &arrays,
               const py::dict &scalars, const std::string &cache_dir, const std::string &run_dir,
               const std::string &options_json, bool verify) {
    RunRequest req;
    req.package = fs::absolute(package).lexically_normal();
    req.entry = entry;
    for (auto item : arrays) {
      std::string name = py::str(item.first);
      req.tensors[name] = host_array(name, py::reinterpret_borrow<py::array>(py::array::ensure(item.second)));
    }
    for (auto item : scalars) {
      std::string name = py::str(item.first);
      py::handle v = item.second;
      if (py::isinstance<py::bool_>(v)) req.scalars[name] = v.cast<bool>();
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
    if (!outcome) throw RunError(diags.empty() ? std::string("run failed") : diags.render());
    py::dict outputs;
    for (const auto &[name, arr] : outcome->outputs) outputs[py::str(name)] = numpy_array(arr);
    py::dict d;
    d["outputs"] = outputs;
    d["report"] = outcome->report.dump();
    d["run_dir"] = outcome->run_dir.string();
    d["binding"] = outcome->binding;
    d["diagnostics"] = diag_list(diags);
    return d;
  }

private:
  PluginHost host_;
  DiagnosticList load_diags_;
};

/// What the manifests of a plugin search declare, without loading any library: one dict per
/// component (kind, id, name, names, plugin, path) and the diagnostics of unreadable entries.
py::dict read_plugin_manifests(std::optional<std::vector<std::string>> specs, bool use_environment) {
  PluginSearch search;
  if (specs) {
    for (const auto &s : *specs) search.specs.push_back(fs::absolute(s).lexically_normal().string());
    search.default_when_empty = false;
  }
  search.use_environment = use_environment;
  DiagnosticList diags;
  py::list comps;
  for (const auto &lib : discover_plugins(search, diags)) {
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
  py::register_exception<PluginError>(m, "PluginError");
  py::register_exception<CompileError>(m, "CompileError");
  py::register_exception<RunError>(m, "RunError");

  py::class_<Context>(m, "Context", "A loaded plugin set (plugins stay resident for the process).")
      .def(py::init<std::optional<std::vector<std::string>>, bool>(), py::arg("plugins") = py::none(),
           py::arg("use_environment") = true,
           "Loads the plugins of `plugins` (absolute dirs, .so files, plugin-set JSON), or the built-in "
           "plugins when None; raises PluginError with the rendered diagnostics on a load failure.")
      .def("load_diagnostics", &Context::load_diagnostics)
      .def("plugins", &Context::plugins)
      .def("components", &Context::components, py::arg("kind") = py::none())
      .def("dialects", [](const Context &c) { return c.components(std::string("dialect")); })
      .def("intrinsic_sets", [](const Context &c) { return c.components(std::string("intrinsic-set")); })
      .def("compile", &Context::compile, py::arg("module_json"), py::arg("target"), py::arg("out"),
           py::arg("options") = py::dict(),
           "Compiles an htp.ast.v1 document (GIL released); returns {package, diagnostics, rendered} or "
           "raises CompileError with the rendered diagnostics.")
      .def("run", &Context::run, py::arg("package"), py::arg("entry") = "", py::arg("arrays") = py::dict(),
           py::arg("scalars") = py::dict(), py::arg("cache_dir") = "", py::arg("run_dir") = "",
           py::arg("options") = "{}", py::arg("verify") = true,
           "Runs a package entry with its binding (GIL released); returns {outputs, report (JSON text), "
           "run_dir, binding, diagnostics} or raises RunError with the rendered diagnostics.");
  m.def("read_plugin_manifests", &read_plugin_manifests, py::arg("plugins") = py::none(),
        py::arg("use_environment") = true,
        "Components declared by the manifests of a plugin search, without loading any library.");
  m.def("builtin_plugin_dir", [] { return builtin_plugin_dir().string(); });
  m.def("host_executable", &host_executable,
        "The htp-host executable beside the host library (build tree or install), or '' if there is none.");
}

}  // namespace htp::python
