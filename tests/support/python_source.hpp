// Test support: a host AST module from Python source, parsed by Python's own ast (via /usr/bin/python3).
#pragma once

#include <string>

#include "ast/module.hpp"

namespace htp::test {

/// Parses `source` as file `file` with Python's ast and loads it through htp.ast.v1 JSON; aborts the
/// test binary with the reason when Python or the loader fails.
ast::Module parse_python(const std::string &source, const std::string &file = "test.py");

}  // namespace htp::test
