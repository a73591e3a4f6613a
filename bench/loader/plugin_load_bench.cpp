// Plugin load + registry build of all built-in plugins (target: <= 5 ms).
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include "digest/sha256.hpp"
#include "loader/plugin_host.hpp"

namespace {

htp::PluginSearch builtin_search() {
  htp::PluginSearch s;
  s.specs = {HTP_BENCH_PLUGIN_DIR};
  s.use_environment = false;
  return s;
}

size_t load_all_plugins() {
  htp::PluginHost host;
  htp::DiagnosticList diags;
  size_t n = host.load_all(builtin_search(), diags);
  if (diags.has_errors() || n != 6) std::abort();
  return host.registry().size() + n;
}

// In-process: discovery, manifests, query, version checks, init and registry for all six plugins. The
// libraries stay mapped between iterations (plugins are resident), so this is the per-Context cost.
void BM_PluginLoadBuiltin(benchmark::State &state) {
  for (auto _ : state) benchmark::DoNotOptimize(load_all_plugins());
  state.SetLabel("6 plugins, resident");
}
BENCHMARK(BM_PluginLoadBuiltin)->Unit(benchmark::kMillisecond);

// A fresh process per iteration (fork, load everything from disk mappings, exit): the first-load cost a
// CLI invocation pays, including fork and exit.
void BM_PluginLoadBuiltinFreshProcess(benchmark::State &state) {
  for (auto _ : state) {
    pid_t pid = ::fork();
    if (pid == 0) {
      load_all_plugins();
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("child failed");
  }
  state.SetLabel("6 plugins, fork + load + exit");
}
BENCHMARK(BM_PluginLoadBuiltinFreshProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

// Hashing every plugin file (done lazily: only plans, lockfiles and `plugins list` need it).
void BM_PluginSha256All(benchmark::State &state) {
  htp::PluginHost host;
  htp::DiagnosticList diags;
  host.load_all(builtin_search(), diags);
  for (auto _ : state)
    for (const auto &p : host.plugins()) benchmark::DoNotOptimize(htp::sha256_file(p->path));
  state.SetLabel("6 plugin files");
}
BENCHMARK(BM_PluginSha256All)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
