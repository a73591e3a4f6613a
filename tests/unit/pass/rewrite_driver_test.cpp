// Passes from a real plugin over real Python trees: AST access through the ABI, the matcher DSL, the
// rewrite driver (fixpoint, deterministic order, iteration bound, provenance) and package-path checks.
#include <gtest/gtest.h>

#include "ast/printer.hpp"
#include "loader/plugin_host.hpp"
#include "package/package_writer.hpp"
#include "pass/invocation.hpp"
#include "pass/pass_runner.hpp"
#include "support/python_source.hpp"

namespace {

class PassTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    host = new htp::PluginHost();
    htp::DiagnosticList d;
    ASSERT_NE(host->load(HTP_REWRITE_FIXTURE, d), nullptr) << d.render();
  }
  static void TearDownTestSuite() { delete host; }

  htp::PassRun run(const char *pass_id, htp::ast::Module &m, htp::PackageWriter *writer = nullptr) {
    const htp::Component *pass = host->registry().find(pass_id);
    EXPECT_NE(pass, nullptr) << pass_id;
    return htp::run_pass(*pass, host->api_for("fixture-rewrite"), m, {{"target", "test-sim"}}, writer);
  }

  static htp::PluginHost *host;
};

htp::PluginHost *PassTest::host = nullptr;

}  // namespace

TEST_F(PassTest, PatternsFoldToAFixpoint) {
  auto m = htp::test::parse_python("x = 1 + 2 + 3 + 4\ny = (5 + 6) * z\n");
  auto r = run("test.fold", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  EXPECT_TRUE(r.rewrite.converged);
  EXPECT_EQ(htp::ast::to_source(m), "x = 10\ny = 11 * z");
  EXPECT_EQ(r.rewrite.rewrites.size(), 4u);
}

TEST_F(PassTest, RewritesRecordPatternNodeAndSpan) {
  auto m = htp::test::parse_python("def f():\n    return 1 + 2\n", "prov.py");
  auto r = run("test.fold", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  ASSERT_EQ(r.rewrite.rewrites.size(), 1u);
  const auto &rec = r.rewrite.rewrites[0];
  EXPECT_EQ(rec.pattern, "fold-int-add");
  EXPECT_EQ(rec.node_id, "f/body[0]/value");
  EXPECT_EQ(rec.span.file, "prov.py");
  EXPECT_EQ(rec.span.line, 2u);
  EXPECT_EQ(rec.span.col, 11u);
  EXPECT_EQ(rec.iteration, 1u);
}

TEST_F(PassTest, OrderIsDeterministic) {
  const char *src = "a = 1 + 2\nb = (3 + 4) + (5 + 6)\nc = [7 + 8, 9 + 10]\n";
  auto m1 = htp::test::parse_python(src);
  auto m2 = htp::test::parse_python(src);
  auto r1 = run("test.fold", m1);
  auto r2 = run("test.fold", m2);
  ASSERT_EQ(r1.rewrite.rewrites.size(), r2.rewrite.rewrites.size());
  for (size_t i = 0; i < r1.rewrite.rewrites.size(); ++i)
    EXPECT_EQ(r1.rewrite.rewrites[i].node_id, r2.rewrite.rewrites[i].node_id);
  // Pre-order: the outer `b` sum is visited before its operands are folded, so it folds on sweep 2.
  EXPECT_EQ(r1.rewrite.rewrites[0].node_id, "<module>/body[0]/value");
  EXPECT_EQ(htp::ast::to_source(m1), "a = 3\nb = 18\nc = [15, 19]");
}

TEST_F(PassTest, IterationBoundNamesThePatternsThatKeptFiring) {
  auto m = htp::test::parse_python("y = a * b\n");
  auto r = run("test.swap", m);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.rewrite.converged);
  std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("rewrite patterns of 'test.swap' did not reach a fixpoint after 16 iterations"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("still firing: swap-mul (1x)"), std::string::npos) << text;
}

TEST_F(PassTest, WholeModuleBodyReadsAndAnnotatesThroughTheAbi) {
  auto m = htp::test::parse_python("import pto\nz = pto.add(x, y)\nw = f(pto.exp(z))\n");
  auto r = run("test.annotate", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  EXPECT_EQ(m.attrs.at("test.calls"), 3);
  const auto &call = *m.root->children("body")[1]->child("value");
  EXPECT_EQ(call.attrs().at("test.callee"), "pto.add");
  EXPECT_EQ(r.changes, 1u);  // the module attribute; node attributes are metadata, not edits
}

TEST_F(PassTest, MatcherDslCapturesArguments) {
  auto m = htp::test::parse_python("a = pto.add(x, 2)\nb = pto.add(3, y)\nc = pto.mul(x, y)\n", "dsl.py");
  auto r = run("test.find-adds", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.render();  // the second add has a non-Name first arg
  EXPECT_EQ(r.diagnostics.items()[0].render(), "dsl.py:1:5: warning: add of x and Constant [test.add]");
}

TEST_F(PassTest, WritingOutsideThePackageFailsThePass) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "htp-pass-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  auto w = htp::PackageWriter::begin(std::filesystem::path(tmpl) / "pkg");
  ASSERT_TRUE(w);
  auto m = htp::test::parse_python("x = 1\n");
  auto r = run("test.write-outside", m, w->get());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.render().find("component 'test.write-outside' tried to write '../escape.txt'"),
            std::string::npos)
      << r.diagnostics.render();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(tmpl) / "escape.txt"));
  std::filesystem::remove_all(tmpl);
}

TEST_F(PassTest, FieldIndexAccessorsMatchTheNamedOnes) {
  auto m = htp::test::parse_python("y = a + b\n");
  const HtpHostApi *api = host->api_for("fixture-rewrite");
  auto *binop = htp::to_handle(m.root->children("body")[0]->child("value"));
  int32_t kind = api->node_kind(api->host, binop);
  int32_t right = api->ast_field_index(api->host, kind, HtpStr{"right", 5});
  EXPECT_EQ(right, 2);
  EXPECT_EQ(api->node_child_at(api->host, binop, right), api->node_child(api->host, binop, HtpStr{"right", 5}));
  EXPECT_EQ(api->ast_field_index(api->host, kind, HtpStr{"nope", 4}), -1);
  EXPECT_EQ(api->node_child_at(api->host, binop, 99), nullptr);
}
