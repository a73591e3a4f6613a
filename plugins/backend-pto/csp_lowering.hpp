// Lowers a CSP program (csp.graph, docs/ir-contracts.md §6) whose processes each run one counted loop:
// every loop iteration of a process becomes a task of a per-iteration kernel; channel `c` of depth D
// becomes a runtime-owned ring of D slots, item i in slot i mod D. A producer task writes its slot
// (out), the consumer task reads and releases it (inout). Both are added as INOUT, which pto-runtime
// orders after the slot's previous writer: producer i before consumer i (read-after-write) before
// producer i + D (the consumer, an INOUT, is the slot's last writer): the channel's bound.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <htp/csp_graph.hpp>

#include "kernel_ir.hpp"

namespace ptobe {

/// A channel as a ring of slots.
struct CspChannel {
  std::string name;
  std::vector<int64_t> shape;  ///< one item (a tile)
  std::string dtype;
  int64_t depth = 1;           ///< slots (an Event, depth 0, gets one)
};

/// One step of a process iteration: its kernel and the channels it moves (channel, "out" | "inout").
struct CspStep {
  std::string kernel;
  std::vector<std::pair<std::string, std::string>> channels;
};

/// One process: its per-iteration kernel and how its arguments bind.
struct CspProcess {
  std::string name;
  std::string kernel;  ///< the derived kernel's name: <program>_<process>
  std::vector<htp::CspBinding> args;  ///< how the process's parameters bind (tensor or scalar)
  std::vector<std::pair<std::string, std::string>> channels;  ///< (channel, "out" | "inout") in kernel order
  std::string loop_var;
  json start, stop, step;  ///< its counted loop (Exprs over the program's scalars)
  int64_t replicas = 1;    ///< copies sharing its channels: replica r's iteration k moves item k * replicas + r
  /// Channels whose item at iteration k is k * first + second whatever the replica (the parts of a link:
  /// part j of a distribute over n channels takes item k * n + j of its source and gives item k to its own).
  std::map<std::string, std::pair<int64_t, int64_t>> items;
  /// An iteration that receives after it sent (a reply, an event's rendezvous) runs as several tasks, in
  /// order, each receiving before it sends; empty: one task, `kernel` with `channels`.
  std::vector<CspStep> steps;
  /// Statements before and after the loop (htp::cut_process): a task each, once, before the first iteration
  /// and after the last. Their channels' items are the replica's first (item r), as in iteration 0.
  std::optional<CspStep> before, after;
  /// Tile registers carried from one task of the process to the next: the kernels' tensor parameters of
  /// these names, bound to a tensor the orchestration owns, one tile per replica.
  std::vector<CspChannel> carries;
};

/// A lowered program.
struct CspProgram {
  std::string name;
  Span span;
  std::vector<htp::CspParam> params;  ///< the program's parameters
  std::vector<CspChannel> channels;
  std::vector<CspProcess> processes;  ///< producers before consumers
};

/// Lowers `program` (of csp.graph, read by the SDK: htp/csp_graph.hpp), appending the per-iteration kernels
/// to `derived`; throws IrError (code pto.csp) for a program outside the supported form, naming the
/// process and why. `carries` gives the carry tensors of each process function that htp::cut_process cut
/// (its kernels `<function>__before` / `<function>__after`, when it has them, are in `kernels`).
CspProgram lower_csp_program(const htp::CspProgram &program, const std::vector<Kernel> &kernels,
                             const std::map<std::string, std::vector<htp::TileParam>> &carries,
                             std::vector<Kernel> &derived);

}  // namespace ptobe
