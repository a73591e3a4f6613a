// The a2a3sim binding: hand-written packages (orchestration + kernels as the emitter writes them) built into
// the content-hash cache and run on the simulator (docs/backends/pto-sim.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "sim_test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace htp_ptosim;

namespace {

using namespace ptosim_test;

TEST(PtoSimBinding, VectorAddOverATileGridMatchesReference) {
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = request(kPackages / "vector_add", "vadd", "vadd");
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const json report = run_package(r);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_EQ(c.data[i], a.data[i] + b.data[i]) << i;
  EXPECT_EQ(report["schema"], "htp.run.v1");
  EXPECT_EQ(report["path"], "htp-cpu-sim");
  EXPECT_EQ(report["tasks"], 8);
  EXPECT_EQ(report["runtime"]["aiv_cores"], 4); // from runtime_config.sim
  EXPECT_EQ(report["trace"], "trace.json");
  const json written = json::parse(std::ifstream(fs::path(r.run_dir) / "report.json"));
  EXPECT_EQ(written["tasks"], 8);
  const json trace = json::parse(std::ifstream(fs::path(r.run_dir) / "trace.json"));
  int events = 0, orchestration = 0;
  for (const json &e : trace["traceEvents"]) {
    events += e["ph"] == "X" && e["name"] == "tile_add";
    orchestration += e["ph"] == "X" && e["name"] == "orchestration" && e["tid"] == 0;
  }
  EXPECT_EQ(events, 8);
  EXPECT_EQ(orchestration, 1);
  std::ifstream log(fs::path(r.run_dir) / "orchestration.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "info aicpu_orchestration_entry: submitted 8 tiles");
}

TEST(PtoSimBinding, GemmOnAicMatchesReference) {
  HostTensor a({64, 96}, 3u), b({96, 64}, 4u), c({64, 64}, 0.5f);
  SimRunRequest r = request(kPackages / "gemm", "gemm", "gemm");
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const json report = run_package(r);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double ref = 0.5;
      for (int k = 0; k < 96; ++k)
        ref += double(a.at(i, k)) * b.at(k, j);
      ASSERT_NEAR(c.at(i, j), ref, 1e-4) << i << "," << j;
    }
  EXPECT_EQ(report["tasks"], 2 * 2 * 3 * 2);
  uint64_t aic_tasks = 0, aiv_tasks = 0;
  for (const json &w : report["workers"])
    (w["name"].get<std::string>().rfind("AIC", 0) == 0 ? aic_tasks : aiv_tasks) += w["tasks"].get<uint64_t>();
  EXPECT_EQ(aic_tasks, 12u);
  EXPECT_EQ(aiv_tasks, 12u);
}

TEST(PtoSimBinding, SoftmaxTakesTheScaleScalar) {
  HostTensor x({64, 64}, 5u), y({64, 64}, 0.0f);
  SimRunRequest r = request(kPackages / "softmax", "softmax", "softmax");
  RunArgument scale{"scale", nullptr, 0, 2.0};
  r.args = {{"X", &x.dl}, {"Y", &y.dl}, scale};
  run_package(r);
  for (int i = 0; i < 64; ++i) {
    double mx = -1e30, sum = 0;
    for (int j = 0; j < 64; ++j)
      mx = std::max(mx, 2.0 * x.at(i, j));
    for (int j = 0; j < 64; ++j)
      sum += std::exp(2.0 * x.at(i, j) - mx);
    for (int j = 0; j < 64; ++j)
      ASSERT_NEAR(y.at(i, j), std::exp(2.0 * x.at(i, j) - mx) / sum, 1e-5) << i << "," << j;
  }
}

TEST(PtoSimBinding, OrchestrationBranchesOnAProducedValue) {
  HostTensor x({4}, 0.0f), y({4}, -7.0f);
  x.data = {1, 2, 3, 4};
  x.bind();
  SimRunRequest r = request(kPackages / "api_tour", "tour", "tour");
  RunArgument n{"n", nullptr, 3, 0};
  r.args = {{"X", &x.dl}, {"Y", &y.dl}, n};
  json report = run_package(r);
  EXPECT_EQ(y.data, (std::vector<float>{3, 6, 9, 12}));
  EXPECT_EQ(report["tasks"], 3); // scale, copy, barrier
  std::ifstream log(fs::path(r.run_dir) / "orchestration.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "info aicpu_orchestration_entry: extra 5.0, clusters 2");

  y.data.assign(4, -7.0f);
  r.args[2].scalar_int = -1; // negative scale: the copy is not submitted
  report = run_package(r);
  EXPECT_EQ(y.data, (std::vector<float>(4, -7.0f)));
  EXPECT_EQ(report["tasks"], 2);
}

TEST(PtoSimBinding, SecondRunOfAnUnchangedPackageInvokesNoCompiler) {
  const fs::path cache = fresh_dir("cache-unchanged");
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = request(kPackages / "vector_add", "vadd", "unchanged", cache);
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const json first = run_package(r);
  EXPECT_EQ(first["build"]["cache"], "miss");
  EXPECT_EQ(first["build"]["compiler_invocations"], 2); // orchestration + one kernel
  std::fill(c.data.begin(), c.data.end(), 0.0f);
  const json second = run_package(r);
  EXPECT_EQ(second["build"]["cache"], "hit");
  EXPECT_EQ(second["build"]["compiler_invocations"], 0);
  EXPECT_EQ(second["build"]["hits"], 2);
  EXPECT_EQ(c.data[5], a.data[5] + b.data[5]);
}

TEST(PtoSimBinding, ChangingOneKernelRebuildsOnlyThatKernel) {
  const fs::path cache = fresh_dir("cache-changed");
  const fs::path pkg = copy_package("gemm", "changed");
  HostTensor a({64, 96}, 3u), b({96, 64}, 4u), c({64, 64}, 0.0f);
  SimRunRequest r = request(pkg, "gemm", "changed", cache);
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  EXPECT_EQ(run_package(r)["build"]["compiler_invocations"], 3);
  append(pkg / "codegen/pto/kernels/aiv/tile_accumulate.cpp", "// changed\n");
  const json report = run_package(r);
  EXPECT_EQ(report["build"]["compiler_invocations"], 1);
  EXPECT_EQ(report["build"]["hits"], 2);
  EXPECT_EQ(report["build"]["cache"], "miss");
}

TEST(PtoSimBinding, DispatchOptionOverridesThePackage) {
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = request(kPackages / "vector_add", "vadd", "affinity");
  r.options["dispatch"] = "affinity";
  r.options["aiv_cores"] = 3;
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const json report = run_package(r);
  EXPECT_EQ(report["runtime"]["dispatch"], "affinity");
  const json trace = json::parse(std::ifstream(fs::path(r.run_dir) / "trace.json"));
  int checked = 0;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "tile_add") continue;
    EXPECT_EQ(e["tid"].get<int>() - 1, e["args"]["key"].get<int>() % 3); // key = tile index (htp_ptosim_hint)
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST(PtoSimBinding, WrongArgumentCountIsReported) {
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u);
  SimRunRequest r = request(kPackages / "vector_add", "vadd", "argc");
  r.args = {{"A", &a.dl}, {"B", &b.dl}};
  const auto [code, message] = run_failure(r);
  EXPECT_EQ(code, "pto.sim.args");
  EXPECT_EQ(message, "codegen/pto/kernels/orchestration/vadd.cpp expects 3 arguments "
                     "(aicpu_orchestration_config), the run passes 2");
}

TEST(PtoSimBinding, MissingRegistryIsReported) {
  const fs::path pkg = fresh_dir("empty-package");
  const auto [code, message] = run_failure(request(pkg, "vadd", "noreg"));
  EXPECT_EQ(code, "pto.sim.package");
  EXPECT_EQ(message, "the package has no " + (pkg / "codegen/pto/kernel_registry.json").string());
}

TEST(PtoSimBinding, BadRegistryFieldIsReported) {
  const fs::path pkg = copy_package("vector_add", "badcore");
  json reg = json::parse(std::ifstream(pkg / "codegen/pto/kernel_registry.json"));
  reg["kernels"][0]["core_type"] = "mix";
  std::ofstream(pkg / "codegen/pto/kernel_registry.json") << reg.dump();
  const auto [code, message] = run_failure(request(pkg, "vadd", "badcore"));
  EXPECT_EQ(code, "pto.sim.package");
  EXPECT_EQ(message, (pkg / "codegen/pto/kernel_registry.json").string() +
                         ": kernels[0]: core_type 'mix' must be \"aiv\" or \"aic\"");
}

TEST(PtoSimBinding, UnknownOptionAndBadPolicyAreReported) {
  SimRunRequest r = request(kPackages / "vector_add", "vadd", "opts");
  r.options["speed"] = 11;
  EXPECT_EQ(run_failure(r).second,
            "unknown option 'speed' (known: dispatch, batch, batch_wait_us, aiv_cores, aic_cores, aicpu_thread_num, "
            "task_window, trace, cxx, sim_include, runtime, check_revision, device_id, timeout_s)");
  r.options.erase("speed");
  r.options["dispatch"] = "fastest";
  EXPECT_EQ(run_failure(r).second, "option dispatch must be one of \"round_robin\", \"affinity\", \"hash\", "
                                   "\"work_steal\", not \"fastest\"");
}

TEST(PtoSimBinding, CompileErrorNamesTheSourceAndShowsTheCompiler) {
  const fs::path pkg = copy_package("vector_add", "broken");
  append(pkg / "codegen/pto/kernels/aiv/tile_add.cpp", "\nthis is not C++;\n");
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = request(pkg, "vadd", "broken", fresh_dir("cache-broken"));
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const auto [code, message] = run_failure(r);
  EXPECT_EQ(code, "pto.sim.build");
  EXPECT_EQ(message.rfind("compiling codegen/pto/kernels/aiv/tile_add.cpp failed (", 0), 0u) << message;
  EXPECT_NE(message.find("tile_add.cpp:"), std::string::npos) << message;
}

TEST(PtoSimBinding, KernelFaultNamesTheTaskAndKernel) {
  const fs::path pkg = copy_package("vector_add", "fault");
  // A tile placed past the end of UB: the simulated core rejects it at run time.
  const fs::path k = pkg / "codegen/pto/kernels/aiv/tile_add.cpp";
  std::ifstream in(k);
  std::string src((std::istreambuf_iterator<char>(in)), {});
  src.replace(src.find("TASSIGN(tc, 0x8000)"), 19, "TASSIGN(tc, 0x2F000)");
  std::ofstream(k) << src;
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = request(pkg, "vadd", "fault");
  r.options["aiv_cores"] = 1;
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  const auto [code, message] = run_failure(r);
  EXPECT_EQ(code, "pto.sim.run");
  EXPECT_EQ(message,
            "task 0 (kernel tile_add on AIV0): TASSIGN: a tile of 16384 bytes at address 192512 exceeds UB "
            "(196608 bytes)");
  const json report = json::parse(std::ifstream(fs::path(r.run_dir) / "report.json"));
  EXPECT_EQ(report["ok"], false);
}

} // namespace
