#include "program_model.hpp"

namespace csp {

const ChannelDecl *ProgramDecl::channel(const std::string &n) const {
  for (const auto &c : channels)
    if (c.name == n) return &c;
  return nullptr;
}

ProcessDecl *ProgramDecl::process(const std::string &n) {
  for (auto &p : processes)
    if (p.name == n) return &p;
  return nullptr;
}

const Json *ProgramDecl::param(const std::string &n) const {
  for (const auto &p : params)
    if (p.value("name", "") == n) return &p;
  return nullptr;
}

Json programs_to_json(const std::vector<ProgramDecl> &programs) {
  Json out = Json::array();
  for (const auto &p : programs) {
    Json channels = Json::array(), processes = Json::array();
    for (const auto &c : p.channels)
      channels.push_back({{"name", c.name},
                          {"kind", c.kind},
                          {"elem", c.elem},
                          {"depth", c.depth},
                          {"pack", c.pack},
                          {"span", c.span}});
    for (const auto &q : p.processes)
      processes.push_back({{"name", q.name},
                           {"function", q.function},
                           {"replicas", q.replicas},
                           {"produces", q.produces},
                           {"consumes", q.consumes},
                           {"args", q.args},
                           {"span", q.span},
                           {"counts", q.counts},
                           {"stage", q.stage}});
    Json links = Json::array();
    for (const auto &l : p.links)
      links.push_back(
          {{"name", l.name}, {"from", l.from}, {"to", l.to}, {"mode", l.mode()}, {"span", l.span}});
    out.push_back({{"name", p.name},
                   {"origin", p.origin},
                   {"span", p.span},
                   {"params", p.params},
                   {"channels", channels},
                   {"processes", processes},
                   {"links", links}});
  }
  return Json{{"schema", kProgramsSchema}, {"programs", out}};
}

std::vector<ProgramDecl> programs_from_json(const Json &doc) {
  if (!doc.is_object() || doc.value("schema", "") != kProgramsSchema)
    throw htp::PassError(std::string("module attribute ") + kProgramsAttr + " is not an " + kProgramsSchema +
                         " document");
  std::vector<ProgramDecl> out;
  try {
    for (const auto &p : doc.at("programs")) {
      ProgramDecl d;
      d.name = p.at("name");
      d.origin = p.at("origin");
      d.span = p.at("span");
      d.params = p.at("params");
      for (const auto &c : p.at("channels"))
        d.channels.push_back(
            {c.at("name"), c.at("kind"), c.at("elem"), c.at("depth"), c.at("pack"), c.at("span")});
      for (const auto &q : p.at("processes")) {
        ProcessDecl pd;
        pd.name = q.at("name");
        pd.function = q.at("function");
        pd.replicas = q.at("replicas");
        pd.produces = q.at("produces").get<std::vector<std::string>>();
        pd.consumes = q.at("consumes").get<std::vector<std::string>>();
        pd.args = q.at("args");
        pd.span = q.at("span");
        pd.counts = q.at("counts");
        pd.stage = q.at("stage");
        d.processes.push_back(std::move(pd));
      }
      for (const auto &l : p.at("links"))
        d.links.push_back({l.at("name"), l.at("from").get<std::vector<std::string>>(),
                           l.at("to").get<std::vector<std::string>>(), l.at("span")});
      out.push_back(std::move(d));
    }
  } catch (const Json::exception &e) {
    throw htp::PassError(std::string("malformed ") + kProgramsAttr + ": " + e.what());
  }
  return out;
}

} // namespace csp
