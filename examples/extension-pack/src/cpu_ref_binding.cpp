// The cpu-ref binding: builds codegen/cpu-ref/program.cpp with the host C++ compiler into a shared object
// cached by content hash under <cache_dir>/cpu-ref/, loads it and calls `htp_cpuref_<entry>` on the
// DLPack tensors (ABI 1.2). Options: {"cxx": "/usr/bin/g++"} (else $CXX, else c++).
#include "ext_pack.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char **environ;

namespace extpack {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kFlags = {"-std=c++17", "-O2", "-shared", "-fPIC"};

std::string read_file(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw htp::RunError("cannot read " + p.string(), "cpu-ref.package");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// 128-bit FNV-1a (two independent 64-bit lanes) as hex: the cache key of a build.
std::string content_hash(const std::string &text) {
  uint64_t h1 = 14695981039346656037ull, h2 = 0x6c62272e07bb0142ull;
  for (unsigned char ch : text) {
    h1 = (h1 ^ ch) * 1099511628211ull;
    h2 = (h2 ^ ch) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(h1), static_cast<unsigned long long>(h2));
  return out;
}

/// The compiler's resolved path on PATH (no process is started to identify it).
fs::path resolve_compiler(const std::string &cxx) {
  if (cxx.find('/') != std::string::npos) return fs::weakly_canonical(cxx);
  std::stringstream path(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  for (std::string dir; std::getline(path, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / cxx;
    if (::access(candidate.c_str(), X_OK) == 0) return fs::canonical(candidate);
  }
  throw htp::RunError("the C++ compiler '" + cxx + "' is not on PATH (set option cxx or $CXX)", "cpu-ref.compiler");
}

/// Runs argv with stdout and stderr into `log`; returns the exit status (127: could not start).
int run_process(const std::vector<std::string> &argv, const fs::path &log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Build {
  fs::path object;
  bool hit = false;
  std::string cxx;
};

/// The shared object of `source_path`: from the cache when its key is there, else compiled into it.
Build build(const fs::path &source_path, const std::string &cxx_option, const htp::RunContext &ctx) {
  fs::path cxx = resolve_compiler(cxx_option);
  std::string key_text = read_file(source_path) + "\n" + cxx.string() + " " + std::to_string(fs::file_size(cxx)) + " " +
                         std::to_string(fs::last_write_time(cxx).time_since_epoch().count());
  for (const std::string &f : kFlags) key_text += " " + f;
  fs::path dir = fs::path(ctx.cache_dir()) / "cpu-ref";
  fs::create_directories(dir);
  Build b{dir / (content_hash(key_text) + ".so"), false, cxx.string()};
  if (fs::exists(b.object)) {
    b.hit = true;
    return b;
  }
  fs::path tmp = b.object;
  tmp += ".tmp." + std::to_string(::getpid());
  fs::path log = fs::path(ctx.run_dir()) / "build.log";
  std::vector<std::string> argv = {cxx.string()};
  argv.insert(argv.end(), kFlags.begin(), kFlags.end());
  argv.insert(argv.end(), {source_path.string(), "-o", tmp.string()});
  if (run_process(argv, log) != 0) {
    fs::remove(tmp);
    throw htp::RunError("compiling " + source_path.string() + " failed:\n" + (fs::exists(log) ? read_file(log) : ""),
                        "cpu-ref.build");
  }
  fs::rename(tmp, b.object);  // atomic: concurrent runs never load a half-written object
  return b;
}

/// The manifest's entry `name` (htp.entrypoints, docs/ir-contracts.md §8).
json manifest_entry(const fs::path &package, const std::string &name) {
  json manifest = json::parse(read_file(package / "manifest.json"), nullptr, false);
  for (const json &e : manifest.is_object() ? manifest.value("entrypoints", json::array()) : json::array())
    if (e.value("name", "") == name) return e;
  throw htp::RunError("the manifest has no entry '" + name + "'", "cpu-ref.package");
}

}  // namespace

void run_cpu_ref(htp::RunContext &ctx) {
  auto start = std::chrono::steady_clock::now();
  json options = json::parse(ctx.options_json().empty() ? "{}" : ctx.options_json(), nullptr, false);
  if (options.is_null()) options = json::object();
  if (!options.is_object()) throw htp::RunError("run options are not a JSON object", "cpu-ref.option");
  for (const auto &[key, value] : options.items())
    if (key != "cxx" || !value.is_string()) throw htp::RunError("unknown or malformed option '" + key + "' (cpu-ref takes cxx)", "cpu-ref.option");
  std::string cxx = options.value("cxx", std::getenv("CXX") ? std::getenv("CXX") : "c++");

  const fs::path package = ctx.package_dir();
  Build b = build(package / "codegen/cpu-ref/program.cpp", cxx, ctx);
  void *lib = ::dlopen(b.object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw htp::RunError(std::string("cannot load ") + b.object.string() + ": " + ::dlerror(), "cpu-ref.load");
  std::string symbol = "htp_cpuref_" + ctx.entry();
  auto fn = reinterpret_cast<void (*)(void *const *, const int64_t *const *)>(::dlsym(lib, symbol.c_str()));
  if (!fn) {
    ::dlclose(lib);
    throw htp::RunError(b.object.string() + " has no entry " + symbol, "cpu-ref.load");
  }

  // Tensors by data pointer; scalars by pointer to int64_t or double, as the emitted entry reads them.
  const json params = manifest_entry(package, ctx.entry())["params"];
  std::vector<int64_t> ints(ctx.arg_count());
  std::vector<double> floats(ctx.arg_count());
  std::vector<void *> args(ctx.arg_count());
  std::vector<const int64_t *> shapes(ctx.arg_count());
  for (size_t i = 0; i < ctx.arg_count(); ++i) {
    const HtpRunArg &a = ctx.arg(i);
    bool is_float = i < params.size() && params[i].value("dtype", "").starts_with("f");
    ints[i] = a.scalar_int, floats[i] = a.scalar_float;
    shapes[i] = a.tensor ? a.tensor->shape : nullptr;
    args[i] = a.tensor ? htp::RunTensor{a.tensor}.bytes() : is_float ? static_cast<void *>(&floats[i]) : &ints[i];
  }
  auto run_start = std::chrono::steady_clock::now();
  fn(args.data(), shapes.data());
  auto end = std::chrono::steady_clock::now();
  ::dlclose(lib);

  using seconds = std::chrono::duration<double>;
  ctx.write_report(json{{"schema", "htp.run.v1"},
                        {"path", "cpu-ref"},
                        {"binding", "cpu-ref.binding"},
                        {"target", ctx.target()},
                        {"entry", ctx.entry()},
                        {"ok", true},
                        {"build", {{"cache", b.hit ? "hit" : "miss"}, {"compiler_invocations", b.hit ? 0 : 1},
                                   {"cxx", b.cxx}, {"object", b.object.string()}}},
                        {"run_seconds", seconds(end - run_start).count()},
                        {"wall_seconds", seconds(end - start).count()}}
                       .dump(2));
}

}  // namespace extpack
