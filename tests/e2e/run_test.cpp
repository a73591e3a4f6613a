// `htp-host run`: a package entry run with the binding of its plan (ABI 1.2), through the toy binding
// (every output = sum of inputs + scalars). Argument checking, outputs, reports and refusals.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "run/npy.hpp"
#include "support/python_source.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::HostArray;
using htp::test::run_host;
using htp::test::ScratchDir;

namespace {

const char *kProgram = R"(import toy

@toy.kernel
def axpy(x, y, n_bias, out):
    return toy.add(x, y)

@toy.kernel
def copy(x, out):
    return x
)";

HostArray f32(std::vector<float> values, std::vector<int64_t> shape = {}) {
  HostArray a;
  a.dtype = "f32";
  a.shape = shape.empty() ? std::vector<int64_t>{int64_t(values.size())} : shape;
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

std::vector<float> values(const HostArray &a) {
  std::vector<float> v(a.data.size() / 4);
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

class RunTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto m = htp::test::parse_python(kProgram, "prog.py");
    fs::path prog = dir.path() / "prog.json";
    std::ofstream(prog) << htp::ast::dump_json(m);
    auto r = run_host({"--plugins", HTP_TOY_PLUGIN, "compile", prog.string(), "-t", "toy-sim", "-o", pkg().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  fs::path pkg() const { return dir.path() / "pkg"; }
  std::string input(const std::string &name, const HostArray &a) {
    fs::path p = dir.path() / (name + ".npy");
    EXPECT_FALSE(htp::write_npy(p, a).has_value());
    return p.string();
  }
  htp::test::CommandResult run(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--plugins", HTP_TOY_PLUGIN, "run", pkg().string(), "--cache",
                                     (dir.path() / "cache").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_host(args);
  }
  ScratchDir dir;
};

}  // namespace

TEST_F(RunTest, RunsTheEntryAndWritesOutputsAndReport) {
  auto r = run({"--entry", "axpy", "--inputs", "x=" + input("x", f32({1, 2, 3})), "--inputs",
                "y=" + input("y", f32({10, 20, 30})), "--scalar", "n_bias=100", "--outputs",
                (dir.path() / "out").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["binding"], "toy.binding");
  EXPECT_EQ(j["report"]["path"], "toy-interpreter");
  EXPECT_EQ(j["report"]["entry"], "axpy");
  auto out = htp::read_npy(dir.path() / "out" / "out.npy");
  ASSERT_TRUE(out) << out.error().render();
  EXPECT_EQ(out->shape, std::vector<int64_t>{3});
  EXPECT_EQ(values(*out), (std::vector<float>{111, 122, 133}));
  EXPECT_TRUE(fs::exists(pkg() / "logs" / "run" / "report.json"));
  // A run leaves the package verifiable: binding outputs live in logs/.
  EXPECT_EQ(run_host({"--plugins", HTP_TOY_PLUGIN, "verify", pkg().string()}).exit_code, 0);
}

TEST_F(RunTest, WrongShapeNamesTheArgument) {
  auto r = run({"--entry", "axpy", "--inputs", "x=" + input("x", f32({1, 2, 3})), "--inputs",
                "y=" + input("y", f32({1, 2, 3, 4})), "--scalar", "n_bias=0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("argument 'y' is f32[4], but the entry expects in f32[N]"), std::string::npos) << r.err;
}

TEST_F(RunTest, WrongDtypeNamesTheArgument) {
  HostArray i32 = f32({1, 2, 3});
  i32.dtype = "i32";
  auto r = run({"--entry", "copy", "--inputs", "x=" + input("x", i32)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("argument 'x' is i32[3], but the entry expects in f32[N]"), std::string::npos) << r.err;
}

TEST_F(RunTest, MissingAndUnknownArgumentsAreNamed) {
  auto r = run({"--entry", "axpy", "--inputs", "x=" + input("x", f32({1})), "--inputs", "z=" + input("z", f32({1}))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing input 'y' (in f32[N])"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing scalar argument 'n_bias' (in scalar i64)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("entry 'axpy' has no parameter 'z'"), std::string::npos) << r.err;
}

TEST_F(RunTest, EntryMustBeChosenWhenSeveral) {
  auto r = run({"--inputs", "x=" + input("x", f32({1}))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the package has several entrypoints (axpy, copy); choose one with --entry"), std::string::npos)
      << r.err;
  r = run({"--entry", "nope"});
  EXPECT_NE(r.err.find("the package has no entrypoint 'nope' (it has: axpy, copy)"), std::string::npos) << r.err;
}

TEST_F(RunTest, RefusesAPackageThatDoesNotVerify) {
  std::ofstream(pkg() / "codegen" / "toy" / "copy.txt", std::ios::app) << "tampered\n";
  auto r = run({"--entry", "copy", "--inputs", "x=" + input("x", f32({1}))});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("codegen/toy/copy.txt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("refusing to run"), std::string::npos) << r.err;
}

TEST_F(RunTest, BindingFailureIsReported) {
  auto r = run({"--entry", "copy", "--inputs", "x=" + input("x", f32({1})), "--option", "fail=true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the toy binding was asked to fail [toy.fail]"), std::string::npos) << r.err;
}

TEST_F(RunTest, BadNpyFileIsReported) {
  fs::path bad = dir.path() / "bad.npy";
  std::ofstream(bad) << "not numpy";
  auto r = run({"--entry", "copy", "--inputs", "x=" + bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a usable .npy file: missing the \\x93NUMPY magic"), std::string::npos) << r.err;
}

TEST(Npy, RoundTripsEveryDtype) {
  for (std::string dtype : {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "bool"}) {
    HostArray a;
    a.dtype = dtype;
    a.shape = {2, 3};
    a.data.resize(6 * htp::dtype_size(dtype));
    for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = uint8_t(i * 7);
    auto b = htp::parse_npy(htp::encode_npy(a), "x.npy");
    ASSERT_TRUE(b) << dtype << ": " << b.error().render();
    EXPECT_EQ(b->dtype, dtype);
    EXPECT_EQ(b->shape, a.shape);
    EXPECT_EQ(b->data, a.data);
  }
}

TEST(Npy, RejectsFortranOrderAndShortData) {
  HostArray a = f32({1, 2});
  std::string bytes = htp::encode_npy(a);
  auto fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  auto r = htp::parse_npy(fortran, "f.npy");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("Fortran-ordered"), std::string::npos);
  r = htp::parse_npy(bytes.substr(0, bytes.size() - 1), "s.npy");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("holds 7 data bytes, f32[2] needs 8"), std::string::npos) << r.error().message;
}
