// dialect-csp end to end through htp-host: golden csp.graph documents of the example programs, the
// canonical process bodies handed to the tile dialect, and the diagnostic of every bad program.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::run_host;
using htp::test::ScratchDir;
using htp::test::replace_all;
using htp::test::read;

namespace {

const fs::path kTestDir = HTP_CSP_TEST_DIR;

class CspCompile : public ::testing::Test {
protected:
  fs::path program(const std::string &name) { return kTestDir / "programs" / (name + ".py"); }

  htp::test::CommandResult compile(const std::string &name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--no-builtin-plugins", "--plugins", HTP_CSP_PLUGIN, "--plugins", HTP_TILE_FIXTURE,
                                     "--plugins", HTP_CHECK_PLUGIN, "compile",   program(name).string(),
                                     "--target",  "check",          "-o",        out().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_host(args);
    r.err = replace_all(r.err, program(name).string(), name + ".py");
    return r;
  }

  fs::path out() const { return dir.path() / "pkg"; }

  /// ir/NN_<pass><suffix>, the dump after `pass` (not the .before one).
  fs::path dump_after(const std::string &pass, const std::string &suffix) const {
    for (const auto &e : fs::directory_iterator(out() / "ir")) {
      std::string f = e.path().filename().string();
      if (f.size() > pass.size() + suffix.size() &&
          f.substr(f.size() - pass.size() - suffix.size()) == pass + suffix)
        return e.path();
    }
    return {};
  }

  /// The csp.graph the check backend wrote, with the program's path shortened to its file name.
  std::string graph(const std::string &name) {
    return replace_all(read(out() / "codegen/check/csp.graph.json"), program(name).string(), name + ".py");
  }

  /// Compares the graph of `name` with golden/<name>.csp.graph.json (HTP_UPDATE_GOLDENS=1 rewrites it).
  void expect_golden(const std::string &name) {
    auto r = compile(name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    fs::path golden = kTestDir / "golden" / (name + ".csp.graph.json");
    std::string actual = graph(name);
    EXPECT_TRUE(htp::test::matches_golden(golden, actual));
  }

  /// Compiles a bad program: it fails, leaves no package, and reports `line` among its diagnostics.
  void expect_rejected(const std::string &name, const std::string &line) {
    auto r = compile(name);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(fs::exists(out()));
    EXPECT_NE(r.err.find(line), std::string::npos) << "expected:\n" << line << "\ngot:\n" << r.err;
  }

  ScratchDir dir;
};

} // namespace

TEST_F(CspCompile, PipelineGraphMatchesGolden) {
  expect_golden("pipeline");
}
TEST_F(CspCompile, ReplicatedWorkersGraphMatchesGolden) {
  expect_golden("generator");
}
TEST_F(CspCompile, EventRendezvousGraphMatchesGolden) {
  expect_golden("event");
}
TEST_F(CspCompile, SymbolicCountsGraphMatchesGolden) {
  expect_golden("symbolic");
}
TEST_F(CspCompile, DistributeAndJoinLinksGraphMatchesGolden) {
  expect_golden("connect");
}

TEST_F(CspCompile, ProcessesAreLiftedAndMarkedForTheTileDialect) {
  auto r = compile("pipeline", {"--dump-ir", "csp.effects"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string dump = read(dump_after("csp.effects", ".py"));
  EXPECT_NE(dump.find("def loader(X: In[Tensor[256, 128, f32]]):\n    for i in range(TILES):\n"
                      "        send(load(X.tile(i, 0, shape=(ROWS, 128))), channel='loaded')"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("def compute():\n    for _csp_t in range(8):\n        t = recv(channel='loaded')\n"
                      "        send(exp(t), channel='computed')"),
            std::string::npos)
      << dump;
  auto ast = nlohmann::json::parse(read(dump_after("csp.effects", ".ast.json")));
  int lowered = 0, foreign = 0;
  std::function<void(const nlohmann::json &)> walk = [&](const nlohmann::json &n) {
    if (n.is_object()) {
      if (n.contains("_attrs") && n["_attrs"].contains("tile.lower")) {
        EXPECT_EQ(n["_attrs"]["tile.lower"], nlohmann::json::parse(R"({"kind":"process"})"));
        ++lowered;
      }
      if (n.contains("_attrs") && n["_attrs"].contains("tile.foreign")) ++foreign;
      for (const auto &[k, v] : n.items())
        walk(v);
    } else if (n.is_array()) {
      for (const auto &v : n)
        walk(v);
    }
  };
  walk(ast["root"]);
  EXPECT_EQ(lowered, 3);
  EXPECT_EQ(foreign, 4); // loader's send, compute's recv (from its consume loop) and send, storer's recv
}

TEST_F(CspCompile, NetworkTooLargeToRunIsAcceptedWithAWarning) {
  auto r = compile("huge_replication");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find(
          "huge_replication.py:7:1: warning: program 'swarm' was not checked for deadlocks: running it "
          "takes more than 2000000 channel operations or 4096 process replicas [csp.deadlock-undecided]"),
      std::string::npos)
      << r.err;
}

TEST_F(CspCompile, CountMismatchNamesChannelAndCounts) {
  expect_rejected(
      "bad_count_mismatch",
      "bad_count_mismatch.py:18:50: error: channel 'tiles' is unbalanced: its producers send 8 items "
      "(loader: 8) but its consumers receive 6 (storer: 6) [csp.count-mismatch]");
}

TEST_F(CspCompile, ChannelWithoutConsumerIsRejected) {
  expect_rejected(
      "bad_no_consumer",
      "bad_no_consumer.py:9:12: error: channel 'side' has no consumer: 'loader' produces into it but no "
      "process declares consumes(side) [csp.no-consumer]");
}

TEST_F(CspCompile, DeadlockCycleNamesEveryMember) {
  expect_rejected(
      "bad_deadlock",
      "bad_deadlock.py:14:17: error: deadlock: processes 'ping' and 'pong' wait on each other in a cycle "
      "('ping' waits to receive from 'b_to_a' (empty) until 'pong' sends; 'pong' waits to receive from "
      "'a_to_b' (empty) until 'ping' sends) [csp.deadlock]");
}

TEST_F(CspCompile, DepthTooSmallForTwoSendsBeforeTheFirstReceive) {
  expect_rejected(
      "bad_depth",
      "bad_depth.py:14:9: error: channel 'tiles' has depth 1 but process 'producer' needs 2 slots before "
      "'consumer' receives the first item: deadlock between 'producer' and 'consumer' ('producer' waits for "
      "a free slot of 'tiles' (1 of 1 used) until 'consumer' receives; 'consumer' waits to receive from "
      "'header' (empty) until 'producer' sends) [csp.depth]");
}

TEST_F(CspCompile, ReceivedTypeMismatchIsRejected) {
  expect_rejected(
      "bad_type_mismatch",
      "bad_type_mismatch.py:18:37: error: recv from channel 'tiles' yields Tile[32, 128, f32] but 't' is "
      "annotated Tile[16, 128, f32] [csp.type-mismatch]");
}

TEST_F(CspCompile, ForwardedTypeMismatchIsRejected) {
  expect_rejected(
      "bad_type_forward",
      "bad_type_forward.py:20:13: error: process 'forward' sends 't' of type Tile[32, 128, f32] on channel "
      "'narrow', which carries Tile[32, 128, f16] [csp.type-mismatch]");
}

TEST_F(CspCompile, StreamItemTypeMismatchIsRejected) {
  expect_rejected("bad_type_stream",
                  "bad_type_stream.py:19:13: error: process 'y' sends 't' of type Tile[32, 128, f32] "
                  "on channel 'b', which carries Tile[32, 128, f16] [csp.type-mismatch]");
}

TEST_F(CspCompile, RecvOnUndeclaredChannelIsRejected) {
  expect_rejected(
      "bad_undeclared",
      "bad_undeclared.py:25:21: error: process 'storer' receives from channel 'raw', which it does not "
      "declare: add it to consumes(...) [csp.undeclared-channel]");
}

TEST_F(CspCompile, BranchesWithDifferentCountsAreRejected) {
  expect_rejected(
      "bad_path_imbalance",
      "bad_path_imbalance.py:12:9: error: the branches of this if send 1 and 0 items on channel 'tiles': "
      "put/get counts must agree on every path [csp.path-imbalance]");
}

TEST_F(CspCompile, ReplicaCountsEnterTheBalance) {
  expect_rejected("bad_replicas",
                  "bad_replicas.py:17:29: error: channel 'work' is unbalanced: its producers send 16 items "
                  "(generator: 16) "
                  "but its consumers receive 12 (worker: 4 each x3 replicas) [csp.count-mismatch]");
}

TEST_F(CspCompile, DeadlockThroughAStreamLoopIsFound) {
  expect_rejected(
      "bad_consume_deadlock",
      "bad_consume_deadlock.py:13:18: error: deadlock: processes 'relay' and 'client' wait on each other in "
      "a "
      "cycle ('relay' waits to receive from 'requests' (empty) until 'client' sends; 'client' waits to "
      "receive from 'replies' (empty) until 'relay' sends) [csp.deadlock]");
}

TEST_F(CspCompile, EveryMalformedDeclarationIsReported) {
  for (const char *line :
       {"bad_declarations.py:9:34: error: channel 'c': depth must be at least 1, got 0 (use Event() for a "
        "rendezvous "
        "of depth 0) [csp.channel]",
        "bad_declarations.py:9:43: error: channel 'c': pack must be at least 1, got -1 [csp.channel]",
        "bad_declarations.py:9:9: error: channel 'c' is declared twice [csp.duplicate]",
        "bad_declarations.py:13:6: error: process 'x' is declared twice [csp.duplicate]"})
    expect_rejected("bad_declarations", line);
}

TEST_F(CspCompile, UncountableLoopsAreRejected) {
  for (const char *line :
       {"bad_uncountable.py:11:9: error: a while loop around channel operations cannot be counted; use for v "
        "in "
        "range(n) [csp.dynamic-count]",
        "bad_uncountable.py:14:28: error: the trip count of a loop around channel operations must not depend "
        "on an "
        "enclosing loop variable [csp.dynamic-count]",
        "bad_uncountable.py:18:18: error: a loop around channel operations needs a positive constant step "
        "[csp.dynamic-count]",
        "bad_uncountable.py:24:13: error: break in a loop with channel operations makes the put/get counts "
        "differ "
        "between paths [csp.control-flow]",
        "bad_uncountable.py:25:9: error: return before the end of a process makes its put/get counts "
        "path-dependent "
        "[csp.control-flow]"})
    expect_rejected("bad_uncountable", line);
}

TEST_F(CspCompile, ConnectOfDifferentElementTypesIsRejected) {
  expect_rejected(
      "bad_connect",
      "bad_connect.py:10:21: error: connect links channel 'src' of Tile[32, 128, f32] with channel 'half' of "
      "Tile[32, 128, f16]: element types must agree end to end [csp.type-mismatch]");
}

TEST_F(CspCompile, UnevenDistributionIsRejected) {
  expect_rejected(
      "bad_connect_uneven",
      "bad_connect_uneven.py:13:5: error: connect distributes the 6 items of 'src' over 4 channels, which "
      "does not divide evenly [csp.count-mismatch]");
}

// With the real tile dialect: process bodies are typed and lowered as tile bodies with foreign csp ops.
class CspWithTileDialect : public CspCompile {
protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(HTP_TILE_PLUGIN)) << "the tile plugin is not built: " << HTP_TILE_PLUGIN;
  }
  htp::test::CommandResult compile_with_tile(const std::string &name) {
    std::vector<std::string> args = {"--plugins", HTP_CSP_PLUGIN,   "--plugins", HTP_TILE_PLUGIN,
                                     "--plugins", HTP_CHECK_PLUGIN, "compile",   program(name).string(),
                                     "--target",  "check",          "-o",        out().string()};
    auto r = run_host(args);
    r.err = replace_all(r.err, program(name).string(), name + ".py");
    return r;
  }
};

TEST_F(CspWithTileDialect, ProcessBodiesLowerToTileKernels) {
  auto r = compile_with_tile("pipeline");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out() / "codegen/check/tile.kernels.json"))
      << "the tile dialect wrote no tile.kernels: process bodies were not lowered";
  auto kernels = nlohmann::json::parse(read(out() / "codegen/check/tile.kernels.json"));
  std::vector<std::string> names, ops;
  std::function<void(const nlohmann::json &)> collect = [&](const nlohmann::json &body) {
    for (const auto &op : body) {
      if (op["op"].get<std::string>().rfind("csp.", 0) == 0)
        ops.push_back(op["op"].get<std::string>() + "(" + op["attrs"]["channel"].get<std::string>() + ")");
      if (op.contains("body")) collect(op["body"]);
    }
  };
  for (const auto &k : kernels["kernels"]) {
    EXPECT_EQ(k["kind"], "process");
    names.push_back(k["name"]);
    collect(k["body"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"loader", "compute", "storer"}));
  EXPECT_EQ(ops, (std::vector<std::string>{"csp.send(loaded)", "csp.recv(loaded)", "csp.send(computed)",
                                           "csp.recv(computed)"}));
}

TEST_F(CspWithTileDialect, SentValueTypedByTheTileDialectMustMatchTheChannel) {
  auto r = compile_with_tile("bad_type_computed");
  ASSERT_EQ(r.exit_code, 1) << "a send of the wrong tile type compiled: the tile dialect did not type the value";
  EXPECT_NE(
      r.err.find(
          "bad_type_computed.py:13:13: error: process 'loader' sends a value of type Tile[32, 128, f16] "
          "on channel 'tiles', which carries Tile[32, 128, f32] [csp.type-mismatch]"),
      std::string::npos)
      << r.err;
}
