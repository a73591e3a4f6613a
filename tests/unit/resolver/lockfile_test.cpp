// htp.lock.json: write, read, and compare against the loaded plugins and a new plan.
#include "resolver/lockfile.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "component_builder.hpp"
#include "resolver/resolver.hpp"

namespace htp {
namespace {

using namespace htp::testing;

std::vector<Component> components(const std::string &tile_version = "1.0.0") {
  return {
      backend("be.sim", {"sim"}).plugin("backend-sim").provides({"Backend.Sim"}).accepts({"Uses.Dialect"}),
      binding("bind.sim", {"sim"}).plugin("backend-sim"),
      dialect("tile", "tile").plugin("dialect-tile", tile_version),
      pass("tile.canon", PassStage::Canonicalize)
          .plugin("dialect-tile", tile_version)
          .applies_to({"Uses.Dialect(name=tile)"})};
}

ResolveRequest request() {
  ResolveRequest r;
  r.target = "sim";
  r.obligations.push_back(*parse_obligation("Uses.Dialect(name=tile)"));
  return r;
}

std::string temp_path(const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() / ("htp-lock-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

class LockfileTest : public ::testing::Test {
protected:
  Lockfile lock_for(const std::vector<Component> &cs) {
    registry_ = std::make_unique<Registry>();
    add_all(*registry_, cs);
    Resolution r = resolve(*registry_, request());
    EXPECT_TRUE(r.ok()) << r.diagnostics.render();
    plan_ = std::move(r.plan);
    return Lockfile::from_plan(*plan_);
  }
  std::unique_ptr<Registry> registry_;
  std::optional<Plan> plan_;
};

TEST_F(LockfileTest, RoundTripsThroughAFile) {
  Lockfile lock = lock_for(components());
  std::string path = temp_path("htp.lock.json");
  ASSERT_FALSE(write_lockfile(lock, path).has_value());
  Expected<Lockfile> read = read_lockfile(path);
  ASSERT_TRUE(read.ok()) << read.error().render();
  EXPECT_EQ(read->to_json_text(), lock.to_json_text());
  EXPECT_TRUE(compare_lockfile_plugins(*read, loaded_plugins(*registry_), path).empty());
  EXPECT_TRUE(compare_lockfile_plan(*read, *plan_, path).empty());
  ASSERT_EQ(read->plugins.size(), 2u);
  EXPECT_EQ(read->plugins[0].name, "backend-sim");
  EXPECT_EQ(read->plugins[1].path, "/plugins/libdialect-tile.so");
}

TEST_F(LockfileTest, ChangedPluginVersionIsReportedByName) {
  Lockfile lock = lock_for(components("1.0.0"));
  lock_for(components("1.1.0"));
  DiagnosticList diffs = compare_lockfile_plugins(lock, loaded_plugins(*registry_), "htp.lock.json");
  ASSERT_EQ(diffs.size(), 1u) << diffs.render();
  EXPECT_EQ(diffs.items()[0].render(),
            "htp.lock.json: error: plugin 'dialect-tile' is locked at version 1.0.0 but "
            "version 1.1.0 is loaded [lock.plugin-version]");
}

TEST_F(LockfileTest, ChangedHashIsReportedByName) {
  Lockfile lock = lock_for(components());
  std::vector<PluginRef> loaded = loaded_plugins(*registry_);
  loaded[0].sha256 = "feedbeef";
  DiagnosticList diffs = compare_lockfile_plugins(lock, loaded, "htp.lock.json");
  ASSERT_EQ(diffs.size(), 1u) << diffs.render();
  EXPECT_EQ(diffs.items()[0].message,
            "plugin 'backend-sim' 1.0.0 is locked with sha256 sha-backend-sim-1.0.0 but the "
            "loaded file has sha256 feedbeef");
}

TEST_F(LockfileTest, MissingPluginIsReportedByName) {
  Lockfile lock = lock_for(components());
  std::vector<PluginRef> loaded = loaded_plugins(*registry_);
  loaded.erase(loaded.begin() + 1);
  DiagnosticList diffs = compare_lockfile_plugins(lock, loaded, "htp.lock.json");
  ASSERT_EQ(diffs.size(), 1u) << diffs.render();
  EXPECT_EQ(diffs.items()[0].code, "lock.missing-plugin");
  EXPECT_EQ(diffs.items()[0].message, "plugin 'dialect-tile' 1.0.0 is locked but not loaded");
}

TEST_F(LockfileTest, PlanWithOtherComponentsIsReported) {
  Lockfile lock = lock_for(components());
  std::vector<Component> more = components();
  more.push_back(pass("tile.extra").plugin("dialect-tile").applies_to({"Uses.Dialect(name=tile)"}));
  lock_for(more);
  DiagnosticList diffs = compare_lockfile_plan(lock, *plan_, "htp.lock.json");
  ASSERT_EQ(diffs.size(), 1u) << diffs.render();
  EXPECT_EQ(diffs.items()[0].message, "pass 'tile.extra' 1.0.0 is chosen but not in the lockfile");
}

TEST(LockfileParse, JsonSyntaxErrorHasLineAndColumn) {
  Expected<Lockfile> r =
      parse_lockfile("{\n  \"schema\": \"htp.lock.v1\",\n  \"target\": ]\n}", "htp.lock.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "lock.syntax");
  EXPECT_EQ(r.error().span.line, 3u);
  EXPECT_EQ(r.error().span.col, 12u);
}

TEST(LockfileParse, SchemaErrorNamesTheJsonPath) {
  Expected<Lockfile> r = parse_lockfile(
      R"({"schema":"htp.lock.v1","target":"sim","plugins":[{"name":"a","version":"1","sha256":7,"path":""}],"components":[]})",
      "htp.lock.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().render(), "htp.lock.json: error: malformed lockfile at /plugins/0/sha256: expected a "
                                "string, found number [lock.schema]");
}

TEST(LockfileParse, WrongSchemaTagIsRejected) {
  Expected<Lockfile> r =
      parse_lockfile(R"({"schema":"htp.plan.v1","target":"sim","plugins":[],"components":[]})", "x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "malformed lockfile at /schema: expected \"htp.lock.v1\", found \"htp.plan.v1\"");
}

TEST(LockfileParse, MissingMemberIsNamed) {
  Expected<Lockfile> r = parse_lockfile(R"({"schema":"htp.lock.v1","target":"sim","plugins":[]})", "x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "malformed lockfile at /components: missing");
}

} // namespace
} // namespace htp
