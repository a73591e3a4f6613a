// aie-sim: a functional CPU simulation of an emitted design. Object FIFOs with their depths and
// blocking acquire/release, one thread per core running its program and calling the compiled external
// kernels, mem-tile links (distribute / join) as one thread per link channel, and the runtime sequence's
// DMA patterns applied to the host buffers by shim threads. The numbers that come out check the mapping
// and the access patterns, not just the kernels.
#pragma once

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
  double timeout_seconds = 30.0;  ///< an acquire blocked longer than this is a deadlock
};

struct SimResult {
  Json trace;    ///< Chrome trace events (per core and per DMA channel)
  Json summary;  ///< per core: iterations, kernel calls, busy and blocked microseconds; per FIFO: objects
};

/// Thrown for a failed simulation (a deadlock, a missing kernel or buffer); the message names the op.
class SimError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

SimResult simulate(const Design &design, const std::map<std::string, KernelEntry> &kernels,
                   const std::map<std::string, HostBuffer> &buffers, const SimOptions &options = {});

}  // namespace htp::aie::sim
