// Python bindings of the plugin host and the compile flow: _htp.Context, _htp.PluginError,
// _htp.CompileError and _htp.read_plugin_manifests (manifests only, nothing loaded).
#pragma once

#include <pybind11/pybind11.h>

namespace htp::python {

void bind_context(pybind11::module_ &m);

}  // namespace htp::python
