// Discovery of plugin libraries from directories, plugin-set files and HTP_PLUGIN_PATH.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "loader/plugin_discovery.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::ScratchDir;

namespace {

std::vector<fs::path> discover(std::vector<std::string> specs, htp::DiagnosticList &diags, bool env = false,
                               bool builtins = false) {
  htp::PluginSearch s;
  s.specs = std::move(specs);
  s.use_environment = env;
  s.include_builtins = builtins;
  return htp::discover_plugins(s, diags);
}

}  // namespace

TEST(PluginDiscovery, DirectoryListsLibrariesSortedAndSkipsOtherFiles) {
  ScratchDir dir;
  dir.write("htp-b.so", "");
  dir.write("htp-a.so", "");
  dir.write("htp-a.plugin.json", "{}");
  dir.write("README", "");
  htp::DiagnosticList diags;
  auto found = discover({dir.path().string()}, diags);
  EXPECT_TRUE(diags.empty()) << diags.render();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].filename(), "htp-a.so");
  EXPECT_EQ(found[1].filename(), "htp-b.so");
}

TEST(PluginDiscovery, PluginSetEntriesAreRelativeToTheSetFile) {
  ScratchDir dir;
  fs::create_directory(dir.path() / "sub");
  std::ofstream(dir.path() / "sub" / "htp-x.so") << "";
  dir.write("set.json", R"({"schema":"htp.plugin-set.v1","plugins":["sub/htp-x.so"]})");
  htp::DiagnosticList diags;
  auto found = discover({(dir.path() / "set.json").string()}, diags);
  EXPECT_TRUE(diags.empty()) << diags.render();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], dir.path() / "sub" / "htp-x.so");
}

TEST(PluginDiscovery, MalformedPluginSetNamesTheJsonPath) {
  ScratchDir dir;
  dir.write("set.json", R"({"schema":"htp.plugin-set.v1","plugins":["a.so", 3]})");
  htp::DiagnosticList diags;
  discover({(dir.path() / "set.json").string()}, diags);
  EXPECT_NE(diags.render().find("$.plugins[1]: expected a string, got an integer"), std::string::npos)
      << diags.render();
}

TEST(PluginDiscovery, RelativeSpecIsRefused) {
  htp::DiagnosticList diags;
  EXPECT_TRUE(discover({"plugins"}, diags).empty());
  EXPECT_NE(diags.render().find("refusing relative plugin path 'plugins'"), std::string::npos) << diags.render();
}

TEST(PluginDiscovery, MissingPathIsReported) {
  htp::DiagnosticList diags;
  discover({"/nonexistent/htp-plugins"}, diags);
  EXPECT_NE(diags.render().find("plugin path '/nonexistent/htp-plugins' from --plugins does not exist"),
            std::string::npos)
      << diags.render();
}

TEST(PluginDiscovery, WorldWritableDirectoryIsRefused) {
  ScratchDir dir;
  dir.write("htp-a.so", "");
  fs::permissions(dir.path(), fs::perms::all);
  htp::DiagnosticList diags;
  EXPECT_TRUE(discover({dir.path().string()}, diags).empty());
  EXPECT_NE(diags.render().find("it is world-writable"), std::string::npos) << diags.render();
}

TEST(PluginDiscovery, EnvironmentPathAddsDirectoriesAndRefusesRelativeEntries) {
  ScratchDir dir;
  dir.write("htp-env.so", "");
  std::string value = dir.path().string() + ":relative/dir";
  ::setenv("HTP_PLUGIN_PATH", value.c_str(), 1);
  htp::DiagnosticList diags;
  auto found = discover({}, diags, /*env=*/true);
  ::unsetenv("HTP_PLUGIN_PATH");
  EXPECT_NE(std::find(found.begin(), found.end(), dir.path() / "htp-env.so"), found.end());
  EXPECT_NE(diags.render().find("refusing relative plugin path 'relative/dir' from HTP_PLUGIN_PATH"),
            std::string::npos)
      << diags.render();
}

TEST(PluginDiscovery, DefaultIsTheBuiltinDirectoryNextToTheHostLibrary) {
  EXPECT_EQ(fs::canonical(htp::builtin_plugin_dir()), fs::canonical(HTP_TEST_PLUGIN_DIR));
}

TEST(PluginDiscovery, SpecsAreAddedToTheBuiltinsAndOneNamedLikeABuiltinReplacesIt) {
  const fs::path builtin = htp::builtin_plugin_dir();
  ASSERT_TRUE(fs::is_directory(builtin)) << builtin;
  ScratchDir dir;
  dir.write("htp-extension.so", "");
  dir.write("htp-dialect-tile.so", "");
  htp::DiagnosticList diags;
  auto found = discover({dir.path().string()}, diags, false, /*builtins=*/true);
  EXPECT_FALSE(diags.has_errors()) << diags.render();
  auto has = [&](const fs::path &p) { return std::find(found.begin(), found.end(), p) != found.end(); };
  EXPECT_TRUE(has(builtin / "htp-dialect-wsp.so"));
  EXPECT_TRUE(has(dir.path() / "htp-extension.so"));
  EXPECT_TRUE(has(dir.path() / "htp-dialect-tile.so"));
  EXPECT_FALSE(has(builtin / "htp-dialect-tile.so")) << "the user's htp-dialect-tile.so replaces the built-in one";
  EXPECT_LT(std::find(found.begin(), found.end(), builtin / "htp-dialect-wsp.so") - found.begin(),
            std::find(found.begin(), found.end(), dir.path() / "htp-extension.so") - found.begin())
      << "built-ins first, then the specs";
}

TEST(PluginDiscovery, TheBuiltinDirectoryGivenAgainIsListedOnce) {
  const fs::path builtin = htp::builtin_plugin_dir();
  htp::DiagnosticList diags;
  auto with = discover({builtin.string()}, diags, false, /*builtins=*/true);
  auto without = discover({}, diags, false, /*builtins=*/true);
  EXPECT_EQ(with.size(), without.size());
}
