// The SDK's typed csp.graph (htp/csp_graph.hpp): what dialect-csp writes reads and writes back unchanged,
// every missing required key and wrong type is an error naming its JSON pointer, and another major
// version is rejected.
#include <htp/csp_graph.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path csp_golden_dir() { return fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/dialect-csp/golden"; }

json csp_golden(const std::string &name) {
  std::ifstream in(csp_golden_dir() / (name + ".csp.graph.json"));
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

htp::IrDocumentError csp_error_of(const json &doc) {
  try {
    (void)htp::read_csp_graph(doc);
  } catch (const htp::IrDocumentError &e) {
    return e;
  }
  ADD_FAILURE() << "read without an error: " << doc.dump().substr(0, 200);
  return htp::IrDocumentError(htp::IrDocumentError::Kind::Malformed, "", "", "");
}

TEST(CspGraph, EveryDialectGoldenRoundTrips) {
  size_t n = 0;
  for (const auto &entry : fs::directory_iterator(csp_golden_dir())) {
    const std::string file = entry.path().filename().string();
    const json doc = csp_golden(file.substr(0, file.find('.')));
    const htp::CspGraph typed = htp::read_csp_graph(doc);
    EXPECT_EQ(json(typed), doc) << file;
    EXPECT_EQ(htp::read_csp_graph(json(typed)), typed) << file;
    ++n;
  }
  EXPECT_GE(n, 6u);
}

TEST(CspGraph, ReadsTheTypedStructure) {
  const htp::CspGraph g = htp::read_csp_graph(csp_golden("pipeline"));
  const htp::CspProgram &p = g.programs.at(0);
  ASSERT_FALSE(p.channels.empty());
  const htp::CspChannel &c = p.channels[0];
  EXPECT_FALSE(c.is_event());
  ASSERT_TRUE(c.elem);
  EXPECT_EQ(c.elem->kind, "tile");
  EXPECT_GE(c.depth, 1);
  EXPECT_EQ(p.channel(c.name), &c);
  for (const htp::CspProcess &proc : p.processes) {
    EXPECT_FALSE(proc.stage);
    EXPECT_FALSE(proc.counts.empty());
  }
  const htp::CspGraph pipe = htp::read_csp_graph(csp_golden("wsp_pipe"));
  EXPECT_EQ(pipe.programs.at(0).origin, "wsp.pipe");
  const htp::CspProcess &stage = pipe.programs[0].processes.at(0);
  ASSERT_TRUE(stage.stage);
  EXPECT_TRUE(stage.stage->is_loop());
  bool channel = false;
  htp::for_each_node(stage.stage->body, [&](const htp::WspNode &n) {
    for (const htp::WspArg &a : n.args) channel = channel || a.is_channel();
  });
  EXPECT_TRUE(channel);
  const htp::CspGraph event = htp::read_csp_graph(csp_golden("event"));
  bool has_event = false;
  for (const htp::CspChannel &x : event.programs.at(0).channels) has_event = has_event || (x.is_event() && !x.elem && x.depth == 0);
  EXPECT_TRUE(has_event);
}

TEST(CspGraph, EachMissingRequiredKeyIsAnErrorAtItsPath) {
  const json doc = csp_golden("pipeline"), pipe = csp_golden("wsp_pipe");
  const std::string p = "/programs/0";
  for (const auto &[d, pointer] : std::vector<std::pair<const json *, std::string>>{
           {&doc, "/schema"}, {&doc, "/programs"}, {&doc, p + "/name"}, {&doc, p + "/span"}, {&doc, p + "/params"},
           {&doc, p + "/channels"}, {&doc, p + "/processes"}, {&doc, p + "/links"}, {&doc, p + "/params/0/name"},
           {&doc, p + "/params/0/dir"}, {&doc, p + "/params/0/type"}, {&doc, p + "/params/0/type/shape"},
           {&doc, p + "/channels/0/name"}, {&doc, p + "/channels/0/kind"}, {&doc, p + "/channels/0/elem"},
           {&doc, p + "/channels/0/depth"}, {&doc, p + "/channels/0/pack"}, {&doc, p + "/channels/0/producers"},
           {&doc, p + "/channels/0/consumers"}, {&doc, p + "/channels/0/span"}, {&doc, p + "/processes/0/name"},
           {&doc, p + "/processes/0/replicas"}, {&doc, p + "/processes/0/function"}, {&doc, p + "/processes/0/span"},
           {&doc, p + "/processes/0/produces"}, {&doc, p + "/processes/0/consumes"}, {&doc, p + "/processes/0/args"},
           {&doc, p + "/processes/0/counts"}, {&pipe, p + "/processes/0/stage/vars"},
           {&pipe, p + "/processes/0/stage/body/0/args/1/channel"}}) {
    json bad = *d;
    const json::json_pointer ptr(pointer);
    ASSERT_TRUE(bad.contains(ptr)) << pointer;
    bad[ptr.parent_pointer()].erase(ptr.back());
    const htp::IrDocumentError e = csp_error_of(bad);
    if (pointer.ends_with("/channel"))  // without its channel the argument reads as a view, which needs a tensor
      EXPECT_EQ(e.path(), p + "/processes/0/stage/body/0/args/1/tensor");
    else
      EXPECT_EQ(e.path(), pointer);
    EXPECT_NE(e.reason().find("required key is missing"), std::string::npos) << pointer << ": " << e.what();
  }
}

TEST(CspGraph, AWrongTypeOrRangeIsAnErrorAtItsPath) {
  const json doc = csp_golden("pipeline");
  const std::string p = "/programs/0";
  struct Case {
    std::string pointer;
    json value;
    std::string reason;
  };
  for (const Case &c : std::vector<Case>{
           {p + "/channels/0/kind", "queue", "expected one of fifo, event, found \"queue\""},
           {p + "/channels/0/depth", 0, "expected an integer >= 1, found 0"},
           {p + "/channels/0/elem", nullptr, "expected the element type of the fifo"},
           {p + "/processes/0/replicas", 0, "expected an integer >= 1, found 0"},
           {p + "/origin", "thread", "expected one of program, wsp.pipe, found \"thread\""},
       }) {
    json bad = doc;
    bad[json::json_pointer(c.pointer)] = c.value;
    const htp::IrDocumentError e = csp_error_of(bad);
    EXPECT_EQ(e.path(), c.pointer);
    EXPECT_EQ(e.reason(), c.reason) << c.pointer;
  }
}

TEST(CspGraph, AnotherMajorVersionIsRejected) {
  json doc = csp_golden("pipeline");
  doc["schema"] = "htp.csp.graph.v2";
  EXPECT_EQ(csp_error_of(doc).kind(), htp::IrDocumentError::Kind::Version);
  doc["schema"] = "htp.csp.graph.v1.4";
  EXPECT_NO_THROW((void)htp::read_csp_graph(doc));
}

}  // namespace
