// The bodies of the dialect-wsp scanner and passes, registered in plugin.cpp.
#pragma once

#include <htp/ast.hpp>

namespace wsp {

/// Scanner: `Uses.Dialect(name=wsp)` per workload and schedule, `Uses.Schedule(directive=D[,policy=P])` per
/// directive.
void scan(htp::PassContext &ctx);

/// wsp.canonicalize patterns (canonicalize.cpp): the sugar of the surface rewritten to its canonical form.
std::vector<htp::PatternSpec> canonicalize_patterns();

/// wsp.typecheck: lowers every workload (checking kernel calls against `tile.signature`) into the node
/// attribute `wsp.workload`.
void typecheck(htp::PassContext &ctx);

/// wsp.attach-schedule: checks every `@schedule(w)` against its workload into the node attribute
/// `wsp.schedule` of the workload.
void attach_schedules(htp::PassContext &ctx);

/// wsp.build-task-graph: the module attribute `wsp.task_graph` from the workloads and their schedules.
void build_task_graph(htp::PassContext &ctx);

} // namespace wsp
