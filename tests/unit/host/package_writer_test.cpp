// PackageWriter: path rules, ownership of files, atomic commit and clean failure.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "digest/sha256.hpp"
#include "package/package_path.hpp"
#include "package/package_writer.hpp"

namespace fs = std::filesystem;

namespace {

class PackageWriterTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "htp-pkg-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root = tmpl;
    out = root / "pkg";
  }
  void TearDown() override { fs::remove_all(root); }
  static std::string read(const fs::path &p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  size_t entries() const { return std::distance(fs::directory_iterator(root), fs::directory_iterator()); }
  fs::path root, out;
};

}  // namespace

TEST(PackagePath, AcceptsNormalRelativePaths) {
  EXPECT_EQ(htp::package_path_problem("codegen/pto/kernels/aiv/add.cpp"), std::nullopt);
  EXPECT_EQ(htp::package_path_problem("manifest.json"), std::nullopt);
}

TEST(PackagePath, RejectsEscapesAndNonNormalForms) {
  EXPECT_EQ(*htp::package_path_problem("../x"), "'..' would leave the package");
  EXPECT_EQ(*htp::package_path_problem("a/../../x"), "'..' would leave the package");
  EXPECT_EQ(*htp::package_path_problem("/etc/x"), "absolute paths are not allowed");
  EXPECT_EQ(*htp::package_path_problem("a//b"), "the path has an empty component ('//')");
  EXPECT_EQ(*htp::package_path_problem("./a"), "the path is not normalised ('.')");
  EXPECT_EQ(*htp::package_path_problem("a\\b"), "the path contains a backslash");
  EXPECT_EQ(*htp::package_path_problem(""), "the path is empty");
  EXPECT_EQ(*htp::package_path_problem(std::string("a\0b", 3)), "the path contains a NUL byte");
}

TEST_F(PackageWriterTest, CommitMovesThePackageIntoPlaceWithHashes) {
  auto w = htp::PackageWriter::begin(out);
  ASSERT_TRUE(w) << w.error().render();
  ASSERT_EQ((*w)->write("codegen/b.cpp", "int b;", "kernel", "backend-x"), std::nullopt);
  ASSERT_EQ((*w)->write("a.txt", "hello", "note", "backend-x"), std::nullopt);
  EXPECT_FALSE(fs::exists(out));  // nothing visible before commit
  ASSERT_EQ((*w)->commit(nlohmann::ordered_json{{"schema", "htp.manifest.v1"}}), std::nullopt);
  EXPECT_EQ(read(out / "codegen/b.cpp"), "int b;");
  auto m = nlohmann::json::parse(read(out / "manifest.json"));
  ASSERT_EQ(m["files"].size(), 2u);
  EXPECT_EQ(m["files"][0]["path"], "a.txt");  // sorted by path
  EXPECT_EQ(m["files"][0]["sha256"], htp::sha256_hex("hello"));
  EXPECT_EQ(m["files"][1]["writer"], "backend-x");
  EXPECT_EQ(entries(), 1u);  // no staging directory left behind
}

TEST_F(PackageWriterTest, EscapingPathsAreRejected) {
  auto w = htp::PackageWriter::begin(out);
  ASSERT_TRUE(w);
  auto e1 = (*w)->write("../x", "", "r", "evil-plugin");
  ASSERT_TRUE(e1);
  EXPECT_EQ(e1->message, "component 'evil-plugin' tried to write '../x' outside the rules of the package: "
                         "'..' would leave the package");
  auto e2 = (*w)->write("/etc/x", "", "r", "evil-plugin");
  ASSERT_TRUE(e2);
  EXPECT_NE(e2->message.find("absolute paths are not allowed"), std::string::npos);
  EXPECT_FALSE(fs::exists(root / "x"));
}

TEST_F(PackageWriterTest, ComponentsCannotOverwriteEachOther) {
  auto w = htp::PackageWriter::begin(out);
  ASSERT_TRUE(w);
  ASSERT_EQ((*w)->write("k.cpp", "1", "kernel", "a"), std::nullopt);
  EXPECT_EQ((*w)->write("k.cpp", "2", "kernel", "a"), std::nullopt);  // its own file
  auto e = (*w)->write("k.cpp", "3", "kernel", "b");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "component 'b' tried to overwrite 'k.cpp', written by 'a'");
}

TEST_F(PackageWriterTest, ManifestIsReservedForTheHost) {
  auto w = htp::PackageWriter::begin(out);
  ASSERT_TRUE(w);
  auto e = (*w)->write("manifest.json", "{}", "x", "plugin");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "package.reserved");
}

// logs/ and build/ belong to runs: a file a pass wrote there was listed in the manifest, and the first run's
// logs/run/ replaced it, so the package never verified again.
TEST_F(PackageWriterTest, LogsAndBuildAreReservedForRuns) {
  auto w = htp::PackageWriter::begin(out);
  ASSERT_TRUE(w);
  for (const char *path : {"logs/run/report.json", "build/x.txt"}) {
    auto e = (*w)->write(path, "{}", "x", "plugin");
    ASSERT_TRUE(e) << path;
    EXPECT_EQ(e->code, "package.reserved");
    EXPECT_NE(e->message.find("logs/ and build/ belong to runs"), std::string::npos) << e->message;
  }
  EXPECT_EQ((*w)->write("logs.txt", "1", "x", "plugin"), std::nullopt);  // a name that only starts alike
}

// A compile that crashed (or was killed) left its hidden staging directory behind for good; the next compile
// of the same output removes those whose process is gone, and leaves a live one's alone.
TEST_F(PackageWriterTest, StagingDirectoriesOfDeadProcessesAreRemoved) {
  const fs::path parent = out.parent_path();
  const std::string name = out.filename().string();
  const fs::path dead = parent / ("." + name + ".htp-tmp-2147483600-0-1");  // (no such pid)
  const fs::path live = parent / ("." + name + ".htp-tmp-" + std::to_string(::getpid()) + "-99-1");
  const fs::path other = parent / (".other.htp-tmp-2147483600-0-1");
  for (const auto &d : {dead, live, other}) fs::create_directories(d / "codegen");
  {
    auto w = htp::PackageWriter::begin(out);
    ASSERT_TRUE(w);
  }
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  fs::remove_all(live);
  fs::remove_all(other);
}

TEST_F(PackageWriterTest, AbandonedPackageLeavesNothing) {
  {
    auto w = htp::PackageWriter::begin(out);
    ASSERT_TRUE(w);
    ASSERT_EQ((*w)->write("half.cpp", "x", "kernel", "a"), std::nullopt);
    htp::DiagnosticList d;
    EXPECT_EQ((*w)->abandon(d), std::nullopt);
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(PackageWriterTest, DestroyedWithoutCommitLeavesNothing) {
  {
    auto w = htp::PackageWriter::begin(out);
    ASSERT_TRUE(w);
    ASSERT_EQ((*w)->write("half.cpp", "x", "kernel", "a"), std::nullopt);
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(PackageWriterTest, KeepFailedKeepsWorkAndDiagnostics) {
  htp::PackageOptions o;
  o.keep_failed = true;
  auto w = htp::PackageWriter::begin(out, o);
  ASSERT_TRUE(w);
  ASSERT_EQ((*w)->write("ir/00_source.py", "x = 1\n", "ir-dump", "htp"), std::nullopt);
  htp::DiagnosticList d;
  d.report(htp::Diagnostic::error("p.fail", "pass failed", htp::Span{"k.py", 3, 0, 3, 1}));
  auto kept = (*w)->abandon(d);
  ASSERT_TRUE(kept);
  EXPECT_EQ(*kept, fs::path(out.string() + ".failed"));
  EXPECT_EQ(read(*kept / "ir/00_source.py"), "x = 1\n");
  EXPECT_EQ(read(*kept / "diagnostics.txt"), "k.py:3:1: error: pass failed [p.fail]\n");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(PackageWriterTest, ExistingOutputIsRefusedWithoutForce) {
  fs::create_directory(out);
  auto w = htp::PackageWriter::begin(out);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("already exists; pass --force (force=True in Python) to replace it"),
            std::string::npos);
}

// An output path naming a file: said so (it said "output directory ... already exists; pass --force", and
// --force then said it is not a directory).
TEST_F(PackageWriterTest, AnOutputThatIsAFileIsSaidToBeOne) {
  std::ofstream(out) << "not a package";
  for (bool force : {false, true}) {
    htp::PackageOptions options;
    options.force = force;
    auto w = htp::PackageWriter::begin(out, options);
    ASSERT_FALSE(w);
    EXPECT_NE(w.error().message.find("exists and is not a directory; choose another output path"), std::string::npos)
        << w.error().message;
  }
}

TEST_F(PackageWriterTest, ForceReplacesAtomically) {
  fs::create_directory(out);
  std::ofstream(out / "old.txt") << "old";
  htp::PackageOptions o;
  o.force = true;
  auto w = htp::PackageWriter::begin(out, o);
  ASSERT_TRUE(w);
  ASSERT_EQ((*w)->write("new.txt", "new", "x", "a"), std::nullopt);
  ASSERT_EQ((*w)->commit(nlohmann::ordered_json::object()), std::nullopt);
  EXPECT_FALSE(fs::exists(out / "old.txt"));
  EXPECT_EQ(read(out / "new.txt"), "new");
  EXPECT_EQ(entries(), 1u);
}
