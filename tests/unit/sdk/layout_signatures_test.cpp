// The SDK's typed layout.signatures (htp/layout_signatures.hpp): what layout-axe writes reads and writes
// back unchanged, the facets are typed, every missing required key and wrong type is an error naming its
// JSON pointer, and another major version is rejected.
#include <htp/layout_signatures.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read(const fs::path &rel) {
  std::ifstream in(fs::path(HTP_TEST_SOURCE_DIR) / rel);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

/// layout-axe's golden (axe.check ran: footprints, collectives) and the documents backend-aie's fixtures
/// carry.
std::vector<std::pair<std::string, json>> documents() {
  std::vector<std::pair<std::string, json>> out{
      {"layout-axe/gemm_signatures", read("tests/plugins/layout-axe/golden/gemm_signatures.json")}};
  for (const auto &entry : fs::directory_iterator(fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/backend-aie/fixtures")) {
    if (entry.path().extension() != ".json") continue;
    json doc = read(fs::relative(entry.path(), HTP_TEST_SOURCE_DIR));
    if (doc.is_object() && doc.contains("layout.signatures"))
      out.emplace_back(entry.path().filename().string(), doc["layout.signatures"]);
  }
  return out;
}

htp::IrDocumentError layout_error_of(const json &doc) {
  try {
    (void)htp::read_layout_signatures(doc);
  } catch (const htp::IrDocumentError &e) {
    return e;
  }
  ADD_FAILURE() << "read without an error: " << doc.dump().substr(0, 200);
  return htp::IrDocumentError(htp::IrDocumentError::Kind::Malformed, "", "", "");
}

TEST(LayoutSignatures, EveryGoldenAndFixtureRoundTrips) {
  size_t n = 0;
  for (const auto &[name, doc] : documents()) {
    const htp::LayoutSignatures typed = htp::read_layout_signatures(doc);
    EXPECT_EQ(json(typed), doc) << name;
    EXPECT_EQ(htp::read_layout_signatures(json(typed)), typed) << name;
    ++n;
  }
  EXPECT_GE(n, 5u);
}

TEST(LayoutSignatures, WritesInTheOrderItRead) {
  std::ifstream in(fs::path(HTP_TEST_SOURCE_DIR) / "tests/plugins/backend-aie/fixtures/gemm_2x2.json");
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in)["layout.signatures"];  // layout-axe's order
  nlohmann::ordered_json back;
  htp::to_json(back, htp::read_layout_signatures(doc));
  EXPECT_EQ(back.dump(), doc.dump());
}

TEST(LayoutSignatures, ReadsTheTypedFacets) {
  const htp::LayoutSignatures s = htp::read_layout_signatures(read("tests/plugins/layout-axe/golden/gemm_signatures.json"));
  EXPECT_TRUE(s.checked);
  const htp::LayoutFunction *f = s.function("gemm_rownorm");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mapping, (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(f->mesh.size(), 2u);
  EXPECT_EQ(f->mesh[0], (std::pair<std::string, int64_t>{"mesh.x", 2}));
  ASSERT_TRUE(f->footprint);
  ASSERT_EQ(f->collectives.size(), 1u);
  EXPECT_EQ(f->collectives[0].op, "allreduce");
  EXPECT_EQ(f->collectives[0].reduce, "sum");
  EXPECT_EQ(f->collectives[0].axes, std::vector<std::string>{"mesh.y"});
  EXPECT_EQ(f->collectives[0].span.line, 14u);
  const htp::Layout *a = f->param("A");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dir, "in");
  EXPECT_EQ(a->dist, "S(0)R");
  EXPECT_EQ(a->local_shape, (std::vector<int64_t>{32, 64}));
  ASSERT_EQ(a->shard.size(), 1u);
  EXPECT_EQ(a->shard[0].axis, "mesh.x");
  EXPECT_EQ(a->shard[0].dim, 0);
  ASSERT_EQ(a->replica.size(), 1u);
  EXPECT_FALSE(a->replica[0].dim);
  EXPECT_TRUE(a->mem.is_default());
  EXPECT_EQ(a->space, "GM");
  EXPECT_EQ(f->param("nope"), nullptr);
  EXPECT_EQ(s.function("nope"), nullptr);
}

TEST(LayoutSignatures, EachMissingRequiredKeyIsAnErrorAtItsPath) {
  const json doc = read("tests/plugins/layout-axe/golden/gemm_signatures.json");
  const std::string f = "/functions/gemm_rownorm", a = f + "/params/A";
  for (const std::string &pointer :
       {std::string("/schema"), std::string("/functions"), f + "/mapping", f + "/mesh", f + "/params", f + "/collectives",
        f + "/collectives/0/op", f + "/collectives/0/span", a + "/kind", a + "/text", a + "/dist", a + "/rank",
        a + "/shard", a + "/replica", a + "/offset", a + "/mem", a + "/mem/strides", a + "/mem/swizzle", a + "/hw",
        a + "/hw/space", a + "/pending", a + "/shard/0/extent", a + "/shard/0/axis", a + "/shard/0/dim"}) {
    json bad = doc;
    const json::json_pointer ptr(pointer);
    ASSERT_TRUE(bad.contains(ptr)) << pointer;
    bad[ptr.parent_pointer()].erase(ptr.back());
    const htp::IrDocumentError e = layout_error_of(bad);
    EXPECT_EQ(e.path(), pointer);
    EXPECT_NE(e.reason().find("required key is missing"), std::string::npos) << pointer << ": " << e.what();
  }
}

TEST(LayoutSignatures, AWrongTypeOrRangeIsAnErrorAtItsPath) {
  const json doc = read("tests/plugins/layout-axe/golden/gemm_signatures.json");
  const std::string a = "/functions/gemm_rownorm/params/A";
  struct Case {
    std::string pointer;
    json value;
    std::string reason;
  };
  for (const Case &c : std::vector<Case>{
           {a + "/kind", "blocked", "expected one of axe, found \"blocked\""},
           {a + "/dir", "sideways", "expected one of in, out, inout, found \"sideways\""},
           {a + "/shard/0/extent", 0, "expected an integer >= 1, found 0"},
           {a + "/dtype", "f8", "expected one of f16, bf16, f32, i8, i16, i32, i64, u8, found \"f8\""},
           {a + "/mem/strides", "row", "expected an array, found \"row\""},
           {"/functions/gemm_rownorm/mesh/mesh.x", 0, "expected an integer >= 1, found 0"},
           {"/checked", "yes", "expected true or false, found \"yes\""},
       }) {
    json bad = doc;
    bad[json::json_pointer(c.pointer)] = c.value;
    const htp::IrDocumentError e = layout_error_of(bad);
    EXPECT_EQ(e.path(), c.pointer);
    EXPECT_EQ(e.reason(), c.reason) << c.pointer;
  }
}

TEST(LayoutSignatures, AnotherMajorVersionIsRejected) {
  json doc = read("tests/plugins/layout-axe/golden/gemm_signatures.json");
  doc["schema"] = "htp.layout.v2";
  EXPECT_EQ(layout_error_of(doc).kind(), htp::IrDocumentError::Kind::Version);
  doc["schema"] = "htp.layout.v1.3";
  EXPECT_NO_THROW((void)htp::read_layout_signatures(doc));
}

}  // namespace

TEST(LayoutSignatures, RowMajorMemFacetsSayNoMoreThanAnAbsentOne) {
  htp::LayoutMem m;
  EXPECT_TRUE(m.is_row_major({32, 32}));
  m.strides = std::vector<int64_t>{32, 1};
  EXPECT_TRUE(m.is_row_major({32, 32}));
  EXPECT_FALSE(m.is_row_major({32, 16})) << "row stride 32 over 16 columns leaves holes";
  EXPECT_FALSE(m.is_row_major({32})) << "rank differs";
  m.strides = std::vector<int64_t>{7, 1};
  EXPECT_TRUE(m.is_row_major({1, 16})) << "a dim of extent 1 takes any stride";
  m.strides = std::vector<int64_t>{1, 32};
  EXPECT_FALSE(m.is_row_major({32, 32})) << "column-major";
  m.strides.reset();
  m.order = std::vector<int64_t>{1, 0};
  EXPECT_FALSE(m.is_row_major({32, 32}));
  m.order = std::vector<int64_t>{0, 1};
  EXPECT_TRUE(m.is_row_major({32, 32}));
  m.pack = 2;
  EXPECT_FALSE(m.is_row_major({32, 32}));
  m.pack = 1;
  m.iters = {htp::LayoutIter{2, 16, "m", 0}};
  EXPECT_FALSE(m.is_row_major({32, 32})) << "a tiled layout";
}
