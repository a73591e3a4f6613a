// The passes and the scanner of dialect-csp (registered in plugin.cpp; documented in docs/dialects/csp.md).
#pragma once

#include <htp/ast.hpp>

namespace csp {

/// Scanner: Uses.Dialect(name=csp) per csp function, Uses.Dialect(name=tile) per program with processes
/// (their bodies are tile bodies), Uses.Channel(kind=fifo|event) per declaration.
void scan(htp::PassContext &ctx);

/// csp.canonicalize (canonicalize): reads every program, checks the declared ends, lifts process
/// functions to the module (tensor and scalar parameters they read become their parameters), rewrites
/// send(ch, x) / recv(ch) / consume(ch) to carry the channel as `channel="name"`, marks process bodies
/// for the tile dialect (tile.lower, tile.foreign) and writes csp.programs.
void canonicalize(htp::PassContext &ctx);

/// csp.effects (analyze): symbolic put/get counts per process and channel, balance on every path and
/// end to end, element types, deadlock freedom under the declared depths (slot tokens); rewrites
/// `for x in consume(ch)` into a counted loop of recv.
void check_effects(htp::PassContext &ctx);

/// csp.build-graph (schedule): element types of sent values typed by the tile dialect, then the module
/// attribute csp.graph (htp.csp.graph.v1).
void build_graph(htp::PassContext &ctx);

} // namespace csp
