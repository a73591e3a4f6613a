// The backend-aie plugin: targets aie-npu1 / aie-npu2 and their partial-column devices, the passes that
// map a program's IR contracts onto an NPU design, validate it and emit it for MLIR-AIE, and the bindings
// aie-sim (functional simulator) and aie-xrt (aiecc + Peano + XRT). docs/backends/aie.md.
#include "device.hpp"
#include "intrinsics.hpp"
#include "passes.hpp"

namespace {

constexpr const char *kVersion = "0.1.0";

/// `aie.intrinsic-contracts`: hands the `aie` set's contract table to the tile dialect, which types
/// vendor-only ops (`aie.colexpand`) by it (docs/intrinsics.md §3).
void publish_intrinsics(htp::PassContext &ctx) {
  ctx.module().set_attr("tile.intrinsics.aie", htp::aie::intrinsic_set_table().dump());
}

void register_components(htp::Registrar &r) {
  const auto targets = htp::aie::aie_targets();
  r.add(htp::IntrinsicSetSpec{.info = {.id = "aie.intrinsics", .version = kVersion,
                                       .summary = "AIE compute-tile intrinsics (external kernel C++)",
                                       .provides = {"Intrinsics.AIE"}},
                              .set = "aie",
                              .ops = htp::aie::intrinsic_op_names()});
  r.add(htp::PassSpec{.info = {.id = "aie.intrinsic-contracts", .version = kVersion,
                               .summary = "publish the aie intrinsic contracts for the tile dialect's typecheck",
                               .provides = {"IR.IntrinsicContracts(set=aie)"}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {"Uses.Intrinsic(set=aie)"},
                      .run = htp::pass_body<publish_intrinsics>});
  r.add(htp::BackendSpec{
      .info = {.id = "aie.backend", .version = kVersion,
               .summary = "AMD AIE NPUs: spatial mapping, object FIFOs and DMA patterns, aie.mlir for MLIR-AIE",
               .provides = {"Backend.AIE"},
               .accepts = {"Uses.Dialect(name=tile)", "Uses.Dialect(name=wsp)", "Uses.Dialect(name=csp)",
                           "Uses.Intrinsic(set=tile)", "Uses.Intrinsic(set=aie)", "Uses.Layout(kind=axe,facet=dist)",
                           "Uses.Layout(kind=axe,facet=mem)",
                           "Uses.Layout(kind=axe,facet=hw)", "Uses.Channel(kind=fifo)",
                           "Uses.Channel(kind=event)",  // a FIFO of one token
                           "Uses.Schedule(directive=dispatch,policy=round_robin)",
                           // Which AICPU scheduler issues a task: nothing on AIE to choose (a note says so).
                           "Uses.Schedule(directive=dispatch,policy=affinity)",
                           "Uses.Schedule(directive=dispatch,policy=hash)",
                           "Uses.Schedule(directive=dispatch,policy=work_steal)",
                           // When ready tasks are issued: AIE has no issue step either (a note says so).
                           "Uses.Schedule(directive=timing,policy=immediate)",
                           "Uses.Schedule(directive=timing,policy=batched)",
                           // Ascend's issue streams: none on AIE either (a note says so).
                           "Uses.Schedule(directive=streams)", "Uses.Schedule(directive=stream_by)",
                           // Tasks in flight: checked against the cores the mapping runs at once.
                           "Uses.Schedule(directive=task_window)",
                           // Consecutive grid points per core; the depth of the streaming FIFOs.
                           "Uses.Schedule(directive=tile)", "Uses.Schedule(directive=pipeline)",
                           // An intermediate in the core's memory: the two launches passing it are fused.
                           "Uses.Schedule(directive=buffer,policy=L1)", "Uses.Schedule(directive=buffer,policy=local)"}},
      .targets = targets});
  r.add(htp::BindingSpec{.info = {.id = "aie.sim", .version = kVersion,
                                  .summary = "Functional CPU simulation of the emitted design (FIFOs, cores, DMA)",
                                  .provides = {"Binding.AIE(mode=sim)"}},
                         .targets = targets,
                         .priority = 10,
                         .run = htp::run_body<htp::aie::run_sim>});
  r.add(htp::BindingSpec{.info = {.id = "aie.xrt", .version = kVersion,
                                  .summary = "Builds with Peano + aiecc and runs on the NPU through XRT",
                                  .provides = {"Binding.AIE(mode=xrt)"}},
                         .targets = targets,
                         .priority = 0,
                         .run = htp::run_body<htp::aie::run_xrt>});
  r.add(htp::PipelineSpec{.info = {.id = "aie.pipeline", .version = kVersion},
                          .targets = targets,
                          .passes = {"aie.map", "aie.validate", "aie.emit"}});
  r.add(htp::PassSpec{.info = {.id = "aie.map", .version = kVersion,
                               .summary = "One AIE design per entrypoint: placement, object FIFOs, links, DMA patterns",
                               .provides = {"IR.AIEDesign"},
                               // task graph, CSP graph, layouts: earlier stages; collectives lowered by axe.lower
                               .requires_ = {"IR.TileKernels", "?IR.Layout(state=lowered)"}},
                      .stage = HTP_STAGE_LOWER,
                      .run = htp::pass_body<htp::aie::map_pass>});
  r.add(htp::PassSpec{.info = {.id = "aie.validate", .version = kVersion,
                               .summary = "Device rules over each design (rows, coordinates, FIFO arity, ports, DMA limits, "
                                          "BD ids, memory, channels)",
                               .provides = {"IR.AIEValidated"},
                               .requires_ = {"IR.AIEDesign"}},
                      .stage = HTP_STAGE_LOWER,
                      .run = htp::pass_body<htp::aie::validate_pass>});
  r.add(htp::PassSpec{.info = {.id = "aie.emit", .version = kVersion,
                               .summary = "codegen/aie/<entry>/: aie.mlir, kernels/*.cc, mapping.json, fifos.json, host.cpp, "
                                          "build.sh; htp.entrypoints",
                               .provides = {"Artifact.AIE"},
                               .requires_ = {"IR.AIEValidated"}},
                      .stage = HTP_STAGE_EMIT,
                      .run = htp::pass_body<htp::aie::emit_pass>});
}

}  // namespace

HTP_DEFINE_PLUGIN("backend-aie", "0.1.0", "AMD AIE backend: MLIR-AIE designs for NPU1/NPU2", register_components)
