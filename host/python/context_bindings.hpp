// Python bindings of the plugin host and the compile flow: _htp.Context, _htp.PluginError,
// _htp.CompileError and _htp.read_plugin_manifests (manifests only, nothing loaded).
#pragma once

#include <pybind11/pybind11.h>

#include "diag/diagnostic.hpp"

namespace htp::python {

void bind_context(pybind11::module_ &m);

/// A diagnostic as the dict htp.errors uses: severity, code, message, span, notes, rendered.
pybind11::dict diag_dict(const Diagnostic &diag);
/// Each diagnostic of `diags` as diag_dict.
pybind11::list diag_list(const DiagnosticList &diags);

}  // namespace htp::python
