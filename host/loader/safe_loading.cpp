#include "loader/safe_loading.hpp"

#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cache/cache_dir.hpp"
#include "loader/plugin_probe.hpp"

namespace htp {

namespace fs = std::filesystem;

namespace {

constexpr const char *kProbeSchema = "htp.plugin-probes.v1";

struct Verdict {
  bool ok = false;
  std::string message;  ///< Why it is unsafe.
};

// The identity a verdict is valid for: canonical path, size, mtime (ns).
std::string key_of(const fs::path &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return path.string() + "|" + std::to_string(st.st_size) + "|" +
         std::to_string(int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

std::map<std::string, Verdict> read_cache(const fs::path &file) {
  std::map<std::string, Verdict> out;
  std::ifstream f(file);
  if (!f) return out;
  std::stringstream ss;
  ss << f.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kProbeSchema || !j["entries"].is_array())
    return out;  // an unreadable cache only costs re-probing
  for (const auto &e : j["entries"])
    if (e.is_object() && e["key"].is_string() && e["ok"].is_boolean())
      out[e["key"].get<std::string>()] = Verdict{e["ok"].get<bool>(), e.value("message", "")};
  return out;
}

void write_cache(const fs::path &file, const std::map<std::string, Verdict> &fresh) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  FileLock lock(fs::path(file).concat(".lock"));
  auto merged = read_cache(file);  // other processes may have added verdicts meanwhile
  for (const auto &[k, v] : fresh) merged[k] = v;
  nlohmann::ordered_json j{{"schema", kProbeSchema}, {"entries", nlohmann::ordered_json::array()}};
  for (const auto &[k, v] : merged) j["entries"].push_back({{"key", k}, {"ok", v.ok}, {"message", v.message}});
  (void)atomic_write_file(file, j.dump(1) + "\n");
}

}  // namespace

SafeLoadResult filter_safe_plugins(const std::vector<fs::path> &libraries, const SafeLoadOptions &options,
                                   DiagnosticList &diags) {
  SafeLoadResult result;
  auto cache = options.probe_cache.empty() ? std::map<std::string, Verdict>{} : read_cache(options.probe_cache);
  std::map<std::string, Verdict> fresh;
  for (const auto &lib : libraries) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(lib, ec);
    std::string key = key_of(canonical);
    Verdict v;
    bool remembered = false;
    if (auto it = cache.find(key); !key.empty() && it != cache.end()) {
      v = it->second;
      remembered = true;
    } else {
      ProbeResult r = probe_plugin_isolated(canonical, options.timeout, options.load);
      ++result.probed;
      v.ok = r.outcome == ProbeResult::Outcome::Loaded;
      if (!v.ok) v.message = r.diagnostics.empty() ? "it failed to load in an isolated process"
                                                   : r.diagnostics.items().front().message;
      if (!key.empty()) fresh[key] = v;
    }
    if (v.ok) {
      result.safe.push_back(lib);
      continue;
    }
    result.skipped.push_back(lib);
    diags.report(Diagnostic::warning("plugins.unsafe", "skipped plugin '" + canonical.string() + "' (--safe-plugins): " +
                                                           v.message +
                                                           (remembered ? " [remembered from an earlier probe; "
                                                                         "replace or touch the file to probe again]"
                                                                       : "")));
  }
  if (!fresh.empty() && !options.probe_cache.empty()) write_cache(options.probe_cache, fresh);
  return result;
}

}  // namespace htp
