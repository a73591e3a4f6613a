// End to end through htp-host: compile programs for AIE targets (IR from the fixture plugin), the package
// files and entrypoints, compile errors at source spans, and aie-xrt's message through `htp-host run`.
#include <gtest/gtest.h>

#include <fstream>

#include "aie_test_support.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using htp::test::read;

namespace {

htp::test::CommandResult compile(const std::string &program, const fs::path &out, const std::string &target = "aie-npu1",
                                 const std::vector<std::string> &extra = {}) {
  std::vector<std::string> args = {"--plugins", HTP_AIE_PLUGIN, "--plugins", HTP_IRFIX_PLUGIN, "compile",
                                   (aie_test::test_dir() / "fixtures" / "programs" / program).string(), "--target", target, "-o", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return htp::test::run_host(args);
}

/// Skips the test, saying why, when htp-host has no Python frontend to compile .py programs with.
#define REQUIRE_FRONTEND(result)                                                                  \
  if ((result).err.find("[frontend.missing]") != std::string::npos)                               \
  GTEST_SKIP() << "htp-host has no Python frontend (build target _htp): " << (result).err

/// A float32 .npy file of `shape` filled with `value`.
void write_npy(const fs::path &path, const std::vector<int64_t> &shape, float value) {
  std::string dims;
  int64_t n = 1;
  for (auto s : shape) {
    dims += std::to_string(s) + ", ";
    n *= s;
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char *>(&len), 2);
  f << header;
  std::vector<float> data(static_cast<size_t>(n), value);
  f.write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
}

}  // namespace

TEST(AieCli, CompileWritesTheDesignAndItsEntrypoint) {
  htp::test::ScratchDir dir;
  auto r = compile("vadd.py", dir.path() / "pkg");
  REQUIRE_FRONTEND(r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path d = dir.path() / "pkg" / "codegen" / "aie" / "vadd";
  for (const char *f : {"aie.mlir", "mapping.json", "fifos.json", "kernels/add_tile.cc", "host.cpp", "build.sh"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  EXPECT_EQ(read(d / "aie.mlir"), read(aie_test::test_dir() / "golden" / "vadd.aie.mlir"));
  auto manifest = aie_test::Json::parse(read(dir.path() / "pkg" / "manifest.json"));
  const auto &e = manifest["entrypoints"][0];
  EXPECT_EQ(e["name"], "vadd");
  EXPECT_EQ(e["kind"], "workload");
  EXPECT_EQ(e["params"][2], (aie_test::Json{{"name", "C"}, {"kind", "tensor"}, {"dir", "out"}, {"shape", {128, 64}}, {"dtype", "f32"}}));
}

TEST(AieCli, ReleaseOptionSwitchesTheSpelling) {
  htp::test::ScratchDir dir;
  auto r = compile("vadd.py", dir.path() / "pkg", "aie-npu1", {"--option", "aie.release=\"v1.0\""});
  REQUIRE_FRONTEND(r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read(dir.path() / "pkg/codegen/aie/vadd/aie.mlir").find("aiex.runtime_sequence("), std::string::npos);
  auto bad = compile("vadd.py", dir.path() / "pkg2", "aie-npu1", {"--option", "aie.release=\"v9\""});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("option aie.release='v9' is not a known MLIR-AIE spelling (known: 2025.11, 2026, v1.0, 2024.06)"),
            std::string::npos) << bad.err;
}

TEST(AieCli, AGridLargerThanTheDeviceIsHostOrchestratedWithANoteSayingWhy) {
  // 32 grid points do not fit 16 cores spatially: the workload runs one task at a time, each its kernel's
  // single-core design, and the compile says so (a note, not an error) with the spatial reason.
  htp::test::ScratchDir dir;
  auto r = compile("grid_32.py", dir.path() / "pkg");
  REQUIRE_FRONTEND(r);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: workload 'vadd' runs host-orchestrated on npu1: one task at a time, each kernel a "
                       "design of its own (spatially: the parallel grid of workload 'vadd' [32] needs 32 cores"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "pkg" / "codegen" / "aie" / "vadd" / "orchestration.json"));
}

TEST(AieCli, MalformedIrDocumentsAreErrorsNamingTheirPath) {
  htp::test::ScratchDir dir;
  auto f = aie_test::fixture("vadd.json");
  f["tile.kernels"]["kernels"][0]["params"][0]["dir"] = "sideways";
  dir.write("bad.json", f.dump());
  f["tile.kernels"]["kernels"][0]["params"][0]["dir"] = "in";
  f["tile.kernels"]["schema"] = "htp.tile.kernels.v2";
  dir.write("v2.json", f.dump());
  f["tile.kernels"]["schema"] = "htp.tile.kernels.v1";
  f["wsp.task_graph"]["workloads"][0]["body"][0]["dep"] = "sometimes";
  dir.write("wsp.json", f.dump());
  for (const char *name : {"bad", "v2", "wsp"})
    dir.write(std::string(name) + ".py", std::string("from htp.dialects.irfix import fixture, program\n\n\n@program\ndef vadd():\n"
                                                     "    fixture(\"") + name + ".json\")\n");
  auto r = compile((dir.path() / "bad.py").string(), dir.path() / "pkg");
  REQUIRE_FRONTEND(r);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: malformed tile.kernels at /kernels/0/params/0/dir: expected one of in, out, inout, found "
                       "\"sideways\" [aie.ir]"),
            std::string::npos)
      << r.err;
  r = compile((dir.path() / "v2.py").string(), dir.path() / "pkg");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: tile.kernels has schema \"htp.tile.kernels.v2\"; this reader reads htp.tile.kernels.v1 "
                       "and its minor revisions (htp.tile.kernels.v1.N) [aie.schema]"),
            std::string::npos)
      << r.err;
  r = compile((dir.path() / "wsp.py").string(), dir.path() / "pkg");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("error: malformed wsp.task_graph at /workloads/0/body/0/dep: expected one of independent, "
                       "sequential, selected, found \"sometimes\" [aie.ir]"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "pkg"));
}

TEST(AieCli, PartialDeviceTargetsExist) {
  htp::test::ScratchDir dir;
  auto r = compile("gemm_2x2.py", dir.path() / "pkg", "aie-npu1_1col");
  REQUIRE_FRONTEND(r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read(dir.path() / "pkg/codegen/aie/gemm/aie.mlir").find("aie.device(npu1_1col)"), std::string::npos);
}

TEST(AieCli, XrtBindingWithoutToolchainNamesWhatIsMissing) {
  htp::test::ScratchDir dir;
  auto r = compile("vadd.py", dir.path() / "pkg", "aie-npu2", {"--binding", "aie.xrt"});
  REQUIRE_FRONTEND(r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_npy(dir.path() / "a.npy", {128, 64}, 1.0f);
  write_npy(dir.path() / "b.npy", {128, 64}, 2.0f);
  auto run = htp::test::run_host({"--plugins", HTP_AIE_PLUGIN, "--plugins", HTP_IRFIX_PLUGIN, "run",
                                  (dir.path() / "pkg").string(), "--inputs", "A=" + (dir.path() / "a.npy").string(),
                                  "--inputs", "B=" + (dir.path() / "b.npy").string(), "--outputs", (dir.path() / "out").string()});
  EXPECT_NE(run.exit_code, 0);
  if (std::getenv("PEANO_INSTALL_DIR") == nullptr && std::getenv("XILINX_XRT") == nullptr)
    EXPECT_NE(run.err.find("aie-xrt cannot build or run entry 'vadd': missing aiecc (the MLIR-AIE compiler driver; neither "
                           "aiecc nor aiecc.py is on PATH); Peano (the llvm-aie kernel compiler; set PEANO_INSTALL_DIR to "
                           "its install directory); XRT (set XILINX_XRT, or install it in /opt/xilinx/xrt)"),
              std::string::npos) << run.err;
  else
    GTEST_SKIP() << "PEANO_INSTALL_DIR or XILINX_XRT is set: the exact message is checked by AieXrt.*";
}

TEST(AieCli, SimBindingRunsThePackage) {
  htp::test::ScratchDir dir;
  auto r = compile("vadd.py", dir.path() / "pkg");
  REQUIRE_FRONTEND(r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_npy(dir.path() / "a.npy", {128, 64}, 1.5f);
  write_npy(dir.path() / "b.npy", {128, 64}, 2.0f);
  auto run = htp::test::run_host({"--plugins", HTP_AIE_PLUGIN, "--plugins", HTP_IRFIX_PLUGIN, "run",
                                  (dir.path() / "pkg").string(), "--inputs", "A=" + (dir.path() / "a.npy").string(),
                                  "--inputs", "B=" + (dir.path() / "b.npy").string(), "--outputs", (dir.path() / "out").string(),
                                  "--cache", (dir.path() / "cache").string(), "--run-dir", (dir.path() / "run").string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string c = read(dir.path() / "out" / "C.npy");
  ASSERT_EQ(c.size(), 128u + 128 * 64 * 4);
  float first, last;
  std::memcpy(&first, c.data() + 128, 4);
  std::memcpy(&last, c.data() + c.size() - 4, 4);
  EXPECT_EQ(first, 3.5f);
  EXPECT_EQ(last, 3.5f);
  auto report = aie_test::Json::parse(read(dir.path() / "run" / "report.json"));
  EXPECT_EQ(report["schema"], "htp.run.v1");
  EXPECT_EQ(report["path"], "simulator");
  EXPECT_TRUE(fs::exists(dir.path() / "run" / "trace.json"));
}
