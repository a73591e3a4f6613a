// Passes from a real plugin over real Python trees: AST access through the ABI, the matcher DSL, the
// rewrite driver (fixpoint, deterministic order, iteration bound, provenance) and package-path checks.
#include <gtest/gtest.h>

#include "ast/printer.hpp"
#include "loader/plugin_host.hpp"
#include "package/package_writer.hpp"
#include "pass/invocation.hpp"
#include "pass/pass_manager.hpp"
#include "pass/pass_runner.hpp"
#include "support/python_source.hpp"
#include "support/test_support.hpp"

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
  // Pre-order: the outer `b` sum is visited before its operands are folded, so it folds in generation 2.
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

TEST_F(PassTest, WorklistOffersOnlyWhatRewritesTouched) {
  // `twice` expands to `1 + 1` (a one-callback pattern), whose fold makes `2 + 3` foldable.
  auto m = htp::test::parse_python("y = twice + 3\n");
  auto r = run("test.expand-fold", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  EXPECT_EQ(htp::ast::to_source(m), "y = 5");
  ASSERT_EQ(r.rewrite.rewrites.size(), 3u);
  EXPECT_EQ(r.rewrite.rewrites[0].pattern, "expand-twice");
  EXPECT_EQ(r.rewrite.rewrites[0].node_id, "<module>/body[0]/value/left");  // its id before the rewrite
  EXPECT_EQ(r.rewrite.rewrites[0].iteration, 1u);
  EXPECT_EQ(r.rewrite.rewrites[1].pattern, "fold-int-add");
  EXPECT_EQ(r.rewrite.rewrites[1].node_id, "<module>/body[0]/value/left");
  EXPECT_EQ(r.rewrite.rewrites[2].node_id, "<module>/body[0]/value");
  EXPECT_EQ(r.rewrite.rewrites[2].iteration, 2u);
  // Generation 1: the Names y and twice and the sum (the only kinds a pattern roots at). Generation 2:
  // the inserted `1 + 1` and its changed parent. Re-queued: those two, then the parent again when `1 + 1`
  // folded (dropped: the parent itself folded in the same generation).
  EXPECT_EQ(r.rewrite.iterations, 2u);
  EXPECT_EQ(r.rewrite.visits, 5u);
  EXPECT_EQ(r.rewrite.requeued, 3u);
  EXPECT_TRUE(r.rewrite.converged);
}

TEST_F(PassTest, WorklistCostFollowsRewritesNotTreeSize) {
  std::string src;
  for (int i = 0; i < 1000; ++i) src += "x" + std::to_string(i) + " = a + b\n";
  src += "z = 1 + 2 + 3\n";
  auto m = htp::test::parse_python(src);
  auto r = run("test.fold", m);
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  EXPECT_EQ(r.rewrite.rewrites.size(), 2u);
  // Every BinOp once (1002), then only the outer sum of z again: a sweeping driver would offer 3 x 1002.
  EXPECT_EQ(r.rewrite.visits, 1003u);
  EXPECT_EQ(r.rewrite.requeued, 1u);
}

TEST_F(PassTest, APatternThatEditsButDeclinesIsAnError) {
  auto m = htp::test::parse_python("y = x\n", "liar.py");
  auto r = run("test.edits-and-declines", m);
  EXPECT_FALSE(r.ok);
  std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("liar.py:1:1: error: pattern 'edits-and-declines' changed the tree at <module>/body[0]/targets[0] "
                      "but did not report a rewrite [rewrite.changed-without-match]"),
            std::string::npos)
      << text;
}

/// Logs every hook it hears, prefixed by its name.
struct Recorder : htp::PassInstrumentation {
  Recorder(std::string n, std::vector<std::string> &l) : name(std::move(n)), log(l) {}
  void before_pass(htp::PassEvent &e, const htp::ast::Module &) override { log.push_back(name + " before " + e.pass->id); }
  void after_rewrite(htp::PassEvent &, const htp::RewriteRecord &r) override {
    log.push_back(name + " rewrite " + r.pattern + " at " + r.node_id);
  }
  void after_pass(htp::PassEvent &e, const htp::ast::Module &) override { log.push_back(name + " after " + e.pass->id); }
  void after_failed_pass(htp::PassEvent &e, const htp::ast::Module &m) override {
    log.push_back(name + " failed " + e.pass->id + " (" + e.diagnostics.items()[0].code + ") " + htp::ast::to_source(m));
  }
  std::string name;
  std::vector<std::string> &log;
};

TEST_F(PassTest, InstrumentationsWrapEachPassAndHearEachRewrite) {
  htp::test::ScratchDir dir;
  auto w = htp::PackageWriter::begin(dir.path() / "pkg");
  ASSERT_TRUE(w);
  htp::Plan plan;
  for (const char *id : {"test.expand-fold", "test.edits-and-declines"})
    plan.passes.push_back(htp::PlannedPass{host->registry().find(id), {}, {}, {}});
  std::vector<std::string> log;
  htp::PassManager pm([](std::string_view) { return host->api_for("fixture-rewrite"); });
  pm.add_instrumentation(std::make_shared<Recorder>("A", log));
  pm.add_instrumentation(std::make_shared<Recorder>("B", log));
  auto m = htp::test::parse_python("y = twice + 3\n");
  auto result = pm.run(plan, m, **w, {});
  EXPECT_FALSE(result.ok);
  const std::vector<std::string> expected = {
      "A before test.expand-fold",
      "B before test.expand-fold",
      "A rewrite expand-twice at <module>/body[0]/value/left",
      "B rewrite expand-twice at <module>/body[0]/value/left",
      "A rewrite fold-int-add at <module>/body[0]/value/left",
      "B rewrite fold-int-add at <module>/body[0]/value/left",
      "A rewrite fold-int-add at <module>/body[0]/value",
      "B rewrite fold-int-add at <module>/body[0]/value",
      "B after test.expand-fold",  // after-hooks in reverse order
      "A after test.expand-fold",
      "A before test.edits-and-declines",
      "B before test.edits-and-declines",
      "B failed test.edits-and-declines (rewrite.changed-without-match) renamed = 5",
      "A failed test.edits-and-declines (rewrite.changed-without-match) renamed = 5",
  };
  EXPECT_EQ(log, expected);
  // Timing is an instrumentation too: every event has a duration and a start.
  ASSERT_EQ(result.events.size(), 2u);
  EXPECT_GT(result.events[0].duration.count(), 0);
  EXPECT_GE(result.events[1].start, result.events[0].start + result.events[0].duration);
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

// An exception a plugin's pass lets escape is reported by the SDK's guard as "uncaught exception: ..."; the
// host's note names the pass and the plugin (it named neither).
TEST_F(PassTest, AnExceptionEscapingAPassNamesThePassAndItsPlugin) {
  auto m = htp::test::parse_python("x = 1\n");
  auto r = run("test.throws", m);
  ASSERT_FALSE(r.ok);
  const std::string text = r.diagnostics.render();
  EXPECT_NE(text.find("uncaught exception:"), std::string::npos) << text;
  EXPECT_NE(text.find("[plugin.exception]"), std::string::npos) << text;
  EXPECT_NE(text.find("note: raised in pass 'test.throws' of plugin 'fixture-rewrite'"), std::string::npos) << text;
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

// Islands through the host table (ABI 1.5): a C++ pass runs an external tool; the host records the step in
// the package and reports a missing tool at the node, naming the package to install.
TEST_F(PassTest, ACppPassRunsAnIslandThroughTheHostTable) {
  htp::test::ScratchDir scratch;
  const auto &dir = scratch.path();
  auto writer = htp::PackageWriter::begin(dir / "pkg");
  ASSERT_TRUE(writer) << writer.error().render();
  setenv("HTP_CACHE_DIR", (dir / "cache").c_str(), 1);
  auto m = htp::test::parse_python("def relu():\n    pass\n", "isl.py");
  auto r = run("test.shout", m, writer->get());
  ASSERT_TRUE(r.ok) << r.diagnostics.render();
  const auto &attrs = m.root->children("body")[0]->attrs();
  ASSERT_TRUE(attrs.count("test.shout"));
  EXPECT_EQ(attrs.at("test.shout"), "RELU");
  const auto files = (*writer)->files();
  EXPECT_TRUE(files.count("ir/islands/test.shout/relu.tr/command.json"));
  EXPECT_TRUE(files.count("ir/islands/test.shout/relu.tr/name.txt"));
  EXPECT_TRUE(files.count("ir/islands/test.shout/relu.tr/shout.txt"));

  auto m2 = htp::test::parse_python("def relu():\n    pass\n", "isl.py");
  const htp::Component *pass = host->registry().find("test.shout");
  auto bad = htp::run_pass(*pass, host->api_for("fixture-rewrite"), m2,
                           {{"target", "test-sim"}, {"tool", "/nonexistent/tr"}}, writer->get());
  EXPECT_FALSE(bad.ok);
  ASSERT_FALSE(bad.diagnostics.empty());
  const auto &d = bad.diagnostics.items().front();
  EXPECT_EQ(d.code, "island.tool-missing");
  EXPECT_NE(d.message.find("install the Debian package coreutils"), std::string::npos) << d.message;
  EXPECT_EQ(d.span.file, "isl.py");
  EXPECT_EQ(d.span.line, 1u);
}
