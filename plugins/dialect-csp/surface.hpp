// Reading a @program: parameters, channel and event declarations, processes (nested @process functions
// and process("name").produces(..).consumes(..).body(fn) builders) and replicate(p, n).
#pragma once

#include "program_model.hpp"

#include <map>
#include <set>

namespace csp {

struct ParsedProgram {
  ProgramDecl decl;
  htp::NodeRef def;                                ///< the program FunctionDef
  std::map<std::string, htp::NodeRef> bodies;      ///< process name -> its nested FunctionDef
  std::map<std::string, htp::NodeRef> param_nodes; ///< program parameter -> its `arg` node
  std::set<std::string> locals;                    ///< every name the program body binds
  std::map<std::string, htp::NodeRef> decl_nodes;  ///< channel or process name -> declaring node
};

/// Whether a top-level FunctionDef is a csp function of the given surface decorator ("program", "process").
bool is_csp_function(htp::NodeRef def, std::string_view decorator);

/// Reads one program; problems are reported through `ctx` (the result is then incomplete) and
/// counted in `errors`.
ParsedProgram parse_program(htp::PassContext &ctx, htp::NodeRef def, const Json &constants, int &errors);

} // namespace csp
