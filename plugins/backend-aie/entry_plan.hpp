// What the front-ends (mapped kernels, WSP workloads, CSP programs) hand to the design builder: the
// cores of one entrypoint, the external kernel each calls with which ports, the tensor views every
// port moves per iteration, and the channels between cores. Placement, object FIFOs, links and DMA
// patterns are derived from it by build_design (design_builder.cpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <htp/csp_graph.hpp>
#include <htp/kernel_entry.hpp>
#include <htp/layout_signatures.hpp>
#include <htp/tile_kernels.hpp>
#include <htp/wsp_task_graph.hpp>

#include "alias.hpp"
#include "design.hpp"
#include "device.hpp"
#include "expr.hpp"

namespace htp::aie {

/// A problem with a location (the span JSON of the IR contracts, or null).
struct Problem {
  std::string code;
  std::string message;
  Json span;
};

/// A box of a tensor: element offsets and shape (rank of the tensor).
struct View {
  std::vector<int64_t> offset;
  std::vector<int64_t> shape;
  friend bool operator==(const View &, const View &) = default;
};

/// The view a task argument passes, when its offsets are constants.
inline std::optional<View> constant_view(const htp::WspArg &a) {
  View v{{}, a.shape};
  for (const Json &e : a.offset) {
    if (!e.is_number_integer()) return std::nullopt;
    v.offset.push_back(e.get<int64_t>());
  }
  return v;
}

/// Whether two views of one tensor share an element.
inline bool overlap(const View &a, const View &b) {
  return boxes_overlap(a.offset, a.shape, b.offset, b.shape);
}

/// Whether a task argument `in` that reads (In or InOut) and another, `out`, that writes (Out or InOut) pass
/// views of one tensor that share elements in every launch: at the same offsets (constants or not), or at
/// constant offsets that overlap.
inline bool surely_overlapping(const htp::WspArg &in, const htp::WspArg &out) {
  if (&in == &out || !in.is_view() || !out.is_view() || in.dir == "out" || out.dir == "in" || in.tensor != out.tensor)
    return false;
  if (in.offset == out.offset) return true;
  auto a = constant_view(in), b = constant_view(out);
  return a && b && overlap(*a, *b);
}

/// A tensor moved between the host and one core: the view of every iteration.
struct StreamPlan {
  std::string tensor;
  bool in = true;
  std::vector<View> views;  ///< one per iteration
  Json span;
  /// The local memory layout of the object (the layout's `mem` facet): object element k holds the view
  /// element of row-major index order[k]. Empty: row-major.
  std::vector<int64_t> order;
  std::string layout;       ///< the layout's text, for messages (empty when it has none)
};

/// One argument of a core's kernel call.
struct PortPlan {
  /// Handoff: a tile a CSP process's step hands a later step of the same iteration (steps of an iteration that
  /// receives after it sends are kernel calls of their own): a buffer in the core's own memory.
  enum class Kind { Stream, ChannelIn, ChannelOut, Const, Iteration, Handoff } kind = Kind::Stream;
  size_t stream = 0;        ///< Stream: index into EntryPlan::streams
  std::string channel;      ///< ChannelIn / ChannelOut; Handoff: the register
  Json value;               ///< Const; Handoff: the tile's shape
  std::string dtype;        ///< Const / Iteration / Handoff
  int64_t start = 0, step = 1;  ///< Iteration
  /// ChannelIn / ChannelOut of a core whose peers are replicas: iteration t uses rotation[t % size]
  /// (a round-robin over per-replica channels; `channel` is then the first).
  std::vector<std::string> rotation;
  /// A port of the statements around a CSP process's loop (CorePlan::before / after): used once, not per
  /// iteration.
  bool once = false;
};

struct CorePlan {
  std::string name;
  std::string kernel;       ///< external kernel function
  int64_t iterations = 1;
  std::vector<PortPlan> ports;
  Json span;
  /// Calls per core-loop iteration (the size of its ports' rotations; iterations is a multiple of it).
  int64_t unroll = 1;
  /// A CSP process whose iteration receives after it sent: the kernels an iteration calls in order, each
  /// acquiring and releasing its own ports (ports[first, first + count)); empty: `kernel` with every port.
  struct Step {
    std::string kernel;
    size_t first = 0, count = 0;
  };
  std::vector<Step> steps;
  /// A CSP process cut around its loop (htp::cut_process): the kernels called once before and after the core
  /// loop, with their ports (PortPlan::once); `steps` then holds the iteration.
  std::optional<Step> before, after;
};

struct ChannelPlan {
  std::string name;
  int64_t depth = 2;
  std::vector<int64_t> shape;
  std::string dtype;
  Json span;
};

struct EntryPlan {
  std::string name;
  std::string kind;                 ///< kernel | workload | csp-program
  Json span;
  std::vector<RuntimeParam> params;
  std::vector<CorePlan> cores;      ///< in placement order
  bool chain_placement = false;     ///< CSP: consecutive cores are neighbours in a column
  std::vector<StreamPlan> streams;
  std::vector<ChannelPlan> channels;
  std::vector<KernelFunc> kernels;
  std::map<std::string, std::string> sources;  ///< kernel name -> .cc text
  /// pipeline(n) of the workload's schedule: the depth of the FIFOs that stream its tensors (objects in
  /// flight between DMA and core); none: 2 (double buffering) when a core runs several iterations.
  std::optional<int64_t> fifo_depth;
};

/// A host-orchestrated workload (plan_orchestrated.cpp): its runtime parameters, the task graph the host
/// walks at run time (orchestration.json, kOrchestrationSchema) and one single-core design plan per kernel
/// it launches (entry "<workload>/tasks/<kernel>", kind "task").
inline constexpr const char *kOrchestrationSchema = "htp.aie.orchestration.v1";
struct OrchestrationPlan {
  std::string entry;
  Json span;
  Json params;  ///< the entrypoint's parameters (htp.entrypoints); a tensor's dims may be symbols, bound at run time
  Json doc;
  std::vector<EntryPlan> tasks;
  std::string reason;  ///< why the spatial mapping did not take it (its first problem)
  std::string noun = "workload";  ///< what the entry is, for messages: "workload", "kernel entry"
};


/// The design of one entry on `device`; problems (routing, DMA patterns) are appended to `problems`.
std::optional<Design> build_design(const EntryPlan &plan, const DeviceProfile &device, std::vector<Problem> &problems);

/// The inputs of the mapper: module attributes (null, or no kernels, when absent).
struct ProgramDocs {
  htp::TileKernels kernels;  ///< tile.kernels, as the SDK reads it (htp/tile_kernels.hpp)
  htp::LayoutSignatures layouts;  ///< layout.signatures, as the SDK reads it (htp/layout_signatures.hpp)
  htp::WspTaskGraph tasks;   ///< wsp.task_graph, as the SDK reads it (htp/wsp_task_graph.hpp)
  htp::CspGraph csp;         ///< csp.graph, as the SDK reads it (htp/csp_graph.hpp)
};

/// Replaces, in `docs`, each single-core kernel entry whose whole tensors exceed a compute tile's memory and
/// whose body streams (stream_kernel_loop) by its iteration kernel and the workload of its name; returns
/// the kernels replaced with their trip counts.
std::vector<std::pair<htp::TileKernel, int64_t>> stream_oversized_kernel_entries(ProgramDocs &docs,
                                                                                 const DeviceProfile &device);

/// Whether `kernel` may load parameter `in` after it stored parameter `out`: a store before a load in program
/// order, or both in one loop at different offsets (a later iteration's load after an earlier one's store).
/// A task passing overlapping views as both sees the old values on AIE (its inputs move in before its outputs
/// out), which is what the kernel means only when this is false.
bool loads_after_storing(const htp::TileKernel &kernel, const std::string &in, const std::string &out);
/// The reason of aie.alias: `kernel` loads `in` after storing `out`, overlapping views of `tensor`.
std::string aliasing_views(const htp::TileKernel &kernel, const std::string &tensor, const std::string &in,
                           const std::string &out);
/// The pairs (in, out) of `kernel`'s tensor parameters that it loads after storing (loads_after_storing), an
/// input (In or InOut) and an output (Out or InOut): a task passing them views that overlap at run time is
/// aie.alias there (orchestration.json's `alias_checks`).
std::vector<std::pair<std::string, std::string>> load_after_store_pairs(const htp::TileKernel &kernel);
/// A launch passing surely overlapping views as an input and an output (surely_overlapping) whose kernel loads
/// the input after it stores the output: an AIE task moves its inputs in before its outputs out.
struct AliasedLaunch {
  const htp::WspNode *launch;
  const htp::TileKernel *kernel;
  const htp::WspArg *in, *out;
};
/// The first such launch of `w`, in program order, among the launches whose kernel `kernel_of` gives (nullptr:
/// not checked).
std::optional<AliasedLaunch> aliased_launch(const htp::WspWorkload &w,
                                            const std::function<const htp::TileKernel *(const std::string &)> &kernel_of);

/// Entry plans of every entrypoint of the program (csp programs, workloads, kernels no workload launches);
/// workloads the spatial mapping does not take are host-orchestrated and go to `orchestrated`.
std::vector<EntryPlan> plan_entries(const ProgramDocs &docs, const DeviceProfile &device, std::vector<Problem> &problems,
                                    std::vector<OrchestrationPlan> *orchestrated = nullptr);

// Front-ends (one file each).
std::optional<EntryPlan> plan_kernel_entry(const htp::TileKernel &kernel, const htp::LayoutSignatures &layouts,
                                           const DeviceProfile &device, std::vector<Problem> &problems);
std::optional<EntryPlan> plan_workload_entry(const htp::WspWorkload &workload, const htp::TileKernels &kernels,
                                             const DeviceProfile &device, std::vector<Problem> &problems);
std::optional<OrchestrationPlan> plan_orchestrated_workload(const htp::WspWorkload &workload, const ProgramDocs &docs,
                                                           const DeviceProfile &device, std::vector<Problem> &problems);
/// A single-core kernel entry whose design needs more DMA channels than a core has (a third input, a
/// runtime scalar beside two tensors), host-orchestrated as one task with its objects packed.
std::optional<OrchestrationPlan> plan_orchestrated_kernel(const htp::TileKernel &kernel, const ProgramDocs &docs,
                                                         const DeviceProfile &device, std::vector<Problem> &problems);
std::optional<OrchestrationPlan> plan_orchestrated_pipe(const htp::CspProgram &program, const ProgramDocs &docs,
                                                       const DeviceProfile &device, std::vector<Problem> &problems);
/// A CSP program the spatial mapping does not take, host-orchestrated (plan_csp_orchestrated.cpp): each process
/// replica a stage of tasks, run in producer-to-consumer order; nullopt with `why` set when it cannot be
/// (the first problem of its task designs, when planning them fails).
std::optional<OrchestrationPlan> plan_orchestrated_program(const htp::CspProgram &program, const ProgramDocs &docs,
                                                          const DeviceProfile &device, std::string &why);
/// The host-orchestrated plan of `w` (a workload, or the stages of a pipe or program as one); `channels`
/// ({name: {shape, dtype}}) are the channels its tasks bind.
std::optional<OrchestrationPlan> plan_orchestration(const htp::WspWorkload &w, const Json &channels, const ProgramDocs &docs,
                                                   const DeviceProfile &device, std::vector<Problem> &problems);
/// The workload a host-orchestrated CSP program or pipe becomes, before its stages: name, span, parameters.
htp::WspWorkload program_workload(const htp::CspProgram &program);
/// The channels of `program` as orchestration.json lists them ({name: {shape, dtype}}); null with `bad` set to
/// an event, or with `tensors_only` to a channel of tiles (a pipe's are tensors).
Json channel_items(const htp::CspProgram &program, bool tensors_only, const htp::CspChannel *&bad);
/// The processes of `program`, each after every producer of the channels it consumes; nullopt with `why`
/// set when they form a cycle.
std::optional<std::vector<const htp::CspProcess *>> producer_order(const htp::CspProgram &program, std::string &why);
/// Problems (aie.csp-reload) for each load in a process iteration of a view of a tensor that a store earlier
/// in the same iteration wrote (in part, or whole with the stored register changed since): a core streams its
/// loads ahead of its stores (the view just stored is read from the stored register,
/// htp::forward_views_to_loads; views stored in earlier iterations run host-orchestrated), so the load would
/// read the tensor's earlier contents.
std::vector<Problem> partial_reloads(const htp::TileKernels &kernels, const htp::CspGraph &csp);

std::optional<EntryPlan> plan_csp_entry(const htp::CspProgram &program, const htp::TileKernels &kernels,
                                        const DeviceProfile &device, std::vector<Problem> &problems);

// Shared by the front-ends.
/// A runtime parameter from a workload or CSP program parameter (a tensor of static shape).
std::optional<RuntimeParam> runtime_param(const htp::WspParam &param);
std::optional<RuntimeParam> runtime_param(const htp::CspParam &param);
/// A runtime parameter from a tensor parameter of a kernel (its whole tensor).
std::optional<RuntimeParam> runtime_param(const htp::TileParam &param);
/// Constexpr parameters of a kernel as an environment.
ExprEnv constexpr_env(const htp::TileKernel &kernel);
/// A span of tile.kernels as the problems carry spans.
inline Json span_json(const htp::IrSpan &span) { return Json(span); }
/// Product of a shape; nullopt when a dimension is negative or the product overflows 64 bits.
std::optional<int64_t> checked_product(const std::vector<int64_t> &shape);

/// The most elements one stream may move in all: the mapper lists every element address a stream
/// visits to fit DMA patterns to them, so this bounds compile time and memory whatever a program's
/// constants are (docs/backends/aie.md §limits).
inline constexpr int64_t kMaxStreamElements = int64_t{1} << 22;

/// Checked before a front-end lists a stream's views: one object of `shape` (dtype) fits a compute
/// tile's data memory, and `iterations` of them stay within kMaxStreamElements. False with a problem
/// at `span` naming `what`, the limit and the number otherwise.
bool check_stream_size(const std::string &what, const std::vector<int64_t> &shape, const std::string &dtype,
                       int64_t iterations, const DeviceProfile &device, const Json &span,
                       std::vector<Problem> &problems);

}  // namespace htp::aie
