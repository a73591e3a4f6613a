// WSP `with P.pipe():` scopes over channels through htp-host with the real dialect-wsp and dialect-tile:
// the csp.graph they map onto (golden), the effect check's diagnostics at the workload's source, the
// launch checks of dialect-wsp and the obligations a target without channels is rejected on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::run_host;
using htp::test::ScratchDir;
using htp::test::replace_all;
using htp::test::read;

namespace {

const fs::path kPipeTestDir = HTP_CSP_TEST_DIR;

class WspPipe : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *plugin : {HTP_WSP_PLUGIN, HTP_TILE_PLUGIN})
      if (!fs::exists(plugin)) GTEST_SKIP() << "pipe programs need " << plugin << ", which is not built";
  }

  fs::path program(const std::string &name) const { return kPipeTestDir / "programs" / (name + ".py"); }
  fs::path out() const { return dir.path() / "pkg"; }

  htp::test::CommandResult compile(const std::string &name, const std::string &target = "check") {
    auto r = run_host({"--no-builtin-plugins", "--plugins", HTP_CSP_PLUGIN, "--plugins", HTP_WSP_PLUGIN, "--plugins", HTP_TILE_PLUGIN,
                       "--plugins", HTP_CHECK_PLUGIN, "compile", program(name).string(), "--target", target,
                       "-o", out().string()});
    r.err = replace_all(r.err, program(name).string(), name + ".py");
    return r;
  }

  /// Compiles a bad program: it fails, leaves no package, and reports `line` among its diagnostics.
  void expect_rejected(const std::string &name, const std::string &line,
                       const std::string &target = "check") {
    auto r = compile(name, target);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(fs::exists(out()));
    EXPECT_NE(r.err.find(line), std::string::npos) << "expected:\n" << line << "\ngot:\n" << r.err;
  }

  ScratchDir dir;
};

} // namespace

TEST_F(WspPipe, PipeGraphMatchesGolden) {
  auto r = compile("wsp_pipe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::path golden = kPipeTestDir / "golden" / "wsp_pipe.csp.graph.json";
  std::string actual =
      replace_all(read(out() / "codegen/check/csp.graph.json"), program("wsp_pipe").string(), "wsp_pipe.py");
  EXPECT_TRUE(htp::test::matches_golden(golden, actual));
}

TEST_F(WspPipe, PipeWorkloadIsNotATaskGraphWorkload) {
  auto r = compile("wsp_pipe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto graph = nlohmann::json::parse(read(out() / "codegen/check/wsp.task_graph.json"));
  EXPECT_EQ(graph["workloads"], nlohmann::json::array());
}

TEST_F(WspPipe, StageSendingMoreThanTheNextReceivesIsRejectedAtTheRecv) {
  expect_rejected(
      "bad_pipe_count_mismatch",
      "bad_pipe_count_mismatch.py:24:27: error: channel 'rows' is unbalanced: its producers send 8 "
      "items (load_rows: 8) but its consumers receive 6 (store_rows: 6) [csp.count-mismatch]\n"
      "bad_pipe_count_mismatch.py:22:13: note: the first send on 'rows' is here [csp.note]");
}

TEST_F(WspPipe, ChannelWithoutAReceivingStageIsRejected) {
  expect_rejected(
      "bad_pipe_no_consumer",
      "bad_pipe_no_consumer.py:20:12: error: channel 'side' has no consumer: stage 'load_rows_2' of "
      "the pipe sends on it but no stage receives from it [csp.no-consumer]");
}

TEST_F(WspPipe, StagesWaitingOnEachOtherAreADeadlock) {
  expect_rejected(
      "bad_pipe_deadlock",
      "bad_pipe_deadlock.py:23:34: error: deadlock: processes 'ping' and 'pong' wait on each other in "
      "a cycle ('ping' waits to receive from 'b_to_a' (empty) until 'pong' sends; 'pong' waits to "
      "receive from 'a_to_b' (empty) until 'ping' sends) [csp.deadlock]");
}

TEST_F(WspPipe, SentLaunchMustLeaveOneOutParameterForTheSlot) {
  expect_rejected("bad_pipe_slot",
                  "bad_pipe_slot.py:23:24: error: a launch sent on a channel leaves exactly one Out tensor "
                  "parameter of kernel 'copy_rows' unbound, for the channel's slot; this one binds every "
                  "parameter [wsp.arity]");
}

TEST_F(WspPipe, ReceivedItemMustHaveTheParameterType) {
  expect_rejected("bad_pipe_slot",
                  "bad_pipe_slot.py:25:26: error: parameter 'x' of kernel 'half_rows' is f32 [16, 128], but "
                  "channel 'rows' carries f32 [32, 128] [wsp.tile-shape]");
}

TEST_F(WspPipe, TargetWithoutChannelsIsRejectedAtTheDeclaration) {
  expect_rejected(
      "wsp_pipe",
      "wsp_pipe.py:28:14: error: Uses.Channel(kind=fifo) is not accepted by target check-strict — no "
      "selected component accepts Uses.Channel(kind=fifo); check.backend accepts it for check "
      "[resolve.unaccepted]",
      "check-strict");
}

TEST_F(WspPipe, WorkloadWithChannelsHoldsOnlyTheDeclarationsAndThePipe) {
  expect_rejected("bad_pipe_form",
                  "bad_pipe_form.py:16:5: error: workload 'loose' declares channels, so its body holds their "
                  "declarations and one `with P.pipe():` scope whose statements are the stages; this Expr "
                  "statement is neither [csp.pipe]");
}

TEST_F(WspPipe, StageLoopAroundChannelOperationsIsSequential) {
  expect_rejected(
      "bad_pipe_form",
      "bad_pipe_form.py:28:18: error: a loop of a pipe stage around send / recv is sequential (`for "
      "i in P.seq(n):` or `range(n)`): the items of a channel are ordered [csp.stage]");
}

TEST_F(WspPipe, ScheduleOfAPipeOverChannelsIsRejected) {
  expect_rejected(
      "bad_pipe_schedule",
      "bad_pipe_schedule.py:22:2: error: workload 'piped' declares channels: its P.pipe runs as a CSP "
      "network (csp.graph), which a schedule does not apply to [wsp.schedule]");
}

TEST_F(WspPipe, PipeRaisesTheObligationsOfACspProgramAtItsSpans) {
  auto r = compile("wsp_pipe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto manifest = nlohmann::json::parse(read(out() / "manifest.json"));
  std::vector<std::string> seen;
  for (const auto &o : manifest["plan"]["obligations"]) {
    std::string cap = o["capability"];
    if (cap.find("Channel") == std::string::npos && cap.find("csp") == std::string::npos) continue;
    seen.push_back(cap + "@" + std::to_string(o["span"]["line"].get<int>()) + ":" +
                   std::to_string(o["span"]["col"].get<int>()));
  }
  // wsp_pipe.py: the two channel declarations at lines 28 and 29, the `with P.pipe():` at line 30.
  EXPECT_EQ(seen, (std::vector<std::string>{"Uses.Channel(kind=fifo)@28:13", "Uses.Channel(kind=fifo)@29:15",
                                            "Uses.Dialect(name=csp)@30:4"}));
}
