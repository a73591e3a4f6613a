// A process body as the channel operations it performs: sends, receives, counted loops, stream loops
// (consume) and branches — the input of counting and of the deadlock check.
#pragma once

#include "symbolic.hpp"

#include <map>

namespace csp {

struct Op {
  enum class Kind { Send, Recv, Loop, Consume, If };
  Kind kind = Kind::Send;
  std::string channel;          ///< Send, Recv, Consume
  Poly trips;                   ///< Loop: iterations; Consume: the stream length once resolved
  std::vector<Op> body, orelse; ///< Loop / Consume body (a Consume body starts with its Recv); If branches
  htp::NodeRef node;            ///< the call, For or If
  Json span;                    ///< instead of `node` for operations without one (the loop of a connect)
};

/// The source span of an operation, for diagnostics.
Json op_span(const Op &o);

/// Reads the channel operations of a canonicalized process function, in evaluation order. Loops must be
/// `for v in range(...)` with trip counts that do not depend on loop variables, or `for x in consume(ch)`
/// at the top of the body; problems are reported and counted in `errors`.
std::vector<Op> extract_ops(htp::PassContext &ctx, htp::NodeRef fn, const ExprScope &scope, int &errors);

/// Items put and got per channel.
struct ChannelCount {
  Poly put, get;
  bool operator==(const ChannelCount &o) const { return put == o.put && get == o.get; }
};
using Counts = std::map<std::string, ChannelCount>;

/// The counts of an op list; a stream loop over `ch` counts as {"stream": ch} iterations. When the two
/// branches of an `if` differ the error names the channel and both counts (counted in `errors`).
Counts count_ops(htp::PassContext &ctx, const std::vector<Op> &ops, int &errors);

/// The first Send/Recv on `channel` in `ops` (depth first), for diagnostics.
const Op *first_op(const std::vector<Op> &ops, const std::string &channel, Op::Kind kind);

/// Every op of `kind` on `channel`, depth first.
void visit_ops(std::vector<Op> &ops, const std::function<void(Op &)> &f);

} // namespace csp
