// The compile flow end to end through htp-host: packages, manifests, dumps, traces, determinism,
// atomicity, verification and the failure modes of issue 5.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "support/python_source.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::run_host;
using htp::test::ScratchDir;
using htp::test::read;

namespace {

const char *kProgram = R"(import toy

@toy.kernel
def scale(x):
    y = x * (2 + 3)
    return toy.mul(y, 1 + 1)

@toy.kernel
def shift(x):
    return toy.add(x, 40 + 2)
)";

class CompileTest : public ::testing::Test {
protected:
  /// Writes `source` as htp.ast.v1 JSON (parsed by Python's ast) and returns the file.
  fs::path program(const std::string &source, const std::string &name = "prog.py") {
    auto m = htp::test::parse_python(source, name);
    fs::path file = dir.path() / (name + ".json");
    std::ofstream(file) << htp::ast::dump_json(m);
    return file;
  }
  htp::test::CommandResult compile(const fs::path &prog, const fs::path &out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--plugins", HTP_TOY_PLUGIN, "compile", prog.string(), "--target", "toy-sim",
                                     "-o", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_host(args);
  }
  ScratchDir dir;
};

}  // namespace

TEST_F(CompileTest, CompileWritesThePackage) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program(kProgram), out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out.string() + "\n");
  EXPECT_EQ(read(out / "codegen/toy/scale.txt"), "kernel scale: 2 statements\n  constant 5\n  constant 2\n");
  EXPECT_EQ(read(out / "codegen/toy/shift.txt"), "kernel shift: 1 statements\n  constant 42\n");
  EXPECT_EQ(read(out / "ir/00_source.py"), kProgram);
  auto m = nlohmann::json::parse(read(out / "manifest.json"));
  EXPECT_EQ(m["schema"], "htp.manifest.v1");
  EXPECT_EQ(m["target"], "toy-sim");
  EXPECT_EQ(m["plugins"][0]["name"], "fixture-toy");
  EXPECT_EQ(m["plugins"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(m["entrypoints"], nlohmann::json::parse(R"([{"name":"scale","kind":"kernel","params":[{"name":"x","kind":"tensor","dir":"in","shape":["N"],"dtype":"f32"}]},{"name":"shift","kind":"kernel","params":[{"name":"x","kind":"tensor","dir":"in","shape":["N"],"dtype":"f32"}]}])"));
  std::vector<std::string> passes;
  for (const auto &p : m["plan"]["passes"]) passes.push_back(p["id"]);
  EXPECT_EQ(passes, (std::vector<std::string>{"toy.fold", "toy.check", "toy.emit"}));
  bool has_lock = false;
  for (const auto &f : m["files"]) has_lock |= f["path"] == "htp.lock.json";
  EXPECT_TRUE(has_lock);
  EXPECT_TRUE(fs::exists(out / "htp.lock.json"));
}

TEST_F(CompileTest, TwoCompilesAreByteIdentical) {
  fs::path prog = program(kProgram);
  ASSERT_EQ(compile(prog, dir.path() / "a", {"--dump-ir=all"}).exit_code, 0);
  ASSERT_EQ(compile(prog, dir.path() / "b", {"--dump-ir=all"}).exit_code, 0);
  size_t compared = 0;
  for (const auto &e : fs::recursive_directory_iterator(dir.path() / "a")) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), dir.path() / "a");
    // Traces hold measured times: listed as volatile, outside the byte-identical set (see PinnedTimings).
    if (rel == "ir/trace.json" || rel == "ir/pass_trace.jsonl") continue;
    EXPECT_EQ(read(e.path()), read(dir.path() / "b" / rel)) << rel;
    ++compared;
  }
  EXPECT_GE(compared, 10u);
}

TEST_F(CompileTest, PinnedTimingsMakeEveryFileByteIdentical) {
  fs::path prog = program(kProgram);
  ASSERT_EQ(compile(prog, dir.path() / "a", {"--pin-timings"}).exit_code, 0);
  ASSERT_EQ(compile(prog, dir.path() / "b", {"--pin-timings"}).exit_code, 0);
  for (const auto &e : fs::recursive_directory_iterator(dir.path() / "a"))
    if (e.is_regular_file()) {
      fs::path rel = fs::relative(e.path(), dir.path() / "a");
      EXPECT_EQ(read(e.path()), read(dir.path() / "b" / rel)) << rel;
    }
}

TEST_F(CompileTest, DumpIrAllWritesOnePyAndOneJsonPerPass) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out, {"--dump-ir=all"}).exit_code, 0);
  for (const char *base : {"ir/01_toy.fold", "ir/02_toy.check", "ir/03_toy.emit"}) {
    ASSERT_TRUE(fs::exists(out / (std::string(base) + ".py"))) << base;
    ASSERT_TRUE(fs::exists(out / (std::string(base) + ".ast.json"))) << base;
    // Each dump parses as Python (checked by Python itself).
    auto parsed = htp::test::parse_python(read(out / (std::string(base) + ".py")));
    EXPECT_NE(parsed.root, nullptr);
  }
  EXPECT_NE(read(out / "ir/01_toy.fold.py").find("y = x * 5"), std::string::npos) << read(out / "ir/01_toy.fold.py");
}

TEST_F(CompileTest, DumpIrOfOnePassWritesBeforeAndAfter) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out, {"--dump-ir=toy.fold"}).exit_code, 0);
  EXPECT_NE(read(out / "ir/01_toy.fold.before.py").find("y = x * (2 + 3)"), std::string::npos);
  EXPECT_NE(read(out / "ir/01_toy.fold.py").find("y = x * 5"), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "ir/02_toy.check.py"));
}

TEST_F(CompileTest, ChromeTraceHasOneCompleteEventPerPass) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out).exit_code, 0);
  auto trace = nlohmann::json::parse(read(out / "ir/trace.json"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::vector<std::string> names;
  for (const auto &e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    names.push_back(e["name"]);
    EXPECT_TRUE(e["ts"].is_number_integer());
    EXPECT_GE(e["dur"].get<int64_t>(), 1);
    EXPECT_EQ(e["pid"], 1);
    EXPECT_TRUE(e["tid"].is_number_integer());
    EXPECT_TRUE(e["cat"].get<std::string>().rfind("pass,", 0) == 0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"toy.fold", "toy.check", "toy.emit"}));
  // pass_trace.jsonl: one event per pass with provenance of rewrites.
  std::istringstream lines(read(out / "ir/pass_trace.jsonl"));
  std::string line;
  std::vector<nlohmann::json> events;
  while (std::getline(lines, line)) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["pass"], "toy.fold");
  EXPECT_EQ(events[0]["plugin"], "fixture-toy");
  ASSERT_EQ(events[0]["rewrites"].size(), 3u);
  EXPECT_EQ(events[0]["rewrites"][0]["pattern"], "fold-int-add");
  EXPECT_EQ(events[0]["rewrites"][0]["node"], "scale/body[0]/value/right");
  EXPECT_EQ(events[0]["rewrites"][0]["span"]["line"], 5);
  EXPECT_EQ(events[1]["requires"], nlohmann::json::array({"IR.Folded"}));
}

TEST_F(CompileTest, FailingPassLeavesNoPackage) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.explode(x)\n", "boom.py"), out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("boom.py:4:12: error: toy.explode cannot be lowered [toy.explode]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  for (const auto &e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".pkg.htp-tmp"), std::string::npos) << e.path();
}

TEST_F(CompileTest, KeepFailedKeepsDiagnosticsAndDumps) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.explode(1 + 1)\n", "boom.py"), out,
                   {"--keep-failed", "--dump-ir=all"});
  EXPECT_EQ(r.exit_code, 1);
  fs::path failed = dir.path() / "pkg.failed";
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(read(failed / "diagnostics.txt").find("toy.explode cannot be lowered"), std::string::npos);
  EXPECT_TRUE(fs::exists(failed / "ir/01_toy.fold.py"));
  EXPECT_TRUE(fs::exists(failed / "ir/pass_trace.jsonl"));
}

TEST_F(CompileTest, KeptFailureHoldsAReproducerThatReproduces) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.explode(1 + 1)\n", "boom.py"), out,
                   {"--keep-failed"});
  ASSERT_EQ(r.exit_code, 1);
  fs::path failed = dir.path() / "pkg.failed";
  auto doc = nlohmann::json::parse(read(failed / "ir/reproducer/reproducer.json"));
  EXPECT_EQ(doc["schema"], "htp.reproducer.v1");
  EXPECT_EQ(doc["pass"], "toy.explode");
  EXPECT_EQ(doc["target"], "toy-sim");
  EXPECT_EQ(doc["passes"].back(), "toy.explode");
  EXPECT_EQ(doc["diagnostics"][0]["code"], "toy.explode");
  // The failing pass's input is the folded module; the source is the module before the first pass.
  EXPECT_NE(read(failed / "ir/reproducer/input.py").find("toy.explode(2)"), std::string::npos);
  EXPECT_NE(read(failed / "ir/reproducer/source.ast.json").find("\"BinOp\""), std::string::npos);
  EXPECT_TRUE(fs::exists(failed / "ir/reproducer/plan.json"));
  // Its command, run from the package directory, fails the same way at the same pass.
  std::vector<std::string> args;
  for (size_t i = 1; i < doc["argv"].size(); ++i) {
    std::string a = doc["argv"][i];
    if (a.rfind("ir/", 0) == 0) a = (failed / a).string();
    if (a == "reproduced") a = (dir.path() / "reproduced").string();
    args.push_back(a);
  }
  auto again = run_host(args);
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_NE(again.err.find("toy.explode cannot be lowered"), std::string::npos) << again.err;
  EXPECT_TRUE(fs::exists(dir.path() / "reproduced.failed/ir/reproducer/reproducer.json"));
}

TEST_F(CompileTest, FailureWithoutKeepFailedWritesNoReproducer) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.explode(1)\n", "boom.py"), out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir.path() / "pkg.failed"));
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CompileTest, PluginWritingOutsideThePackageFailsCleanly) {
  fs::path out = dir.path() / "pkg";
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.escape(x)\n"), out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("component 'toy.escape' tried to write '../escaped.txt' outside the rules of the package"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(dir.path() / "escaped.txt"));
}

TEST_F(CompileTest, PassRequiringAnUnprovidedFactNamesPassAndFact) {
  auto r = compile(program("import toy\n@toy.kernel\ndef k(x):\n    return toy.ghost(x)\n"), dir.path() / "pkg");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("toy.needs-ghost"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("IR.Ghost"), std::string::npos) << r.err;
}

TEST_F(CompileTest, ExistingOutputIsRefusedUnlessForced) {
  fs::path prog = program(kProgram), out = dir.path() / "pkg";
  fs::create_directory(out);
  std::ofstream(out / "keep.txt") << "mine";
  auto r = compile(prog, out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already exists; pass --force (force=True in Python) to replace it"), std::string::npos) << r.err;
  EXPECT_EQ(read(out / "keep.txt"), "mine");
  ASSERT_EQ(compile(prog, out, {"--force"}).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "keep.txt"));
  EXPECT_TRUE(fs::exists(out / "manifest.json"));
}

TEST_F(CompileTest, VerifyAcceptsAFreshPackageAndNamesATamperedFile) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out).exit_code, 0);
  auto ok = run_host({"--plugins", HTP_TOY_PLUGIN, "verify", out.string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  std::ofstream(out / "codegen/toy/scale.txt", std::ios::app) << "tampered\n";
  auto bad = run_host({"--plugins", HTP_TOY_PLUGIN, "verify", out.string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("file 'codegen/toy/scale.txt' was modified: manifest sha256 "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(", file sha256 "), std::string::npos);
}

TEST_F(CompileTest, VerifyNamesAPluginSetThatIsNotLoaded) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out).exit_code, 0);
  auto r = run_host({"--plugins", htp::test::fixture("fixture-good").string(), "verify", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the package was built with plugin 'fixture-toy' 1.0.0, which is not loaded"), std::string::npos)
      << r.err;
}

TEST_F(CompileTest, InspectSummarisesThePackage) {
  fs::path out = dir.path() / "pkg";
  ASSERT_EQ(compile(program(kProgram), out).exit_code, 0);
  auto r = run_host({"inspect", out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["target"], "toy-sim");
  EXPECT_EQ(j["passes"].size(), 3u);
  EXPECT_GT(j["total_bytes"].get<int64_t>(), 0);
}

TEST_F(CompileTest, LockedCompileReproducesOrNamesTheDifference) {
  fs::path prog = program(kProgram), out = dir.path() / "a";
  ASSERT_EQ(compile(prog, out).exit_code, 0);
  auto again = compile(prog, dir.path() / "b", {"--locked", (out / "htp.lock.json").string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  std::string lock = read(out / "htp.lock.json");
  auto j = nlohmann::json::parse(lock);
  j["plugins"][0]["version"] = "0.9.0";
  std::ofstream(dir.path() / "old.lock.json") << j.dump(2);
  auto r = compile(prog, dir.path() / "c", {"--locked", (dir.path() / "old.lock.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fixture-toy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0.9.0"), std::string::npos) << r.err;
}
