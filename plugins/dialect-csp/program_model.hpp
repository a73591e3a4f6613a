// The declarations of a CSP program — channels, processes, their ends and replication — as read from
// the surface by csp.canonicalize and carried between the passes in the module attribute csp.programs.
#pragma once

#include "csp_common.hpp"

#include <string>
#include <vector>

namespace csp {

struct ChannelDecl {
  std::string name;
  std::string kind;  ///< "fifo" or "event"
  Json elem;         ///< contract type of the elements; null for an event
  int64_t depth = 0; ///< slots; 0 for an event (rendezvous)
  int64_t pack = 1;  ///< elements bundled per transfer
  Json span;
};

struct ProcessDecl {
  std::string name;
  std::string function; ///< the lifted FunctionDef
  int64_t replicas = 1;
  std::vector<std::string> produces, consumes;
  Json args = Json::array();    ///< [{"param": p, "tensor": T}] or [{"param": p, "scalar": Expr}]
  Json span;                    ///< the declaration (decorator or builder)
  Json counts = Json::object(); ///< channel -> {"put": Expr, "get": Expr}, filled by csp.effects
  int64_t stage = -1;           ///< a stage of a WSP `with P.pipe():` scope: its position in the scope
};

/// `connect([sources], [destinations])`: a forwarding link between channels — one to one (forward), one
/// to many (distribute, round robin) or many to one (join, round robin).
struct LinkDecl {
  std::string name; ///< "link0", "link1", ... in declaration order
  std::vector<std::string> from, to;
  Json span;
  /// "forward", "distribute" or "join".
  std::string mode() const { return from.size() > 1 ? "join" : (to.size() > 1 ? "distribute" : "forward"); }
};

struct ProgramDecl {
  std::string name;
  std::string origin = "program"; ///< "program" (@program) or "wsp.pipe" (a workload's P.pipe scope)
  Json span;
  Json params = Json::array(); ///< [{"name", "dir", "type"}]
  std::vector<ChannelDecl> channels;
  std::vector<ProcessDecl> processes;
  std::vector<LinkDecl> links;

  const ChannelDecl *channel(const std::string &n) const;
  ProcessDecl *process(const std::string &n);
  const Json *param(const std::string &n) const;
};

/// The csp.programs document.
Json programs_to_json(const std::vector<ProgramDecl> &programs);
/// Reads csp.programs back; throws htp::PassError naming the problem when malformed.
std::vector<ProgramDecl> programs_from_json(const Json &doc);

} // namespace csp
