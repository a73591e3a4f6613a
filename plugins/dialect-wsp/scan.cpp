// The dialect-wsp scanner: what a program uses, each with the span that caused it, so a backend that
// cannot honour a directive is rejected at resolve time at that directive.
#include "passes.hpp"
#include "program.hpp"
#include "schedule.hpp"

namespace wsp {

void scan(htp::PassContext &ctx) {
  auto m = ctx.module();
  for (auto w : workloads(m))
    ctx.add_obligation("Uses.Dialect(name=wsp)", w);
  for (auto s : schedules(m)) {
    ctx.add_obligation("Uses.Dialect(name=wsp)", s); // a schedule alone still needs the wsp passes
    for (auto stmt : s.items("body"))
      if (auto d = directive_of(stmt)) ctx.add_obligation(obligation_of(*d), d->call);
  }
}

} // namespace wsp
