// The dialect-wsp scanner: what a program uses, each with the span that caused it, so a backend that
// cannot honour a directive is rejected at resolve time at that directive.
#include "passes.hpp"
#include "program.hpp"
#include "schedule.hpp"

namespace wsp {

namespace {

/// A workload that declares channels runs its `with P.pipe():` scope as a CSP network (dialect-csp builds
/// and checks it): the obligations a CSP program raises, so that a target that cannot run channels is
/// rejected at resolve time.
void scan_pipe_channels(htp::PassContext &ctx, htp::NodeRef w) {
  bool channels = false;
  for (auto stmt : w.items("body")) {
    htp::NodeRef v = stmt.is("Assign") ? stmt.child("value") : htp::NodeRef();
    std::string kind = channel_kind(v);
    if (kind.empty()) continue;
    ctx.add_obligation("Uses.Channel(kind=" + kind + ")", v);
    channels = true;
  }
  if (!channels) return;
  htp::NodeRef at = w; // without a pipe scope dialect-csp still runs, to say that one is missing
  for (auto stmt : w.items("body"))
    if (stmt.is("With") && stmt.size("items") == 1 &&
        surface_name(stmt.item("items", 0).child("context_expr").child("func")) == "P.pipe")
      at = stmt;
  ctx.add_obligation("Uses.Dialect(name=csp)", at);
}

} // namespace

void scan(htp::PassContext &ctx) {
  auto m = ctx.module();
  for (auto w : workloads(m)) {
    ctx.add_obligation("Uses.Dialect(name=wsp)", w);
    scan_pipe_channels(ctx, w);
  }
  for (auto s : schedules(m)) {
    ctx.add_obligation("Uses.Dialect(name=wsp)", s); // a schedule alone still needs the wsp passes
    for (auto stmt : s.items("body"))
      if (auto d = directive_of(stmt)) ctx.add_obligation(obligation_of(*d), d->call);
  }
}

} // namespace wsp
