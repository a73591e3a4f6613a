// Deadlock freedom under the declared depths: every channel starts with `depth` free slot tokens; a send
// turns a free token into a used one and waits while none is free, a receive turns a used token back and
// waits while none is used (the linear Free/Used capabilities of Dato); an event (depth 0) is a
// rendezvous. The processes (each replica separately) run until all finish or none can move; then the
// cycles of processes each waiting on the next are the deadlocks.
#pragma once

#include "ops.hpp"
#include "program_model.hpp"

namespace csp {

/// One process of the network with its operations (stream lengths resolved).
struct SimProcess {
  const ProcessDecl *decl;
  const std::vector<Op> *ops;
};

/// A process instance stopped for good: where, and on whom it waits.
struct Waiter {
  std::string process;
  int64_t replica = 0;
  const Op *op = nullptr;            ///< the blocked send or receive
  int64_t used = 0;                  ///< used slots of the channel when it stopped
  int64_t received = 0;              ///< items received from the channel so far (by everyone)
  std::vector<std::string> waits_on; ///< processes it waits for
};

struct Deadlock {
  std::vector<Waiter> cycle; ///< members of one cycle, in declaration order
};

/// The outcome of one run of the network.
struct SimResult {
  std::optional<Deadlock> deadlock; ///< the first cycle when the processes stopped in one
  bool undecided = false;           ///< the step budget ran out before the processes finished
};

/// Steps one run may take before it is given up (undecided).
inline constexpr int64_t kSimulationBudget = 2'000'000;
/// Process replicas beyond which the network is not run at all (undecided).
inline constexpr int64_t kSimulationInstances = 4096;

/// Runs the network with every scalar parameter set to `param_value` and every `if` taking its
/// `else` branch when `take_else`.
SimResult find_deadlock(const ProgramDecl &program, const std::vector<SimProcess> &processes,
                        int64_t param_value, bool take_else);

} // namespace csp
