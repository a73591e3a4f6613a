#include "cli/cli_session.hpp"

#include "cache/cache_dir.hpp"
#include "io/atomic_file.hpp"
#include "diag/log.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace htp::cli {

PluginHost &Session::plugins() {
  if (host_) return *host_;
  host_ = std::make_unique<PluginHost>();
  PluginSearch search;
  for (const auto &s : plugin_specs) search.specs.push_back(absolute_cli_path(s));
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
  auto value = nlohmann::json::parse(kv.substr(eq + 1), nullptr, false);
  if (value.is_discarded()) value = kv.substr(eq + 1);  // a bare word is a string
  return std::make_pair(kv.substr(0, eq), std::move(value));
}

}  // namespace htp::cli
