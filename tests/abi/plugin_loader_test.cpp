// Loading fixture plugins through PluginHost: each failure mode gives its exact diagnostic and never
// takes the host down; good plugins still load beside bad ones.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>

#include "loader/plugin_host.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::fixture;
using htp::test::ScratchDir;

/// This host's ABI version as messages print it.
const std::string kAbi = std::to_string(HTP_ABI_MAJOR) + "." + std::to_string(HTP_ABI_MINOR);

namespace {

struct LoadOutcome {
  const htp::LoadedPlugin *plugin = nullptr;
  htp::DiagnosticList diags;
  std::string text() const { return diags.render(); }
  bool has_code(const std::string &code) const {
    for (const auto &d : diags.items())
      if (d.code == code) return true;
    return false;
  }
};

LoadOutcome load_one(htp::PluginHost &host, const fs::path &path) {
  LoadOutcome o;
  o.plugin = host.load(path, o.diags);
  return o;
}

}  // namespace

TEST(PluginLoader, GoodPluginRegistersEveryComponentKind) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-good"));
  ASSERT_NE(o.plugin, nullptr) << o.text();
  EXPECT_TRUE(o.diags.empty()) << o.text();
  EXPECT_EQ(o.plugin->name, "fixture-good");
  EXPECT_EQ(o.plugin->version, "1.2.3");
  EXPECT_EQ(o.plugin->abi_major, 1u);
  EXPECT_EQ(o.plugin->abi_minor, HTP_ABI_MINOR);
  EXPECT_EQ(o.plugin->description, "Fixture: every component kind");
  ASSERT_EQ(host.registry().size(), 7u);
  for (auto kind : {htp::ComponentKind::Dialect, htp::ComponentKind::IntrinsicSet, htp::ComponentKind::Layout,
                    htp::ComponentKind::Pass, htp::ComponentKind::Pipeline, htp::ComponentKind::Backend,
                    htp::ComponentKind::Binding})
    EXPECT_EQ(host.registry().of_kind(kind).size(), 1u) << htp::component_kind_name(kind);
  const htp::Component *pass = host.registry().find("good.pass");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->stage, htp::PassStage::Analyze);
  EXPECT_EQ(pass->applies_to, std::vector<std::string>{"Uses.Dialect(name=good)"});
  EXPECT_EQ(pass->plugin.name, "fixture-good");
  EXPECT_EQ(host.registry().find("good.dialect")->names, std::vector<std::string>{"good_kernel"});
}

TEST(PluginLoader, PluginWrittenInPlainCLoads) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-c"));
  ASSERT_NE(o.plugin, nullptr) << o.text();
  EXPECT_EQ(o.plugin->sdk_version, "c99");
  const htp::Component *pass = host.registry().find("c.pass");
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(pass->provides, std::vector<std::string>{"IR.FromC"});
  EXPECT_EQ(pass->summary, "A pass registered from C");
}

TEST(PluginLoader, Sha256IsOfTheLibraryFile) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-good"));
  ASSERT_NE(o.plugin, nullptr);
  EXPECT_EQ(o.plugin->sha256().size(), 64u);
  EXPECT_EQ(o.plugin->sha256().find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(PluginLoader, NotASharedObjectIsReported) {
  ScratchDir dir;
  dir.write("htp-notso.so", "this is not an ELF file\n");
  dir.write("htp-notso.plugin.json", R"({"schema":"htp.plugin.v1","name":"notso","version":"1.0.0",
      "abi":{"major":1,"minor":1},"library":"htp-notso.so","components":[]})");
  htp::PluginHost host;
  auto o = load_one(host, dir.path() / "htp-notso.so");
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.load")) << o.text();
  EXPECT_NE(o.text().find("cannot load plugin"), std::string::npos) << o.text();
  EXPECT_NE(o.text().find("htp-notso.so"), std::string::npos) << o.text();
}

TEST(PluginLoader, MissingEntrySymbolIsReported) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-no-entry"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.no-entry")) << o.text();
  EXPECT_NE(o.text().find("does not export 'htp_plugin_query'"), std::string::npos) << o.text();
}

TEST(PluginLoader, EntryReturningNullIsReported) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-null-info"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.null-info")) << o.text();
  EXPECT_NE(o.text().find("htp_plugin_query returned NULL"), std::string::npos) << o.text();
}

TEST(PluginLoader, MajorVersionMismatchIsRefused) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-abi-major"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.major")) << o.text();
  EXPECT_NE(o.text().find("was built for ABI 2.0, this host speaks ABI " + kAbi + " (the major versions differ)"),
            std::string::npos)
      << o.text();
}

TEST(PluginLoader, NewerMinorIsRefused) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-abi-newer-minor"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.minor")) << o.text();
  EXPECT_NE(o.text().find("was built for ABI 1.9, newer than this host's " + kAbi), std::string::npos) << o.text();
}

TEST(PluginLoader, OlderMinorLoadsWithNewFieldsReadAsZero) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-older-minor"));
  ASSERT_NE(o.plugin, nullptr) << o.text();
  EXPECT_EQ(o.plugin->abi_minor, 0u);
  // The 1.1 fields lie beyond the plugin's struct_size; the bytes there are garbage that must not be read.
  EXPECT_EQ(o.plugin->description, "");
  EXPECT_EQ(o.plugin->sdk_version, "");
  EXPECT_NE(host.registry().find("older.pass"), nullptr);
  // A binding descriptor of ABI 1.1 (before run/user_data) is accepted as compile-only.
  const htp::Component *b = host.registry().find("older.binding");
  ASSERT_NE(b, nullptr) << o.text();
  EXPECT_EQ(b->binding_run, nullptr);
  EXPECT_EQ(b->user_data, nullptr);
  // Patterns laid out as ABI 1.2 (before match_and_rewrite) read as match + apply, at the old stride.
  const htp::Component *p = host.registry().find("older.pattern-pass");
  ASSERT_NE(p, nullptr) << o.text();
  ASSERT_EQ(p->patterns.size(), 2u);
  EXPECT_EQ(p->patterns[1].name, "older.pattern-b");
  for (const auto &pattern : p->patterns) {
    EXPECT_EQ(pattern.match_and_rewrite, nullptr);
    EXPECT_NE(pattern.match, nullptr);
    EXPECT_NE(pattern.apply, nullptr);
  }
}

struct DescriptorSizeCase {
  const char *fixture;
  const char *expected;
};

void PrintTo(const DescriptorSizeCase &c, std::ostream *os) { *os << c.fixture; }

class DescriptorSize : public ::testing::TestWithParam<DescriptorSizeCase> {};

TEST_P(DescriptorSize, IsRejectedWithItsReason) {
  htp::PluginHost host;
  auto o = load_one(host, fixture(GetParam().fixture));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.init-failed")) << o.text();
  EXPECT_NE(o.text().find(GetParam().expected), std::string::npos) << o.text();
  EXPECT_EQ(host.registry().size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    PluginLoader, DescriptorSize,
    ::testing::Values(
        DescriptorSizeCase{"fixture-size-small", "HtpBackendDesc.struct_size 16 is smaller than the ABI 1.0 size"},
        DescriptorSizeCase{"fixture-size-large", "is larger than this host's"},
        DescriptorSizeCase{"fixture-size-zero", "HtpBackendDesc.struct_size is 0"},
        DescriptorSizeCase{"fixture-size-huge", "HtpBackendDesc.struct_size 18446744073709551615 is larger"}),
    [](const auto &info) {
      std::string n = info.param.fixture;
      return n.substr(n.rfind('-') + 1);
    });

TEST(PluginLoader, MalformedCapabilityTextIsRejectedAtRegistration) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-bad-capability"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_NE(o.text().find("provides[1]: 'Backend.PTO(variant=' is not a valid capability (column 21:"),
            std::string::npos)
      << o.text();
}

TEST(PluginLoader, PatternWithoutCallbacksIsRejectedAtRegistration) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-pattern-no-callback"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_NE(o.text().find("patterns[0]: match_and_rewrite, or match and apply, are required"), std::string::npos)
      << o.text();
}

TEST(PluginLoader, InitErrorCarriesThePluginsMessage) {
  htp::PluginHost host;
  auto o = load_one(host, fixture("fixture-init-error"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("abi.init-failed")) << o.text();
  EXPECT_NE(o.text().find("plugin 'fixture-init-error'"), std::string::npos) << o.text();
  EXPECT_NE(o.text().find("failed to initialise (status 1)"), std::string::npos) << o.text();
  EXPECT_NE(o.text().find("cannot find the accelerator this plugin needs"), std::string::npos) << o.text();
}

TEST(PluginLoader, ThrowingInitIsCaughtAndOthersStillLoad) {
  htp::PluginHost host;
  htp::DiagnosticList diags;
  EXPECT_EQ(host.load(fixture("fixture-init-throws"), diags), nullptr);
  EXPECT_NE(diags.render().find("threw from init: boom from init"), std::string::npos) << diags.render();
  // The host is intact: a good plugin loads afterwards.
  EXPECT_NE(host.load(fixture("fixture-good"), diags), nullptr) << diags.render();
  EXPECT_EQ(host.plugins().size(), 1u);
  ASSERT_EQ(host.unloaded().size(), 1u);
  EXPECT_EQ(host.unloaded()[0].reason.code, "abi.init-failed");
}

TEST(PluginLoader, DuplicateComponentIdNamesBothPlugins) {
  htp::PluginHost host;
  htp::DiagnosticList diags;
  ASSERT_NE(host.load(fixture("fixture-dup-a"), diags), nullptr) << diags.render();
  EXPECT_EQ(host.load(fixture("fixture-dup-b"), diags), nullptr);
  std::string text = diags.render();
  EXPECT_NE(text.find("component id 'fixture.shared-id' registered by plugin 'fixture-dup-b' is already registered "
                      "by plugin 'fixture-dup-a'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("plugin 'fixture-dup-b'"), std::string::npos);
  // The first registration stays; nothing of the second plugin entered the registry.
  EXPECT_EQ(host.registry().find("fixture.shared-id")->plugin.name, "fixture-dup-a");
  EXPECT_EQ(host.plugins().size(), 1u);
}

TEST(PluginLoader, SamePluginThroughASymlinkLoadsOnce) {
  ScratchDir dir;
  fs::create_symlink(fixture("fixture-good"), dir.path() / "htp-alias.so");
  htp::PluginHost host;
  htp::DiagnosticList diags;
  const htp::LoadedPlugin *a = host.load(fixture("fixture-good"), diags);
  const htp::LoadedPlugin *b = host.load(dir.path() / "htp-alias.so", diags);
  EXPECT_TRUE(diags.empty()) << diags.render();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(host.plugins().size(), 1u);
  EXPECT_EQ(host.registry().size(), 7u);
}

TEST(PluginLoader, SamePluginThroughAHardLinkLoadsOnce) {
  ScratchDir dir;
  fs::path copy = dir.copy_fixture("fixture-good");
  fs::create_hard_link(copy, dir.path() / "htp-second.so");
  fs::copy_file(dir.path() / "htp-fixture-good.plugin.json", dir.path() / "htp-second.plugin.json");
  htp::PluginHost host;
  htp::DiagnosticList diags;
  EXPECT_NE(host.load(copy, diags), nullptr);
  EXPECT_EQ(host.load(dir.path() / "htp-second.so", diags), host.plugins()[0].get());
  EXPECT_EQ(host.plugins().size(), 1u);
}

TEST(PluginLoader, RelativePathIsRefused) {
  htp::PluginHost host;
  auto o = load_one(host, fs::path("lib/htp/plugins/htp-dialect-wsp.so"));
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("plugins.relative")) << o.text();
  EXPECT_NE(o.text().find("refusing relative plugin path 'lib/htp/plugins/htp-dialect-wsp.so'"), std::string::npos)
      << o.text();
}

TEST(PluginLoader, WorldWritableDirectoryIsRefused) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  fs::permissions(dir.path(), fs::perms::all);
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("plugins.world-writable")) << o.text();
  EXPECT_NE(o.text().find("is world-writable"), std::string::npos) << o.text();
}

TEST(PluginLoader, WorldWritableFileIsRefused) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  fs::permissions(lib, fs::perms::others_write, fs::perm_options::add);
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_NE(o.text().find("the file is world-writable"), std::string::npos) << o.text();
}

TEST(PluginManifest, MissingManifestIsReported) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  fs::remove(dir.path() / "htp-fixture-good.plugin.json");
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("manifest.missing")) << o.text();
  EXPECT_NE(o.text().find("has no manifest (expected '"), std::string::npos) << o.text();
}

TEST(PluginManifest, ManifestThatIsNotJsonIsReported) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  dir.write("htp-fixture-good.plugin.json", "{ \"schema\": \"htp.plugin.v1\", \"name\": ");
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("manifest.syntax")) << o.text();
  EXPECT_NE(o.text().find("is not valid JSON"), std::string::npos) << o.text();
}

TEST(PluginManifest, ManifestLackingFieldsNamesThePath) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  dir.write("htp-fixture-good.plugin.json",
            R"({"schema":"htp.plugin.v1","name":"fixture-good","version":"1.2.3","abi":{"major":1},
                "library":"htp-fixture-good.so","components":[]})");
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("manifest.schema")) << o.text();
  EXPECT_NE(o.text().find("$.abi: missing required field 'minor'"), std::string::npos) << o.text();
}

TEST(PluginManifest, ManifestDisagreeingWithTheBinaryNamesEachDifference) {
  ScratchDir dir;
  fs::path lib = dir.copy_fixture("fixture-good");
  dir.write("htp-fixture-good.plugin.json",
            R"({"schema":"htp.plugin.v1","name":"fixture-good","version":"9.9.9","abi":{"major":1,"minor":1},
                "library":"htp-fixture-good.so",
                "components":[{"kind":"pass","id":"good.pass","version":"1.0.0","stage":"analyze"},
                              {"kind":"pass","id":"ghost.pass","version":"1.0.0","stage":"analyze"}]})");
  htp::PluginHost host;
  auto o = load_one(host, lib);
  EXPECT_EQ(o.plugin, nullptr);
  EXPECT_TRUE(o.has_code("manifest.mismatch")) << o.text();
  std::string t = o.text();
  EXPECT_NE(t.find("version: manifest says '9.9.9', the binary says '1.2.3'"), std::string::npos) << t;
  EXPECT_NE(t.find("declares pass 'ghost.pass', which the binary does not register"), std::string::npos) << t;
  EXPECT_NE(t.find("the binary registers backend 'good.backend', which is not declared"), std::string::npos) << t;
  EXPECT_EQ(host.registry().size(), 0u);
  // The manifest still tells explanations what the plugin would provide.
  auto known = host.known_unloaded_components();
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known[1].id, "ghost.pass");
}

TEST(PluginLoader, BuiltinPluginsAllLoad) {
  htp::PluginHost host;
  htp::DiagnosticList diags;
  htp::PluginSearch search;
  search.specs = {HTP_TEST_PLUGIN_DIR};
  search.use_environment = false;
  EXPECT_EQ(host.load_all(search, diags), 6u) << diags.render();
  EXPECT_TRUE(diags.empty()) << diags.render();
  for (const char *name : {"dialect-tile", "dialect-wsp", "dialect-csp", "layout-axe", "backend-pto", "backend-aie"})
    EXPECT_NE(host.find(name), nullptr) << name;
}
