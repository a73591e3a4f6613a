// layout-axe end to end through htp-host with the `check` backend: obligations, accepted programs with
// their layout.signatures, and each kind of bad input rejected at its span.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "ast/json_writer.hpp"
#include "support/python_source.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::run_host;
using htp::test::ScratchDir;
using htp::test::read;

namespace {

const char *kHeader =
    R"py(from htp.dialects.tile import kernel, In, Out, Tensor, f32, load, store, matmul, rowsum, add, exp
from htp.dialects.layout import Layout, relayout, allreduce, allgather, reduce_scatter
)py";

// The acceptance GEMM: A @ S(0)R, B @ RS(1); C = A @ B stays sharded, the row sums of C are partial
// over mesh axis 1 until the explicit allreduce.
const char *kGemm = R"py(
@kernel(mapping=[2, 2])
def gemm_rownorm(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")],
                 B: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
                 C: Out[Tensor[64, 64, f32] @ Layout("S(0)S(1)")],
                 N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    a = load(A)
    b = load(B)
    c = matmul(a, b)
    store(C, c)
    partial = rowsum(c)
    total = allreduce(partial, axis=1)
    store(N, total)
)py";

class LayoutCompileTest : public ::testing::Test {
protected:
  /// Compiles `body` (after the import header) for target `check`; the package is `dir/pkg`.
  htp::test::CommandResult compile(const std::string &body, std::vector<std::string> extra = {},
                                   std::vector<std::string> plugins = {}) {
    auto m = htp::test::parse_python(std::string(kHeader) + body, "prog.py");
    fs::path file = dir.path() / "prog.py.json";
    std::ofstream(file) << htp::ast::dump_json(m);
    std::vector<std::string> args = {"--no-builtin-plugins", "--plugins", HTP_LAYOUT_AXE_PLUGIN, "--plugins", HTP_CHECK_PLUGIN};
    for (const auto &p : plugins)
      args.insert(args.end(), {"--plugins", p});
    args.insert(args.end(), {"compile", file.string(), "--target", "check", "-o", out().string(), "--force"});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_host(args);
  }
  fs::path out() const { return dir.path() / "pkg"; }
  /// tile.kernels as tile.lower wrote it (compiled with --dump-ir=all): axe.lower, which runs before the
  /// check backend, cuts kernels with collectives into parts.
  nlohmann::json lowered_kernels() const {
    for (const auto &e : fs::directory_iterator(out() / "ir"))
      if (e.path().filename().string().find("_tile.lower.ast.json") != std::string::npos)
        return nlohmann::json::parse(read(e.path()))["attrs"]["tile.kernels"];
    ADD_FAILURE() << "no tile.lower dump in " << out();
    return nlohmann::json::object();
  }
  nlohmann::json signatures() const {
    return nlohmann::json::parse(read(out() / "codegen/check/layout.signatures.json"));
  }
  /// Asserts a rejected compile with `fragment` in an error at prog.py:line:col.
  void expect_error(const htp::test::CommandResult &r, int line, int col, const std::string &fragment) {
    EXPECT_NE(r.exit_code, 0);
    std::string where = "prog.py:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
    auto at = r.err.find(where);
    ASSERT_NE(at, std::string::npos) << "no error at " << where << " in:\n" << r.err;
    EXPECT_NE(r.err.substr(at, r.err.find('\n', at) - at).find(fragment), std::string::npos) << r.err;
  }
  ScratchDir dir;
};

} // namespace

TEST_F(LayoutCompileTest, GemmWithExplicitAllreduceIsAcceptedAndAnnotated) {
  auto r = compile(kGemm, {"--dump-ir=all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string golden_path =
      std::string(HTP_TEST_SOURCE_DIR) + "/tests/plugins/layout-axe/golden/gemm_signatures.json";
  EXPECT_EQ(read(out() / "codegen/check/layout.signatures.json"), read(golden_path))
      << "regenerate with: cp " << (out() / "codegen/check/layout.signatures.json") << " " << golden_path;
}

TEST_F(LayoutCompileTest, ParametersCarryTypeAndLocalShape) {
  ASSERT_EQ(compile(kGemm, {"--dump-ir=axe.infer"}).exit_code, 0);
  auto doc = nlohmann::json::parse(read(out() / "ir/01_axe.infer.ast.json"));
  auto args = doc["root"]["body"][2]["args"]["args"];
  EXPECT_EQ(args[0]["_attrs"]["layout.local_shape"], nlohmann::json::parse("[32, 64]"));
  EXPECT_EQ(args[1]["_attrs"]["layout.local_shape"], nlohmann::json::parse("[64, 32]"));
  EXPECT_EQ(args[2]["_attrs"]["layout.type"]["dist"], "S(0)S(1)");
  // The collective is a foreign op for the tile plugin.
  auto allreduce = doc["root"]["body"][2]["body"][5]["value"]; // total = allreduce(partial, axis=1)
  EXPECT_EQ(allreduce["_attrs"]["tile.foreign"]["op"], "layout.allreduce");
  EXPECT_EQ(allreduce["_attrs"]["tile.foreign"]["attrs"]["from"]["pending"][0]["axis"], "mesh.y");
}

TEST_F(LayoutCompileTest, TileDialectTypesTheKernelWithLocalShapesAndTheCollective) {
  auto r = compile(kGemm, {"--dump-ir=all"}, {HTP_TILE_PLUGIN});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kernel = lowered_kernels()["kernels"][0];
  std::vector<std::vector<int64_t>> local;
  for (const auto &p : kernel["params"])
    local.push_back(p["local_shape"]);
  EXPECT_EQ(local, (std::vector<std::vector<int64_t>>{{32, 64}, {64, 32}, {32, 32}, {32, 1}}));
  auto allreduce = kernel["body"][5];
  EXPECT_EQ(allreduce["op"], "layout.allreduce");
  EXPECT_EQ(allreduce["dst"], "total");
  EXPECT_EQ(allreduce["attrs"]["axes"], nlohmann::json::parse(R"(["mesh.y"])"));
  EXPECT_EQ(allreduce["attrs"]["reduce"], "sum");
  EXPECT_EQ(kernel["locals"][4],
            nlohmann::json::parse(R"({"dtype":"f32","kind":"tile","name":"total","shape":[32,1]})"));
}

TEST_F(LayoutCompileTest, ViewsOfShardedTensorsKeepTheirLayout) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def rows(X: In[Tensor[128, 64, f32] @ Layout("S(0)R")], Z: In[Tensor[128, 64, f32] @ Layout("S(1)R")],
         Y: Out[Tensor[128, 64, f32] @ Layout("S(0)R")]):
    for i in range(2):
        v = X[i * 32:i * 32 + 32, :]
        w = Z.tile(i, 0, shape=(32, 64))
        store(Y.tile(i, 0, shape=(32, 64)), add(load(v), load(w)))
)py",
                   {}, {HTP_TILE_PLUGIN});
  expect_error(r, 10, 45, "dim 0 is S(0) on the left and S(1) on the right");
}

TEST_F(LayoutCompileTest, RelayoutResultHasTheTileShapeOfItsLocalPart) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def gather(X: In[Tensor[128, 64, f32] @ Layout("S(0)R")], Y: Out[Tensor[128, 64, f32] @ Layout("RR")]):
    t = relayout(load(X), to=Layout("RR"))
    store(Y, t)
)py",
                   {"--dump-ir=all"}, {HTP_TILE_PLUGIN});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto kernel = lowered_kernels()["kernels"][0];
  EXPECT_EQ(kernel["locals"][1],
            nlohmann::json::parse(R"({"dtype":"f32","kind":"tile","name":"t","shape":[128,64]})"));
  EXPECT_EQ(kernel["body"][1]["op"], "layout.relayout");
}

TEST_F(LayoutCompileTest, ScannerRaisesOneObligationPerFacetWithItsSpan) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[64, 64, f32] @ Layout("S(0)R", order=[1, 0], space="UB")]):
    x = load(X)
)py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto m = nlohmann::json::parse(read(out() / "manifest.json"));
  std::vector<std::string> caps;
  for (const auto &o : m["capabilities"]["obligations"]) {
    caps.push_back(o["capability"]);
    EXPECT_EQ(o["span"]["line"], 5);
    EXPECT_EQ(o["span"]["col"], 34);
  }
  EXPECT_EQ(caps,
            (std::vector<std::string>{"Uses.Layout(facet=dist,kind=axe)", "Uses.Layout(facet=hw,kind=axe)",
                                      "Uses.Layout(facet=mem,kind=axe)"}));
}

TEST_F(LayoutCompileTest, SplitKGemmOwesASumUntilAllreduce) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def splitk(A: In[Tensor[64, 64, f32] @ Layout("RS(1)")],
           B: In[Tensor[64, 64, f32] @ Layout("S(1)R")],
           C: Out[Tensor[64, 64, f32] @ Layout("RR")]):
    c = allreduce(matmul(load(A), load(B)), axis="mesh.y")
    store(C, c)
)py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto coll = signatures()["functions"]["splitk"]["collectives"][0];
  EXPECT_EQ(coll["op"], "allreduce");
  EXPECT_EQ(coll["to"], "RR");
}

TEST_F(LayoutCompileTest, AxeFormIsTheSameLayoutAsTheShortForm) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(X: In[Tensor[64, 64, f32] @ Layout.axe(shard=[(2, 1, "mesh.x"), (32, 64, "m"), (64, 1, "m")],
                                             replica=[(2, 1, "mesh.y")])],
      Y: Out[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    store(Y, exp(load(X)))
)py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto params = signatures()["functions"]["k"]["params"];
  EXPECT_EQ(params["X"]["dist"], "S(0)R");
  EXPECT_EQ(params["X"]["shard"], params["Y"]["shard"]);
  EXPECT_EQ(params["X"]["mem"]["strides"], nlohmann::json::parse("[64, 1]"));
}

TEST_F(LayoutCompileTest, ASecondLayoutKindConvertsThroughAxeAndBack) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(X: In[Tensor[64, 64, f32] @ Blocked(grid=[1, 2])],
      Y: Out[Tensor[64, 64, f32] @ Layout("RS(1)")]):
    store(Y, load(X))
)py",
                   {"--dump-ir=all"}, {HTP_BLOCKED_PLUGIN});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto x = signatures()["functions"]["k"]["params"]["X"];
  EXPECT_EQ(x["source_kind"], "blocked");
  EXPECT_EQ(x["dist"], "RS(1)");
  nlohmann::json last;
  for (const auto &e : fs::directory_iterator(out() / "ir"))
    if (e.path().filename().string().find("blocked.from-axe.ast.json") != std::string::npos)
      last = nlohmann::json::parse(read(e.path()));
  ASSERT_FALSE(last.is_null());
  EXPECT_EQ(last["attrs"]["blocked.signatures"]["k"]["X"],
            nlohmann::json::parse(R"({"kind":"blocked","grid":[1,2]})"));
  EXPECT_EQ(last["attrs"]["blocked.signatures"]["k"]["Y"],
            nlohmann::json::parse(R"({"kind":"blocked","grid":[1,2]})"));
}

// ---- bad input -------------------------------------------------------------------------------------

TEST_F(LayoutCompileTest, UnparseableLayoutTextIsAnErrorAtItsColumn) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(X: In[Tensor[64, 64, f32] @ Layout("S(0")]):
    x = load(X)
)py");
  // `Layout("S(0")`: the string starts at column 41 (0-based), its text at 42, the error at text column 3.
  expect_error(r, 5, 46,
               "expected ')' after the mesh axis, found the end of the text (column 3 of the layout text)");
}

TEST_F(LayoutCompileTest, ShardAxisBeyondTheMeshIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(X: In[Tensor[64, 64, f32] @ Layout("RS(2)")]):
    x = load(X)
)py");
  expect_error(r, 5, 44,
               "S(2) shards dim 1 on mesh axis 2, but the kernel's mesh has 2 axes (mapping=[2, 2]");
}

TEST_F(LayoutCompileTest, IncompatibleJoinAsksForRelayout) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("S(1)R")]):
    c = add(load(A), load(B))
)py");
  expect_error(r, 6, 9, "dim 0 is S(0) on the left and S(1) on the right");
  EXPECT_NE(r.err.find("insert an explicit relayout(x, to=...) [layout.join]"), std::string::npos) << r.err;
}

TEST_F(LayoutCompileTest, RelayoutMakesTheJoinLegal) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(A: In[Tensor[64, 64, f32] @ Layout("S(0)R")], B: In[Tensor[64, 64, f32] @ Layout("S(1)R")],
      C: Out[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    store(C, add(load(A), relayout(load(B), to=Layout("S(0)R"))))
)py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LayoutCompileTest, MatmulContractionMismatchIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(A: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], B: In[Tensor[64, 64, f32] @ Layout("RS(1)")]):
    c = matmul(load(A), load(B))
)py");
  expect_error(r, 6, 9,
               "matmul contracts dim 1 of the left operand (S(1)) with dim 0 of the right operand (R)");
}

TEST_F(LayoutCompileTest, PendingReductionNeverDischargedIsAnErrorAtTheStore) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(A: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")], N: Out[Tensor[64, 1, f32] @ Layout("S(0)R")]):
    partial = rowsum(load(A))
    store(N, partial)
)py");
  expect_error(r, 7, 5, "storing into 'N' a value that still owes a sum over mesh.y (from rowsum)");
  EXPECT_NE(r.err.find("[layout.undischarged]"), std::string::npos) << r.err;
}

TEST_F(LayoutCompileTest, PendingReductionReturnedIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(A: In[Tensor[64, 64, f32] @ Layout("S(0)S(1)")]):
    return rowsum(load(A))
)py");
  expect_error(r, 6, 5, "returning a value that still owes a sum over mesh.y");
}

TEST_F(LayoutCompileTest, ATileThatDoesNotFitItsMemorySpaceIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2, 2])
def k(X: In[Tensor[512, 512, f32] @ Layout("S(0)R", space="UB")]):
    x = load(X)
)py",
                   {"--option", "axe.profile=\"pto\""});
  expect_error(r, 5, 7, "'X' needs 512 KiB of UB per core (local shape [256,512] f32)");
  EXPECT_NE(r.err.find("over the 192 KiB of UB on profile pto [layout.capacity]"), std::string::npos)
      << r.err;
}

TEST_F(LayoutCompileTest, FootprintsAddUpPerSpace) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[64, 128, f32] @ Layout("RR", space="L1")], Y: In[Tensor[256, 128, f32] @ Layout("S(0)R", space="L1")]):
    x = load(X)
)py",
                   {"--option", "axe.profile=\"aie\""});
  // 32 KiB + 64 KiB per core, over the 64 KiB of an AIE tile's L1: reported at Y, naming X.
  expect_error(
      r, 5, 63,
      "'Y' needs 64 KiB of L1 per core (local shape [128,128] f32); 'k' then uses 96 KiB (with X 32 KiB)");
}

TEST_F(LayoutCompileTest, UnknownMemorySpaceIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[64, 64, f32] @ Layout("RR", space="HBM")]):
    x = load(X)
)py",
                   {"--option", "axe.profile=\"pto\""});
  expect_error(r, 5, 7, "memory space 'HBM' does not exist on profile pto");
}

TEST_F(LayoutCompileTest, WithoutAProfileTheFootprintIsNotCheckedAndThatIsSaid) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[512, 512, f32] @ Layout("RR", space="UB")]):
    x = load(X)
)py");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: no hardware profile for target check"), std::string::npos) << r.err;
}

TEST_F(LayoutCompileTest, AFacetTheTargetCannotLowerIsAResolverErrorAtTheLayout) {
  auto m = htp::test::parse_python(std::string(kHeader) + R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[64, 64, f32] @ Layout("S(0)R", space="UB")]):
    x = load(X)
)py",
                                   "prog.py");
  fs::path file = dir.path() / "prog.py.json";
  std::ofstream(file) << htp::ast::dump_json(m);
  auto r = run_host({"--no-builtin-plugins", "--plugins", HTP_LAYOUT_AXE_PLUGIN, "--plugins", HTP_DIST_ONLY_PLUGIN, "compile",
                     file.string(), "--target", "dist-only", "-o", out().string()});
  expect_error(r, 5, 35, "Uses.Layout(facet=hw,kind=axe)");
  EXPECT_NE(r.err.find("[resolve.unaccepted]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("facet=dist"), std::string::npos) << r.err;
}

TEST_F(LayoutCompileTest, ALayoutWithoutATensorTypeIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Thing @ Layout("S(0)R")]):
    pass
)py");
  expect_error(r, 5, 13,
               "parameter 'X' has a layout but no Tensor[d0, ..., dtype] or Tile[R, C, dtype] type");
}

TEST_F(LayoutCompileTest, AMalformedMappingIsAnError) {
  auto r = compile(R"py(
@kernel(mapping=[2, "x"])
def k(X: In[Tensor[64, 64, f32] @ Layout("S(0)R")]):
    pass
)py");
  expect_error(r, 4, 17, "mapping must be a list of positive integer constants");
}

TEST_F(LayoutCompileTest, MalformedLayoutArgumentsAreErrorsAtTheirSpans) {
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[64, 64, f32] @ Layout("S(0)R", colour="red")],
      Y: In[Tensor[64, 64, f32] @ Layout.axe(shard=[(2, 1)])],
      Z: In[Tensor[64, 64, f32] @ Layout.axe(shard=[(2, 1, "mesh.x"), (64, 1, "m")])]):
    pass
)py");
  expect_error(r, 5, 51, "Layout has no keyword 'colour'");
  expect_error(r, 6, 52, "shard must be a list of (extent, stride, axis) tuples");
  expect_error(r, 7, 35, "shard iter (64, 1, m) straddles dim 0 (size 64)");
}

TEST_F(LayoutCompileTest, AnUnknownProfileIsOneErrorWithoutANoProfileWarning) {
  // It also warned "no hardware profile for : ..." (an empty name) after the error.
  auto r = compile(R"py(
@kernel(mapping=[2])
def k(X: In[Tensor[512, 512, f32] @ Layout("RR", space="UB")]):
    x = load(X)
)py",
                   {"--option", "axe.profile=\"tpu\""});
  EXPECT_NE(r.err.find("unknown hardware profile 'tpu' (known: aie, pto) [layout.profile]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no hardware profile for"), std::string::npos) << r.err;
}
