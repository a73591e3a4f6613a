// The a2a3sim binding inside the backend-pto plugin, driven by htp-host: a tile program compiled for
// pto-a2a3sim runs on the simulator, which finds its headers next to the plugin
// (htp-backend-pto.data/ptosim/include), and a second run of the unchanged package starts no compiler.
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

TEST(PtoSimHostRun, CompiledTileProgramRunsOnTheSimulatorFromThePluginDirectory) {
  const fs::path dir =
      fs::path(HTP_TEST_BINARY_DIR) / "ptosim-tests" / ("host-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "vadd.py") << kProgram;
  const std::string host =
      std::string(HTP_TEST_BINARY_DIR) + "/bin/htp-host --plugins " + HTP_TEST_PLUGIN_DIR;
  ASSERT_EQ(run(host + " compile " + (dir / "vadd.py").string() + " --target pto-a2a3sim -o " +
                (dir / "pkg").string()),
            0);
  ASSERT_FALSE(htp::write_npy(dir / "a.npy", array(1.0f)));
  ASSERT_FALSE(htp::write_npy(dir / "b.npy", array(-3.0f)));
  const std::string run_cmd = host + " run " + (dir / "pkg").string() + " -i a=" + (dir / "a.npy").string() +
                              " -i b=" + (dir / "b.npy").string() + " -o " + (dir / "out").string() +
                              " --cache " + (dir / "cache").string() + " --run-dir " + (dir / "run").string();
  ::unsetenv("HTP_PTOSIM_INCLUDE");
  ASSERT_EQ(run(run_cmd), 0);
  const auto c = htp::read_npy(dir / "out" / "c.npy");
  ASSERT_TRUE(c) << "no output";
  const auto *got = reinterpret_cast<const float *>(c->data.data());
  for (int i = 0; i < 64 * 128; ++i)
    ASSERT_EQ(got[i], 1.0f - 3.0f + 0.5f * static_cast<float>(i % 97)) << i;
  json report = json::parse(std::ifstream(dir / "run" / "report.json"));
  EXPECT_EQ(report["binding"], "pto.a2a3sim");
  EXPECT_EQ(report["path"], "htp-cpu-sim");
  EXPECT_GT(report["build"]["compiler_invocations"].get<int>(), 0);

  ASSERT_EQ(run(run_cmd), 0);
  report = json::parse(std::ifstream(dir / "run" / "report.json"));
  EXPECT_EQ(report["build"]["cache"], "hit");
  EXPECT_EQ(report["build"]["compiler_invocations"], 0);
}

} // namespace
