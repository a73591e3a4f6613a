// The _htp extension module: the C++ host as seen from Python. Each component adds its own functions.
#include <pybind11/pybind11.h>

#include "ast_bindings.hpp"
#include "context_bindings.hpp"
#include "extension_bindings.hpp"
#include "diag/crash_report.hpp"

PYBIND11_MODULE(_htp, m) {
  m.doc() = "The HTP host library (C++), as used by the htp package.";
  htp::crash::install();  // a plugin crashing a compile or run names itself (then Python's handler runs)
  htp::python::bind_ast(m);
  htp::python::bind_extension(m);
  htp::python::bind_context(m);
}
