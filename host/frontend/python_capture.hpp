// Capture of a Python program file through HTP's Python frontend (`python -m htp.capture`), which parses
// it with Python's own ast, resolves the names its decorated functions reference, and hands the module
// over as htp.ast.v1 JSON.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"

namespace htp {

struct PythonFrontend {
  std::string python = "/usr/bin/python3";  ///< The interpreter (HTP_PYTHON overrides).
  std::vector<std::string> python_path;      ///< Where the `htp` package lives; empty: next to the host library.
  std::vector<std::string> plugin_specs;     ///< Passed to the frontend so it knows the loaded dialects.
  bool builtin_plugins = true;               ///< False: the frontend knows only plugin_specs.

  /// The frontend with the interpreter from HTP_PYTHON and the package found next to the host library.
  static PythonFrontend from_environment();
};

/// Captures `file`: the module of its decorated functions, or diagnostics (syntax errors, names that
/// cannot be resolved, decorators of dialects that are not loaded) at their source spans.
Expected<ast::Module> capture_python_file(const PythonFrontend &frontend, const std::filesystem::path &file,
                                          DiagnosticList &diags);

/// Loads an htp.ast.v1 JSON file.
Expected<ast::Module> load_ast_json_file(const std::filesystem::path &file);

}  // namespace htp
