// The dialect scanner: what a program uses, with the spans that caused it.
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
      htp::NodeRef v = s.child("value");
      if (is_call_of(v, "Event"))
        ctx.add_obligation("Uses.Channel(kind=event)", v);
      else if (v.is("Call") && v.child("func").is("Subscript") &&
               surface_name(v.child("func").child("value")) == "Channel")
        ctx.add_obligation("Uses.Channel(kind=fifo)", v);
    }
    // Process bodies are tile bodies: the tile dialect types and lowers them.
    if (has_process) ctx.add_obligation("Uses.Dialect(name=tile)", stmt);
  }
}

} // namespace csp
