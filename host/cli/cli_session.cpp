#include "cli/cli_session.hpp"

#include "cache/cache_dir.hpp"
#include "io/atomic_file.hpp"
#include "diag/log.hpp"

#include <boost/dll/shared_library.hpp>

#include "frontend/python_capture.hpp"
#include "loader/plugin_discovery.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace htp::cli {

bool is_python_extension(const std::string &spec) {
  return spec.size() > 3 && spec.compare(spec.size() - 3, 3, ".py") == 0;
}

void load_python_extension(PluginHost &host, const std::string &spec, DiagnosticList &diags) {
  using Entry = int(PluginHost *, const char *, const char *const *, size_t, DiagnosticList *);
  static boost::dll::shared_library embed;
  const std::filesystem::path lib = host_library_dir() / "htp" / "libhtp-python-embed.so";
  if (!embed.is_loaded()) {
    boost::dll::fs::error_code ec;
    if (std::filesystem::exists(lib)) embed.load(lib, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_global, ec);
    if (!embed.is_loaded() || !embed.has("htp_python_embed_load")) {
      diags.report(Diagnostic::error(
          "python.unavailable",
          "cannot load the Python extension '" + spec + "': this htp-host has no Python support (" + lib.string() +
              (std::filesystem::exists(lib) ? " does not load: " + ec.message() : " is missing") +
              "; build HTP with HTP_BUILD_PYTHON=ON, or load the extension from Python with htp.Context)"));
      return;
    }
  }
  PythonFrontend frontend = PythonFrontend::from_environment();
  std::vector<const char *> path;
  for (const auto &p : frontend.python_path) path.push_back(p.c_str());
  embed.get<Entry>("htp_python_embed_load")(&host, spec.c_str(), path.data(), path.size(), &diags);
}

PluginHost &Session::plugins() {
  if (host_) return *host_;
  host_ = std::make_unique<PluginHost>();
  PluginSearch search;
  std::vector<std::string> python_extensions;
  for (const auto &s : plugin_specs)
    (is_python_extension(s) ? python_extensions : search.specs).push_back(absolute_cli_path(s));
  search.include_builtins = !no_builtin_plugins;
  if (safe_plugins) {
    SafeLoadOptions safe;
    safe.probe_cache = probe_cache.empty() ? default_cache_dir() / "plugin-probes.json"
                                           : std::filesystem::path(absolute_cli_path(probe_cache));
    safe.timeout = std::chrono::milliseconds(probe_timeout_ms);
    search.safe = safe;
  }
  DiagnosticList diags;
  host_->load_all(search, diags);
  // (Python extensions of a plugin set or HTP_PLUGIN_PATH load as those of --plugins do)
  for (const auto &ext : host_->python_extensions_found())
    if (std::find(python_extensions.begin(), python_extensions.end(), ext.string()) == python_extensions.end())
      python_extensions.push_back(ext.string());
  if (search.safe && !python_extensions.empty()) {
    // A Python extension is probed too: imported in the child, so one that hangs, aborts or crashes while
    // importing is skipped with a warning instead of taking htp-host down.
    SafeLoadOptions safe = *search.safe;
    safe.load = [](PluginHost &host, const std::filesystem::path &ext, DiagnosticList &d) {
      load_python_extension(host, ext.string(), d);
      return !d.has_errors();
    };
    std::vector<std::filesystem::path> paths(python_extensions.begin(), python_extensions.end());
    python_extensions.clear();
    for (const auto &ext : filter_safe_plugins(paths, safe, diags).safe) python_extensions.push_back(ext.string());
  }
  for (const auto &ext : python_extensions) load_python_extension(*host_, ext, diags);
  if (!diags.empty()) print(diags);
  plugin_errors_ = diags.has_errors();
  return *host_;
}

void Session::print(const DiagnosticList &diags) { std::cerr << diags.render() << std::flush; }

void Session::print(const Diagnostic &diag) { std::cerr << diag.render() << '\n' << std::flush; }

bool configure_logging(const std::string &level) {
  if (level.empty()) {
    (void)htp::log();  // level from HTP_LOG_LEVEL
    return true;
  }
  return set_log_level(level);
}

std::optional<Diagnostic> write_output_file(const std::string &path, const std::string &text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return std::nullopt;
  }
  return atomic_write_file(path, text);
}

std::string absolute_cli_path(const std::string &path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (std::filesystem::current_path() / p).lexically_normal().string();
}

std::optional<std::pair<std::string, nlohmann::json>> parse_key_json(const std::string &kv) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  const std::string text = kv.substr(eq + 1);
  auto value = nlohmann::json::parse(text, nullptr, false);
  if (value.is_discarded()) {
    // A bare word is a string (dispatch=hash); what starts as JSON must be JSON (`{bad` was passed on as text).
    if (text.empty() || std::string("{[\"").find(text.front()) != std::string::npos) return std::nullopt;
    value = text;
  }
  return std::make_pair(kv.substr(0, eq), std::move(value));
}

}  // namespace htp::cli
