// Python extensions: node and rewriter views for Python passes, and their registration as a script plugin.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "diag/diagnostic.hpp"
#include "loader/plugin_host.hpp"

namespace htp::python {

/// Owns the Python callables of the extensions loaded into one host (the registry's components point at
/// them); destroy it after the host, with the GIL held.
class ExtensionCallables {
public:
  ExtensionCallables();
  ~ExtensionCallables();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Registers the components htp.extension described (a list of dicts) as the script plugin `name` whose
/// source is `source`; returns the load diagnostics as diag_dict dicts.
pybind11::list load_python_extension(PluginHost &host, ExtensionCallables &keep, const std::string &name,
                                     const std::string &version, const std::string &description,
                                     const std::string &source, const pybind11::list &components);

void bind_extension(pybind11::module_ &m);

}  // namespace htp::python
