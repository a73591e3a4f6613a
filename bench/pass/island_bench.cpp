// Islands: what HTP adds to an external tool's own run time (resolving the tool, its version, hashing the
// command and input, the cache write, the package records). The tool is /bin/cat over 256 KiB, so the
// tool's time is mostly process start-up; the overhead is the island step's wall time minus the tool's
// time as run_process measured it (target <= 5 ms). A cache hit runs no tool at all.
#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS
#endif
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "island/island.hpp"
#include "island/process.hpp"
#include "package/package_writer.hpp"

namespace fs = std::filesystem;

namespace {

std::string input_of(size_t bytes, uint64_t salt) {
  std::string s(bytes, 'x');
  for (size_t i = 0; i < s.size(); i += 64) s[i] = char('a' + (salt + i / 64) % 26);
  return s + std::to_string(salt);
}

fs::path scratch(const char *name) {
  fs::path p = fs::temp_directory_path() / ("htp-island-bench-" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p;
}

void BM_IslandStepOverhead(benchmark::State &state) {
  const fs::path cache = scratch("cache");
  auto writer = htp::PackageWriter::begin(scratch("pkg"), {});
  if (!writer) {
    state.SkipWithError("cannot start a package");
    return;
  }
  double overhead = 0, tool = 0;
  uint64_t salt = 0;
  for (auto _ : state) {
    htp::IslandStep step;
    step.pass = "bench.island";
    step.name = "cat" + std::to_string(salt);
    step.argv = {"cat"};
    step.input = input_of(256 * 1024, salt++);  // a new input each time: always a cache miss
    step.cache_dir = cache;
    htp::DiagnosticList diags;
    auto t0 = std::chrono::steady_clock::now();
    auto r = htp::run_island(step, writer->get(), diags);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r || r->cached) {
      state.SkipWithError("the island step failed or hit the cache");
      break;
    }
    overhead += wall - r->seconds;
    tool += r->seconds;
  }
  const double n = double(state.iterations());
  state.counters["seconds_per_step_overhead"] = n ? overhead / n : 0;
  state.counters["seconds_per_tool_run"] = n ? tool / n : 0;
}
BENCHMARK(BM_IslandStepOverhead)->Unit(benchmark::kMillisecond)->Iterations(30);

void BM_IslandStepCacheHit(benchmark::State &state) {
  const fs::path cache = scratch("cache-hit");
  htp::IslandStep step;
  step.pass = "bench.island";
  step.name = "cat";
  step.argv = {"cat"};
  step.input = input_of(256 * 1024, 7);
  step.cache_dir = cache;
  htp::DiagnosticList diags;
  (void)htp::run_island(step, nullptr, diags);  // fills the cache
  for (auto _ : state) {
    auto r = htp::run_island(step, nullptr, diags);
    if (!r || !r->cached) state.SkipWithError("expected a cache hit");
  }
}
BENCHMARK(BM_IslandStepCacheHit)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
