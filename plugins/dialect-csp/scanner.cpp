// The dialect scanner: what a program uses, with the spans that caused it. (The obligations of a WSP
// workload's P.pipe over channels are raised by dialect-wsp's scanner, which owns that surface.)
#include "passes.hpp"
#include "surface.hpp"

namespace csp {

void scan(htp::PassContext &ctx) {
  for (auto stmt : ctx.module().root().items("body")) {
    bool program = is_csp_function(stmt, "program");
    if (!program && !is_csp_function(stmt, "process")) continue;
    ctx.add_obligation("Uses.Dialect(name=csp)", stmt);
    if (!program) continue;
    bool has_process = false;
    for (auto s : stmt.items("body")) {
      if (s.is("FunctionDef")) has_process = true;
      if (!s.is("Assign")) continue;
      if (std::string kind = channel_kind(s.child("value")); !kind.empty())
        ctx.add_obligation("Uses.Channel(kind=" + kind + ")", s.child("value"));
    }
    // Process bodies are tile bodies: the tile dialect types and lowers them.
    if (has_process) ctx.add_obligation("Uses.Dialect(name=tile)", stmt);
  }
}

} // namespace csp
