// Loading htp.ast.v1: every malformed input is a diagnostic naming the JSON path, never a crash.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ast/json_reader.hpp"
#include "ast/json_writer.hpp"
#include "ast/printer.hpp"
#include "ast/walk.hpp"

namespace htp::ast {
namespace {

std::string doc(const std::string &root) {
  return R"({"file":"k.py","format":"htp.ast.v1","root":)" + root + "}";
}

// print(x) as one expression statement.
std::string call_stmt(
    const std::string &func = R"({"_span":[1,0,1,5],"_type":"Name","ctx":{"_type":"Load"},"id":"print"})") {
  return R"({"_type":"Module","body":[{"_span":[1,0,1,8],"_type":"Expr","value":{"_span":[1,0,1,8],"_type":"Call","args":[{"_span":[1,6,1,7],"_type":"Name","ctx":{"_type":"Load"},"id":"x"}],"func":)" +
         func + R"(,"keywords":[]}}],"type_ignores":[]})";
}

std::string error_of(const std::string &text, const JsonLimits &limits = {}) {
  auto m = load_json(text, limits);
  if (m) return "(loaded)";
  return m.error().message;
}

TEST(AstJsonReader, LoadsADocument) {
  auto m = load_json(doc(call_stmt()));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->file, "k.py");
  ASSERT_EQ(m->root->kind(), Kind::Module);
  const Node *call = m->root->children("body")[0]->child("value");
  EXPECT_EQ(call->kind(), Kind::Call);
  EXPECT_EQ(call->span(), (Span{"k.py", 1, 0, 1, 8}));
  EXPECT_EQ(*call->child("func")->text("id"), "print");
  EXPECT_EQ(call->child("func")->parent(), call);
  EXPECT_EQ(node_count(*m->root), 7u); // Module Expr Call Name Load Name Load
}

TEST(AstJsonReader, AWrongFieldKindNamesItsPath) {
  EXPECT_EQ(error_of(doc(call_stmt(R"("print")"))),
            "$.root.body[0].value.func: expected a node, got a string");
}

TEST(AstJsonReader, AnUnknownNodeTypeNamesItsPath) {
  EXPECT_EQ(error_of(doc(call_stmt(R"({"_type":"Frob"})"))),
            "$.root.body[0].value.func._type: unknown node type 'Frob'");
}

TEST(AstJsonReader, AMissingFieldIsNamed) {
  EXPECT_EQ(error_of(doc(call_stmt(R"({"_type":"Name","id":"f"})"))),
            "$.root.body[0].value.func: missing field 'ctx' of Name (fields: id, ctx)");
}

TEST(AstJsonReader, AnExtraFieldIsNamed) {
  EXPECT_EQ(error_of(doc(call_stmt(R"({"_type":"Name","id":"f","ctx":{"_type":"Load"},"kind":null})"))),
            "$.root.body[0].value.func: unknown field 'kind' of Name (fields: id, ctx)");
  EXPECT_EQ(error_of(doc(call_stmt(R"({"_type":"Name","id":"f","ctx":{"_type":"Load"},"_id":1})"))),
            "$.root.body[0].value.func: unknown key '_id' of Name (reserved keys are _type, _span, _attrs)");
}

TEST(AstJsonReader, ANodeOfTheWrongCategoryIsNamed) {
  EXPECT_EQ(error_of(doc(call_stmt(R"({"_type":"Load"})"))),
            "$.root.body[0].value.func: expected a node of category expr, got Load (expr_context)");
}

TEST(AstJsonReader, NullIsOnlyAcceptedWhereTheGrammarAllowsIt) {
  EXPECT_EQ(error_of(doc(call_stmt("null"))), "$.root.body[0].value.func: expected a node, got null");
  EXPECT_EQ(error_of(doc(R"({"_type":"Name","id":null,"ctx":{"_type":"Load"}})")),
            "$.root.id: expected an identifier, got null");
  EXPECT_TRUE(load_json(doc(R"({"_type":"Return","value":null})")).ok());
}

TEST(AstJsonReader, TheDocumentEnvelopeIsChecked) {
  EXPECT_EQ(error_of("[]"), "$: expected an htp.ast.v1 document (an object), got an array");
  EXPECT_EQ(error_of(R"({"format":"htp.ast.v2","root":{}})"),
            "$.format: expected \"htp.ast.v1\", got \"htp.ast.v2\"");
  EXPECT_EQ(error_of(R"({"format":"htp.ast.v1"})"), "$: missing key 'root'");
  EXPECT_EQ(error_of(R"({"format":"htp.ast.v1","root":{"_type":"Pass"},"extra":1})"),
            "$: unknown key 'extra' (a document has format, file, source, attrs, root)");
  EXPECT_EQ(error_of(R"({"format":"htp.ast.v1","root":{"_type":"Pass"},"file":3})"),
            "$.file: expected a string, got an integer");
}

TEST(AstJsonReader, SpansAreChecked) {
  EXPECT_EQ(error_of(doc(R"({"_type":"Pass","_span":[1,2,3]})")),
            "$.root._span: expected [line, col, end_line, end_col], got an array");
  EXPECT_EQ(error_of(doc(R"({"_type":"Pass","_span":[1,-2,3,4]})")),
            "$.root._span[1]: expected a line or column number (0 to 4294967295), got -2");
  EXPECT_EQ(error_of(doc(R"({"_type":"Load","_span":[1,2,3,4]})")),
            "$.root._span: Load has no location, so no '_span'");
}

TEST(AstJsonReader, SyntaxErrorsNameThePathAndPosition) {
  auto m =
      load_json("{\"format\":\"htp.ast.v1\",\n\"root\":{\"_type\":\"Pass\",\"x\" 1}}", {}, "bad.ast.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "$.root.x: invalid JSON: unexpected '1'; expected ':'");
  EXPECT_EQ(m.error().span, (Span{"bad.ast.json", 2, 27, 2, 27}));
  EXPECT_EQ(error_of(R"({"format":"htp.ast.v1","format":"x"})"), "$.format: invalid JSON: duplicate key");
  EXPECT_EQ(error_of(""), "$: invalid JSON: unexpected end of input; expected a value");
  EXPECT_EQ(error_of("{"), "$: invalid JSON: unexpected end of input; expected a string key");
  EXPECT_EQ(error_of(R"({"a":1)"), "$.a: invalid JSON: unexpected end of input; expected ',' or '}'");
  EXPECT_EQ(error_of("{} x"), "$: invalid JSON: unexpected text after the end of the document");
  EXPECT_EQ(error_of("[01]"), "$[0]: invalid JSON: unexpected '1'; expected ',' or ']'");
  EXPECT_EQ(error_of("[\"a\x01\"]"), "$[0]: invalid JSON: unescaped control character 0x01 in a string");
  EXPECT_EQ(error_of("[\"\xff\"]"), "$[0]: invalid JSON: invalid UTF-8 in a string");
  EXPECT_EQ(error_of("[\"\\ud800\"]"),
            "$[0]: invalid JSON: lone surrogate in a \\u escape (a str constant holding one is written "
            "{\"codepoints\": [...]})");
  EXPECT_EQ(error_of("[1e999]"), "$[0]: invalid JSON: number 1e999 is outside the range of a double");
}

TEST(AstJsonReader, EveryTruncationOfADocumentIsADiagnostic) {
  std::string text = doc(call_stmt());
  for (size_t n = 0; n < text.size(); ++n) {
    auto m = load_json(text.substr(0, n));
    ASSERT_FALSE(m.ok()) << "prefix of " << n << " bytes loaded";
    EXPECT_NE(m.error().message.find("invalid JSON"), std::string::npos) << m.error().message;
    EXPECT_EQ(m.error().message.rfind("$", 0), 0u) << m.error().message;
  }
  EXPECT_EQ(error_of(text.substr(0, text.find("[1,0,1,8]") + 4)),
            "$.root.body[0]._span[1]: invalid JSON: unexpected end of input; expected ',' or ']'");
}

TEST(AstJsonReader, DeepTreesHitTheDepthLimit) {
  std::string expr = R"({"_type":"Name","id":"x","ctx":{"_type":"Load"}})";
  for (int i = 0; i < 60; ++i)
    expr = R"({"_type":"UnaryOp","op":{"_type":"USub"},"operand":)" + expr + "}";
  JsonLimits limits;
  limits.max_depth = 50;
  std::string message = error_of(doc(expr), limits);
  EXPECT_NE(message.find("AST nested deeper than 50 nodes (the depth limit)"), std::string::npos) << message;
  EXPECT_NE(message.find("$.root.operand.operand"), std::string::npos) << message;
  EXPECT_NE(message.find("more)"), std::string::npos) << "a long path is abbreviated: " << message;
  EXPECT_TRUE(load_json(doc(expr)).ok());
  // A located node past the limit (a program's 5000-term sum): the error is placed there, in the program's words.
  // (keys as the writer orders them: _span first; the operator node that passes the limit has no place, so the
  // error is at the nearest located node read before it)
  std::string located = R"({"_span":[3,4,3,9],"_type":"Name","ctx":{"_type":"Load"},"id":"x"})";
  for (int i = 0; i < 60; ++i)
    located = R"({"_span":[3,4,3,9],"_type":"UnaryOp","op":{"_type":"USub"},"operand":)" + located + "}";
  auto m = load_json(doc(located), limits);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "ast.depth");
  EXPECT_EQ(m.error().span.line, 3u);
  EXPECT_EQ(m.error().message, "the program nests deeper than 50 levels here (HTP's limit on a program's nesting): "
                               "split the expression, binding its parts to names");
}

TEST(AstJsonReader, TreesAtTheDepthLimitLoadDumpPrintAndClone) {
  // Deeper than anything Python's parser produces (about 3000); every stage must cope without overflow.
  std::string expr = R"({"_type":"Name","id":"x","ctx":{"_type":"Load"}})";
  const int levels = static_cast<int>(JsonLimits{}.max_depth) - 4; // + Module, Expr, Name, Load
  std::string text;
  for (int i = 0; i < levels; ++i)
    text += R"({"_type":"UnaryOp","op":{"_type":"USub"},"operand":)";
  text = R"({"_type":"Module","body":[{"_type":"Expr","value":)" + text + expr + std::string(levels, '}') +
         R"(}],"type_ignores":[]})";
  auto m = load_json(doc(text));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(depth(*m->root), JsonLimits{}.max_depth);
  EXPECT_EQ(load_json(dump_json(*m))->root->kind(), Kind::Module);
  EXPECT_EQ(to_source(*m), std::string(levels, '-') + "x");
  NodePtr copy = m->root->clone();
  EXPECT_TRUE(equal(*copy, *m->root));
}

TEST(AstJsonReader, DeepJsonHitsTheNestingLimitWithoutRecursingFurther) {
  std::string deep(1'000'000, '[');
  std::string message = error_of(deep);
  EXPECT_NE(message.find("invalid JSON: nested deeper than 10016 arrays and objects"), std::string::npos);
}

TEST(AstJsonReader, LargeTreesHitTheNodeCountLimit) {
  JsonLimits limits;
  limits.max_nodes = 5;
  EXPECT_EQ(error_of(doc(call_stmt()), limits),
            "$.root.body[0].value.func: more than 5 nodes (the node-count limit)");
}

TEST(AstJsonReader, ConstantsOfEveryTypeLoad) {
  auto constant = [](const std::string &value) -> Constant {
    auto m = load_json(doc(R"({"_type":"Constant","kind":null,"value":)" + value + "}"));
    EXPECT_TRUE(m.ok()) << value << ": " << (m ? "" : m.error().message);
    return m ? *m->root->constant("value") : Constant{};
  };
  EXPECT_EQ(constant("null"), Constant{NoneValue{}});
  EXPECT_EQ(constant("true"), Constant{true});
  EXPECT_EQ(constant("-7"), Constant{int64_t{-7}});
  EXPECT_EQ(constant("18446744073709551615"), Constant{BigInt{"18446744073709551615"}});
  EXPECT_EQ(constant(R"({"int":"-123456789012345678901234567890"})"),
            Constant{BigInt{"-123456789012345678901234567890"}});
  EXPECT_EQ(constant(R"({"float":1.5})"), Constant{Float{1.5}});
  EXPECT_EQ(constant(R"({"float":2})"), Constant{Float{2.0}});
  EXPECT_EQ(constant(R"({"float":"-inf"})"), Constant{Float{-INFINITY}});
  EXPECT_EQ(constant(R"({"float":-0.0})"), Constant{Float{-0.0}});
  EXPECT_TRUE(std::isnan(std::get<Float>(constant(R"({"float":"nan"})")).value));
  EXPECT_EQ(constant(R"({"complex":[0,"inf"]})"), (Constant{Complex{0, INFINITY}}));
  EXPECT_EQ(constant(R"("h\u00e9\ud83d\ude00")"), Constant{Str{"h\xC3\xA9\xF0\x9F\x98\x80"}});
  EXPECT_EQ(constant(R"({"codepoints":[97,55296]})"), Constant{Str{"a\xED\xA0\x80"}});
  EXPECT_EQ(constant(R"({"bytes":"\u0000\u00ff"})"), Constant{Bytes{std::string("\0\xFF", 2)}});
  EXPECT_EQ(constant(R"({"ellipsis":true})"), Constant{EllipsisValue{}});
}

TEST(AstJsonReader, MalformedConstantsAreNamed) {
  auto error = [](const std::string &value) {
    return error_of(doc(R"({"_type":"Constant","kind":null,"value":)" + value + "}"));
  };
  EXPECT_EQ(error("1.5"),
            "$.root.value: expected a constant (null, true, false, an integer, a string or a tagged "
            "object such as {\"float\": 1.5}), got a float");
  EXPECT_EQ(error(R"({"float":"x"})"),
            "$.root.value.float: expected a number, \"inf\", \"-inf\" or \"nan\", got \"x\"");
  EXPECT_EQ(error(R"({"int":"12a"})"), "$.root.value.int: expected a decimal integer string, got \"12a\"");
  EXPECT_EQ(error(R"({"bytes":"\u0100"})"),
            "$.root.value.bytes: a bytes constant holds characters U+0000..U+00FF only, found U+0100");
  EXPECT_EQ(error(R"({"codepoints":[1114112]})"),
            "$.root.value.codepoints[0]: expected a code point (0 to 1114111), got 1114112");
  EXPECT_EQ(error(R"({"tuple":[]})"),
            "$.root.value: unknown constant tag 'tuple' (int, float, complex, bytes, codepoints, ellipsis)");
  EXPECT_EQ(error(R"({"int":"1","float":1})"),
            "$.root.value: expected a tagged constant with one key (int, float, complex, "
            "bytes, codepoints, ellipsis), got an object with 2 keys");
}

TEST(AstJsonReader, AttributesLoadAsJson) {
  auto m = load_json(R"({"attrs":{"csp.graph":{"nodes":[1,2]}},"format":"htp.ast.v1","source":"pass\n",)"
                     R"("root":{"_attrs":{"wsp.axis":"b"},"_type":"Module","body":[],"type_ignores":[]}})");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->attrs.at("csp.graph")["nodes"][1], 2);
  EXPECT_EQ(m->root->attrs().at("wsp.axis"), "b");
  EXPECT_EQ(m->source, "pass\n");
  EXPECT_EQ(error_of(doc(R"({"_type":"Pass","_attrs":{"axis":1}})")),
            "$.root._attrs.axis: an attribute key is namespaced: <namespace>.<name>, such as wsp.axis");
  EXPECT_EQ(error_of(doc(R"({"_type":"Pass","_attrs":[]})")),
            "$.root._attrs: expected an object of attributes, got an array");
}

TEST(AstJsonReader, RandomCorruptionNeverCrashes) {
  std::string text = doc(call_stmt());
  std::mt19937 rng(12345);
  const char alphabet[] = "{}[]\":,0123456789-+.eE\\u nulltruefalse_type\x80\xff";
  size_t loaded = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string t = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % t.size();
      switch (rng() % 3) {
      case 0: t[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
      case 1: t.erase(at, 1 + rng() % 8); break;
      default: t.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
      }
      if (t.empty()) t = "{";
    }
    auto m = load_json(t);
    if (m) {
      ++loaded;
      EXPECT_TRUE(load_json(dump_json(*m)).ok()) << "what loads must dump to something that loads";
    } else {
      EXPECT_EQ(m.error().message.rfind("$", 0), 0u) << m.error().message;
    }
  }
  EXPECT_LT(loaded, 5000u);
}

} // namespace
} // namespace htp::ast
