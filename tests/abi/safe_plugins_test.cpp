// --safe-plugins: each plugin is probed in a child process before loading; crashing, aborting and hanging
// plugins are skipped with a warning naming the path, the good ones load, and verdicts are remembered.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::run_host;
using htp::test::ScratchDir;

namespace {

class SafePlugins : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : {"fixture-good", "fixture-init-segv", "fixture-init-abort", "fixture-init-hang"})
      plugins.copy_fixture(name);
  }
  htp::test::CommandResult list() {
    return run_host({"--safe-plugins", "--probe-timeout-ms", "500", "--probe-cache", (cache.path() / "probes.json").string(),
                     "--no-builtin-plugins", "--plugins", plugins.path().string(), "plugins", "list", "--json"});
  }
  ScratchDir plugins, cache;
};

}  // namespace

TEST_F(SafePlugins, CrashAbortAndHangAreSkippedWithTheirPathAndTheGoodPluginLoads) {
  auto r = list();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["plugins"].size(), 1u) << r.out;
  EXPECT_EQ(j["plugins"][0]["name"], "fixture-good");
  const std::string dir = fs::canonical(plugins.path()).string();
  EXPECT_NE(r.err.find("warning: skipped plugin '" + dir + "/htp-fixture-init-segv.so' (--safe-plugins): plugin"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("htp-fixture-init-segv.so' crashed while loading: SIGSEGV"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("htp-fixture-init-abort.so' crashed while loading: SIGABRT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("htp-fixture-init-hang.so' did not finish loading within 500 ms"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("remembered"), std::string::npos) << r.err;
}

TEST_F(SafePlugins, VerdictsAreRememberedUntilTheFileChanges) {
  ASSERT_EQ(list().exit_code, 0);
  auto again = list();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("SIGSEGV (signal 11"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("[remembered from an earlier probe; replace or touch the file to probe again]"),
            std::string::npos) << again.err;
  // A changed file (new mtime) is probed again.
  fs::last_write_time(plugins.path() / "htp-fixture-init-segv.so", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  auto third = list();
  auto line = third.err.substr(third.err.find("htp-fixture-init-segv.so' (--safe-plugins)"));
  EXPECT_EQ(line.substr(0, line.find('\n')).find("remembered"), std::string::npos) << third.err;
}
