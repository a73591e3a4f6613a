// `@schedule(w)` functions: a body of directives — dispatch(round_robin(n) | affinity(axis) |
// hash(axis) | work_steal()), streams(n), stream_by(expr), timing(immediate | batched(n)),
// tile(axis, factor), pipeline(depth), buffer(tensor, space), task_window(n). The scanner turns each
// directive into a `Uses.Schedule` obligation; wsp.attach-schedule checks it against the workload.
#pragma once

#include "program.hpp"

namespace wsp {

/// One directive statement: its name, its policy (empty when the directive has none) and its call.
struct Directive {
  std::string name;
  std::string policy;
  htp::NodeRef call;
};

/// The directive a schedule statement spells; nullopt when it is no directive call.
std::optional<Directive> directive_of(htp::NodeRef stmt);

/// The obligation a directive raises: `Uses.Schedule(directive=D,policy=P)` (no policy key when empty).
std::string obligation_of(const Directive &d);

/// The `schedule` object of a workload's task-graph entry (`workload` as lowered: its `axes`, `params`
/// and `intermediates` are checked against); nullopt when errors were reported through `ctx`.
std::optional<json> lower_schedule(htp::NodeRef fn, const json &workload, htp::PassContext &ctx);

} // namespace wsp
