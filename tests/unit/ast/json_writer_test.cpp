// Writing htp.ast.v1: deterministic, sorted, Python's spelling of numbers, every constant type.
#include <gtest/gtest.h>

#include "ast/json_reader.hpp"
#include "ast/json_writer.hpp"
#include "tree_builder.hpp"

namespace htp::ast {
namespace {

using namespace test;

std::string dump_root(NodePtr root, int indent = -1) {
  Module m{"k.py", "", std::move(root), {}};
  return dump_json(m, indent);
}

std::string dump_constant(Constant c) {
  std::string text = dump_root(cst(std::move(c)));
  // {"file":"k.py","format":"htp.ast.v1","root":{"_type":"Constant","kind":null,"value":...}}
  size_t at = text.find("\"value\":") + 8;
  return text.substr(at, text.size() - at - 2);
}

TEST(AstJsonWriter, WritesSortedKeysCompactly) {
  NodePtr m = module(list(expr_stmt(name("x").at(1, 0, 1, 1)).at(1, 0, 1, 1)));
  EXPECT_EQ(
      dump_root(std::move(m)),
      R"({"file":"k.py","format":"htp.ast.v1","root":{"_type":"Module","body":[{"_span":[1,0,1,1],"_type":"Expr",)"
      R"("value":{"_span":[1,0,1,1],"_type":"Name","ctx":{"_type":"Load"},"id":"x"}}],"type_ignores":[]}})");
}

TEST(AstJsonWriter, IndentsLikePythonsJsonDumps) {
  EXPECT_EQ(dump_root(B(Kind::Global).f("names", IdentList{"a"}), 1),
            "{\n \"file\": \"k.py\",\n \"format\": \"htp.ast.v1\",\n \"root\": {\n  \"_type\": \"Global\",\n"
            "  \"names\": [\n   \"a\"\n  ]\n }\n}");
}

TEST(AstJsonWriter, WritesModuleAndNodeAttributesAndSource) {
  NodePtr root = B(Kind::Pass);
  root->attrs()["wsp.axis"] = nlohmann::json{{"extent", 4.5}, {"name", "b"}};
  Module m{"k.py", "pass\n", std::move(root), {{"csp.graph", nlohmann::json::array({1, 2})}}};
  EXPECT_EQ(dump_json(m),
            R"({"attrs":{"csp.graph":[1,2]},"file":"k.py","format":"htp.ast.v1",)"
            R"("root":{"_attrs":{"wsp.axis":{"extent":4.5,"name":"b"}},"_type":"Pass"},"source":"pass\n"})");
}

TEST(AstJsonWriter, SpellsConstantsAsTheSchemaSays) {
  EXPECT_EQ(dump_constant(NoneValue{}), "null");
  EXPECT_EQ(dump_constant(false), "false");
  EXPECT_EQ(dump_constant(int64_t{-3}), "-3");
  EXPECT_EQ(dump_constant(BigInt{"123456789012345678901234567890"}),
            R"({"int":"123456789012345678901234567890"})");
  EXPECT_EQ(dump_constant(Float{1.0}), R"({"float":1.0})");
  EXPECT_EQ(dump_constant(Float{1e16}), R"({"float":1e+16})");
  EXPECT_EQ(dump_constant(Float{1e-5}), R"({"float":1e-05})");
  EXPECT_EQ(dump_constant(Float{-0.0}), R"({"float":-0.0})");
  EXPECT_EQ(dump_constant(Float{INFINITY}), R"({"float":"inf"})");
  EXPECT_EQ(dump_constant(Float{NAN}), R"({"float":"nan"})");
  EXPECT_EQ(dump_constant(Complex{0, 2.5}), R"({"complex":[0.0,2.5]})");
  EXPECT_EQ(dump_constant(Str{"tab\there \"q\" \\ \x01 \xC3\xA9"}), R"("tab\there \"q\" \\ \u0001 é")");
  EXPECT_EQ(dump_constant(Str{"a\xED\xA0\x80"}), R"({"codepoints":[97,55296]})");
  EXPECT_EQ(dump_constant(Bytes{std::string("\0a\xFF", 3)}), "{\"bytes\":\"\\u0000a\xC3\xBF\"}");
  EXPECT_EQ(dump_constant(EllipsisValue{}), R"({"ellipsis":true})");
}

TEST(AstJsonWriter, ReplacesInvalidUtf8) {
  EXPECT_EQ(dump_constant(Str{"a\xFFz"}), "\"a\xEF\xBF\xBDz\"");
}

TEST(AstJsonWriter, LoadThenDumpGivesTheSameText) {
  const std::string text =
      R"({"attrs":{"m.k":[true,null,1.5]},"file":"k.py","format":"htp.ast.v1","root":{"_type":"Module","body":[)"
      R"({"_span":[1,0,1,30],"_type":"Expr","value":{"_span":[1,0,1,30],"_type":"Tuple","ctx":{"_type":"Load"},"elts":[)"
      R"({"_span":[1,1,1,2],"_type":"Constant","kind":"u","value":{"complex":[0.0,"inf"]}},)"
      R"({"_span":[1,1,1,2],"_type":"Constant","kind":null,"value":{"codepoints":[56320]}},)"
      R"({"_span":[1,1,1,2],"_type":"Constant","kind":null,"value":{"bytes":"\u0000ÿ"}},)"
      R"({"_span":[1,1,1,2],"_type":"Constant","kind":null,"value":{"int":"99999999999999999999"}},)"
      R"({"_span":[1,1,1,2],"_type":"Constant","kind":null,"value":{"float":0.0001}}]}}],)"
      R"("type_ignores":[{"_type":"TypeIgnore","lineno":3,"tag":"[x]"}]},"source":"é\n"})";
  auto m = load_json(text);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(dump_json(*m), text);
  auto again = load_json(dump_json(*m, 2));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(equal(*m, *again));
}

} // namespace
} // namespace htp::ast
