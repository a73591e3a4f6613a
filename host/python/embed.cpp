// libhtp-python-embed: lets htp-host (a C++ program) load Python extensions. htp-host opens this library only
// when a --plugins entry is a `.py` file, so the CLI itself never links libpython. It starts an embedded
// interpreter once per process (never finalised: the extensions' components stay registered for the
// process), puts the htp package on sys.path, and hands the extension to htp._embedded, which registers it
// into the caller's PluginHost through the same _htp code that htp.Context uses. The GIL is released on
// return; Python passes take it in their trampolines.
#include <pybind11/embed.h>

#include <string>

#include "diag/diagnostic.hpp"
#include "loader/plugin_host.hpp"

namespace py = pybind11;

extern "C" __attribute__((visibility("default"))) int htp_python_embed_load(htp::PluginHost *host,
                                                                              const char *spec,
                                                                              const char *const *python_path,
                                                                              size_t python_path_count,
                                                                              htp::DiagnosticList *diags) {
  static PyThreadState *released = nullptr;  // this thread's state while the GIL is released between calls
  if (!released) py::initialize_interpreter(/*init_signal_handlers=*/false);
  else PyEval_RestoreThread(released);
  int ok = 0;
  try {
    py::module_ sys = py::module_::import("sys");
    py::list path = sys.attr("path");
    for (size_t i = python_path_count; i-- > 0;) {
      py::str entry(python_path[i]);
      if (!path.contains(entry)) path.insert(0, entry);
    }
    py::module_ embedded = py::module_::import("htp._embedded");
    ok = embedded.attr("load")(spec, py::capsule(host, "htp.PluginHost"), py::capsule(diags, "htp.DiagnosticList"))
             .cast<bool>();
  } catch (py::error_already_set &e) {
    diags->report(htp::Diagnostic::error("python.embed", std::string("cannot load the Python extension '") + spec +
                                                             "': " + e.what()));
  }
  released = PyEval_SaveThread();
  return ok ? 0 : 1;
}
