// `htp-host resolve` end to end with a fixture plugin: output, exit codes, --dot, --lock / --locked.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

struct CliRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ResolveCliTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *exe = std::getenv("HTP_HOST_EXE"); // lets a developer point at another build
    exe_ = exe ? exe : HTP_HOST_EXE;
    dir_ = std::filesystem::temp_directory_path() /
           ("htp-resolve-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    CliRun help = run("--help");
    ASSERT_NE(help.out.find("\n  resolve "), std::string::npos) << "htp-host --help lists no resolve subcommand:\n"
                                                                 << help.out;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Runs htp-host with the fixture plugin of `version` and `args`; captures stdout, stderr, exit status.
  CliRun run(const std::string &args, int version = 1) {
    std::string plugins = std::string(HTP_RESOLVE_FIXTURE_DIR) + "/v" + std::to_string(version);
    std::string cmd = "env -u HTP_PLUGIN_PATH '" + exe_ + "' --no-builtin-plugins --plugins '" + plugins + "' " + args + " >'" +
                      (dir_ / "out").string() + "' 2>'" + (dir_ / "err").string() + "'";
    CliRun r;
    int raw = std::system(cmd.c_str());
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  }
  std::string path(const char *name) const { return (dir_ / name).string(); }

  std::string exe_;
  std::filesystem::path dir_;
};

TEST_F(ResolveCliTest, PrintsTheChosenComponentsAndPasses) {
  CliRun r = run("resolve --target fixture-sim --uses 'Uses.Dialect(name=fixture)'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("backend  fixture.backend 1.0.0 (plugin resolve-fixture 1.0.0)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("1. [canonicalize] fixture.canon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2. [emit] fixture.emit"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(ResolveCliTest, JsonIsThePlanDocument) {
  CliRun r = run("resolve --target fixture-sim --uses 'Uses.Intrinsic(set=fixture,op=add)' --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"schema\": \"htp.plan.v1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"id\": \"fixture.ops\""), std::string::npos) << r.out;
}

TEST_F(ResolveCliTest, ExplainPrintsTheDerivation) {
  CliRun r = run("resolve --target fixture-sim --uses 'Uses.Dialect(name=fixture)' --explain");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("pass fixture.emit [pipeline-template]: listed by pipeline 'fixture.pipeline'"),
            std::string::npos)
      << r.out;
}

TEST_F(ResolveCliTest, UnknownTargetIsADiagnosedError) {
  CliRun r = run("resolve --target gpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(
      r.err.find(
          "error: unknown target 'gpu'; known targets: fixture-hw, fixture-sim [resolve.unknown-target]"),
      std::string::npos)
      << r.err;
}

TEST_F(ResolveCliTest, MalformedUsesIsAUsageErrorWithItsColumn) {
  CliRun r =
      run("resolve --target fixture-sim --uses 'Uses.Dialect' --uses 'Uses.Dialect(name=fixture op=x)'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--uses:2:27: error: malformed capability 'Uses.Dialect(name=fixture op=x)' in an "
                       "obligation at column 26: expected ',' or ')', found 'o'"),
            std::string::npos)
      << r.err;
}

TEST_F(ResolveCliTest, DotOutputRendersWithGraphviz) {
  CliRun r = run("resolve --target fixture-sim --uses 'Uses.Dialect(name=fixture)' --dot '" +
                 path("plan.dot") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "Graphviz `dot` is not installed";
  std::string cmd =
      "dot -Tsvg '" + path("plan.dot") + "' -o '" + path("plan.svg") + "' 2>'" + path("dot.err") + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(path("dot.err"));
  EXPECT_NE(slurp(path("plan.svg")).find("<svg"), std::string::npos);
}

TEST_F(ResolveCliTest, LockThenLockedReproducesThePlan) {
  CliRun lock = run("resolve --target fixture-sim --uses 'Uses.Dialect(name=fixture)' --lock '" +
                    path("htp.lock.json") + "'");
  ASSERT_EQ(lock.status, 0) << lock.err;
  EXPECT_NE(slurp(path("htp.lock.json")).find("\"schema\": \"htp.lock.v1\""), std::string::npos);
  CliRun again = run("resolve --target fixture-sim --uses 'Uses.Dialect(name=fixture)' --locked '" +
                     path("htp.lock.json") + "'");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, lock.out);
}

TEST_F(ResolveCliTest, LockedReportsAChangedPluginVersionByName) {
  ASSERT_EQ(run("resolve --target fixture-sim --lock '" + path("htp.lock.json") + "'").status, 0);
  CliRun r = run("resolve --target fixture-sim --locked '" + path("htp.lock.json") + "'", 2);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(
                "htp.lock.json: error: plugin 'resolve-fixture' is locked at version 1.0.0 but version 2.0.0 "
                "is loaded [lock.plugin-version]"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("backend 'fixture.backend' is locked at 1.0.0 from plugin 'resolve-fixture' but 2.0.0"),
      std::string::npos)
      << r.err;
}

TEST_F(ResolveCliTest, ALockfileOfAnotherTargetSaysSoAndBlamesNoBackend) {
  ASSERT_EQ(run("resolve --target fixture-sim --lock '" + path("htp.lock.json") + "'").status, 0);
  CliRun r = run("resolve --target other-sim --locked '" + path("htp.lock.json") + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: lockfile '" + path("htp.lock.json") + "' was made for target fixture-sim, not other-sim: "
                       "compile for fixture-sim, or resolve again without --locked and write a lockfile for other-sim "
                       "[lock.target]"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("(--backend)"), std::string::npos) << r.err;  // it was pinned as if --backend were given
}

TEST_F(ResolveCliTest, MalformedLockfileIsReportedAtItsLine) {
  std::ofstream(path("bad.lock.json")) << "{\n  \"schema\": \"htp.lock.v1\",\n  oops\n}\n";
  CliRun r = run("resolve --target fixture-sim --locked '" + path("bad.lock.json") + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.lock.json:3:3: error: malformed lockfile"), std::string::npos) << r.err;
}

} // namespace
