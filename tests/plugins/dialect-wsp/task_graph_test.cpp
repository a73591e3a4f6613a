// Golden task graphs: each program of programs/ compiled for target `check`, its module attribute
// `wsp.task_graph` compared with golden/<name>.json. HTP_UPDATE_GOLDENS=1 rewrites the goldens (review
// the diff before committing it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/golden.hpp"
#include "wsp_test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json task_graph_of(const std::string &program, htp::test::ScratchDir &dir,
                   std::vector<std::string> extra = {}) {
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(wsp_test::program(program), out, "check", extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(wsp_test::read_file(out / "codegen/check/wsp.task_graph.json"), nullptr, false);
}

/// The workload entry named `name`.
json workload(const json &graph, const std::string &name) {
  for (const auto &w : graph["workloads"])
    if (w["name"] == name) return w;
  return nullptr;
}

/// `v` without its "span" keys, at any depth.
json without_spans(json v) {
  if (v.is_object()) {
    v.erase("span");
    for (auto &[k, x] : v.items())
      x = without_spans(x);
  } else if (v.is_array()) {
    for (auto &x : v)
      x = without_spans(x);
  }
  return v;
}

class TaskGraphGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TaskGraphGolden, MatchesGolden) {
  htp::test::ScratchDir dir;
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(wsp_test::program(GetParam() + ".py"), out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string actual = wsp_test::read_file(out / "codegen/check/wsp.task_graph.json");
  ASSERT_FALSE(actual.empty());
  fs::path golden = fs::path(HTP_WSP_TEST_DIR) / "golden" / (GetParam() + ".json");
  EXPECT_TRUE(htp::test::matches_golden(golden, actual));
  EXPECT_EQ(json::parse(actual)["schema"], "htp.wsp.task_graph.v1");
}

INSTANTIATE_TEST_SUITE_P(Programs, TaskGraphGolden,
                         ::testing::Values("grid_2d", "seq_scan", "moe_routing", "ragged_attention",
                                           "tiered_when", "groups", "stitch"));

TEST(TaskGraph, IfElifElseLowersLikePWhenAndPOtherwise) {
  htp::test::ScratchDir dir;
  json graph = task_graph_of("tiered_when.py", dir);
  json when = without_spans(workload(graph, "tiers")["body"]);
  json sugar = without_spans(workload(graph, "tiers_if")["body"]);
  // Task ids are per workload, so the two trees are equal once spans are set aside.
  EXPECT_EQ(when, sugar);
  EXPECT_EQ(when[0]["body"][0]["kind"], "when");
  EXPECT_EQ(when[0]["body"][0]["else"][0]["kind"], "when");
}

TEST(TaskGraph, CanonicalizeDumpShowsTheCanonicalSurface) {
  htp::test::ScratchDir dir;
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(wsp_test::program("groups.py"), out, "check", {"--dump-ir=wsp.canonicalize"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string after;
  for (const auto &e : fs::directory_iterator(out / "ir"))
    if (e.path().filename().string().find("wsp.canonicalize.py") != std::string::npos &&
        e.path().filename().string().find("before") == std::string::npos)
      after = wsp_test::read_file(e.path());
  EXPECT_NE(after.find("for k in P.seq(half):"), std::string::npos) << after;
  EXPECT_NE(after.find("with combine():"), std::string::npos) << after;
}

TEST(TaskGraph, ScheduleAbsentIsAnEmptyScheduleObject) {
  htp::test::ScratchDir dir;
  json graph = task_graph_of("groups.py", dir);
  EXPECT_EQ(workload(graph, "staged")["schedule"], json::parse(R"({"name": null, "span": null})"));
}

TEST(TaskGraph, TwoCompilesGiveTheSameGraph) {
  htp::test::ScratchDir a, b;
  EXPECT_EQ(task_graph_of("ragged_attention.py", a), task_graph_of("ragged_attention.py", b));
}

TEST(TaskGraph, TheThreeSpellingsOfASparseRowGiveOneDomain) {
  htp::test::ScratchDir dir;
  fs::path prog =
      dir.write("sparse.py", R"(from htp.dialects.tile import kernel, Tensor, In, InOut, f32, i32, load, store
from htp.dialects.wsp import workload, P, Sparse


@kernel
def k(x: In[Tensor[1, 64, f32]], y: InOut[Tensor[1, 64, f32]]):
    store(y, load(x))


@workload
def alias(X: In[Tensor[16, 64, f32]], Y: InOut[Tensor[8, 64, f32]], ptr: In[Tensor[17, i32]], idx: In[Tensor[32, i32]]):
    routing = Sparse(16, ptr, idx)
    for t in P(16):
        for e in P.sel(routing[t]):
            k(X[t:t + 1, :], Y[e:e + 1, :])


@workload
def in_place(X: In[Tensor[16, 64, f32]], Y: InOut[Tensor[8, 64, f32]], ptr: In[Tensor[17, i32]], idx: In[Tensor[32, i32]]):
    for t in P(16):
        for e in P.sel(Sparse(16, ptr, idx)[t]):
            k(X[t:t + 1, :], Y[e:e + 1, :])


@workload
def canonical(X: In[Tensor[16, 64, f32]], Y: InOut[Tensor[8, 64, f32]], ptr: In[Tensor[17, i32]], idx: In[Tensor[32, i32]]):
    for t in P(16):
        for e in P.sel(Sparse(16, ptr, idx), t):
            k(X[t:t + 1, :], Y[e:e + 1, :])
)");
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(prog, out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json graph = json::parse(wsp_test::read_file(out / "codegen/check/wsp.task_graph.json"));
  json body = without_spans(workload(graph, "canonical")["body"]);
  EXPECT_EQ(body[0]["body"][0]["domain"],
            json::parse(
                R"({"type": "sparse", "rows": 16, "indptr": "ptr", "indices": "idx", "row": {"var": "t"}})"));
  EXPECT_EQ(body[0]["body"][0]["dep"], "selected");
  EXPECT_EQ(without_spans(workload(graph, "alias")["body"]), body);
  EXPECT_EQ(without_spans(workload(graph, "in_place")["body"]), body);
}

TEST(TaskGraph, ConstantsFoldWithPythonSemanticsAndStaticConditionsPickTheirBranch) {
  htp::test::ScratchDir dir;
  fs::path prog = dir.write(
      "fold.py", R"(from htp.dialects.tile import kernel, Tensor, Scalar, InOut, f32, i64, load, store
from htp.dialects.wsp import workload, P

HEADS = 16


@kernel
def k(y: InOut[Tensor[1, 64, f32]], a: Scalar[i64], b: Scalar[i64]):
    store(y, load(y))


@workload
def w(Y: InOut[Tensor[4, 64, f32]], n: int):
    for i in P(4):
        if HEADS > 8:
            if n > 2:
                k(Y[i:i + 1, :], -7 // 2, -7 % 3)
        else:
            k(Y[i:i + 1, :], 0, 0)
)");
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(prog, out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json body = without_spans(
      workload(json::parse(wsp_test::read_file(out / "codegen/check/wsp.task_graph.json")), "w")["body"]);
  // HEADS > 8 holds at compile time: its `else` is gone; `n > 2` stays a runtime condition.
  json when = body[0]["body"][0];
  ASSERT_EQ(body[0]["body"].size(), 1u);
  EXPECT_EQ(when["kind"], "when");
  EXPECT_EQ(when["cond"], json::parse(R"({"op": "gt", "args": [{"param": "n"}, 2]})"));
  EXPECT_EQ(when["then"][0]["args"][1]["scalar"], -4);
  EXPECT_EQ(when["then"][0]["args"][2]["scalar"], 2);
}

TEST(Obligations, OneUsesDialectPerWorkloadAndScheduleAndOneUsesSchedulePerDirective) {
  htp::test::ScratchDir dir;
  fs::path out = dir.path() / "pkg";
  auto r = wsp_test::compile(wsp_test::program("grid_2d.py"), out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json manifest = json::parse(wsp_test::read_file(out / "manifest.json"));
  std::vector<std::string> seen;
  for (const auto &o : manifest["plan"]["obligations"]) {
    std::string cap = o["capability"];
    if (cap.find("wsp") == std::string::npos && cap.find("Schedule") == std::string::npos) continue;
    seen.push_back(cap + "@" + std::to_string(o["span"]["line"].get<int>()) + ":" +
                   std::to_string(o["span"]["col"].get<int>()) + "-" +
                   std::to_string(o["span"]["end_col"].get<int>()));
  }
  // grid_2d.py: the workload at line 15, the schedule at 21, its four directives at 22-25 (span = the call).
  EXPECT_EQ(seen,
            (std::vector<std::string>{"Uses.Dialect(name=wsp)@15:0-64", "Uses.Dialect(name=wsp)@21:0-19",
                                      "Uses.Schedule(directive=dispatch,policy=round_robin)@22:4-28",
                                      "Uses.Schedule(directive=streams)@23:4-14",
                                      "Uses.Schedule(directive=timing,policy=immediate)@24:4-21",
                                      "Uses.Schedule(directive=task_window)@25:4-19"}));
}

} // namespace
