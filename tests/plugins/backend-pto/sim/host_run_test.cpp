// The PTO bindings inside the backend-pto plugin, driven by htp-host: a tile program compiled for
// pto-a2a3sim runs on the simulator, which finds its headers next to the plugin
// (htp-backend-pto.data/ptosim/include), and a second run of the unchanged package starts no compiler; the
// same package, as emitted, runs on a built pto-runtime (HTP_TEST_PTO_RUNTIME_ROOT, HTP_TEST_PTO_ISA_ROOT)
// with the driver found next to the plugin (htp-backend-pto.data/ptort); a pto-a2a3 run with a complete
// (stub) CANN toolchain goes on to check that the runtime is built for the device.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "run/npy.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char *kProgram = R"(from htp.dialects.tile import kernel, Tensor, In, Out, f32, load, store, add

@kernel
def vadd(a: In[Tensor[64, 128, f32]], b: In[Tensor[64, 128, f32]], c: Out[Tensor[64, 128, f32]]):
    for r in range(64 // 16):
        x = load(a.tile(r, 0, shape=(16, 128)))
        y = load(b.tile(r, 0, shape=(16, 128)))
        store(c.tile(r, 0, shape=(16, 128)), add(x, y))
)";

htp::HostArray array(float base) {
  htp::HostArray a{"f32", {64, 128}, std::vector<uint8_t>(64 * 128 * 4)};
  auto *f = reinterpret_cast<float *>(a.data.data());
  for (int i = 0; i < 64 * 128; ++i)
    f[i] = base + 0.25f * static_cast<float>(i % 97);
  return a;
}

int run(const std::string &command) {
  return std::system((command + " > /dev/null 2>&1").c_str());
}

/// Runs `command`; returns its exit status and its standard error.
std::pair<int, std::string> run_capturing(const std::string &command, const fs::path &err) {
  const int rc = std::system((command + " > /dev/null 2> " + err.string()).c_str());
  std::ifstream f(err);
  return {rc, std::string((std::istreambuf_iterator<char>(f)), {})};
}

fs::path fresh(const std::string &name) {
  const fs::path dir = fs::path(HTP_TEST_BINARY_DIR) / "ptosim-tests" / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string host() { return std::string(HTP_TEST_BINARY_DIR) + "/bin/htp-host --plugins " + HTP_TEST_PLUGIN_DIR; }

/// vadd.py compiled for `target` into dir/pkg, with inputs dir/a.npy, dir/b.npy.
void compile_vadd(const fs::path &dir, const std::string &target) {
  std::ofstream(dir / "vadd.py") << kProgram;
  ASSERT_EQ(run(host() + " compile " + (dir / "vadd.py").string() + " --target " + target + " -o " +
                (dir / "pkg").string()),
            0);
  ASSERT_FALSE(htp::write_npy(dir / "a.npy", array(1.0f)));
  ASSERT_FALSE(htp::write_npy(dir / "b.npy", array(-3.0f)));
}

std::string run_vadd_command(const fs::path &dir) {
  return host() + " run " + (dir / "pkg").string() + " -i a=" + (dir / "a.npy").string() + " -i b=" +
         (dir / "b.npy").string() + " -o " + (dir / "out").string() + " --cache " + (dir / "cache").string() +
         " --run-dir " + (dir / "run").string();
}

void expect_vadd_output(const fs::path &dir) {
  const auto c = htp::read_npy(dir / "out" / "c.npy");
  ASSERT_TRUE(c) << "no output";
  const auto *got = reinterpret_cast<const float *>(c->data.data());
  for (int i = 0; i < 64 * 128; ++i)
    ASSERT_EQ(got[i], 1.0f - 3.0f + 0.5f * static_cast<float>(i % 97)) << i;
}

class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

private:
  const char *name_;
};

void write(const fs::path &file, const std::string &text, bool executable = false) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  if (executable) fs::permissions(file, fs::perms::owner_all, fs::perm_options::add);
}

TEST(PtoSimHostRun, CompiledTileProgramRunsOnTheSimulatorFromThePluginDirectory) {
  const fs::path dir = fresh("host-run");
  compile_vadd(dir, "pto-a2a3sim");
  const std::string run_cmd = run_vadd_command(dir);
  ::unsetenv("HTP_PTOSIM_INCLUDE");
  ASSERT_EQ(run(run_cmd), 0);
  expect_vadd_output(dir);
  json report = json::parse(std::ifstream(dir / "run" / "report.json"));
  EXPECT_EQ(report["binding"], "pto.a2a3sim");
  EXPECT_EQ(report["path"], "htp-cpu-sim");
  EXPECT_GT(report["build"]["compiler_invocations"].get<int>(), 0);

  ASSERT_EQ(run(run_cmd), 0);
  report = json::parse(std::ifstream(dir / "run" / "report.json"));
  EXPECT_EQ(report["build"]["cache"], "hit");
  EXPECT_EQ(report["build"]["compiler_invocations"], 0);
}

TEST(PtoSimHostRun, EmittedPackageRunsOnTheRealPtoRuntime) {
  const char *rt = std::getenv("HTP_TEST_PTO_RUNTIME_ROOT");
  const char *isa = std::getenv("HTP_TEST_PTO_ISA_ROOT");
  if (!rt || !*rt || !isa || !*isa)
    GTEST_SKIP() << "HTP_TEST_PTO_RUNTIME_ROOT and HTP_TEST_PTO_ISA_ROOT are not both set: there is no built "
                    "pto-runtime (hw-native-sys/simpler 6ebaf7715) and PTO-ISA (cd4a3d3f) checkout to run on";
  const fs::path dir = fresh("host-run-ptort");
  compile_vadd(dir, "pto-a2a3sim");
  ScopedEnv r("PTO_RUNTIME_ROOT", rt), i("PTO_ISA_ROOT", isa);
  ::unsetenv("HTP_PTORT_DRIVER_DIR");
  const auto [rc, err] = run_capturing(run_vadd_command(dir), dir / "stderr.txt");
  ASSERT_EQ(rc, 0) << err;
  expect_vadd_output(dir);
  const json report = json::parse(std::ifstream(dir / "run" / "report.json"));
  EXPECT_EQ(report["path"], "pto-runtime");
  EXPECT_EQ(report["runtime"]["revision"].get<std::string>().rfind("6ebaf7715", 0), 0u);
}

TEST(PtoA2A3HostRun, CompleteToolchainGoesOnToCheckTheRuntimeIsBuiltForTheDevice) {
  const fs::path dir = fresh("host-run-a2a3");
  compile_vadd(dir, "pto-a2a3");
  // A stub CANN installation: the binding only looks for the files before it checks the runtime.
  write(dir / "cann/compiler/ccec_compiler/bin/ccec", "#!/bin/sh\nexit 1\n", true);
  write(dir / "cann/compiler/ccec_compiler/bin/ld.lld", "#!/bin/sh\nexit 1\n", true);
  write(dir / "cross/aarch64-linux-gnu-g++", "#!/bin/sh\nexit 1\n", true);
  const fs::path root = dir / "simpler", isa = dir / "pto-isa";
  write(root / "src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h", "\n");
  write(root / "src/common/worker/chip_worker.h", "\n");
  write(root / ".git/HEAD", "6ebaf77156313aaeb5c9457c57b16c45b84ae7e8\n");
  write(isa / "include/pto/pto-inst.hpp", "\n");
  write(isa / ".git/HEAD", "cd4a3d3f7a1a27fcfe536f617e9bca3008929664\n");
  ScopedEnv home("ASCEND_HOME_PATH", (dir / "cann").string()), cross("CROSS_CXX", (dir / "cross/aarch64-linux-gnu-g++").string()),
      r("PTO_RUNTIME_ROOT", root.string()), i("PTO_ISA_ROOT", isa.string());
  const auto [rc, err] = run_capturing(run_vadd_command(dir), dir / "stderr.txt");
  EXPECT_NE(rc, 0);
  const fs::path lib = root / "build/lib/a2a3";
  const fs::path onboard = lib / "onboard/tensormap_and_ringbuffer";
  EXPECT_NE(err.find("error: PTO_RUNTIME_ROOT=" + root.string() + " is not built for a2a3: missing " +
                     (onboard / "libhost_runtime.so").string() + ", " + (onboard / "libaicpu_kernel.so").string() +
                     ", " + (onboard / "libaicore_kernel.so").string() + ", " +
                     (lib / "dispatcher/libsimpler_aicpu_dispatcher.so").string() +
                     " (build it in the checkout with `python3 simpler_setup/build_runtimes.py --platforms a2a3`) "
                     "[pto.runtime.not_built]"),
            std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(dir / "pkg/build/a2a3/build_recipe.sh"));
}

} // namespace
