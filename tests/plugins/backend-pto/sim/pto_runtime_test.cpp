// The a2a3sim binding on the real pto-runtime (docs/backends/pto.md §8): every way PTO_RUNTIME_ROOT and
// PTO_ISA_ROOT can be wrong is named exactly (fake checkouts), and, when HTP_TEST_PTO_RUNTIME_ROOT and
// HTP_TEST_PTO_ISA_ROOT point at a built pto-runtime 6ebaf7715 and PTO-ISA cd4a3d3f, the hand-written
// packages run on it and match reference loops.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "pto_runtime.hpp"
#include "sim_test_support.hpp"

namespace {

using namespace ptosim_test;

// The test binary links the binding statically: point it at the driver sources in the tree.
const bool kDriverDirSet = ::setenv("HTP_PTORT_DRIVER_DIR", HTP_PTORT_DRIVER_SOURCE_DIR, 0) == 0;

const std::string kRuntimePin = "6ebaf7715";
const std::string kIsaPin = "cd4a3d3f7a1a27fcfe536f617e9bca3008929664";

void write(const fs::path &file, const std::string &text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

/// A directory that looks like a pto-runtime checkout (not built); `head` goes to .git/HEAD when set.
fs::path fake_runtime(const std::string &name, const std::string &head) {
  const fs::path root = fresh_dir(name);
  write(root / "src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h", "\n");
  write(root / "src/common/worker/chip_worker.h", "\n");
  write(root / "pto_isa.pin", kIsaPin + "\n");
  if (!head.empty()) write(root / ".git/HEAD", head + "\n");
  return root;
}

fs::path fake_isa(const std::string &name, const std::string &head) {
  const fs::path root = fresh_dir(name);
  write(root / "include/pto/pto-inst.hpp", "\n");
  if (!head.empty()) write(root / ".git/HEAD", head + "\n");
  return root;
}

std::string sha(const std::string &prefix) { return prefix + std::string(40 - prefix.size(), '0'); }

struct Roots {
  EnvVar rt, isa;
  Roots(const fs::path &r, const fs::path &i) : rt("PTO_RUNTIME_ROOT", r.string()), isa("PTO_ISA_ROOT", i.string()) {}
};

SimRunRequest vadd_request(const std::string &name) { return request(kPackages / "vector_add", "vadd", name); }

TEST(PtoRuntimeRoots, BothRootsAreNeeded) {
  EnvVar rt("PTO_RUNTIME_ROOT", "/nonexistent/simpler");
  const auto [code, message] = run_failure(vadd_request("rt-only"));
  EXPECT_EQ(code, "pto.runtime.missing");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT is set but PTO_ISA_ROOT is not: set both to run on the real pto-runtime, "
                     "or neither to use HTP's CPU simulator");
}

TEST(PtoRuntimeRoots, OptionPtoRuntimeWithoutRootsSaysWhatToSet) {
  SimRunRequest r = vadd_request("rt-none");
  r.options["runtime"] = "pto-runtime";
  const auto [code, message] = run_failure(r);
  EXPECT_EQ(code, "pto.runtime.missing");
  EXPECT_EQ(message, "option runtime=\"pto-runtime\" needs PTO_RUNTIME_ROOT (a built pto-runtime, "
                     "hw-native-sys/simpler) and PTO_ISA_ROOT (PTO-ISA) to be set");
}

TEST(PtoRuntimeRoots, RootThatIsNotADirectory) {
  Roots roots("/nonexistent/simpler", "/nonexistent/pto-isa");
  const auto [code, message] = run_failure(vadd_request("rt-nodir"));
  EXPECT_EQ(code, "pto.runtime.missing");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT=/nonexistent/simpler is not a directory (a pto-runtime checkout, "
                     "hw-native-sys/simpler)");
}

TEST(PtoRuntimeRoots, RuntimeRootThatIsNotACheckout) {
  const fs::path root = fresh_dir("not-simpler");
  Roots roots(root, fake_isa("isa-ok", kIsaPin));
  const auto [code, message] = run_failure(vadd_request("rt-notcheckout"));
  EXPECT_EQ(code, "pto.runtime.missing");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT=" + root.string() + ": missing " +
                         (root / "src/a2a3/runtime/tensormap_and_ringbuffer/orchestration/pto_orchestration_api.h")
                             .string() +
                         " (not a pto-runtime checkout, hw-native-sys/simpler)");
}

TEST(PtoRuntimeRoots, IsaRootThatIsNotACheckout) {
  const fs::path isa = fresh_dir("not-isa");
  Roots roots(fake_runtime("rt-ok", sha(kRuntimePin)), isa);
  const auto [code, message] = run_failure(vadd_request("isa-notcheckout"));
  EXPECT_EQ(code, "pto.runtime.missing");
  EXPECT_EQ(message, "PTO_ISA_ROOT=" + isa.string() + ": missing " + (isa / "include/pto/pto-inst.hpp").string() +
                         " (not a PTO-ISA checkout, hw-native-sys/pto-isa)");
}

TEST(PtoRuntimeRoots, RuntimeAtAnotherRevision) {
  const fs::path root = fake_runtime("rt-other", sha("1234567890abcdef"));
  Roots roots(root, fake_isa("isa-ok2", kIsaPin));
  const auto [code, message] = run_failure(vadd_request("rt-other"));
  EXPECT_EQ(code, "pto.runtime.revision");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT=" + root.string() +
                         " is pto-runtime 1234567890ab, but the package was emitted for 6ebaf7715 (check out "
                         "6ebaf7715, or pass --option check_revision=false to run anyway)");
}

TEST(PtoRuntimeRoots, RuntimeWithoutGitHistory) {
  const fs::path root = fake_runtime("rt-nogit", "");
  Roots roots(root, fake_isa("isa-ok3", kIsaPin));
  const auto [code, message] = run_failure(vadd_request("rt-nogit"));
  EXPECT_EQ(code, "pto.runtime.revision");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT=" + root.string() +
                         ": cannot tell which revision it is (no .git); the package was emitted for pto-runtime "
                         "6ebaf7715 (check out 6ebaf7715, or pass --option check_revision=false to run anyway)");
}

TEST(PtoRuntimeRoots, IsaAtAnotherRevisionThanTheRuntimePins) {
  // The runtime's HEAD is a branch resolved through packed-refs; PTO-ISA is checked against pto_isa.pin.
  const fs::path root = fake_runtime("rt-packed", "ref: refs/heads/main");
  write(root / ".git/packed-refs", "# pack-refs with: peeled\n" + sha(kRuntimePin) + " refs/heads/main\n");
  const fs::path isa = fake_isa("isa-other", sha("abcdef"));
  Roots roots(root, isa);
  const auto [code, message] = run_failure(vadd_request("isa-other"));
  EXPECT_EQ(code, "pto.runtime.revision");
  EXPECT_EQ(message, "PTO_ISA_ROOT=" + isa.string() + " is PTO-ISA abcdef000000, but the package was emitted for " +
                         kIsaPin + " (check out " + kIsaPin +
                         ", or pass --option check_revision=false to run anyway)");
}

TEST(PtoRuntimeRoots, CheckoutThatIsNotBuiltNamesEveryLibrary) {
  const fs::path root = fake_runtime("rt-unbuilt", sha(kRuntimePin));
  Roots roots(root, fake_isa("isa-ok4", kIsaPin));
  const auto [code, message] = run_failure(vadd_request("rt-unbuilt"));
  const fs::path lib = root / "build/lib";
  const fs::path sim = lib / "a2a3/sim/tensormap_and_ringbuffer";
  EXPECT_EQ(code, "pto.runtime.not_built");
  EXPECT_EQ(message, "PTO_RUNTIME_ROOT=" + root.string() + " is not built for a2a3sim: missing " +
                         (sim / "libhost_runtime.so").string() + ", " + (sim / "libaicpu_kernel.so").string() +
                         ", " + (sim / "libaicore_kernel.so").string() + ", " +
                         (lib / "libcpu_sim_context.so").string() +
                         " (build it in the checkout with `python3 simpler_setup/build_runtimes.py --platforms "
                         "a2a3sim`)");
}

TEST(PtoRuntimeRoots, CheckRevisionFalseAcceptsAnyCheckout) {
  const fs::path root = fake_runtime("rt-any", "");
  Roots roots(root, fake_isa("isa-any", ""));
  SimRunRequest r = vadd_request("rt-any");
  r.options["check_revision"] = false;
  EXPECT_EQ(run_failure(r).first, "pto.runtime.not_built"); // past the revision checks
  r.options["check_revision"] = "no";
  EXPECT_EQ(run_failure(r).second, "option check_revision must be true or false");
}

TEST(PtoRuntimeRoots, OptionSimRunsHtpsSimulatorDespiteTheRoots) {
  Roots roots(fake_runtime("rt-bypass", sha(kRuntimePin)), fake_isa("isa-bypass", kIsaPin));
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = vadd_request("rt-bypass");
  r.options["runtime"] = "sim";
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  EXPECT_EQ(run_package(r)["path"], "htp-cpu-sim");
  EXPECT_EQ(c.data[7], a.data[7] + b.data[7]);
}

TEST(PtoRuntimeRoots, GitHeadReadsDetachedBranchAndWorktreeCheckouts) {
  const fs::path a = fake_runtime("git-detached", sha("feed"));
  EXPECT_EQ(htp_ptosim::git_head(a), sha("feed"));
  const fs::path b = fake_runtime("git-branch", "ref: refs/heads/dev");
  write(b / ".git/refs/heads/dev", sha("beef") + "\n");
  EXPECT_EQ(htp_ptosim::git_head(b), sha("beef"));
  const fs::path wt = fresh_dir("git-worktree");
  write(wt / ".git", "gitdir: " + (b / ".git").string() + "\n");
  EXPECT_EQ(htp_ptosim::git_head(wt), sha("beef"));
  EXPECT_EQ(htp_ptosim::git_head(fresh_dir("git-none")), std::nullopt);
}

// ---- on a built pto-runtime (HTP_TEST_PTO_RUNTIME_ROOT, HTP_TEST_PTO_ISA_ROOT) ----

class RealPtoRuntime : public ::testing::Test {
protected:
  void SetUp() override {
    const char *rt = std::getenv("HTP_TEST_PTO_RUNTIME_ROOT");
    const char *isa = std::getenv("HTP_TEST_PTO_ISA_ROOT");
    if (!rt || !*rt || !isa || !*isa)
      GTEST_SKIP() << "HTP_TEST_PTO_RUNTIME_ROOT and HTP_TEST_PTO_ISA_ROOT are not both set: there is no built "
                      "pto-runtime (hw-native-sys/simpler 6ebaf7715, `python3 simpler_setup/build_runtimes.py "
                      "--platforms a2a3sim`) and PTO-ISA (cd4a3d3f) checkout to run the packages on";
    roots_ = std::make_unique<Roots>(rt, isa);
  }
  SimRunRequest real_request(const std::string &package, const std::string &entry) {
    return request(kPackages / package, entry, "real-" + package, kWork / "ptort-cache");
  }
  void expect_real(const json &report) {
    EXPECT_EQ(report["path"], "pto-runtime");
    EXPECT_EQ(report["ok"], true);
    EXPECT_EQ(report["runtime"]["platform"], "a2a3sim");
    EXPECT_EQ(report["runtime"]["revision"].get<std::string>().rfind(kRuntimePin, 0), 0u) << report.dump(2);
    EXPECT_EQ(report["runtime"]["isa_revision"], kIsaPin);
  }
  std::unique_ptr<Roots> roots_;
};

TEST_F(RealPtoRuntime, VectorAddMatchesAndTheRerunStartsNoCompiler) {
  HostTensor a({128, 256}, 1u), b({128, 256}, 2u), c({128, 256}, 0.0f);
  SimRunRequest r = real_request("vector_add", "vadd");
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  run_package(r);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_EQ(c.data[i], a.data[i] + b.data[i]) << i;
  std::fill(c.data.begin(), c.data.end(), 0.0f);
  const json report = run_package(r);
  expect_real(report);
  EXPECT_EQ(report["build"]["cache"], "hit");
  EXPECT_EQ(report["build"]["compiler_invocations"], 0);
  EXPECT_EQ(c.data[100], a.data[100] + b.data[100]);
  EXPECT_EQ(json::parse(std::ifstream(fs::path(r.run_dir) / "report.json"))["path"], "pto-runtime");
}

TEST_F(RealPtoRuntime, GemmOnCubeAndVectorCoresMatches) {
  HostTensor a({64, 96}, 3u), b({96, 64}, 4u), c({64, 64}, 0.5f);
  SimRunRequest r = real_request("gemm", "gemm");
  r.args = {{"A", &a.dl}, {"B", &b.dl}, {"C", &c.dl}};
  expect_real(run_package(r));
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) {
      double ref = 0.5;
      for (int k = 0; k < 96; ++k)
        ref += double(a.at(i, k)) * b.at(k, j);
      ASSERT_NEAR(c.at(i, j), ref, 1e-4) << i << "," << j;
    }
}

TEST_F(RealPtoRuntime, SoftmaxTakesTheScaleScalar) {
  HostTensor x({64, 64}, 5u), y({64, 64}, 0.0f);
  SimRunRequest r = real_request("softmax", "softmax");
  r.args = {{"X", &x.dl}, {"Y", &y.dl}, RunArgument{"scale", nullptr, 0, 2.0}};
  expect_real(run_package(r));
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

} // namespace
