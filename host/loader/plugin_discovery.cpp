#include "loader/plugin_discovery.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "json/json_reader.hpp"

namespace fs = std::filesystem;

namespace htp {

namespace {

bool world_writable(const fs::path &p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return false;
  return (st.st_mode & S_IWOTH) != 0;
}

bool is_library(const fs::path &p) { return p.extension() == ".so"; }

void add_directory(const fs::path &dir, std::vector<fs::path> &out, DiagnosticList &diags) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_library(it->path()) && it->is_regular_file()) found.push_back(it->path());
  if (ec) {
    diags.report(Diagnostic::error("plugins.dir", "cannot list plugin directory '" + dir.string() +
                                                      "': " + ec.message()));
    return;
  }
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
}

void add_spec(const fs::path &spec, const std::string &origin, std::vector<fs::path> &out, DiagnosticList &diags,
              int depth);

void add_plugin_set(const fs::path &file, std::vector<fs::path> &out, DiagnosticList &diags, int depth) {
  auto json = read_json_file(file.string());
  if (!json) {
    diags.report(json.error());
    return;
  }
  std::vector<std::string> entries;
  try {
    JsonReader r(*json);
    auto schema = r.at("schema");
    if (schema.str() != kPluginSetSchema)
      schema.fail("unsupported schema '" + schema.str() + "', expected '" + kPluginSetSchema + "'");
    entries = r.at("plugins").strings();
  } catch (const JsonSchemaError &e) {
    diags.report(Diagnostic::error("plugins.set", "invalid plugin set '" + file.string() + "': " + e.what()));
    return;
  }
  // Entries are absolute or relative to the set file's directory.
  for (const auto &e : entries) {
    fs::path p(e);
    if (p.is_relative()) p = file.parent_path() / p;
    add_spec(p.lexically_normal(), "plugin set '" + file.string() + "'", out, diags, depth + 1);
  }
}

void add_spec(const fs::path &spec, const std::string &origin, std::vector<fs::path> &out, DiagnosticList &diags,
              int depth) {
  if (spec.is_relative()) {
    diags.report(Diagnostic::error("plugins.relative", "refusing relative plugin path '" + spec.string() +
                                                           "' from " + origin + ": plugin paths must be absolute"));
    return;
  }
  if (depth > 8) {
    diags.report(Diagnostic::error("plugins.set", "plugin sets nested too deeply at '" + spec.string() + "'"));
    return;
  }
  std::error_code ec;
  auto st = fs::status(spec, ec);
  if (ec || !fs::exists(st)) {
    diags.report(Diagnostic::error("plugins.missing", "plugin path '" + spec.string() + "' from " + origin +
                                                          " does not exist"));
    return;
  }
  if (fs::is_directory(st)) {
    if (world_writable(spec)) {
      diags.report(Diagnostic::error("plugins.world-writable", "refusing plugin directory '" + spec.string() +
                                                                   "': it is world-writable"));
      return;
    }
    add_directory(spec, out, diags);
  } else if (spec.extension() == ".json") {
    add_plugin_set(spec, out, diags, depth);
  } else {
    out.push_back(spec);
  }
}

}  // namespace

fs::path host_library_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void *>(&host_library_dir), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::canonical(info.dli_fname, ec);
    if (!ec) return lib.parent_path();
  }
  return {};
}

fs::path builtin_plugin_dir() {
  fs::path lib = host_library_dir();
  return lib.empty() ? lib : lib / HTP_PLUGIN_SUBDIR;
}

std::vector<fs::path> discover_plugins(const PluginSearch &search, DiagnosticList &diags) {
  std::vector<fs::path> out;
  for (const auto &s : search.specs) add_spec(fs::path(s).lexically_normal(), "--plugins", out, diags, 0);
  if (search.include_builtins) {
    fs::path dir = builtin_plugin_dir();
    if (dir.empty() || !fs::is_directory(dir)) {
      diags.report(Diagnostic::warning("plugins.builtin-missing",
                                       "built-in plugin directory '" + dir.string() + "' not found"));
    } else {
      std::set<fs::path> replaced;
      for (const auto &p : out) replaced.insert(p.filename());
      std::vector<fs::path> builtins;
      add_directory(dir, builtins, diags);
      std::erase_if(builtins, [&](const fs::path &p) { return replaced.count(p.filename()) != 0; });
      out.insert(out.begin(), builtins.begin(), builtins.end());
    }
  }
  if (search.use_environment) {
    // secure_getenv returns NULL in set-uid/set-gid processes: HTP_PLUGIN_PATH is ignored there.
    if (const char *env = ::secure_getenv("HTP_PLUGIN_PATH")) {
      std::string_view rest(env);
      while (!rest.empty()) {
        auto colon = rest.find(':');
        std::string entry(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        if (!entry.empty()) add_spec(fs::path(entry), "HTP_PLUGIN_PATH", out, diags, 0);
      }
    }
  }
  // Same file listed twice (e.g. the built-in directory also given with --plugins): keep the first.
  std::set<fs::path> seen;
  std::vector<fs::path> unique;
  for (auto &p : out) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(p, ec);
    if (seen.insert(ec ? p : key).second) unique.push_back(p);
  }
  return unique;
}

Expected<fs::path> check_plugin_location(const fs::path &path) {
  if (path.is_relative())
    return Diagnostic::error("plugins.relative",
                             "refusing relative plugin path '" + path.string() + "': plugin paths must be absolute");
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) return Diagnostic::error("plugins.missing", "plugin '" + path.string() + "' not found: " + ec.message());
  if (!fs::is_regular_file(canonical, ec))
    return Diagnostic::error("plugins.not-file", "plugin '" + path.string() + "' is not a regular file");
  if (world_writable(canonical))
    return Diagnostic::error("plugins.world-writable",
                             "refusing plugin '" + canonical.string() + "': the file is world-writable");
  if (world_writable(canonical.parent_path()))
    return Diagnostic::error("plugins.world-writable", "refusing plugin '" + canonical.string() +
                                                           "': its directory '" + canonical.parent_path().string() +
                                                           "' is world-writable");
  return canonical;
}

}  // namespace htp
