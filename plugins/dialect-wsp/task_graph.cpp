// The passes that turn workloads and schedules into the module attribute `wsp.task_graph`
// (htp.wsp.task_graph.v1, docs/dialects/wsp.md): each workload is lowered once (wsp.typecheck) into
// the node attribute `wsp.workload`, its schedule attached as `wsp.schedule`, and the graph assembled and
// checked with the SDK's reader (htp/wsp_task_graph.hpp), the one every backend reads it with.
#include <htp/wsp_task_graph.hpp>

#include "passes.hpp"
#include "schedule.hpp"
#include "workload_lowering.hpp"

#include <map>

namespace wsp {

namespace {

constexpr const char *kWorkloadAttr = "wsp.workload";
constexpr const char *kScheduleAttr = "wsp.schedule";

/// The workload a schedule function names in `@schedule(w)`; throws WspError when it names none.
htp::NodeRef scheduled_workload(htp::NodeRef schedule, const htp::ModuleRef &m) {
  htp::NodeRef deco = schedule_decorator(schedule);
  if (!deco || deco.size("args") != 1)
    throw WspError(deco ? deco : schedule, "wsp.schedule",
                   "a schedule names the workload it schedules: @schedule(w)");
  htp::NodeRef target = deco.item("args", 0);
  htp::NodeRef w = target.is("Name") ? function_named(m, *target.text("id")) : htp::NodeRef();
  if (!w || !is_captured(w, "wsp", "workload"))
    throw WspError(target, "wsp.schedule",
                   "@schedule(...) names a @workload function of this program; " + describe(target) +
                       " is not one");
  return w;
}

} // namespace

void typecheck(htp::PassContext &ctx) {
  for (auto w : workloads(ctx.module()))
    if (auto entry = lower_workload(w, ctx)) w.set_attr(kWorkloadAttr, entry->dump(), ctx.diag());
}

void attach_schedules(htp::PassContext &ctx) {
  auto m = ctx.module();
  std::map<std::string, std::string> attached; // workload -> its schedule
  for (auto s : schedules(m)) {
    try {
      htp::NodeRef w = scheduled_workload(s, m);
      std::string wname = *w.text("name"), sname = *s.text("name");
      if (auto it = attached.find(wname); it != attached.end())
        throw WspError(schedule_decorator(s), "wsp.schedule",
                       "workload '" + wname + "' already has the schedule '" + it->second +
                           "'; a workload has one schedule");
      auto entry = w.attr(kWorkloadAttr);
      if (!entry)
        throw WspError(s, "wsp.internal", "workload '" + wname + "' was not lowered by wsp.typecheck");
      if (json::parse(*entry).contains("channels"))
        throw WspError(schedule_decorator(s), "wsp.schedule",
                       "workload '" + wname +
                           "' declares channels: its P.pipe runs as a CSP network (csp.graph), which a "
                           "schedule does not apply to");
      if (auto sched = lower_schedule(s, json::parse(*entry), ctx)) {
        (*sched)["name"] = sname;
        w.set_attr(kScheduleAttr, sched->dump(), ctx.diag());
        attached[wname] = sname;
      }
    } catch (const WspError &e) {
      report(ctx, e);
    }
  }
}

void build_task_graph(htp::PassContext &ctx) {
  json doc = {{"schema", htp::kWspTaskGraphSchema}, {"workloads", json::array()}};
  for (auto w : workloads(ctx.module())) {
    auto entry = w.attr(kWorkloadAttr);
    if (!entry) {
      ctx.error(w, "wsp.internal", "workload '" + *w.text("name") + "' was not lowered by wsp.typecheck");
      continue;
    }
    json workload = json::parse(*entry);
    if (workload.contains("channels"))
      continue; // a pipe over channels: dialect-csp publishes it in csp.graph
    auto sched = w.attr(kScheduleAttr);
    workload["schedule"] = sched ? json::parse(*sched) : json{{"name", nullptr}, {"span", nullptr}};
    doc["workloads"].push_back(std::move(workload));
  }
  try {
    (void)htp::read_wsp_task_graph(doc);
  } catch (const htp::IrDocumentError &e) {
    const std::string file = ctx.module().file();
    htp::Host(ctx.api()).error(ctx.diag(), "wsp.internal",
                               std::string("wsp.build-task-graph built an invalid wsp.task_graph (a dialect-wsp bug): ") +
                                   e.what(),
                               e.span() ? e.span()->source_span(file) : htp::SourceSpan{file});
    return;
  }
  ctx.module().set_attr(htp::kWspTaskGraphAttribute, doc.dump());
}

} // namespace wsp
