// aie-sim: a functional CPU simulation of an emitted design. Object FIFOs with their depths and
// acquire/release, each core running its program and calling the compiled external kernels, mem-tile
// links (distribute / join) per link channel, and the runtime sequence's DMA patterns applied to the host
// buffers per shim channel — every one of them a resumable actor, stepped in turn on the calling thread
// until it waits on a FIFO (a deterministic run; a round in which nothing can move is a deadlock, named
// by its waiters). The numbers that come out check the mapping and the access patterns, not just the
// kernels.
#pragma once

#include <htp/run_time_limit.hpp>

#include <map>
#include <stdexcept>
#include <string>

#include "../design.hpp"

namespace htp::aie::sim {

/// A kernel compiled for the host: `htp_aie_call_<name>(void **args)`.
using KernelEntry = void (*)(void **);

/// Host memory of the runtime sequence's parameters, by name.
struct HostBuffer {
  void *data = nullptr;
  size_t bytes = 0;
};

struct SimOptions {
  /// A run longer than this stops with an error, checked between the simulator's steps (without `limit`).
  double timeout_seconds = 60.0;
  /// The run's time limit (htp/run_time_limit.hpp), whose stop flag the kernel library's loops poll: a kernel
  /// call that loops for hours stops too. Shared by every design of a host-orchestrated run.
  const htp::RunTimeLimit *limit = nullptr;
};

struct SimResult {
  Json trace;    ///< Chrome trace events (per core and per DMA channel)
  Json summary;  ///< per core: iterations, kernel calls, busy and blocked microseconds; per FIFO: objects
};

/// Thrown for a failed simulation (a deadlock, a missing kernel or buffer); the message names the op.
class SimError : public std::runtime_error {
public:
  explicit SimError(const std::string &message, std::string code = "aie.sim")
      : std::runtime_error(message), code_(std::move(code)) {}
  /// The problem code of the run error it becomes.
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

SimResult simulate(const Design &design, const std::map<std::string, KernelEntry> &kernels,
                   const std::map<std::string, HostBuffer> &buffers, const SimOptions &options = {});

}  // namespace htp::aie::sim
