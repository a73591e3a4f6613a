#include "kernel_library.hpp"

#include <htp/progress.hpp>
#include <htp/run_time_limit.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace htp::aie::sim {

namespace fs = std::filesystem;

namespace {

// -Bsymbolic: a call to a kernel binds to the library's own definition, not to a function of the same name the
// process already has (a kernel named `write` or `step` called libc's, leaving its output unwritten or crashing).
constexpr const char *kFlags = "-std=c++17 -O2 -fPIC -shared -Wl,-Bsymbolic -DHTP_AIE_SIM";

std::string compiler() {
  for (const char *v : {"HTP_AIE_SIM_CXX", "CXX"})
    if (const char *c = std::getenv(v); c && *c) return c;
  return "c++";
}

/// FNV-1a 64 over the compiler, the flags and every (name, source).
std::string content_hash(const std::map<std::string, std::string> &sources, const std::string &cxx) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  mix(cxx);
  mix(kFlags);
  for (const auto &[n, s] : sources) {
    mix(n);
    mix(s);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void build(const std::map<std::string, std::string> &sources, const fs::path &dir, const fs::path &lib,
           const std::string &cxx, const fs::path &log) {
  const fs::path tmp = dir / ("build." + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::string cmd = cxx + " " + kFlags;
  for (const auto &[name, text] : sources) {
    const fs::path src = tmp / (name + ".cc");
    std::ofstream(src, std::ios::binary) << text;
    cmd += " " + quote(src.string());
  }
  const fs::path out = tmp / "kernels.so";
  cmd += " -o " + quote(out.string()) + " > " + quote(log.string()) + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > 2000) text = text.substr(0, 2000) + "...";
    fs::remove_all(tmp);
    throw SimError("compiling the kernels with '" + cxx + "' failed (exit " + std::to_string(rc) + "; log " +
                   log.string() + "): " + text);
  }
  std::error_code ec;
  fs::rename(out, lib, ec);  // atomic: a concurrent run sees the whole library or none
  fs::remove_all(tmp);
  if (ec && !fs::exists(lib)) throw SimError("cannot store the kernel library in " + lib.string() + ": " + ec.message());
}

}  // namespace

CompiledKernels compile_kernels(const std::map<std::string, std::string> &sources, const fs::path &cache_dir,
                                const fs::path &log) {
  CompiledKernels out;
  out.compiler = compiler();
  const fs::path dir = cache_dir / "aie-sim" / content_hash(sources, out.compiler);
  out.library = dir / "kernels.so";
  out.cache_hit = fs::exists(out.library);
  if (!out.cache_hit) {
    htp::Progress progress("building aie-sim kernels (one library)", 1);
    progress.advance(0);  // one compiler run: the line says what the wait is for
    build(sources, dir, out.library, out.compiler, log);
    progress.advance();
  }
  void *h = ::dlopen(out.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw SimError("cannot load " + out.library.string() + ": " + ::dlerror());
  out.bind_stop = ::dlsym(h, htp::kBindStopSymbol);
  for (const auto &[name, text] : sources) {
    void *sym = ::dlsym(h, ("htp_aie_call_" + name).c_str());
    if (!sym) throw SimError("kernel library " + out.library.string() + " lacks htp_aie_call_" + name);
    out.entries[name] = reinterpret_cast<KernelEntry>(sym);
  }
  return out;
}

}  // namespace htp::aie::sim
