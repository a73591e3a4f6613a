// The backend-pto plugin: targets pto-a2a3sim and pto-a2a3, the `pto` intrinsic set, the legality and
// emission passes, the `a2a3` binding and (when plugins/backend-pto/sim is built) the `a2a3sim` binding.
#include <htp/ast.hpp>
#include <htp/run.hpp>

#include "a2a3_binding.hpp"
#include "intrinsics.hpp"
#include "passes.hpp"

#ifdef HTP_PTO_HAVE_SIM
#include "sim/binding.hpp"
#endif

namespace {

constexpr const char *kVersion = "0.1.0";

/// `pto.intrinsic-contracts`: hands the set's contract table to the tile dialect, which types vendor-only
/// ops (`pto.colexpand`) by it (docs/intrinsics.md §3).
void publish_intrinsics(htp::PassContext &ctx) {
  ctx.module().set_attr("tile.intrinsics.pto", ptobe::intrinsic_set_table().dump());
}

/// The program features backend-pto lowers; the resolver rejects every other obligation.
std::vector<std::string> accepted() {
  std::vector<std::string> out = {
      "Uses.Dialect(name=tile)",
      "Uses.Dialect(name=wsp)",
      "Uses.Dialect(name=csp)",
      "Uses.Intrinsic(set=pto)",
      "Uses.Layout(kind=axe,facet=hw)",
      "Uses.Layout(kind=axe,facet=dist)",
      "Uses.Layout(kind=axe,facet=mem)",
      "Uses.Schedule(directive=dispatch)",
      "Uses.Schedule(directive=streams)",
      "Uses.Schedule(directive=stream_by)",
      "Uses.Schedule(directive=task_window)",
      "Uses.Schedule(directive=timing,policy=immediate)",
      "Uses.Schedule(directive=timing,policy=batched)",
      "Uses.Schedule(directive=tile)",
      "Uses.Schedule(directive=pipeline)",
      // A tensor in global memory (GM) or, for an intermediate, in the memory of the core that runs the two
      // launches passing it (UB, L1, local: the launches are fused).
      "Uses.Schedule(directive=buffer,policy=GM)",
      "Uses.Schedule(directive=buffer,policy=UB)",
      "Uses.Schedule(directive=buffer,policy=L1)",
      "Uses.Schedule(directive=buffer,policy=local)",
      "Uses.Channel(kind=fifo)",
      "Uses.Channel(kind=event)",  // a token slot; an iteration that waits after signalling runs as two tasks
  };
  for (const std::string &op : ptobe::intrinsic_op_names()) out.push_back("Uses.Intrinsic(set=tile,op=" + op + ")");
  return out;
}

void register_components(htp::Registrar &r) {
  const std::vector<std::string> targets = {"pto-a2a3sim", "pto-a2a3"};
  r.add(htp::IntrinsicSetSpec{.info = {.id = "pto.intrinsics", .version = kVersion, .summary = "PTO tile intrinsics",
                                       .provides = {"Intrinsics.PTO"}},
                              .set = "pto",
                              .ops = ptobe::intrinsic_op_names()});
  r.add(htp::PassSpec{.info = {.id = "pto.intrinsic-contracts", .version = kVersion,
                               .summary = "publish the pto intrinsic contracts for the tile dialect's typecheck",
                               .provides = {"IR.IntrinsicContracts(set=pto)"}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {"Uses.Intrinsic(set=pto)"},
                      .run = htp::pass_body<publish_intrinsics>});
  r.add(htp::BackendSpec{.info = {.id = "pto.backend", .version = kVersion,
                                  .summary = "PTO-ISA kernels and pto-runtime orchestration packages",
                                  .provides = {"Backend.PTO"}, .accepts = accepted()},
                         .targets = targets});
  r.add(htp::PipelineSpec{.info = {.id = "pto.pipeline", .version = kVersion}, .targets = targets,
                          .passes = {"pto.legalize", "pto.emit"}});
  r.add(htp::PassSpec{.info = {.id = "pto.legalize", .version = kVersion,
                               .summary = "intrinsic contracts and hardware-profile legality of every kernel",
                               .provides = {"IR.PTOLegal"}, .requires_ = {"IR.TileKernels", "?IR.WSPTaskGraph",
                                                                         "?IR.CSPGraph", "?IR.Layout(state=checked)",
                                                                         "?IR.Layout(state=lowered)"}},
                      .stage = HTP_STAGE_LOWER,
                      .run = htp::pass_body<ptobe::legalize_pass>});
  r.add(htp::PassSpec{.info = {.id = "pto.emit", .version = kVersion,
                               .summary = "kernels, orchestration, kernel_config.py and kernel_registry.json",
                               .provides = {"Artifact.PTO"}, .requires_ = {"IR.PTOLegal"}},
                      .stage = HTP_STAGE_EMIT,
                      .run = htp::pass_body<ptobe::emit_pass>});
  r.add(htp::BindingSpec{.info = {.id = "pto.a2a3", .version = kVersion,
                                  .summary = "Ascend device through CANN and pto-runtime",
                                  .provides = {"Binding.PTO(variant=a2a3)"}},
                         .targets = {"pto-a2a3"},
                         .run = htp::run_body<ptobe::run_a2a3>});
#ifdef HTP_PTO_HAVE_SIM
  htp_ptosim::register_bindings(r);
#endif
}

}  // namespace

HTP_DEFINE_PLUGIN("backend-pto", "0.1.0",
                  "Huawei Ascend PTO backend: PTO-ISA kernels and pto-runtime packages (a2a3sim, a2a3)",
                  register_components)
