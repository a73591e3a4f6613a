// htp-host as a user runs it: output, exit codes, and isolation of crashing plugins.
#include <gtest/gtest.h>

#include <htp/abi.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

using htp::test::fixture;
using htp::test::run_host;

/// This host's ABI version as messages print it.
const std::string kCliAbi = std::to_string(HTP_ABI_MAJOR) + "." + std::to_string(HTP_ABI_MINOR);

TEST(Cli, VersionPrintsTheAbi) {
  auto r = run_host({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("htp-host 0.1.0 (ABI " + kCliAbi + ")"), std::string::npos) << r.out;
}

TEST(Cli, PluginsListJsonHasTheSixBuiltinPlugins) {
  auto r = run_host({"--plugins", HTP_TEST_PLUGIN_DIR, "--log-level", "trace", "plugins", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // stdout is exactly the JSON: logs go to stderr
  std::vector<std::string> names;
  for (const auto &p : j["plugins"]) {
    names.push_back(p["name"]);
    EXPECT_FALSE(p["version"].get<std::string>().empty());  // each plugin versions itself
    EXPECT_EQ(p["abi"]["major"], HTP_ABI_MAJOR);
    EXPECT_EQ(p["abi"]["minor"], HTP_ABI_MINOR);
    EXPECT_EQ(p["sha256"].get<std::string>().size(), 64u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"backend-aie", "backend-pto", "dialect-csp", "dialect-tile",
                                             "dialect-wsp", "layout-axe"}));
}

TEST(Cli, UsageErrorExitsWithTwo) {
  EXPECT_EQ(run_host({"plugins", "frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_host({"--no-such-flag", "plugins", "list"}).exit_code, 2);
  EXPECT_EQ(run_host({}).exit_code, 2);
  EXPECT_EQ(run_host({"--log-level", "loud", "plugins", "list"}).exit_code, 2);
}

// A word that names no subcommand was "A subcommand is required", as if none was given.
TEST(Cli, AnUnknownSubcommandIsNamedWithTheSubcommandsThereAre) {
  auto r = run_host({"bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("htp-host: error: unknown subcommand 'bogus' (the subcommands: plugins, resolve, compile, "
                       "inspect, verify, sign, keygen, run)"),
            std::string::npos)
      << r.err;
  r = run_host({"plugins", "frobnicate"});
  EXPECT_NE(r.err.find("htp-host plugins: error: unknown subcommand 'frobnicate' (the subcommands: list, inspect, "
                       "verify, manifest)"),
            std::string::npos)
      << r.err;
}

TEST(Cli, InspectUnknownPluginIsADiagnosedError) {
  auto r = run_host({"--plugins", HTP_TEST_PLUGIN_DIR, "plugins", "inspect", "dialect-nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: no loaded plugin is named 'dialect-nope'"), std::string::npos) << r.err;
}

TEST(Cli, InspectShowsComponentsWithCapabilities) {
  auto r = run_host({"--plugins", fixture("fixture-good").string(), "plugins", "inspect", "fixture-good", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["components"].size(), 7u);
  EXPECT_EQ(j["components"][0]["kind"], "dialect");
  EXPECT_EQ(j["components"][0]["provides"][0], "Dialect.Good");
}

TEST(Cli, FailedPluginMakesListExitOneButListsTheRest) {
  auto r = run_host({"--no-builtin-plugins", "--plugins", fixture("fixture-good").string(), "--plugins",
                     fixture("fixture-init-error").string(), "plugins", "list", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plugins"].size(), 1u);
  EXPECT_EQ(j["unloaded"].size(), 1u);
  EXPECT_NE(r.err.find("cannot find the accelerator this plugin needs"), std::string::npos) << r.err;
}

// resolve, plugins inspect and package verify went on without a plugin that failed to load and exited 0: a
// `resolve --explain` explained a plan that silently lacked the user's pack.
TEST(Cli, FailedPluginMakesEverySubcommandExitOne) {
  for (std::vector<std::string> command :
       {std::vector<std::string>{"resolve", "--target", "cpu-ref", "--uses", "Uses.Dialect(name=tile)", "--explain"},
        std::vector<std::string>{"plugins", "inspect", "fixture-good"}}) {
    std::vector<std::string> args = {"--plugins", fixture("fixture-good").string(), "--plugins",
                                     fixture("fixture-init-error").string()};
    args.insert(args.end(), command.begin(), command.end());
    auto r = run_host(args);
    EXPECT_EQ(r.exit_code, 1) << command[0] << " " << command[1] << "\n" << r.err;
    EXPECT_NE(r.err.find("fixture-init-error"), std::string::npos) << r.err;
  }
}

// A plugin that crashes htp-host (here in its init; a pass or a binding's run alike) is named before the process
// dies: the user saw only "Segmentation fault".
TEST(Cli, APluginThatCrashesTheHostIsNamed) {
  for (const char *name : {"fixture-init-segv", "fixture-init-abort"}) {
    auto r = run_host({"--no-builtin-plugins", "--plugins", fixture(name).string(), "plugins", "list"});
    EXPECT_NE(r.exit_code, 0) << name << ": the crash takes its course\n" << r.err;
    EXPECT_NE(r.err.find(std::string("while running the init function of plugin '") + name + "'"), std::string::npos)
        << r.err;
  }
}

// `plugins manifest` is the build step of htp_add_plugin: a plugin whose init hangs hung the build, one that
// crashed failed it with a bare "Segmentation fault". Its init runs first in a child with a time limit.
TEST(Cli, ManifestOfAPluginThatHangsOrCrashesInInitFailsNamingIt) {
  auto hang = run_host({"plugins", "manifest", "--timeout-ms", "300", fixture("fixture-init-hang").string()});
  EXPECT_EQ(hang.exit_code, 1) << hang.err;
  EXPECT_NE(hang.err.find("fixture-init-hang"), std::string::npos) << hang.err;
  auto segv = run_host({"plugins", "manifest", fixture("fixture-init-segv").string()});
  EXPECT_EQ(segv.exit_code, 1) << segv.err;
  EXPECT_NE(segv.err.find("fixture-init-segv"), std::string::npos) << segv.err;
  auto good = run_host({"plugins", "manifest", fixture("fixture-good").string()});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("\"htp.plugin.v1\""), std::string::npos) << good.out;
}

TEST(Cli, VerifyGoodPlugin) {
  auto r = run_host({"plugins", "verify", fixture("fixture-good").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plugin fixture-good 1.2.3 (ABI " + kCliAbi + "), 7 components"), std::string::npos) << r.out;
}

TEST(Cli, VerifyIsolateReportsASegfaultAndSurvives) {
  auto r = run_host({"plugins", "verify", "--isolate", fixture("fixture-init-segv").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("htp-fixture-init-segv.so' crashed while loading: SIGSEGV (signal 11"), std::string::npos)
      << r.err;
}

TEST(Cli, VerifyIsolateReportsAnAbort) {
  auto r = run_host({"plugins", "verify", "--isolate", fixture("fixture-init-abort").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("crashed while loading: SIGABRT"), std::string::npos) << r.err;
}

TEST(Cli, VerifyIsolateKillsAHang) {
  auto r = run_host({"plugins", "verify", "--isolate", "--timeout-ms", "300", fixture("fixture-init-hang").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("did not finish loading within 300 ms"), std::string::npos) << r.err;
}

TEST(Cli, VerifyIsolateOfAGoodPlugin) {
  auto r = run_host({"plugins", "verify", "--isolate", fixture("fixture-good").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("7 components (verified in an isolated process)"), std::string::npos) << r.out;
}

TEST(Cli, RelativePluginArgumentIsTakenFromTheWorkingDirectory) {
  // Paths typed on the command line are made absolute; only then does the loader see them.
  auto r = run_host({"--plugins", "does-not-exist", "plugins", "list"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("does-not-exist' from --plugins does not exist"), std::string::npos) << r.err;
}
