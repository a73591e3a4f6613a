// The SDK's typed wsp.task_graph (htp/wsp_task_graph.hpp): what dialect-wsp writes reads and writes back
// unchanged, every missing required key and wrong type is an error naming its JSON pointer, and another
// major version is rejected.
#include <htp/wsp_task_graph.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path wsp_golden_dir() { return fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/dialect-wsp/golden"; }

json wsp_golden(const std::string &name) {
  std::ifstream in(wsp_golden_dir() / (name + ".json"));
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

htp::IrDocumentError wsp_error_of(const json &doc) {
  try {
    (void)htp::read_wsp_task_graph(doc);
  } catch (const htp::IrDocumentError &e) {
    return e;
  }
  ADD_FAILURE() << "read without an error: " << doc.dump().substr(0, 200);
  return htp::IrDocumentError(htp::IrDocumentError::Kind::Malformed, "", "", "");
}

TEST(WspTaskGraph, EveryDialectGoldenRoundTrips) {
  size_t n = 0;
  for (const auto &entry : fs::directory_iterator(wsp_golden_dir())) {
    const json doc = wsp_golden(entry.path().stem().string());
    const htp::WspTaskGraph typed = htp::read_wsp_task_graph(doc);
    EXPECT_EQ(json(typed), doc) << entry.path();
    EXPECT_EQ(htp::read_wsp_task_graph(json(typed)), typed) << entry.path();
    ++n;
  }
  EXPECT_GE(n, 7u);
}

TEST(WspTaskGraph, ReadsTheTypedStructure) {
  const htp::WspTaskGraph g = htp::read_wsp_task_graph(wsp_golden("ragged_attention"));
  const htp::WspWorkload &w = g.workloads.at(0);
  const htp::WspNode &loop = w.body.at(0);
  EXPECT_TRUE(loop.is_loop());
  EXPECT_EQ(loop.domain.type, "ragged");
  EXPECT_EQ(loop.domain.lengths, "blocks");
  EXPECT_EQ(loop.domain.extent, json({{"param", "B"}}));
  ASSERT_TRUE(w.schedule.dispatch);
  EXPECT_EQ(w.schedule.dispatch->policy, "affinity");
  EXPECT_EQ(w.schedule.dispatch->axis, "b");
  EXPECT_EQ(w.schedule.streams, 2);
  EXPECT_EQ(w.schedule.buffer->at(1).tensor, "V");
  EXPECT_TRUE(w.params.at(0).type.shape.at(0).is_symbol());
  size_t tasks = 0;
  htp::for_each_node(w.body, [&](const htp::WspNode &n) {
    if (!n.is_task()) return;
    ++tasks;
    EXPECT_FALSE(n.kernel.empty());
    for (const htp::WspArg &a : n.args) EXPECT_TRUE(a.is_view() || a.is_scalar());
  });
  EXPECT_GE(tasks, 1u);
  const htp::WspTaskGraph moe = htp::read_wsp_task_graph(wsp_golden("moe_routing"));
  const htp::WspNode &sparse = moe.workloads[0].body[0].body[0];
  EXPECT_EQ(sparse.domain.indptr, "indptr");
  EXPECT_EQ(sparse.domain.row, json({{"var", "t"}}));
}

TEST(WspTaskGraph, EachMissingRequiredKeyIsAnErrorAtItsPath) {
  const json when = wsp_golden("tiered_when"), ragged = wsp_golden("ragged_attention");
  const std::string w = "/workloads/0", task = w + "/body/0/body/0/then/0";
  for (const auto &[doc, pointer] : std::vector<std::pair<const json *, std::string>>{
           {&when, "/schema"}, {&when, "/workloads"}, {&when, w + "/name"}, {&when, w + "/span"},
           {&when, w + "/span/end_col"}, {&when, w + "/params"}, {&when, w + "/intermediates"}, {&when, w + "/axes"},
           {&when, w + "/body"}, {&when, w + "/schedule"}, {&when, w + "/schedule/name"}, {&when, w + "/schedule/span"},
           {&when, w + "/schedule/dispatch/n"}, {&when, w + "/schedule/dispatch/policy"}, {&when, w + "/params/0/name"},
           {&when, w + "/params/0/dir"}, {&when, w + "/params/0/type"}, {&when, w + "/params/0/type/shape"},
           {&when, w + "/params/0/type/dtype"}, {&when, w + "/body/0/kind"}, {&when, w + "/body/0/span"},
           {&when, w + "/body/0/vars"}, {&when, w + "/body/0/domain"}, {&when, w + "/body/0/domain/extents"},
           {&when, w + "/body/0/dep"}, {&when, w + "/body/0/body"}, {&when, w + "/body/0/body/0/cond"},
           {&when, w + "/body/0/body/0/then"}, {&when, w + "/body/0/body/0/else"}, {&when, w + "/body/0/body/0/dep"},
           {&when, task + "/id"}, {&when, task + "/kernel"}, {&when, task + "/args"}, {&when, task + "/reads"},
           {&when, task + "/writes"}, {&when, task + "/args/0/param"}, {&when, task + "/args/0/tensor"},
           {&when, task + "/args/0/dir"}, {&when, task + "/args/0/offset"}, {&when, task + "/args/0/shape"},
           {&ragged, w + "/body/0/domain/extent"}, {&ragged, w + "/body/0/domain/lengths"},
           {&ragged, w + "/schedule/dispatch/axis"}, {&ragged, w + "/schedule/tile/0/factor"},
           {&ragged, w + "/schedule/buffer/0/space"}}) {
    json bad = *doc;
    const json::json_pointer p(pointer);
    ASSERT_TRUE(bad.contains(p)) << pointer;
    bad[p.parent_pointer()].erase(p.back());
    const htp::IrDocumentError e = wsp_error_of(bad);
    EXPECT_EQ(e.path(), pointer);
    EXPECT_NE(e.reason().find("required key is missing"), std::string::npos) << pointer << ": " << e.what();
  }
}

TEST(WspTaskGraph, AWrongTypeOrRangeIsAnErrorAtItsPath) {
  const json doc = wsp_golden("tiered_when");
  const std::string w = "/workloads/0", task = w + "/body/0/body/0/then/0";
  struct Case {
    std::string pointer;
    json value;
    std::string reason;
  };
  for (const Case &c : std::vector<Case>{
           {w + "/name", "2fast", "expected an identifier, found \"2fast\""},
           {w + "/params/0/type/shape/0", 0, "expected an integer >= 1, found 0"},
           {w + "/params/0/type/kind", "tile", "expected one of tensor, scalar, found \"tile\""},
           {w + "/body/0/kind", "repeat", "expected one of loop, when, group, task, found \"repeat\""},
           {w + "/body/0/dep", "conditional", "expected one of independent, sequential, selected, found \"conditional\""},
           {w + "/body/0/domain/type", "stream", "expected one of dense, seq, ragged, sparse, found \"stream\""},
           {task + "/id", "x1", "expected t<number>, found \"x1\""},
           {task + "/args/0/offset/0", json::array(), "expected an expression (a number, true/false, or an object with "
                                                      "var, param, read or op), found an array"},
           {w + "/schedule/dispatch/n", 0, "expected an integer >= 1, found 0"},
       }) {
    json bad = doc;
    bad[json::json_pointer(c.pointer)] = c.value;
    const htp::IrDocumentError e = wsp_error_of(bad);
    EXPECT_EQ(e.path(), c.pointer);
    EXPECT_EQ(e.reason(), c.reason) << c.pointer;
  }
}

TEST(WspTaskGraph, ChannelArgumentsAreOnlyForCspStages) {
  json doc = wsp_golden("tiered_when");
  json &arg = doc["workloads"][0]["body"][0]["body"][0]["then"][0]["args"][0];
  arg = {{"param", "q"}, {"channel", "c1"}, {"dir", "in"}, {"shape", {1, 64}}};
  EXPECT_EQ(wsp_error_of(doc).path(), "/workloads/0/body/0/body/0/then/0/args/0/tensor");
  htp::ir_reader::Reader<json> r{"csp.graph"};
  const htp::WspNode n = htp::wsp_task_graph_reader::read_node(r, doc["workloads"][0]["body"][0], "/stage",
                                                               htp::wsp_task_graph_reader::NodeOptions{.channels = true});
  const htp::WspArg &a = n.body[0].then_body[0].args[0];
  EXPECT_TRUE(a.is_channel());
  EXPECT_EQ(json(a), arg);
}

TEST(WspTaskGraph, AnotherMajorVersionIsRejected) {
  json doc = wsp_golden("grid_2d");
  doc["schema"] = "htp.wsp.task_graph.v2";
  const htp::IrDocumentError e = wsp_error_of(doc);
  EXPECT_EQ(e.kind(), htp::IrDocumentError::Kind::Version);
  EXPECT_STREQ(e.what(), "wsp.task_graph has schema \"htp.wsp.task_graph.v2\"; this reader reads htp.wsp.task_graph.v1 "
                         "and its minor revisions (htp.wsp.task_graph.v1.N)");
  doc["schema"] = "htp.wsp.task_graph.v1.1";
  EXPECT_NO_THROW((void)htp::read_wsp_task_graph(doc));
}

}  // namespace
