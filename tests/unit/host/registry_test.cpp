#include <gtest/gtest.h>

#include "registry/component_json.hpp"
#include "registry/registry.hpp"

namespace {
htp::Component make(const char *id, htp::ComponentKind kind, const char *plugin) {
  htp::Component c;
  c.id = id;
  c.kind = kind;
  c.version = "1.0.0";
  c.plugin.name = plugin;
  return c;
}
}  // namespace

TEST(Registry, FindsByIdAndKind) {
  htp::Registry r;
  ASSERT_TRUE(r.add(make("a", htp::ComponentKind::Pass, "p")));
  ASSERT_TRUE(r.add(make("b", htp::ComponentKind::Backend, "q")));
  EXPECT_EQ(r.find("b")->plugin.name, "q");
  EXPECT_EQ(r.find("zzz"), nullptr);
  EXPECT_EQ(r.of_kind(htp::ComponentKind::Pass).size(), 1u);
  EXPECT_EQ(r.of_plugin("q").size(), 1u);
}

TEST(Registry, DuplicateIdNamesBothPlugins) {
  htp::Registry r;
  ASSERT_TRUE(r.add(make("same", htp::ComponentKind::Pass, "first-plugin")));
  auto second = r.add(make("same", htp::ComponentKind::Pass, "second-plugin"));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().message,
            "component id 'same' registered by plugin 'second-plugin' is already registered by plugin 'first-plugin'");
  EXPECT_EQ(r.size(), 1u);
}

// A pack registering a dialect named 'tile' loaded silently and displaced the built-in one for every program.
TEST(Registry, ASecondDialectOrIntrinsicSetOfOneNameIsRejected) {
  htp::Registry r;
  auto named = [](const char *id, htp::ComponentKind kind, const char *plugin, const char *name) {
    htp::Component c = make(id, kind, plugin);
    c.name = name;
    return c;
  };
  ASSERT_TRUE(r.add(named("tile.dialect", htp::ComponentKind::Dialect, "dialect-tile", "tile")));
  ASSERT_TRUE(r.add(named("pto.intrinsics", htp::ComponentKind::IntrinsicSet, "backend-pto", "pto")));
  auto dialect = r.add(named("acme.tile", htp::ComponentKind::Dialect, "acme", "tile"));
  ASSERT_FALSE(dialect);
  EXPECT_EQ(dialect.error().code, "registry.duplicate-name");
  EXPECT_NE(dialect.error().message.find("dialect 'tile' registered by plugin 'acme' (component 'acme.tile') is "
                                         "already registered by plugin 'dialect-tile' (component 'tile.dialect')"),
            std::string::npos)
      << dialect.error().message;
  EXPECT_FALSE(r.add(named("acme.pto", htp::ComponentKind::IntrinsicSet, "acme", "pto")));
  EXPECT_TRUE(r.add(named("acme.tile-set", htp::ComponentKind::IntrinsicSet, "acme", "tile")));  // another kind
  EXPECT_EQ(r.size(), 3u);
}

// A summary (or any string) that is not UTF-8 was taken, and `plugins manifest` / `plugins inspect --json`
// failed later with an internal JSON error.
TEST(Registry, StringsThatAreNotUtf8AreRejected) {
  htp::Registry r;
  htp::Component c = make("p.one", htp::ComponentKind::Pass, "p");
  c.summary = "bad \xff summary";
  auto e = r.add(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "registry.utf8");
  EXPECT_EQ(e.error().message, "pass 'p.one' of plugin 'p' has a summary that is not UTF-8");
  c.summary = "fine";
  c.provides = {"IR.X", "IR.\xC3\x28"};
  EXPECT_FALSE(r.add(c));
  c.provides = {"IR.X"};
  EXPECT_TRUE(r.add(c));
}

// A pass providing Target.Selected(name=pto-a2a3sim) made that fact hold while compiling for aie-npu1.
TEST(Registry, TargetFactsAreTheHosts) {
  htp::Registry r;
  htp::Component c = make("p.claims", htp::ComponentKind::Pass, "p");
  c.provides = {"IR.Mine", "Target.Selected(name=pto-a2a3sim)"};
  auto e = r.add(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "registry.reserved-fact");
}

TEST(Registry, EmptyIdIsRejected) {
  htp::Registry r;
  EXPECT_FALSE(r.add(make("", htp::ComponentKind::Pass, "p")));
}

TEST(ComponentJson, RoundTripsEveryKind) {
  for (int k = 0; k < 7; ++k) {
    auto c = make("x.y", static_cast<htp::ComponentKind>(k), "p");
    c.provides = {"A.B(x=1)"};
    c.requires_ = {"?C.D"};
    c.accepts = {"Uses.Dialect(name=tile)"};
    c.name = "n";
    c.names = {"one", "two"};
    c.stage = htp::PassStage::Lower;
    c.targets = {"t1"};
    c.priority = 3;
    nlohmann::json j = htp::component_to_json(c);
    htp::Component back = htp::component_from_json(htp::JsonReader(j));
    EXPECT_EQ(htp::component_to_json(back), j) << j.dump();
  }
}

TEST(ComponentJson, UnknownKindNamesThePath) {
  nlohmann::json j = {{"kind", "gizmo"}, {"id", "a"}, {"version", "1"}};
  try {
    htp::component_from_json(htp::JsonReader(j, "$.components[3]"));
    FAIL() << "expected an error";
  } catch (const htp::JsonSchemaError &e) {
    EXPECT_STREQ(e.what(), "$.components[3].kind: unknown component kind 'gizmo'");
  }
}
