// backend-pto library tests: golden packages, intrinsic contracts, hardware legality, CSP lowering limits,
// the hardware profile and the a2a3 toolchain messages.
#include <gtest/gtest.h>

#include <map>

#include "a2a3_toolchain.hpp"
#include "hardware_profile.hpp"
#include "intrinsics.hpp"
#include "pto_test_support.hpp"
#include "register_webs.hpp"

using ptotest::emit_files;
using ptotest::expect_golden;
using ptotest::load_fixture;
using ptotest::problems_of;

namespace {

void golden(const std::string &name) { expect_golden(name, emit_files(load_fixture(name))); }

/// The only problem building `in`; fails when there is not exactly one.
ptobe::Problem only_problem(const ptotest::Inputs &in) {
  auto problems = problems_of(in);
  EXPECT_EQ(problems.size(), 1u);
  for (const auto &p : problems) std::cerr << p.code << ": " << p.message << "\n";
  return problems.empty() ? ptobe::Problem{} : problems.front();
}

nlohmann::json &kernel0(ptotest::Inputs &in) { return in.tile_kernels["kernels"][0]; }

}  // namespace

// ---- golden packages: codegen/pto/ files, kernel_config.py, kernel_registry.json, htp.entrypoints ----

TEST(PtoPackageGolden, ElementwiseAddOver2DGrid) { golden("vadd"); }
TEST(PtoPackageGolden, TiledGemmOnCube) { golden("gemm"); }
TEST(PtoPackageGolden, SoftmaxRows) { golden("softmax"); }
TEST(PtoPackageGolden, RmsnormWith1DWeight) { golden("rmsnorm"); }
TEST(PtoPackageGolden, RaggedDecodeAttention) { golden("ragged_decode"); }
TEST(PtoPackageGolden, MoeRoutingWithSel) { golden("moe"); }
TEST(PtoPackageGolden, CspPipeline) { golden("csp_pipeline"); }

TEST(PtoPackage, SameInputsGiveIdenticalFiles) {
  EXPECT_EQ(emit_files(load_fixture("ragged_decode")), emit_files(load_fixture("ragged_decode")));
}

TEST(PtoPackage, LayoutPutsKernelsByCoreType) {
  std::map<std::string, std::string> gemm, vadd;
  for (auto &[p, t] : emit_files(load_fixture("gemm"))) gemm[p] = t;
  for (auto &[p, t] : emit_files(load_fixture("vadd"))) vadd[p] = t;
  EXPECT_TRUE(gemm.count("kernels/aic/gemm_tile.cpp"));
  EXPECT_TRUE(gemm.count("kernels/orchestration/gemm.cpp"));
  EXPECT_TRUE(vadd.count("kernels/aiv/add_tile.cpp"));
  EXPECT_NE(gemm["kernels/orchestration/gemm.cpp"].find("rt_submit_aic_task(0, "), std::string::npos);
  EXPECT_NE(vadd["kernels/orchestration/vadd.cpp"].find("rt_submit_aiv_task(0, "), std::string::npos);
}

TEST(PtoPackage, RegistryDescribesKernelsAndEntries) {
  std::vector<ptobe::Problem> problems;
  auto pkg = ptobe::build_package(ptotest::package_inputs(load_fixture("csp_pipeline")), ptobe::a2a3_profile(), problems);
  ASSERT_TRUE(problems.empty());
  nlohmann::json reg = ptobe::kernel_registry(pkg);
  EXPECT_EQ(reg["schema"], "htp.pto.kernel_registry.v1");
  EXPECT_EQ(reg["pto_runtime_revision"], "6ebaf7715");
  EXPECT_EQ(reg["orchestration"]["source"], "kernels/orchestration/pipeline.cpp");
  EXPECT_EQ(reg["orchestration"]["function_name"], "aicpu_orchestration_entry");
  ASSERT_EQ(reg["kernels"].size(), 3u);
  EXPECT_EQ(reg["kernels"][0]["name"], "pipeline_storer");  // producers-first order is the task order, not func_ids
  EXPECT_EQ(reg["kernels"][1]["signature"], nlohmann::json::array({"in", "out"}));  // loader: X, the c1 slot
  EXPECT_EQ(reg["kernels"][2]["signature"], nlohmann::json::array({"inout", "out"}));  // compute: c1 in, c2 out
}

// ---- bad input: intrinsic contracts ----

TEST(PtoContracts, MisShapedOperandIsReportedAtTheCall) {
  auto in = load_fixture("vadd");
  kernel0(in)["locals"][1]["shape"] = {32, 64};
  kernel0(in)["body"][1]["src"] = "y";
  auto p = only_problem(in);
  EXPECT_EQ(p.code, "pto.contract");
  EXPECT_EQ(p.message, "pto.add: operand '_t1' is [32, 64] f32 but must be [32, 128] f32 for the result '_t2' "
                       "[32, 128] f32");
  EXPECT_EQ(p.span.line, 11u);
  EXPECT_EQ(p.span.col, 17u);
}

TEST(PtoContracts, MatmulContractionMismatch) {
  auto in = load_fixture("gemm");
  kernel0(in)["locals"][2]["shape"] = {32, 64};
  auto p = only_problem(in);
  EXPECT_EQ(p.code, "pto.contract");
  EXPECT_NE(p.message.find("contraction mismatch: 'ta' is [64, 64] f32 and 'tb' is [32, 64] f32 (64 != 32)"),
            std::string::npos)
      << p.message;
}

TEST(PtoContracts, DtypeMismatchNamesTheCast) {
  auto in = load_fixture("softmax");
  kernel0(in)["locals"][1]["dtype"] = "f16";
  auto problems = problems_of(in);
  ASSERT_EQ(problems.size(), 2u);  // rowmax writes it, rowexpand_sub reads it
  EXPECT_EQ(problems[0].message, "pto.rowmax: operand 'a' is f32 but the result 'm' is f16; convert with pto.cast");
}

TEST(PtoContracts, StoreToAnInParameter) {
  auto in = load_fixture("vadd");
  kernel0(in)["params"][2]["dir"] = "in";
  EXPECT_EQ(only_problem(in).message, "pto.store: 'z' is an In parameter and cannot be stored to");
}

TEST(PtoContracts, UnknownOperationIsUnsupported) {
  auto in = load_fixture("vadd");
  kernel0(in)["body"][2]["op"] = "pto.fft";
  auto p = only_problem(in);
  EXPECT_EQ(p.code, "pto.unsupported");
  EXPECT_EQ(p.message, "'fft' is not an operation backend-pto can lower (kernel 'add_tile')");
}

TEST(PtoContracts, EveryOperationHasAContractAndACoreType) {
  for (const auto &c : ptobe::intrinsic_contracts()) {
    EXPECT_EQ(ptobe::find_intrinsic(c.op), &c);
    EXPECT_FALSE(c.isa.empty()) << c.op;
  }
  EXPECT_EQ(ptobe::find_intrinsic("matmul")->core, ptobe::CoreType::Aic);
  EXPECT_EQ(ptobe::find_intrinsic("add")->core, ptobe::CoreType::Aiv);
}

// ---- bad input: hardware legality ----

TEST(PtoLegality, TileLargerThanUB) {
  auto in = load_fixture("vadd");
  for (int i = 0; i < 3; ++i) kernel0(in)["locals"][i]["shape"] = {512, 128};
  for (int i = 0; i < 3; ++i) kernel0(in)["params"][i]["type"]["shape"] = {512, 128};
  auto problems = problems_of(in);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].code, "pto.memory");
  EXPECT_EQ(problems[0].message,
            "tile '_t0' [512, 128] f32 needs 262144 bytes of UB, but UB holds 196608 bytes per AIV core (a2a3)");
  EXPECT_EQ(problems[0].span.line, 10u);
}

TEST(PtoLegality, TilesThatOverflowUBTogether) {
  auto in = load_fixture("vadd");
  for (int i = 0; i < 3; ++i) kernel0(in)["locals"][i]["shape"] = {128, 256};
  for (int i = 0; i < 3; ++i) kernel0(in)["params"][i]["type"]["shape"] = {128, 256};
  EXPECT_EQ(only_problem(in).message,
            "the tiles of kernel 'add_tile' need 393216 bytes of UB (_t0 131072, _t1 131072, _t2 131072), but UB "
            "holds 196608 bytes per AIV core (a2a3)");
}

TEST(PtoLegality, RowNarrowerThanTheVectorBlockIsPadded) {
  // A row of 6 f32 (24 bytes) was pto.memory; the tile is now 8 columns wide with 6 valid, as PTO-ISA's
  // Tile<..., Rows, Cols, ..., ValidRow, ValidCol> declares it, and the instructions act on the valid region.
  auto in = load_fixture("vadd");
  for (int i = 0; i < 3; ++i) kernel0(in)["locals"][i]["shape"] = {32, 6};
  for (int i = 0; i < 3; ++i) kernel0(in)["params"][i]["type"]["shape"] = {32, 6};
  const auto files = ptotest::emit_files(in);
  bool declared = false;
  for (const auto &[path, text] : files)
    declared = declared || text.find("Tile<TileType::Vec, float, 32, 8, BLayout::RowMajor, 32, 6>") != std::string::npos;
  EXPECT_TRUE(declared);
}

TEST(PtoLegality, CubeAndVectorWorkInOneKernel) {
  // A K-loop of static bounds mixing the two is cut into parts, its accumulator carried between iterations
  // (htp::entry_parts_workload), and each part split between the core types.
  auto in = load_fixture("gemm");
  kernel0(in)["body"][1]["body"].push_back({{"op", "exp"}, {"dst", "ta"}, {"args", {"ta"}}, {"span", {{"line", 13}, {"col", 4}, {"end_line", 13}, {"end_col", 20}}}});
  EXPECT_TRUE(problems_of(in).empty());
  // One whose bounds are not static is not: backend-pto splits a mixed kernel between statements
  // (split_core_types.cpp), not inside such a loop.
  kernel0(in)["body"][1]["stop"] = {{"op", "add"}, {"args", {4, {{"var", "unknown"}}}}};
  auto p = only_problem(in);
  EXPECT_EQ(p.code, "pto.core-type");
  EXPECT_EQ(p.message, "kernel 'gemm_tile' mixes cube work (pto.matmul) and vector work in one for statement; "
                       "backend-pto splits a kernel between statements: move the vector work out of it");
}

TEST(PtoLegality, AccumulatorFilledWithNonZeroBecomesAFillAndAnAdd) {
  // The cube unit resets an accumulator to 0 only: a kernel's fill of another value (a bias) is a fill on the
  // vector core and an add of each product there (split_core_types.cpp, add_loaded_accumulators), which cuts
  // the K-loop into parts. It was "pto.full: accumulator 'acc' can only be reset to 0" (pto.contract); the
  // check stays for what is not split (CSP processes).
  auto in = load_fixture("gemm");
  kernel0(in)["body"][0]["value"] = 1.0;
  EXPECT_TRUE(problems_of(in).empty());
  const auto files = emit_files(in);
  bool vector_add = false;
  for (const auto &[path, text] : files)
    vector_add = vector_add || (path.find("/aiv/") != std::string::npos && text.find("TADD(") != std::string::npos);
  EXPECT_TRUE(vector_add);
}

TEST(PtoLegality, CubeOperandDtypeFromTheProfile) {
  auto in = load_fixture("gemm");
  for (int i : {1, 2}) kernel0(in)["locals"][i]["dtype"] = "i32";
  for (int i : {0, 1}) kernel0(in)["params"][i]["type"]["dtype"] = "i32";
  auto problems = problems_of(in);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].message, "matmul operand 'ta' is i32; the a2a3 cube unit multiplies f16, bf16, f32, i8");
}

// ---- CSP and task-graph limits ----

TEST(PtoCsp, ReplicatedProcessesTakeTheSharedChannelsItemsRoundRobin) {
  auto in = load_fixture("csp_pipeline");
  in.csp_graph["programs"][0]["processes"][2]["replicas"] = 2;  // compute, 4 items: 2 per replica
  in.tile_kernels["kernels"][1]["body"][0]["stop"] = 2;
  ASSERT_TRUE(problems_of(in).empty());
  std::string o;
  for (auto &[path, text] : emit_files(in))
    if (path == "kernels/orchestration/pipeline.cpp") o = text;
  // One scheduling slot per replica, replica r's iteration k moving item k * 2 + r, and each replica's own trip count.
  EXPECT_NE(o.find("int64_t htp_next[4] = {0}, htp_trip[4];"), std::string::npos) << o;
  EXPECT_NE(o.find("// compute[1]: its next iterations"), std::string::npos) << o;
  EXPECT_NE(o.find("const int64_t htp_item0 = htp_k * 2 + 1;"), std::string::npos) << o;
  EXPECT_NE(o.find("htp_trip[2] = (1) > 0 && (2) > (0) ? ((2) - (0) + (1) - 1) / (1) : 0;"), std::string::npos) << o;
}

TEST(PtoCsp, CountsNoTaskOrderCanRunAreACompileError) {
  auto in = load_fixture("csp_pipeline");
  in.tile_kernels["kernels"][1]["body"][0]["stop"] = 8;  // (unbalanced: csp.effects rejects it before a backend)
  auto p = only_problem(in);
  EXPECT_EQ(p.code, "pto.csp");
  EXPECT_EQ(p.message, "CSP program 'pipeline': process 'compute' cannot run its iteration 4 of 8: no order of the "
                       "processes' tasks gives it its items (their counts do not balance, or the channels' depths leave "
                       "no way on)");
}

TEST(PtoCsp, CountsKnownAtRunTimeAreScheduledAndCheckedThere) {
  auto in = load_fixture("csp_pipeline");
  in.tile_kernels["kernels"][1]["body"][0]["stop"] = {{"op", "add"}, {"args", {4, 0}}};  // not folded: a run-time count
  ASSERT_TRUE(problems_of(in).empty());
  std::string o;
  for (auto &[path, text] : emit_files(in))
    if (path == "kernels/orchestration/pipeline.cpp") o = text;
  EXPECT_NE(o.find("htp_trip[1] = (1) > 0 && (htp_add(4, 0)) > (0) ? ((htp_add(4, 0)) - (0) + (1) - 1) / (1) : 0;"),
            std::string::npos)
      << o;
  EXPECT_NE(o.find("htp_fail(\"CSP program 'pipeline': process 'compute' is stopped at iteration %lld of %lld: no order "
                   "of the processes' tasks gives it its next items (their counts do not balance"),
            std::string::npos)
      << o;
}

TEST(PtoTaskGraph, LaunchOfAnUnknownKernel) {
  auto in = load_fixture("vadd");
  in.task_graph["workloads"][0]["body"][0]["body"][0]["kernel"] = "ghost";
  auto p = only_problem(in);
  EXPECT_EQ(p.message, "task launches kernel 'ghost', which tile.kernels does not define");
  EXPECT_EQ(p.span.line, 17u);
}

TEST(PtoTaskGraph, MissingTileKernels) {
  auto in = load_fixture("vadd");
  in.tile_kernels = nullptr;
  EXPECT_EQ(only_problem(in).message, "the module has no tile.kernels attribute: nothing to emit");
}

TEST(PtoTaskGraph, WrongSchemaVersionIsRejectedWhenTheAttributeIsRead) {
  auto in = load_fixture("vadd");
  in.tile_kernels["schema"] = "htp.tile.kernels.v2";
  try {
    (void)ptotest::package_inputs(in);
    ADD_FAILURE() << "read tile.kernels v2";
  } catch (const htp::IrDocumentError &e) {
    const ptobe::IrError error = ptobe::ir_error(e);
    EXPECT_EQ(error.code(), "pto.ir");
    EXPECT_STREQ(error.what(), "tile.kernels has schema \"htp.tile.kernels.v2\"; this reader reads htp.tile.kernels.v1 "
                               "and its minor revisions (htp.tile.kernels.v1.N)");
  }
}

TEST(PtoKernelIr, ATileParameterIsNotLowered) {
  auto in = load_fixture("vadd");
  kernel0(in)["params"][0]["type"] = {{"kind", "tile"}, {"shape", {32, 128}}, {"dtype", "f32"}};
  kernel0(in)["params"][0].erase("local_shape");
  auto p = only_problem(in);
  EXPECT_EQ(p.message, "parameter 'x' of 'add_tile' is a tile; backend-pto takes tensor, scalar and constexpr parameters");
  EXPECT_EQ(p.span.line, 10u);
}

TEST(PtoTaskGraph, KernelWithoutTaskGraphIsItsOwnEntry) {
  auto in = load_fixture("vadd");
  in.task_graph = nullptr;
  std::vector<ptobe::Problem> problems;
  auto pkg = ptobe::build_package(ptotest::package_inputs(in), ptobe::a2a3_profile(), problems);
  ASSERT_TRUE(problems.empty());
  auto eps = ptobe::entrypoints_json(pkg);
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0]["name"], "add_tile");
  EXPECT_EQ(eps[0]["kind"], "kernel");
  EXPECT_EQ(eps[0]["params"][2], nlohmann::json({{"name", "z"}, {"kind", "tensor"}, {"dir", "out"},
                                                 {"shape", {32, 128}}, {"dtype", "f32"}}));
}

// ---- hardware profile ----

TEST(PtoHardwareProfile, BuiltInA2A3) {
  const auto &hw = ptobe::a2a3_profile();
  EXPECT_EQ(hw.name, "a2a3");
  EXPECT_EQ(hw.aic_cores, 24);
  EXPECT_EQ(hw.aiv_cores, 48);
  EXPECT_EQ(hw.space("UB").capacity, 196608u);
  EXPECT_EQ(hw.space("L0C").capacity, 131072u);
  EXPECT_EQ(hw.space("L1").alignment, 32u);
}

TEST(PtoHardwareProfile, MalformedProfileNamesTheKey) {
  auto doc = nlohmann::json::parse(ptobe::a2a3_profile_json());
  doc["memory"]["UB"].erase("capacity");
  try {
    ptobe::parse_hardware_profile(doc);
    FAIL() << "accepted a profile without UB capacity";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "hardware profile: missing key /memory/UB/capacity");
  }
}

// ---- a2a3 toolchain ----

namespace {
ptobe::ToolchainEnv fake_env(std::map<std::string, std::string> vars, std::set<std::string> files,
                             std::set<std::string> dirs) {
  ptobe::ToolchainEnv env;
  env.getenv = [vars](const std::string &k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  env.is_file = [files](const std::string &p) { return files.count(p) != 0; };
  env.is_dir = [dirs](const std::string &p) { return dirs.count(p) != 0; };
  return env;
}
}  // namespace

TEST(PtoA2A3Toolchain, EverythingMissingIsNamedExactly) {
  auto tc = ptobe::find_a2a3_toolchain(fake_env({{"PATH", "/usr/bin"}}, {}, {}));
  EXPECT_FALSE(tc.complete());
  EXPECT_EQ(ptobe::missing_toolchain_message(tc, "/pkg/build/a2a3/build_recipe.sh"),
            "target pto-a2a3 builds and runs on an Ascend device with the CANN toolchain, which is incomplete: "
            "missing ASCEND_HOME_PATH (the CANN installation: not set); ccec (the AI Core compiler: not in "
            "$ASCEND_HOME_PATH/compiler/ccec_compiler/bin nor on PATH); the aarch64 cross compiler (CROSS_CXX, "
            "aarch64-linux-gnu-g++ on PATH, or $ASCEND_HOME_PATH/toolkit/toolchain/hcc/bin/aarch64-target-linux-gnu-g++); "
            "PTO_RUNTIME_ROOT (a pto-runtime checkout, hw-native-sys/simpler 6ebaf7715: not set); PTO_ISA_ROOT (a "
            "PTO-ISA checkout, hw-native-sys/pto-isa cd4a3d3f: not set). The build recipe is in "
            "/pkg/build/a2a3/build_recipe.sh");
}

TEST(PtoA2A3Toolchain, OnlyTheCrossCompilerMissing) {
  auto tc = ptobe::find_a2a3_toolchain(fake_env(
      {{"PATH", "/usr/bin"}, {"ASCEND_HOME_PATH", "/cann"}, {"PTO_RUNTIME_ROOT", "/rt"}, {"PTO_ISA_ROOT", "/isa"}},
      {"/cann/compiler/ccec_compiler/bin/ccec",
       "/rt/src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h",
       "/isa/include/pto/pto-inst.hpp"},
      {"/cann", "/rt", "/isa"}));
  ASSERT_EQ(tc.missing.size(), 1u);
  EXPECT_EQ(tc.ccec, "/cann/compiler/ccec_compiler/bin/ccec");
  EXPECT_EQ(tc.missing[0].rfind("the aarch64 cross compiler", 0), 0u);
}

TEST(PtoA2A3Toolchain, CompleteToolchainFromPath) {
  auto tc = ptobe::find_a2a3_toolchain(fake_env(
      {{"PATH", "/opt/x:/usr/bin"}, {"ASCEND_HOME_PATH", "/cann"}, {"PTO_RUNTIME_ROOT", "/rt"}, {"PTO_ISA_ROOT", "/isa"}},
      {"/opt/x/ccec", "/usr/bin/aarch64-linux-gnu-g++",
       "/rt/src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h",
       "/isa/include/pto/pto-inst.hpp"},
      {"/cann", "/rt", "/isa"}));
  EXPECT_TRUE(tc.complete());
  EXPECT_EQ(tc.ccec, "/opt/x/ccec");
  EXPECT_EQ(tc.cross_cxx, "/usr/bin/aarch64-linux-gnu-g++");
}

TEST(PtoA2A3Toolchain, RecipeBuildsEveryKernelForItsCore) {
  std::vector<ptobe::Problem> problems;
  auto pkg = ptobe::build_package(ptotest::package_inputs(load_fixture("gemm")), ptobe::a2a3_profile(), problems);
  ASSERT_TRUE(problems.empty());
  std::string recipe = ptobe::a2a3_build_recipe(ptobe::kernel_registry(pkg));
  EXPECT_NE(recipe.find("--cce-aicore-arch=dav-c220-cube -D__DAV_CUBE__ $INC \"$SRC/kernels/aic/gemm_tile.cpp\""),
            std::string::npos)
      << recipe;
  EXPECT_NE(recipe.find("\"$CROSS_CXX\" -O2 -std=c++17 -fPIC -shared $INC \"$SRC/kernels/orchestration/gemm.cpp\""),
            std::string::npos);
}

// ---- cube kernels ----

TEST(PtoCube, AccumulatorCastConvertsInTheStore) {
  auto in = load_fixture("gemm");
  kernel0(in)["params"][2]["type"]["dtype"] = "f16";
  kernel0(in)["locals"].push_back({{"name", "h"}, {"shape", {64, 64}}, {"dtype", "f16"}});
  auto &body = kernel0(in)["body"];
  body.insert(body.end() - 1, nlohmann::json{{"op", "cast"}, {"dst", "h"}, {"args", {"acc"}}});
  body.back()["value"] = "h";
  std::map<std::string, std::string> files;
  for (auto &[p, t] : emit_files(in)) files[p] = t;
  const std::string &k = files["kernels/aic/gemm_tile.cpp"];
  EXPECT_NE(k.find("using dst_type = GlobalTensor<half, Shape<1, 1, 1, 64, 64>"), std::string::npos) << k;
  EXPECT_NE(k.find("TSTORE(dst, t_acc);"), std::string::npos);
  EXPECT_EQ(k.find("TCVT"), std::string::npos);
}

TEST(PtoSchedule, StreamsWithoutStreamByDealTasksToTheStreams) {
  auto in = load_fixture("vadd");
  in.task_graph["workloads"][0]["schedule"].erase("stream_by");
  std::map<std::string, std::string> files;
  for (auto &[p, t] : emit_files(in)) files[p] = t;
  const std::string &o = files["kernels/orchestration/vadd.cpp"];
  EXPECT_NE(o.find("#ifdef HTP_PTOSIM\n    int64_t htp_task_index = 0;\n#endif\n"), std::string::npos) << o;
  EXPECT_NE(o.find("htp_ptosim_hint(task0_args, static_cast<int64_t>(v_i), static_cast<int64_t>(htp_mod(htp_task_index++, 2)));"),
            std::string::npos);
}

TEST(PtoSchedule, DispatchPolicyAndTaskWindowReachTheRegistry) {
  std::vector<ptobe::Problem> problems;
  auto pkg = ptobe::build_package(ptotest::package_inputs(load_fixture("moe")), ptobe::a2a3_profile(), problems);
  ASSERT_TRUE(problems.empty());
  EXPECT_EQ(ptobe::kernel_registry(pkg)["runtime_config"]["sim"],
            nlohmann::json({{"dispatch", "work_steal"}, {"task_window", 16}}));
}

TEST(PtoLegality, ConstexprWithoutValue) {
  auto in = load_fixture("vadd");
  kernel0(in)["params"].push_back({{"name", "T"}, {"dir", "in"}, {"type", {{"kind", "constexpr"}, {"value", nullptr}}}});
  auto p = only_problem(in);
  EXPECT_EQ(p.message, "constexpr parameter 'T' of kernel 'add_tile' has no value to compile with; give it a default "
                       "(T: Constexpr = ...)");
  EXPECT_EQ(p.span.line, 10u);
}

namespace {

/// The kernel of `body` (statements as JSON) with tensors A, B, Y and tile registers t, h, acc [16, 16] f32.
htp::TileKernel webs_kernel(const char *body) {
  return htp::read_tile_kernels(nlohmann::json::parse(std::string(R"({"schema": "htp.tile.kernels.v1", "kernels": [
    {"name": "k", "kind": "kernel", "span": {"file": "k.py", "line": 1, "col": 0, "end_line": 9, "end_col": 0},
     "mapping": null,
     "params": [{"name": "A", "dir": "in", "type": {"kind": "tensor", "shape": [16, 16], "dtype": "f32"}},
                {"name": "B", "dir": "in", "type": {"kind": "tensor", "shape": [16, 16], "dtype": "f32"}},
                {"name": "Y", "dir": "out", "type": {"kind": "tensor", "shape": [16, 16], "dtype": "f32"}}],
     "locals": [{"name": "t", "kind": "tile", "shape": [16, 16], "dtype": "f32"},
                {"name": "h", "kind": "tile", "shape": [16, 16], "dtype": "f32"},
                {"name": "acc", "kind": "tile", "shape": [16, 16], "dtype": "f32"}],
     "body": )") + body + "}]}")).kernels.at(0);
}

/// Each statement as "dst = op(args)" after split_register_webs, nested statements after their parent.
std::vector<std::string> renamed(const char *body) {
  htp::TileKernel k = webs_kernel(body);
  ptobe::split_register_webs(k);
  std::vector<std::string> out;
  htp::for_each_op(k.body, [&](const htp::TileOp &o) {
    std::string s = o.dst.value_or("") + " = " + o.op + "(";
    if (o.args)
      for (const auto &a : *o.args) s += (a.is_string() ? a.get<std::string>() : a.dump()) + ",";
    if (o.value && o.value->is_string()) s += o.value->get<std::string>();
    out.push_back(s + ")");
  });
  return out;
}

}  // namespace

TEST(PtoRegisterWebs, ANameReusedForAnIndependentValueBecomesARegisterOfItsOwn) {
  using V = std::vector<std::string>;
  // t holds the input, then the second product: two values, two registers.
  EXPECT_EQ(renamed(R"([{"op": "load", "dst": "t", "src": "A", "offset": [0, 0]},
                        {"op": "matmul", "dst": "h", "args": ["t", "t"]},
                        {"op": "matmul", "dst": "t", "args": ["h", "h"]},
                        {"op": "store", "dst": "Y", "offset": [0, 0], "value": "t"}])"),
            (V{"t = load()", "h = matmul(t,t,)", "t_1 = matmul(h,h,)", "Y = store(t_1)"}));
  // h = matmul(h, ...) reads the old value and defines a new one.
  EXPECT_EQ(renamed(R"([{"op": "load", "dst": "h", "src": "A", "offset": [0, 0]},
                        {"op": "matmul", "dst": "h", "args": ["h", "h"]},
                        {"op": "store", "dst": "Y", "offset": [0, 0], "value": "h"}])"),
            (V{"h = load()", "h_1 = matmul(h,h,)", "Y = store(h_1)"}));
}

TEST(PtoRegisterWebs, ValuesMeetingAtAReadStayOneRegister) {
  using V = std::vector<std::string>;
  // Both branches' values reach the store: one register.
  EXPECT_EQ(renamed(R"([{"op": "load", "dst": "t", "src": "A", "offset": [0, 0]},
                        {"op": "if", "cond": {"param": "n"}, "then": [{"op": "matmul", "dst": "t", "args": ["h", "h"]}], "else": []},
                        {"op": "store", "dst": "Y", "offset": [0, 0], "value": "t"}])"),
            (V{"t = load()", " = if()", "t = matmul(h,h,)", "Y = store(t)"}));
  // A loop's accumulator: the fill, each iteration's add and the read after the loop are one register.
  EXPECT_EQ(renamed(R"([{"op": "full", "dst": "acc", "value": 0.0},
                        {"op": "for", "var": "i", "start": 0, "stop": 4, "step": 1, "body": [
                          {"op": "load", "dst": "t", "src": "A", "offset": [0, 0]},
                          {"op": "add", "dst": "acc", "args": ["acc", "t"]}]},
                        {"op": "store", "dst": "Y", "offset": [0, 0], "value": "acc"}])"),
            (V{"acc = full()", " = for()", "t = load()", "acc = add(acc,t,)", "Y = store(acc)"}));
  // A matmul accumulating into its destination keeps the destination's register.
  EXPECT_EQ(renamed(R"([{"op": "load", "dst": "acc", "src": "B", "offset": [0, 0]},
                        {"op": "matmul", "dst": "acc", "args": ["t", "h", "acc"]},
                        {"op": "store", "dst": "Y", "offset": [0, 0], "value": "acc"}])"),
            (V{"acc = load()", "acc = matmul(t,h,acc,)", "Y = store(acc)"}));
}
