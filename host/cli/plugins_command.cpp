// `htp-host plugins list|inspect|verify|manifest`.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_session.hpp"
#include "diag/diagnostic_json.hpp"
#include "loader/plugin_probe.hpp"
#include "registry/component_json.hpp"

namespace htp::cli {

namespace {

nlohmann::json plugin_json(const LoadedPlugin &p, bool with_components) {
  nlohmann::json j = {{"name", p.name},
                      {"version", p.version},
                      {"abi", {{"major", p.abi_major}, {"minor", p.abi_minor}}},
                      {"path", p.path.string()},
                      {"sha256", p.sha256()},
                      {"description", p.description},
                      {"sdk_version", p.sdk_version}};
  if (with_components) {
    j["components"] = nlohmann::json::array();
    for (const Component *c : p.components) j["components"].push_back(component_to_json(*c));
  } else {
    j["components"] = p.components.size();
  }
  return j;
}

int list_plugins(Session &session, bool json) {
  PluginHost &host = session.plugins();
  if (json) {
    nlohmann::json out = {{"plugins", nlohmann::json::array()}, {"unloaded", nlohmann::json::array()}};
    for (const auto &p : host.plugins()) out["plugins"].push_back(plugin_json(*p, false));
    for (const auto &u : host.unloaded())
      out["unloaded"].push_back({{"path", u.path.string()}, {"reason", diagnostic_to_json(u.reason)}});
    std::cout << out.dump(2) << '\n';
  } else {
    std::cout << std::left << std::setw(16) << "NAME" << std::setw(10) << "VERSION" << std::setw(6) << "ABI"
              << std::setw(12) << "COMPONENTS" << "PATH\n";
    for (const auto &p : host.plugins())
      std::cout << std::setw(16) << p->name << std::setw(10) << p->version << std::setw(6)
                << (std::to_string(p->abi_major) + "." + std::to_string(p->abi_minor)) << std::setw(12)
                << p->components.size() << p->path.string() << '\n';
  }
  return session.plugin_errors() ? kExitError : kExitOk;
}

int inspect_plugin(Session &session, const std::string &name, bool json) {
  PluginHost &host = session.plugins();
  const LoadedPlugin *p = host.find(name);
  if (!p) {
    Diagnostic d = Diagnostic::error("plugins.unknown", "no loaded plugin is named '" + name + "'");
    for (const auto &q : host.plugins()) d.with_note("loaded: " + q->name);
    Session::print(d);
    return kExitError;
  }
  if (json) {
    std::cout << plugin_json(*p, true).dump(2) << '\n';
    return kExitOk;
  }
  std::cout << p->name << ' ' << p->version << " (ABI " << p->abi_major << '.' << p->abi_minor << ")\n"
            << "  path:   " << p->path.string() << "\n  sha256: " << p->sha256() << '\n';
  if (!p->description.empty()) std::cout << "  " << p->description << '\n';
  if (p->components.empty()) std::cout << "  no components\n";
  for (const Component *c : p->components) {
    std::cout << "  " << component_kind_name(c->kind) << ' ' << c->id << ' ' << c->version;
    if (!c->summary.empty()) std::cout << " — " << c->summary;
    std::cout << '\n';
    auto line = [](const char *label, const std::vector<std::string> &v) {
      if (!v.empty()) std::cout << "      " << label << ": " << join_text(v) << '\n';
    };
    if (!c->name.empty()) std::cout << "      name: " << c->name << '\n';
    line("names", c->names);
    line("provides", c->provides);
    line("requires", c->requires_);
    line("conflicts", c->conflicts);
    line("accepts", c->accepts);
    if (c->kind == ComponentKind::Pass) std::cout << "      stage: " << pass_stage_name(c->stage) << '\n';
    line("applies_to", c->applies_to);
    line("invalidates", c->invalidates);
    line("before", c->before);
    line("after", c->after);
    line("targets", c->targets);
    line("passes", c->passes);
  }
  return kExitOk;
}

int verify_plugin(const std::string &path, bool isolate, int timeout_ms) {
  std::string abs = absolute_cli_path(path);
  if (isolate) {
    ProbeResult r = probe_plugin_isolated(abs, std::chrono::milliseconds(timeout_ms));
    if (!r.diagnostics.empty()) Session::print(r.diagnostics);
    if (r.outcome != ProbeResult::Outcome::Loaded) return kExitError;
    std::cout << "ok: " << abs << ": plugin " << r.name << ' ' << r.version << ", " << r.components
              << " components (verified in an isolated process)\n";
    return r.diagnostics.has_errors() ? kExitError : kExitOk;
  }
  PluginHost host;
  DiagnosticList diags;
  const LoadedPlugin *p = nullptr;
  if (is_python_extension(abs)) {  // imported and registered into this empty host, as --plugins does
    load_python_extension(host, abs, diags);
    if (!diags.has_errors() && !host.plugins().empty()) p = host.plugins().back().get();
  } else {
    p = host.load(abs, diags);
  }
  if (!diags.empty()) Session::print(diags);
  if (!p) return kExitError;
  std::cout << "ok: " << abs << ": plugin " << p->name << ' ' << p->version << " (ABI " << p->abi_major << '.'
            << p->abi_minor << "), " << p->components.size() << " components\n";
  return kExitOk;
}

int write_manifest(const std::string &path, const std::string &out, int timeout_ms) {
  PluginLoadOptions options;
  options.require_manifest = false;
  // The plugin's init runs first in a child (a build step, htp_add_plugin, runs this): one that crashes or
  // hangs is a diagnostic naming it after a time limit, not a hung or crashed build.
  const std::string abs = absolute_cli_path(path);
  ProbeResult probe = probe_plugin_isolated(abs, std::chrono::milliseconds(timeout_ms),
                                            [&](PluginHost &h, const std::filesystem::path &lib, DiagnosticList &d) {
                                              return h.load(lib, d, options) != nullptr;
                                            });
  if (probe.outcome == ProbeResult::Outcome::Crashed || probe.outcome == ProbeResult::Outcome::TimedOut) {
    Session::print(probe.diagnostics);
    return kExitError;
  }
  PluginHost host;
  DiagnosticList diags;
  const LoadedPlugin *p = host.load(abs, diags, options);
  if (!diags.empty()) Session::print(diags);
  if (!p) return kExitError;
  PluginManifest m;
  m.name = p->name;
  m.version = p->version;
  m.description = p->description;
  m.abi_major = p->abi_major;
  m.abi_minor = p->abi_minor;
  m.library = p->path.filename().string();
  for (const Component *c : p->components) {
    Component copy = *c;
    copy.plugin = {};
    m.components.push_back(std::move(copy));
  }
  std::string text = plugin_manifest_to_json(m).dump(2) + "\n";
  if (auto e = write_output_file(out.empty() ? "-" : out, text)) {
    Session::print(*e);
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

void register_plugins_command(CLI::App &app, Session &session) {
  auto *plugins = app.add_subcommand("plugins", "List, inspect and verify plugins");
  plugins->require_subcommand(1);

  auto *list = plugins->add_subcommand("list", "List the loaded plugins");
  auto list_json = std::make_shared<bool>(false);
  list->add_flag("--json", *list_json, "Machine-readable output");
  list->callback([&session, list_json] { session.action = [&session, list_json] { return list_plugins(session, *list_json); }; });

  auto *inspect = plugins->add_subcommand("inspect", "Show a plugin's components and their capabilities");
  auto inspect_name = std::make_shared<std::string>();
  auto inspect_json = std::make_shared<bool>(false);
  inspect->add_option("NAME", *inspect_name, "Plugin name")->required();
  inspect->add_flag("--json", *inspect_json, "Machine-readable output");
  inspect->callback([&session, inspect_name, inspect_json] {
    session.action = [&session, inspect_name, inspect_json] { return inspect_plugin(session, *inspect_name, *inspect_json); };
  });

  auto *verify = plugins->add_subcommand("verify", "Load one plugin library and check it against its manifest");
  auto verify_path = std::make_shared<std::string>();
  auto verify_isolate = std::make_shared<bool>(false);
  auto verify_timeout = std::make_shared<int>(10000);
  verify->add_option("PATH", *verify_path, "Plugin library (.so)")->required();
  verify->add_flag("--isolate", *verify_isolate, "Run query and init in a child process; report crashes");
  verify->add_option("--timeout-ms", *verify_timeout, "Time limit of --isolate")->check(CLI::PositiveNumber);
  verify->callback([&session, verify_path, verify_isolate, verify_timeout] {
    session.action = [verify_path, verify_isolate, verify_timeout] {
      return verify_plugin(*verify_path, *verify_isolate, *verify_timeout);
    };
  });

  auto *manifest = plugins->add_subcommand("manifest", "Load a plugin library and write its manifest (build step)");
  auto manifest_path = std::make_shared<std::string>();
  auto manifest_out = std::make_shared<std::string>();
  manifest->add_option("PATH", *manifest_path, "Plugin library (.so)")->required();
  manifest->add_option("-o,--output", *manifest_out, "Output file (default: stdout)");
  auto manifest_timeout = std::make_shared<int>(60000);
  manifest->add_option("--timeout-ms", *manifest_timeout,
                       "Time limit of the plugin's init, run first in a child process (default 60000)")
      ->check(CLI::Range(1, 3600000));
  manifest->callback([&session, manifest_path, manifest_out, manifest_timeout] {
    session.action = [manifest_path, manifest_out, manifest_timeout] {
      return write_manifest(*manifest_path, *manifest_out, *manifest_timeout);
    };
  });
}

}  // namespace htp::cli
