// csp.build-graph: the published process/channel graph (htp.csp.graph.v1, docs/dialects/csp.md), checked
// with the SDK's reader (htp/csp_graph.hpp), the one every backend reads it with.
#include <htp/csp_graph.hpp>

#include "passes.hpp"
#include "program_model.hpp"
#include "types.hpp"

#include <algorithm>

namespace csp {

namespace {

/// Values the tile dialect typed (tile.type) must have the element type of the channel they are sent on.
int check_sent_types(htp::PassContext &ctx, const ProgramDecl &program) {
  int errors = 0;
  for (const auto &p : program.processes) {
    htp::NodeRef fn = find_function(ctx.module(), p.function);
    if (!fn) throw htp::PassError("process function '" + p.function + "' is missing from the module");
    fn.walk([&](htp::NodeRef n) {
      auto op = node_json(n, kOpAttr);
      if (!op || (*op)["op"] != "send" || n.size("args") != 1) return;
      const ChannelDecl *c = program.channel((*op)["channel"]);
      auto type = node_json(n.item("args", 0), "tile.type");
      if (!c || !c->elem.is_object() || !type || !type->is_object()) return;
      Json t = *type;
      // (a channel of Tensor[R, C] items carries the Tile[R, C] a process computes: received_type)
      const Json want = received_type(c->elem);
      auto same = [&](const Json &e) {
        return t.value("kind", "") == e.value("kind", "") && t.value("shape", Json()) == e["shape"] &&
               t.value("dtype", "") == e.value("dtype", "");
      };
      if (!same(c->elem) && !same(want)) {
        ctx.error(n, "csp.type-mismatch",
                  "process '" + p.name + "' sends a value of type " + type_text(t) + " on channel '" +
                      c->name + "', which carries " + type_text(c->elem));
        ++errors;
      }
    });
  }
  return errors;
}

Json graph_of(const ProgramDecl &program) {
  Json channels = Json::array(), processes = Json::array();
  for (const auto &c : program.channels) {
    Json producers = Json::array(), consumers = Json::array();
    for (const auto &p : program.processes) {
      if (std::count(p.produces.begin(), p.produces.end(), c.name)) producers.push_back(p.name);
      if (std::count(p.consumes.begin(), p.consumes.end(), c.name)) consumers.push_back(p.name);
    }
    for (const auto &l : program.links) {
      if (std::count(l.to.begin(), l.to.end(), c.name)) producers.push_back(l.name);
      if (std::count(l.from.begin(), l.from.end(), c.name)) consumers.push_back(l.name);
    }
    channels.push_back({{"name", c.name},
                        {"kind", c.kind},
                        {"elem", c.elem},
                        {"depth", c.depth},
                        {"pack", c.pack},
                        {"producers", producers},
                        {"consumers", consumers},
                        {"span", c.span}});
  }
  for (const auto &p : program.processes)
    processes.push_back({{"name", p.name},
                         {"replicas", p.replicas},
                         {"function", p.function},
                         {"span", p.span},
                         {"produces", p.produces},
                         {"consumes", p.consumes},
                         {"args", p.args},
                         {"counts", p.counts}});
  Json links = Json::array();
  for (const auto &l : program.links)
    links.push_back({{"name", l.name}, {"from", l.from}, {"to", l.to}, {"mode", l.mode()}, {"span", l.span}});
  return {{"name", program.name}, {"span", program.span},   {"params", program.params},
          {"channels", channels}, {"processes", processes}, {"links", links}};
}

/// A stream loop of a stage (`for t in consume(ch)`, domain {"type": "stream"}) iterates as many times as
/// the stage receives from the channel.
void resolve_streams(Json &node, const Json &counts) {
  if (node.is_array()) {
    for (auto &n : node)
      resolve_streams(n, counts);
    return;
  }
  if (!node.is_object()) return;
  if (node.value("kind", "") == "loop" && node["domain"].value("type", "") == "stream") {
    std::string ch = node["domain"].value("channel", "");
    node["domain"] = Json{{"type", "seq"}, {"extent", counts.at(ch).at("get")}};
  }
  for (const char *key : {"body", "then", "else"})
    if (node.contains(key)) resolve_streams(node[key], counts);
}

/// The stages of a pipe program as dialect-wsp lowered them (node attribute `wsp.workload` of the
/// workload, docs/dialects/wsp.md): the nodes of its `group` of order `pipeline`, one per stage, each
/// stored as the `stage` of its process.
void attach_stages(htp::PassContext &ctx, const ProgramDecl &program, Json &graph) {
  htp::NodeRef fn = find_function(ctx.module(), program.name);
  auto lowered = fn ? node_json(fn, "wsp.workload") : std::nullopt;
  if (!lowered)
    throw htp::PassError(
        "workload '" + program.name +
        "' has no node attribute wsp.workload: dialect-wsp's wsp.typecheck did not lower it");
  const Json body = lowered->value("body", Json::array());
  const Json *group = nullptr;
  for (const auto &n : body)
    if (n.value("kind", "") == "group" && n.value("order", "") == "pipeline") group = &n;
  if (!group || (*group)["body"].size() != program.processes.size())
    throw htp::PassError("the lowering of workload '" + program.name + "' has no pipe group of " +
                         std::to_string(program.processes.size()) + " stages");
  graph["origin"] = program.origin;
  for (size_t i = 0; i < program.processes.size(); ++i) {
    const ProcessDecl &p = program.processes[i];
    Json stage = (*group)["body"].at(static_cast<size_t>(p.stage));
    resolve_streams(stage, p.counts);
    graph["processes"][i]["stage"] = std::move(stage);
  }
}

} // namespace

void build_graph(htp::PassContext &ctx) {
  auto m = ctx.module();
  auto doc = module_json(m, kProgramsAttr);
  if (!doc)
    throw htp::PassError(std::string("module attribute ") + kProgramsAttr +
                         " is missing: csp.canonicalize did not run");
  std::vector<ProgramDecl> programs = programs_from_json(*doc);
  int errors = 0;
  for (const auto &p : programs)
    errors += check_sent_types(ctx, p);
  if (errors) return; // reported: the pass fails
  Json out = Json::array();
  for (const auto &p : programs) {
    Json g = graph_of(p);
    if (p.origin == "wsp.pipe") attach_stages(ctx, p, g);
    out.push_back(std::move(g));
  }
  const Json graph = {{"schema", htp::kCspGraphSchema}, {"programs", out}};
  try {
    (void)htp::read_csp_graph(graph);
  } catch (const htp::IrDocumentError &e) {
    const std::string file = m.file();
    htp::Host(ctx.api()).error(ctx.diag(), "csp.internal",
                               std::string("csp.build-graph built an invalid csp.graph (a dialect-csp bug): ") + e.what(),
                               e.span() ? e.span()->source_span(file) : htp::SourceSpan{file});
    return;
  }
  m.set_attr(htp::kCspGraphAttribute, graph.dump());
}

} // namespace csp
