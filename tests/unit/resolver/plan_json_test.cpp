// Plan::to_json_text() writes the document directly; it must stay byte-identical to the document the
// plan was first defined by: an nlohmann::ordered_json tree printed with dump(2) (the reference below is
// that former implementation, facts_after rebuilt from a std::set for every pass).
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "component_builder.hpp"
#include "diag/diagnostic_json.hpp"
#include "resolver/plan.hpp"
#include "resolver/resolver.hpp"

namespace htp {
namespace {

using namespace htp::testing;

nlohmann::ordered_json reference_component_ref(const Component *c) {
  if (!c) return nullptr;
  return c->id;
}

nlohmann::ordered_json reference_component_json(const Component &c) {
  nlohmann::ordered_json j;
  j["kind"] = component_kind_name(c.kind);
  j["id"] = c.id;
  j["version"] = c.version;
  j["plugin"] = {{"name", c.plugin.name}, {"version", c.plugin.version}, {"sha256", c.plugin.sha256}};
  return j;
}

/// The former Plan::to_json().
nlohmann::ordered_json reference_json(const Plan &plan) {
  nlohmann::ordered_json j;
  j["schema"] = kPlanSchema;
  j["target"] = plan.target;
  j["backend"] = reference_component_ref(plan.backend);
  j["binding"] = reference_component_ref(plan.binding);
  j["pipeline"] = reference_component_ref(plan.pipeline);
  auto &obs = j["obligations"] = nlohmann::ordered_json::array();
  for (const PlannedObligation &o : plan.obligations) {
    nlohmann::ordered_json oj;
    oj["capability"] = to_string(o.obligation.capability);
    oj["label"] = o.obligation.display();
    oj["span"] = span_to_json(o.obligation.span);
    oj["accepted_by"] = o.accepted_by;
    obs.push_back(std::move(oj));
  }
  auto &comps = j["components"] = nlohmann::ordered_json::array();
  for (const Component *c : plan.components)
    comps.push_back(reference_component_json(*c));
  j["initial_facts"] = plan.initial_facts;
  auto &ps = j["passes"] = nlohmann::ordered_json::array();
  std::set<std::string> facts(plan.initial_facts.begin(), plan.initial_facts.end());
  for (const PlannedPass &p : plan.passes) {
    for (const auto &f : p.removed)
      facts.erase(f);
    for (const auto &f : p.added)
      facts.insert(f);
    nlohmann::ordered_json pj;
    pj["id"] = p.component->id;
    pj["version"] = p.component->version;
    pj["stage"] = pass_stage_name(p.component->stage);
    pj["plugin"] = p.component->plugin.name;
    auto &after = pj["after"] = nlohmann::ordered_json::array();
    for (const PassPredecessor &a : p.after)
      after.push_back({{"id", a.id}, {"reason", a.reason}});
    pj["added"] = p.added;
    pj["removed"] = p.removed;
    pj["facts_after"] = std::vector<std::string>(facts.begin(), facts.end());
    ps.push_back(std::move(pj));
  }
  auto &der = j["derivation"] = nlohmann::ordered_json::array();
  for (const Derivation &d : plan.derivation) {
    nlohmann::ordered_json dj;
    dj["component"] = d.component;
    dj["kind"] = d.kind;
    dj["rule"] = d.rule;
    dj["because"] = d.because;
    dj["requirement"] =
        d.requirement.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.requirement);
    dj["required_by"] =
        d.required_by.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.required_by);
    dj["span"] = span_to_json(d.span);
    auto &alts = dj["alternatives"] = nlohmann::ordered_json::array();
    for (const PlanAlternative &a : d.alternatives)
      alts.push_back({{"id", a.id}, {"kind", a.kind}, {"verdict", a.verdict}});
    der.push_back(std::move(dj));
  }
  j["notes"] = plan.notes;
  return j;
}

std::string reference_text(const Plan &plan) {
  return reference_json(plan).dump(2) + "\n";
}

/// Random plans over adversarial text: facts with quotes, backslashes, control characters and UTF-8;
/// passes adding facts already present and removing facts never added; empty lists; spans or none.
class RandomPlans {
public:
  explicit RandomPlans(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 40; ++i) {
      Component c = pass("p" + std::to_string(i) + pick({"", ".\xC3\xA9", ".q\"", ".tab\t"}),
                         static_cast<PassStage>(rng_() % 7))
                        .plugin("plugin-" + std::to_string(i % 5))
                        .build();
      components_.push_back(std::move(c));
    }
    for (int i = 0; i < 60; ++i)
      facts_.push_back("IR.F" + std::to_string(i) +
                       pick({"", "(k=v)", "(s=\"a\\\"b\")", "(u=\xE2\x82\xAC)", "(c=\"\x01\x1f\")", "(x=\\\\)"}));
  }

  Plan next() {
    Plan plan;
    plan.target = pick({"t", "t\xC3\xA9", ""});
    plan.backend = rng_() % 4 ? &components_[0] : nullptr;
    plan.binding = &components_[1];
    plan.pipeline = rng_() % 2 ? &components_[2] : nullptr;
    for (int i = 0, n = static_cast<int>(rng_() % 3); i < n; ++i) {
      auto o = parse_obligation("Uses.Dialect(name=d" + std::to_string(i) + ")",
                                rng_() % 2 ? Span{"prog.py", 3, 4, 3, 9} : Span{});
      EXPECT_TRUE(o.ok());
      PlannedObligation po{*o, {}};
      if (rng_() % 2) po.accepted_by = {"be", "b\"e"};
      plan.obligations.push_back(std::move(po));
    }
    for (auto &c : components_)
      if (rng_() % 3 == 0) plan.components.push_back(&c);
    plan.initial_facts = some_facts(8);
    std::sort(plan.initial_facts.begin(), plan.initial_facts.end());
    for (int i = 0, n = static_cast<int>(rng_() % 30); i < n; ++i) {
      PlannedPass p;
      p.component = &components_[rng_() % components_.size()];
      p.added = some_facts(5);
      p.removed = some_facts(rng_() % 4 == 0 ? 6 : 1);
      if (rng_() % 2) p.after = {{"p1", "p requires IR.F1, which p1 provides"}, {"p\xC3\xA9", "r\n"}};
      plan.passes.push_back(std::move(p));
    }
    for (int i = 0, n = static_cast<int>(rng_() % 6); i < n; ++i) {
      Derivation d;
      d.component = "c" + std::to_string(i);
      d.kind = "pass";
      d.rule = "requirement";
      d.because = pick({"because", "quote \" and \\ and \xF0\x9F\x98\x80", ""});
      d.requirement = pick({"", "IR.F1"});
      d.required_by = pick({"", "p2"});
      if (rng_() % 2) d.span = Span{"f.py", 1, 2, 3, 4};
      if (rng_() % 3 == 0) d.span = Span{"only-file.py", 0, 0, 0, 0};
      if (rng_() % 2) d.alternatives = {{"a", "pass", "lower priority"}, {"b", "dialect", "conflicts\t"}};
      plan.derivation.push_back(std::move(d));
    }
    if (rng_() % 2) plan.notes = {"optional requirement ?IR.Profile is not met", "\x7f"};
    return plan;
  }

private:
  std::string pick(std::initializer_list<const char *> options) {
    return *(options.begin() + rng_() % options.size());
  }
  std::vector<std::string> some_facts(size_t max) {
    std::vector<std::string> out;
    for (size_t i = 0, n = rng_() % (max + 1); i < n; ++i)
      out.push_back(facts_[rng_() % facts_.size()]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  std::mt19937 rng_;
  std::vector<Component> components_;
  std::vector<std::string> facts_;
};

TEST(PlanJson, RandomPlansAreByteIdenticalToTheTreeDocument) {
  RandomPlans plans(22);
  for (int i = 0; i < 300; ++i) {
    Plan plan = plans.next();
    ASSERT_EQ(plan.to_json_text(), reference_text(plan)) << "plan " << i;
  }
}

/// The document `resolve --json` streams (Plan::write_json).
std::string streamed(const Plan &plan) {
  std::ostringstream out;
  plan.write_json(out);
  return out.str();
}

TEST(PlanJson, TheStreamedDocumentIsTheStringDocument) {
  RandomPlans plans(5);
  for (int i = 0; i < 100; ++i) {
    Plan plan = plans.next();
    ASSERT_EQ(streamed(plan), plan.to_json_text()) << "plan " << i;
  }
  EXPECT_EQ(streamed(Plan{}), Plan{}.to_json_text());
}

TEST(PlanJson, ALargeStreamedDocumentIsTheStringDocument) {
  // Tens of megabytes: the stream is written in chunks of about 1 MB and each pass's facts_after array
  // straight from a scratch block; facts of every length around the 64-byte block the elements are
  // copied in.
  Component c;
  c.kind = ComponentKind::Pass;
  c.id = "p";
  c.version = "1.0.0";
  c.plugin.name = "plug";
  Plan plan;
  plan.target = "t";
  auto fact = [](size_t i) { return "IR.F" + std::to_string(i) + "(k=" + std::string(i % 97, 'x') + ")"; };
  for (size_t i = 0; i < 1500; ++i)
    plan.initial_facts.push_back(fact(i));
  std::sort(plan.initial_facts.begin(), plan.initial_facts.end());
  for (size_t p = 0; p < 200; ++p) {
    PlannedPass pass;
    pass.component = &c;
    pass.added = {fact(1500 + 2 * p), fact(1501 + 2 * p)};
    pass.removed = {fact(p * 5)};
    std::sort(pass.added.begin(), pass.added.end());
    plan.passes.push_back(std::move(pass));
  }
  const std::string text = plan.to_json_text();
  ASSERT_GT(text.size(), size_t{20} << 20);
  EXPECT_TRUE(streamed(plan) == text);
  EXPECT_EQ(text, reference_text(plan));
}

TEST(PlanJson, AnEmptyPlanIsByteIdenticalToTheTreeDocument) {
  Plan plan;
  EXPECT_EQ(plan.to_json_text(), reference_text(plan));
}

TEST(PlanJson, ToJsonIsTheTextParsedInOrder) {
  RandomPlans plans(3);
  for (int i = 0; i < 20; ++i) {
    Plan plan = plans.next();
    EXPECT_EQ(plan.to_json(), reference_json(plan));
    EXPECT_EQ(plan.to_json().dump(2) + "\n", plan.to_json_text());
  }
}

TEST(PlanJson, FactsAfterEachPassMatchFactsAfter) {
  RandomPlans plans(9);
  Plan plan = plans.next();
  while (plan.passes.size() < 3)
    plan = plans.next();
  nlohmann::ordered_json j = plan.to_json();
  for (size_t i = 0; i < plan.passes.size(); ++i)
    EXPECT_EQ(j["passes"][i]["facts_after"].get<std::vector<std::string>>(), plan.facts_after(i));
}

TEST(PlanJson, InvalidUtf8ThrowsAsTheTreeDocumentDid) {
  Plan plan;
  plan.target = "t\xFF";
  std::string expected;
  try {
    (void)reference_text(plan);
  } catch (const nlohmann::json::type_error &e) {
    expected = e.what();
  }
  ASSERT_FALSE(expected.empty());
  try {
    (void)plan.to_json_text();
    FAIL() << "no exception";
  } catch (const nlohmann::json::type_error &e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TEST(PlanJson, AResolvedPlanIsByteIdenticalToTheTreeDocument) {
  Registry registry;
  std::vector<Component> cs = {
      backend("be", {"t"}, 1).provides({"Backend.B(variant=t)"}).accepts({"Uses.Dialect"}),
      binding("bind", {"t"}).provides({"Binding.B"}),
      dialect("d", "d").provides({"Dialect.D"}),
      pass("a", PassStage::Canonicalize).applies_to({"Uses.Dialect(name=d)"}).provides({"IR.A", "IR.Keep"}),
      pass("b", PassStage::Analyze).applies_to({"IR.A"}).requires_({"IR.A"}).provides({"IR.B(q=\"x y\")"}),
      pass("c", PassStage::Lower).applies_to({"IR.B"}).requires_({"IR.B"}).provides({"IR.C"}).invalidates(
          {"IR.A"}),
  };
  for (auto &c : cs)
    ASSERT_TRUE(registry.add(std::move(c)));
  ResolveRequest req;
  req.target = "t";
  req.obligations.push_back(*parse_obligation("Uses.Dialect(name=d)", Span{"p.py", 1, 0, 1, 4}));
  Resolution r = resolve(registry, req);
  ASSERT_TRUE(r.ok()) << r.diagnostics.render();
  ASSERT_EQ(r.plan->passes.size(), 3u);
  EXPECT_EQ(r.plan->to_json_text(), reference_text(*r.plan));
}

} // namespace
} // namespace htp
