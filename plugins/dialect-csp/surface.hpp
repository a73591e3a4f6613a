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
  std::map<std::string, htp::NodeRef> stages;      ///< pipe programs: process name -> its stage statement
};

/// Whether a top-level FunctionDef is a csp function of the given surface decorator ("program", "process").
bool is_csp_function(htp::NodeRef def, std::string_view decorator);

/// "fifo" for a `Channel[T](...)` call, "event" for `Event()`, else empty.
std::string channel_kind(htp::NodeRef value);

/// Whether a top-level FunctionDef is a WSP `@workload` that declares channels (Channel[T](depth=N) or
/// Event()) in its body: its `with P.pipe():` scope is a CSP network (docs/dialects/wsp.md, "Pipelines
/// over channels").
bool is_pipe_workload(htp::NodeRef def);

/// Reads a pipe workload as a program: its parameters, its channels and one process per statement (stage)
/// of its `with P.pipe():` scope, named after the first kernel the stage launches, with the ends inferred
/// from the stage's send / recv / consume. Problems are reported through `ctx` and counted in `errors`.
ParsedProgram parse_pipe(htp::PassContext &ctx, htp::NodeRef def, const Json &constants, int &errors);

/// Reads one program; problems are reported through `ctx` (the result is then incomplete) and
/// counted in `errors`.
ParsedProgram parse_program(htp::PassContext &ctx, htp::NodeRef def, const Json &constants, int &errors);

} // namespace csp
