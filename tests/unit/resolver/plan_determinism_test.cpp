// The same components in any registration order resolve to a byte-identical plan.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "component_builder.hpp"
#include "resolver/plan_dot.hpp"
#include "resolver/resolver.hpp"

namespace htp {
namespace {

using namespace htp::testing;

/// A world that exercises every rule: priorities, a template, applies-to chains, a requirement with
/// two providers (one dead end), version ranges, invalidation, before/after and optional requirements.
std::vector<Component> world() {
  std::vector<Component> cs = {
      backend("be.main", {"t1", "t2"}, 2)
          .plugin("backend-main")
          .provides({"Backend.Main(variant=t1)"})
          .accepts({"Uses.Dialect", "Uses.Intrinsic(set=core)", "Uses.Layout(kind=grid)"}),
      backend("be.slow", {"t1"}, 1).provides({"Backend.Slow"}),
      binding("bind.main", {"t1"}).provides({"Binding.Main"}),
      pipeline("pipe.main", {"t1"}, {"emit.main", "pack.main"}).plugin("backend-main"),
      pipeline("pipe.other", {"t1"}, {"emit.main"}).plugin("other"),
      dialect("d.graph", "graph").provides({"Dialect.Graph"}),
      dialect("d.proc", "proc").provides({"Dialect.Proc"}).requires_({"?Layout.Grid"}),
      intrinsic_set("i.core", "core", {"add", "mul", "exp"}).provides({"Intrinsics.Core(version=1.4.0)"}),
      layout("l.grid", "grid", {"dist", "mem"}).provides({"Layout.Grid"}),
      pass("emit.main", PassStage::Emit)
          .requires_({"IR.Lowered", "Backend.Main"})
          .provides({"Artifact.Main"}),
      pass("pack.main", PassStage::Package).requires_({"Artifact.Main"}).provides({"Package.Main"}),
      pass("g.canon", PassStage::Canonicalize)
          .applies_to({"Uses.Dialect(name=graph)"})
          .provides({"IR.Canon"}),
      pass("g.build", PassStage::Analyze)
          .applies_to({"Uses.Dialect(name=graph)"})
          .requires_({"IR.Canon", "IR.Mem"})
          .provides({"IR.TaskGraph(version=2.1.0)"}),
      pass("g.sched", PassStage::Schedule)
          .applies_to({"IR.TaskGraph"})
          .requires_({"IR.TaskGraph(version>=2,<3)", "?IR.Profile"})
          .provides({"IR.Scheduled"}),
      pass("g.lower", PassStage::Lower)
          .applies_to({"IR.Scheduled"})
          .requires_({"IR.Scheduled"})
          .provides({"IR.Lowered"})
          .invalidates({"IR.TaskGraph"}),
      pass("g.verify", PassStage::Lower)
          .applies_to({"IR.Scheduled"})
          .requires_({"IR.TaskGraph"})
          .before({"g.lower"}),
      pass("mem.fast", PassStage::Analyze).provides({"IR.Mem"}).requires_({"IR.Never"}),
      pass("mem.safe", PassStage::Analyze).provides({"IR.Mem"}),
      pass("p.proc", PassStage::Analyze).applies_to({"Uses.Dialect(name=proc)"}).provides({"IR.Channels"}),
      pass("p.check", PassStage::Typecheck)
          .applies_to({"Uses.Dialect(name=proc)"})
          .requires_({"IR.Channels", "Intrinsics.Core(version=^1.2)"})
          .after({"g.build"}),
      pass("unused.pass", PassStage::Analyze).applies_to({"Uses.Dialect(name=none)"}),
  };
  return cs;
}

ResolveRequest determinism_request() {
  ResolveRequest r;
  r.target = "t1";
  for (const char *text : {"Uses.Dialect(name=graph)", "Uses.Dialect(name=proc)",
                           "Uses.Intrinsic(set=core,op=add)", "Uses.Layout(kind=grid,facet=dist)"}) {
    auto o = parse_obligation(text, Span{"prog.py", 3, 4, 3, 9});
    EXPECT_TRUE(o.ok());
    r.obligations.push_back(*o);
  }
  return r;
}

struct Rendered {
  std::string json, dot, explain;
};

Rendered resolve_in_order(const std::vector<Component> &components) {
  Registry registry;
  add_all(registry, components);
  Resolution r = resolve(registry, determinism_request());
  EXPECT_TRUE(r.ok()) << r.diagnostics.render();
  if (!r.ok()) return {};
  return {r.plan->to_json_text(), plan_to_dot(*r.plan), r.plan->explain()};
}

TEST(PlanDeterminism, ShuffledRegistrationGivesByteIdenticalPlan) {
  std::vector<Component> components = world();
  Rendered reference = resolve_in_order(components);
  ASSERT_FALSE(reference.json.empty());
  std::mt19937 rng(20261121);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(components.begin(), components.end(), rng);
    Rendered again = resolve_in_order(components);
    EXPECT_EQ(again.json, reference.json) << "round " << round;
    EXPECT_EQ(again.dot, reference.dot) << "round " << round;
    EXPECT_EQ(again.explain, reference.explain) << "round " << round;
  }
}

TEST(PlanDeterminism, ShuffledRegistrationGivesTheSameDiagnostics) {
  std::vector<Component> components = world();
  components.push_back(
      pass("x.cyc1").applies_to({"Uses.Dialect(name=graph)"}).requires_({"IR.X2"}).provides({"IR.X1"}));
  components.push_back(
      pass("x.cyc2").applies_to({"Uses.Dialect(name=graph)"}).requires_({"IR.X1"}).provides({"IR.X2"}));
  components.push_back(pass("x.need").applies_to({"Uses.Dialect(name=proc)"}).requires_({"IR.Absent(k=1)"}));
  auto render = [](const std::vector<Component> &cs) {
    Registry registry;
    add_all(registry, cs);
    return resolve(registry, determinism_request()).diagnostics.render();
  };
  std::string reference = render(components);
  EXPECT_NE(reference.find("resolve.unmet"), std::string::npos) << reference;
  std::mt19937 rng(7);
  for (int round = 0; round < 10; ++round) {
    std::shuffle(components.begin(), components.end(), rng);
    EXPECT_EQ(render(components), reference) << "round " << round;
  }
}

TEST(PlanDeterminism, PlanDocumentHasTheV1Shape) {
  Registry registry;
  add_all(registry, world());
  Resolution r = resolve(registry, determinism_request());
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  nlohmann::ordered_json j = r.plan->to_json();
  EXPECT_EQ(j["schema"], "htp.plan.v1");
  EXPECT_EQ(j["target"], "t1");
  EXPECT_EQ(j["backend"], "be.main");
  EXPECT_EQ(j["pipeline"], "pipe.main");
  std::vector<std::string> order;
  for (const auto &p : j["passes"])
    order.push_back(p["id"]);
  EXPECT_EQ(order, (std::vector<std::string>{"g.canon", "mem.safe", "g.build", "p.proc", "p.check", "g.sched",
                                             "g.verify", "g.lower", "emit.main", "pack.main"}));
  for (const auto &p : j["passes"])
    EXPECT_TRUE(p.contains("facts_after"));
  const auto &lower = j["passes"][7];
  EXPECT_EQ(lower["removed"], nlohmann::ordered_json::array({"IR.TaskGraph(version=2.1.0)"}));
  bool found = false;
  for (const auto &d : j["derivation"])
    if (d["component"] == "mem.safe") {
      found = true;
      EXPECT_EQ(d["rule"], "requirement");
      EXPECT_EQ(d["required_by"], "g.build");
      ASSERT_EQ(d["alternatives"].size(), 1u);
      EXPECT_EQ(d["alternatives"][0]["id"], "mem.fast");
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(j["components"][0]["plugin"]["sha256"], "sha-d.graph");
}

} // namespace
} // namespace htp
