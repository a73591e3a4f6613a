// The dialect-wsp plugin: workload/schedule programming. `@workload` functions describe task sets
// over parallel, sequential, ragged and sparse axes; `@schedule(w)` functions say how they are
// dispatched and issued. The passes check workloads against the tile kernels they launch and build the
// module attribute `wsp.task_graph` (docs/dialects/wsp.md) that the backends lower.
#include "passes.hpp"

namespace {

constexpr const char *kVersion = "0.1.0";
constexpr const char *kUsesWsp = "Uses.Dialect(name=wsp)";
// Facts that order the passes (docs/ir-contracts.md).
constexpr const char *kTileTyped = "IR.TileTyped";
constexpr const char *kCanonical = "IR.WSPCanonical";
constexpr const char *kChecked = "IR.WSPChecked";
constexpr const char *kScheduled = "IR.WSPScheduled";
constexpr const char *kTaskGraph = "IR.WSPTaskGraph";

void register_components(htp::Registrar &r) {
  r.add(htp::DialectSpec{
      .info = {.id = "wsp.dialect",
               .version = kVersion,
               .summary = "Workloads over parallel / sequential / ragged / sparse axes and their schedules",
               .provides = {"Dialect.WSP"}},
      .name = "wsp",
      .surface = {"workload", "schedule",   "P",          "Dense",     "DenseDyn",    "Ragged",
                  "Sparse",   "combine",    "sequential", "dispatch",  "round_robin", "affinity",
                  "hash",     "work_steal", "streams",    "stream_by", "timing",      "immediate",
                  "batched",  "tile",       "pipeline",   "buffer",    "task_window"},
      .scan = htp::pass_body<wsp::scan>});
  r.add(htp::PassSpec{.info = {.id = "wsp.canonicalize",
                               .version = kVersion,
                               .summary =
                                   "range -> P.seq, if/else -> P.when/P.otherwise, combine(...) -> blocks, "
                                   "P.sel(S[row]) -> P.sel(Sparse(...), row)",
                               .provides = {kCanonical}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {kUsesWsp},
                      .patterns = wsp::canonicalize_patterns()});
  r.add(htp::PassSpec{.info = {.id = "wsp.typecheck",
                               .version = kVersion,
                               .summary = "Lower workloads; check kernel launches against tile.signature",
                               .provides = {kChecked},
                               .requires_ = {kCanonical, kTileTyped}},
                      .stage = HTP_STAGE_TYPECHECK,
                      .applies_to = {kUsesWsp},
                      .run = htp::pass_body<wsp::typecheck>});
  r.add(htp::PassSpec{.info = {.id = "wsp.attach-schedule",
                               .version = kVersion,
                               .summary = "Check each @schedule(w) against its workload and attach it",
                               .provides = {kScheduled},
                               .requires_ = {kChecked}},
                      .stage = HTP_STAGE_SCHEDULE,
                      .applies_to = {kUsesWsp},
                      .run = htp::pass_body<wsp::attach_schedules>});
  r.add(htp::PassSpec{.info = {.id = "wsp.build-task-graph",
                               .version = kVersion,
                               .summary = "Module attribute wsp.task_graph (htp.wsp.task_graph.v1)",
                               .provides = {kTaskGraph},
                               .requires_ = {kChecked, kScheduled}},
                      .stage = HTP_STAGE_SCHEDULE,
                      .applies_to = {kUsesWsp},
                      .run = htp::pass_body<wsp::build_task_graph>});
}

} // namespace

HTP_DEFINE_PLUGIN("dialect-wsp", "0.1.0",
                  "Workload/schedule programming: parallel grids, dynamic axes, dispatch policies",
                  register_components)
