// Resolver behaviour on synthetic registries: selection, ordering and explanations.
#include "resolver/resolver.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "component_builder.hpp"

namespace htp {
namespace {

using namespace htp::testing;

Obligation uses(std::string_view text, std::string file = "prog.py", uint32_t line = 1, uint32_t col = 0,
                std::string label = {}) {
  auto o = parse_obligation(text, Span{file, line, col, line, col + 1}, std::move(label));
  if (!o) throw std::runtime_error(o.error().render());
  return *o;
}

/// The base world: target `sim`, a tile dialect and three passes.
std::vector<Component> base_components() {
  return {
      backend("be.sim", {"sim"})
          .provides({"Backend.Sim(variant=cpu)"})
          .accepts({"Uses.Dialect(name=tile)", "Uses.Intrinsic(set=tile)"}),
      binding("bind.sim", {"sim"}).provides({"Binding.Sim"}),
      pipeline("pipe.sim", {"sim"}, {"tile.emit"}),
      dialect("tile", "tile").provides({"Dialect.Tile"}),
      intrinsic_set("tile.ops", "tile", {"add", "mul"}).provides({"Intrinsics.Tile"}),
      pass("tile.canon", PassStage::Canonicalize)
          .applies_to({"Uses.Dialect(name=tile)"})
          .provides({"IR.Canonical"}),
      pass("tile.check", PassStage::Typecheck)
          .applies_to({"Uses.Dialect(name=tile)"})
          .requires_({"IR.Canonical"})
          .provides({"IR.Typed"}),
      pass("tile.emit", PassStage::Emit).requires_({"IR.Typed", "Backend.Sim"}).provides({"Artifact.Cpp"}),
  };
}

class ResolverTest : public ::testing::Test {
protected:
  Resolution resolve(std::vector<Component> extra = {}, ResolveRequest request = {}) {
    std::vector<Component> all = base_components();
    for (auto &c : extra)
      all.push_back(std::move(c));
    registry_ = std::make_unique<Registry>();
    add_all(*registry_, all);
    if (request.target.empty()) request.target = "sim";
    if (request.obligations.empty()) request.obligations.push_back(uses("Uses.Dialect(name=tile)"));
    return htp::resolve(*registry_, request);
  }

  static std::vector<std::string> pass_ids(const Plan &plan) {
    std::vector<std::string> ids;
    for (const auto &p : plan.passes)
      ids.push_back(p.component->id);
    return ids;
  }

  static const Diagnostic *find(const Resolution &r, std::string_view code) {
    for (const auto &d : r.diagnostics.items())
      if (d.code == code) return &d;
    return nullptr;
  }

  static const Derivation *derivation_of(const Plan &plan, std::string_view id) {
    for (const auto &d : plan.derivation)
      if (d.component == id) return &d;
    return nullptr;
  }

  std::unique_ptr<Registry> registry_;
};

TEST_F(ResolverTest, ResolvesBackendBindingPipelineAndApplicablePasses) {
  Resolution r = resolve();
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_EQ(r.plan->backend->id, "be.sim");
  EXPECT_EQ(r.plan->binding->id, "bind.sim");
  EXPECT_EQ(r.plan->pipeline->id, "pipe.sim");
  EXPECT_EQ(pass_ids(*r.plan), (std::vector<std::string>{"tile.canon", "tile.check", "tile.emit"}));
  auto last = r.plan->facts_after(2);
  EXPECT_TRUE(std::count(last.begin(), last.end(), "Artifact.Cpp"));
  EXPECT_TRUE(
      std::count(r.plan->initial_facts.begin(), r.plan->initial_facts.end(), "Target.Selected(name=sim)"));
  const Derivation *d = derivation_of(*r.plan, "tile");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->rule, "obligation");
  EXPECT_EQ(d->span.file, "prog.py");
}

TEST_F(ResolverTest, MissingProviderNamesRequirerAndUnloadedPlugin) {
  ResolveRequest req;
  Component known = pass("prof.collect").provides({"IR.Profile(kind=hot)"}).plugin("profiler", "2.1.0");
  req.known_unloaded.push_back(known);
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Profile(kind=hot)"})},
                         req);
  ASSERT_FALSE(r.ok());
  const Diagnostic *d = find(r, "resolve.unmet");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message, "pass 'tile.opt' (plugin 'plugin-tile.opt' 1.0.0) requires IR.Profile(kind=hot), "
                        "which nothing selected "
                        "provides");
  std::string text = d->render();
  EXPECT_NE(text.find("load plugin 'profiler' 2.1.0 (/plugins/libprofiler.so)"), std::string::npos) << text;
}

// A plugin that was given but failed to load: the hint said to load it with --plugins, the very thing done.
TEST_F(ResolverTest, AProviderWhosePluginFailedToLoadSaysSo) {
  ResolveRequest req;
  Component known = pass("prof.collect").provides({"IR.Profile(kind=hot)"}).plugin("profiler", "2.1.0");
  known.plugin.load_error = "[abi.init-failed], reported when loading";
  req.known_unloaded.push_back(known);
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Profile(kind=hot)"})},
                         req);
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("plugin 'profiler' 2.1.0 (/plugins/libprofiler.so) was given but did not load "
                      "([abi.init-failed], reported when loading); fix that"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("with --plugins"), std::string::npos) << text;
}

TEST_F(ResolverTest, ParameterMismatchNamesTheDifferingKey) {
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Profile(kind=hot)"}),
                          pass("prof.cold").provides({"IR.Profile(kind=cold)"})});
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  EXPECT_NE(
      text.find(
          "pass 'prof.cold' (plugin 'plugin-prof.cold' 1.0.0) provides IR.Profile(kind=cold) — key 'kind' "
          "differs: has kind=cold, required kind=hot"),
      std::string::npos)
      << text;
}

TEST_F(ResolverTest, RequirementPullsInItsOnlyProviderAndOrdersIt) {
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Profile(kind=hot)"}),
                          pass("prof.hot", PassStage::Analyze).provides({"IR.Profile(kind=hot)"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_EQ(pass_ids(*r.plan),
            (std::vector<std::string>{"tile.canon", "prof.hot", "tile.check", "tile.opt", "tile.emit"}));
  const Derivation *d = derivation_of(*r.plan, "prof.hot");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->rule, "requirement");
  EXPECT_EQ(d->required_by, "tile.opt");
  EXPECT_EQ(d->requirement, "IR.Profile(kind=hot)");
}

TEST_F(ResolverTest, HigherPriorityBackendWinsAndTheOtherIsRecorded) {
  Resolution r = resolve(
      {backend("be.fast", {"sim"}, 5).provides({"Backend.Sim(variant=fast)"}).accepts({"Uses.Dialect"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_EQ(r.plan->backend->id, "be.fast");
  const Derivation *d = derivation_of(*r.plan, "be.fast");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->alternatives.size(), 1u);
  EXPECT_EQ(d->alternatives[0].id, "be.sim");
  EXPECT_EQ(d->alternatives[0].verdict, "lower priority (0 < 5)");
}

TEST_F(ResolverTest, EqualPriorityBackendsAreAnErrorNamingBoth) {
  Resolution r = resolve({backend("be.other", {"sim"}).provides({"Backend.Other"})});
  ASSERT_FALSE(r.ok());
  const Diagnostic *d = find(r, "resolve.ambiguous-backend");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message,
            "backends 'be.other', 'be.sim' all support target sim with priority 0; pick one with --backend");
}

TEST_F(ResolverTest, BackendPickDisambiguatesEqualPriority) {
  ResolveRequest req;
  req.backend = "be.sim";
  Resolution r = resolve({backend("be.other", {"sim"}).provides({"Backend.Other"})}, req);
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_EQ(r.plan->backend->id, "be.sim");
  EXPECT_NE(derivation_of(*r.plan, "be.sim")->because.find("--backend"), std::string::npos);
}

TEST_F(ResolverTest, PickedBackendMustSupportTheTarget) {
  ResolveRequest req;
  req.backend = "be.hw";
  Resolution r = resolve({backend("be.hw", {"hw"})}, req);
  const Diagnostic *d = find(r, "resolve.pick-target");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message, "backend 'be.hw' (--backend) does not support target sim");
}

TEST_F(ResolverTest, ExclusiveNamespaceRefusesASecondBackendName) {
  ResolveRequest req;
  req.obligations = {uses("Uses.Dialect(name=tile)"), uses("Uses.Dialect(name=rogue)", "prog.py", 3, 4)};
  Resolution r = resolve({dialect("rogue", "rogue").provides({"Backend.Rogue"})}, req);
  ASSERT_FALSE(r.ok());
  const Diagnostic *d = find(r, "resolve.unmet");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->span.line, 3u);
  std::string text = d->render();
  EXPECT_NE(text.find("dialect 'rogue'"), std::string::npos) << text;
  EXPECT_NE(text.find("backend 'be.sim'"), std::string::npos) << text;
  EXPECT_NE(text.find("namespace Backend is exclusive"), std::string::npos) << text;
}

TEST_F(ResolverTest, RequirementCannotPullASecondBackend) {
  Resolution r = resolve({backend("be.fast", {"sim"}, -1).provides({"Backend.Fast"}),
                          pass("tile.fastpath", PassStage::Lower)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"Backend.Fast"})});
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  EXPECT_NE(
      text.find(
          "backend 'be.fast' (plugin 'plugin-be.fast' 1.0.0) provides it, but a backend is chosen for the "
          "target, never to satisfy a requirement"),
      std::string::npos)
      << text;
}

TEST_F(ResolverTest, ExplicitConflictNamesBothSides) {
  Resolution r = resolve({pass("tile.fast", PassStage::Lower)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .conflicts({"IR.Canonical"})});
  ASSERT_FALSE(r.ok());
  const Diagnostic *d = find(r, "resolve.conflict");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message,
            "pass 'tile.fast' (plugin 'plugin-tile.fast' 1.0.0) conflicts with IR.Canonical, which pass "
            "'tile.canon' (plugin 'plugin-tile.canon' 1.0.0) provides as IR.Canonical");
  ASSERT_EQ(d->notes.size(), 2u);
  EXPECT_NE(d->notes[0].message.find("tile.fast"), std::string::npos);
  EXPECT_NE(d->notes[1].message.find("tile.canon"), std::string::npos);
}

TEST_F(ResolverTest, ConflictDuringTargetSelectionKeepsTheOtherApplicablePasses) {
  Resolution r = resolve(
      {pass("p.bad", PassStage::Lower).applies_to({"Uses.Dialect(name=tile)"}).conflicts({"Backend.Sim"})});
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.render();
  EXPECT_EQ(r.diagnostics.items()[0].code, "resolve.conflict");
  EXPECT_NE(r.diagnostics.items()[0].message.find("pass 'p.bad'"), std::string::npos);
}

TEST_F(ResolverTest, UnmetOptionalRequirementIsAPlanNoteNotADiagnostic) {
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Typed", "?IR.Profile"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics.render();
  ASSERT_EQ(r.plan->notes.size(), 1u);
  EXPECT_EQ(r.plan->notes[0],
            "optional requirement ?IR.Profile of pass 'tile.opt' (plugin 'plugin-tile.opt' 1.0.0) is "
            "not met; it runs without it");
}

TEST_F(ResolverTest, MetOptionalRequirementOrdersItsProviderFirst) {
  Resolution r = resolve(
      {pass("a.user", PassStage::Analyze).applies_to({"Uses.Dialect(name=tile)"}).requires_({"?IR.Profile"}),
       pass("z.prof", PassStage::Analyze).applies_to({"Uses.Dialect(name=tile)"}).provides({"IR.Profile"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  auto ids = pass_ids(*r.plan);
  EXPECT_LT(std::find(ids.begin(), ids.end(), "z.prof"), std::find(ids.begin(), ids.end(), "a.user"));
  EXPECT_TRUE(r.plan->notes.empty());
}

TEST_F(ResolverTest, VersionRangeChoosesTheProviderInside) {
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Lib(version>=1.2,<2)"}),
                          layout("lib.old", "old", {}).provides({"IR.Lib(version=1.1.0)"}),
                          layout("lib.mid", "mid", {}).provides({"IR.Lib(version=1.5.0)"}),
                          layout("lib.new", "new", {}).provides({"IR.Lib(version=2.0.0)"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  auto &cs = r.plan->components;
  EXPECT_TRUE(std::any_of(cs.begin(), cs.end(), [](const Component *c) { return c->id == "lib.mid"; }));
  EXPECT_FALSE(std::any_of(cs.begin(), cs.end(),
                           [](const Component *c) { return c->id == "lib.old" || c->id == "lib.new"; }));
}

TEST_F(ResolverTest, VersionOutsideTheRangeIsExplainedByKey) {
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Lib(version>=1.2,<2)"}),
                          layout("lib.old", "old", {}).provides({"IR.Lib(version=1.1.0)"}),
                          layout("lib.new", "new", {}).provides({"IR.Lib(version=2.0.0)"})});
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("provides IR.Lib(version=1.1.0) — key 'version' differs: has version=1.1.0, required "
                      "version>=1.2,<2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("provides IR.Lib(version=2.0.0) — key 'version' differs"), std::string::npos) << text;
}

TEST_F(ResolverTest, BacktracksWhenTheFirstCandidateDeadEnds) {
  Resolution r = resolve(
      {pass("tile.opt", PassStage::Schedule).applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.Mem"}),
       pass("mem.a", PassStage::Analyze).provides({"IR.Mem"}).requires_({"IR.Nope"}),
       pass("mem.b", PassStage::Analyze).provides({"IR.Mem"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  const Derivation *d = derivation_of(*r.plan, "mem.b");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->alternatives.size(), 1u);
  EXPECT_EQ(d->alternatives[0].id, "mem.a");
  EXPECT_NE(d->alternatives[0].verdict.find("requires IR.Nope"), std::string::npos)
      << d->alternatives[0].verdict;
  EXPECT_EQ(derivation_of(*r.plan, "mem.a"), nullptr);
}

TEST_F(ResolverTest, ThreePassCycleNamesEveryMember) {
  Resolution r =
      resolve({pass("cyc.a").applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.C"}).provides({"IR.A"}),
               pass("cyc.b").applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.A"}).provides({"IR.B"}),
               pass("cyc.c").applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.B"}).provides({"IR.C"})});
  ASSERT_FALSE(r.ok());
  const Diagnostic *d = find(r, "resolve.cycle");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message, "passes 'cyc.a', 'cyc.b' and 'cyc.c' form a cycle and cannot be ordered");
  ASSERT_EQ(d->notes.size(), 3u);
  EXPECT_EQ(d->notes[0].message, "cyc.a -> cyc.b: cyc.b requires IR.A, which cyc.a provides");
}

TEST_F(ResolverTest, ExplicitBeforeAndAfterOrderPasses) {
  Resolution r = resolve(
      {pass("a.first", PassStage::Analyze).applies_to({"Uses.Dialect(name=tile)"}).after({"z.second"}),
       pass("z.second", PassStage::Analyze).applies_to({"Uses.Dialect(name=tile)"}),
       pass("m.mid", PassStage::Analyze).applies_to({"Uses.Dialect(name=tile)"}).before({"a.first"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  auto ids = pass_ids(*r.plan);
  auto pos = [&](const char *id) { return std::find(ids.begin(), ids.end(), id) - ids.begin(); };
  EXPECT_LT(pos("z.second"), pos("a.first"));
  EXPECT_LT(pos("m.mid"), pos("a.first"));
}

TEST_F(ResolverTest, RequirementAgainstStageOrderIsAnError) {
  Resolution r = resolve(
      {pass("early", PassStage::Canonicalize).applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.Late"}),
       pass("late", PassStage::Lower).applies_to({"Uses.Dialect(name=tile)"}).provides({"IR.Late"})});
  const Diagnostic *d = find(r, "resolve.stage-order");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message,
            "pass 'late' (stage lower) would have to run before pass 'early' (stage canonicalize): early "
            "requires IR.Late, which late provides");
}

TEST_F(ResolverTest, InvalidatingPassRunsAfterTheReadersOfItsStage) {
  Resolution r = resolve(
      {pass("a.inval", PassStage::Lower)
           .applies_to({"Uses.Dialect(name=tile)"})
           .invalidates({"IR.Canonical"}),
       pass("z.read", PassStage::Lower).applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.Canonical"})});
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  auto ids = pass_ids(*r.plan);
  auto inval = std::find(ids.begin(), ids.end(), "a.inval") - ids.begin();
  EXPECT_LT(std::find(ids.begin(), ids.end(), "z.read") - ids.begin(), inval);
  auto facts = r.plan->facts_after(static_cast<size_t>(inval));
  EXPECT_FALSE(std::count(facts.begin(), facts.end(), "IR.Canonical"));
  EXPECT_EQ(r.plan->passes[static_cast<size_t>(inval)].removed, std::vector<std::string>{"IR.Canonical"});
}

TEST_F(ResolverTest, RequirementInvalidatedByAnEarlierStageIsReported) {
  Resolution r = resolve(
      {pass("a.inval", PassStage::Analyze)
           .applies_to({"Uses.Dialect(name=tile)"})
           .invalidates({"IR.Canonical"}),
       pass("z.read", PassStage::Lower).applies_to({"Uses.Dialect(name=tile)"}).requires_({"IR.Canonical"})});
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  // tile.check (typecheck) reads it too, after a.inval (analyze).
  EXPECT_NE(
      text.find(
          "pass 'tile.check' requires IR.Canonical, but pass 'a.inval' invalidates IR.Canonical before it "
          "runs [resolve.requirement-order]"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "pass 'z.read' requires IR.Canonical, but pass 'a.inval' invalidates IR.Canonical before it runs "
          "[resolve.requirement-order]"),
      std::string::npos)
      << text;
}

TEST_F(ResolverTest, ObligationNeedsAnIntrinsicSetWithTheOp) {
  ResolveRequest req;
  req.obligations = {uses("Uses.Dialect(name=tile)"),
                     uses("Uses.Intrinsic(set=tile,op=exp)", "k.py", 7, 4, "tile.exp")};
  Resolution r = resolve({}, req);
  const Diagnostic *d = find(r, "resolve.unmet");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->render(),
            "k.py:7:5: error: tile.exp (Uses.Intrinsic(op=exp,set=tile)) needs intrinsic-set 'tile' with op "
            "'exp', which is not loaded [resolve.unmet]\n"
            "  note: nearly: intrinsic-set 'tile.ops' (plugin 'plugin-tile.ops' 1.0.0) has no op 'exp' (it "
            "has: add, mul)");
}

TEST_F(ResolverTest, UnknownTargetListsKnownTargets) {
  ResolveRequest req;
  req.target = "gpu";
  Component known = backend("be.gpu", {"gpu"}).plugin("backend-gpu");
  req.known_unloaded.push_back(known);
  Resolution r = resolve({backend("be.hw", {"hw"})}, req);
  const Diagnostic *d = find(r, "resolve.unknown-target");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message, "unknown target 'gpu'; known targets: hw, sim");
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_NE(d->notes[0].message.find("--plugins /plugins/libbackend-gpu.so"), std::string::npos);
}

TEST_F(ResolverTest, ExplicitPassListReplacesThePipeline) {
  ResolveRequest req;
  req.passes = std::vector<std::string>{"tile.canon", "tile.check"};
  Resolution r = resolve({}, req);
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  EXPECT_EQ(r.plan->pipeline, nullptr);
  EXPECT_EQ(pass_ids(*r.plan), (std::vector<std::string>{"tile.canon", "tile.check"}));
}

TEST_F(ResolverTest, ExplicitPassListOutOfOrderIsAnError) {
  ResolveRequest req;
  req.passes = std::vector<std::string>{"tile.check", "tile.canon"};
  Resolution r = resolve({}, req);
  ASSERT_FALSE(r.ok());
  std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("the explicit pass list runs 'tile.check' (stage typecheck) before 'tile.canon' (stage "
                      "canonicalize)"),
            std::string::npos)
      << text;
}

TEST_F(ResolverTest, MalformedCapabilityTextIsReportedWithItsColumn) {
  Resolution r = resolve({pass("bad.pass").provides({"IR.(x)"})});
  const Diagnostic *d = find(r, "capability.syntax");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message,
            "malformed capability 'IR.(x)' in provides of pass 'bad.pass' (plugin 'plugin-bad.pass') at "
            "column 3: expected a name after '.', found '('");
}

TEST_F(ResolverTest, PipelineListingAnUnloadedPassNamesItsPlugin) {
  ResolveRequest req;
  Component known = pass("tile.emit2").plugin("backend-extra", "0.3.0");
  req.known_unloaded.push_back(known);
  std::vector<Component> extra = {pipeline("pipe.extra", {"hw"}, {"tile.emit2"}), backend("be.hw", {"hw"}),
                                  binding("bind.hw", {"hw"})};
  req.target = "hw";
  Resolution r = resolve(extra, req);
  const Diagnostic *d = find(r, "resolve.unknown-pass");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->message, "pipeline 'pipe.extra' lists pass 'tile.emit2', which is not loaded");
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_EQ(d->notes[0].message,
            "pass 'tile.emit2' — not loaded; load plugin 'backend-extra' 0.3.0 "
            "(/plugins/libbackend-extra.so) with --plugins /plugins/libbackend-extra.so");
}

TEST_F(ResolverTest, UnknownBackendPickListsTheCandidates) {
  ResolveRequest req;
  req.backend = "be.nope";
  Resolution r = resolve({}, req);
  const Diagnostic *d = find(r, "resolve.unknown-pick");
  ASSERT_NE(d, nullptr) << r.diagnostics.render();
  EXPECT_EQ(d->render(), "error: --backend 'be.nope' is not a loaded backend [resolve.unknown-pick]\n"
                         "  note: backends for target sim: 'be.sim'");
}

/// A backend pick that fails is the one error: without a backend nothing accepts the program's obligations,
/// and a resolve.unaccepted per line of the program (each saying another target's backend accepts it) buried
/// the reason.
TEST_F(ResolverTest, AFailedBackendPickIsTheOnlyError) {
  ResolveRequest req;
  req.backend = "be.nope";
  req.obligations = {uses("Uses.Dialect(name=tile)", "prog.py", 3, 0), uses("Uses.Intrinsic(set=tile,op=add)", "prog.py", 4, 0)};
  Resolution r = resolve({}, req);
  std::vector<std::string> codes;
  for (const auto &d : r.diagnostics.items())
    codes.push_back(d.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"resolve.unknown-pick"})) << r.diagnostics.render();
}

TEST_F(ResolverTest, IndependentFailuresAreAllReported) {
  ResolveRequest req;
  req.obligations = {uses("Uses.Dialect(name=tile)"), uses("Uses.Dialect(name=ghost)", "prog.py", 9, 0)};
  Resolution r = resolve({pass("tile.opt", PassStage::Schedule)
                              .applies_to({"Uses.Dialect(name=tile)"})
                              .requires_({"IR.Missing"})},
                         req);
  std::vector<std::string> codes;
  for (const auto &d : r.diagnostics.items())
    codes.push_back(d.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"resolve.unmet", "resolve.unmet", "resolve.unaccepted"}))
      << r.diagnostics.render();
}

/// The example of the architecture document: an intrinsic accepted by another target's backend.
TEST(ResolverAcceptance, UnacceptedObligationIsReportedAtItsSpan) {
  Registry registry;
  add_all(registry, {backend("backend-pto", {"pto-a2a3sim", "pto-a2a3"}).accepts({"Uses.Intrinsic(set=pto)"}),
                     backend("backend-aie", {"aie-npu1", "aie-npu2"}).accepts({"Uses.Intrinsic(set=aie)"}),
                     binding("binding-aie", {"aie-npu1", "aie-npu2"}),
                     intrinsic_set("pto.intrinsics", "pto", {"add", "matmul"})});
  ResolveRequest req;
  req.target = "aie-npu1";
  auto o =
      parse_obligation("Uses.Intrinsic(set=pto, op=add)", Span{"vector_add.py", 12, 7, 12, 14}, "pto.add");
  ASSERT_TRUE(o.ok());
  req.obligations.push_back(*o);
  Resolution r = resolve(registry, req);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.render();
  EXPECT_EQ(
      r.diagnostics.items()[0].render(),
      "vector_add.py:12:8: error: pto.add is not accepted by target aie-npu1 — no selected component accepts "
      "Uses.Intrinsic(op=add,set=pto); backend-pto accepts it for pto-a2a3sim, pto-a2a3 "
      "[resolve.unaccepted]");
}

} // namespace
} // namespace htp
