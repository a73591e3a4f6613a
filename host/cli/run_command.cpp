// `htp-host run PKG --inputs NAME=file.npy ... --outputs DIR`: run a package entry with its binding.
#include <algorithm>
#include <cctype>
#include <iostream>
#include <limits>
#include <set>

#include "cli/cli_session.hpp"
#include "run/runner.hpp"

namespace htp::cli {

namespace {

struct RunArgs {
  std::string package;
  std::string entry;
  std::vector<std::string> inputs;
  std::vector<std::string> scalars;
  std::string outputs;
  std::string cache;
  std::string run_dir;
  std::vector<std::string> options;
  bool json = false;
};

int usage(const std::string &message) {
  Session::print(Diagnostic::error("cli.usage", message));
  return kExitUsage;
}

int run_run(Session &session, const RunArgs &a) {
  PluginHost &host = session.plugins();
  if (session.plugin_errors()) return kExitError;
  RunRequest req;
  req.package = absolute_cli_path(a.package);
  req.entry = a.entry;
  if (!a.cache.empty()) req.cache_dir = absolute_cli_path(a.cache);
  if (!a.run_dir.empty()) req.run_dir = absolute_cli_path(a.run_dir);
  // A package holds the files its manifest lists, and logs/ and build/ beside them: outputs written anywhere
  // else in it would make every later run refuse the package (package.unlisted-file).
  for (const auto &[flag, dir] : {std::pair<const char *, std::string>{"--outputs", a.outputs}, {"--run-dir", a.run_dir}}) {
    if (dir.empty()) continue;
    const auto pkg = std::filesystem::weakly_canonical(req.package), at = std::filesystem::weakly_canonical(absolute_cli_path(dir));
    const auto rel = at.lexically_relative(pkg);
    const std::string first = rel.empty() ? "" : rel.begin()->string();
    if (!rel.empty() && first != ".." && first != "logs" && first != "build")
      return usage(std::string(flag) + " '" + dir + "' is inside the package, which holds only the files its manifest "
                   "lists (and logs/ and build/): a later run would refuse the package; write there under " +
                   (pkg / "logs").string() + " or outside it");
  }
  DiagnosticList diags;
  std::set<std::string> given;  // argument names: one value each (a repeat would silently win)
  auto repeated = [&](const std::string &name) { return !given.insert(name).second; };
  for (const auto &kv : a.inputs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) return usage("--inputs expects NAME=file.npy, got '" + kv + "'");
    if (repeated(kv.substr(0, eq))) return usage("argument '" + kv.substr(0, eq) + "' is given more than once");
    auto arr = read_npy(absolute_cli_path(kv.substr(eq + 1)));
    if (!arr) {
      diags.report(arr.error());
      continue;
    }
    req.tensors[kv.substr(0, eq)] = std::move(*arr);
  }
  for (const auto &kv : a.scalars) {
    auto parsed = parse_key_json(kv);
    if (!parsed) return usage("--scalar expects NAME=NUMBER, got '" + kv + "'");
    if (repeated(parsed->first)) return usage("argument '" + parsed->first + "' is given more than once");
    // JSON has no NaN or infinity; a float scalar takes them as Python spells them (nan, inf, -inf).
    if (parsed->second.is_string()) {
      std::string t = parsed->second.get<std::string>();
      std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
      if (t == "nan" || t == "+nan" || t == "-nan")
        parsed->second = std::numeric_limits<double>::quiet_NaN();
      else if (t == "inf" || t == "+inf" || t == "infinity" || t == "-inf" || t == "-infinity")
        parsed->second = t[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    }
    req.scalars[parsed->first] = parsed->second;
  }
  for (const auto &kv : a.options) {
    auto parsed = parse_key_json(kv);
    if (!parsed) return usage("--option expects KEY=JSON, got '" + kv + "'");
    if (req.options.contains(parsed->first)) return usage("option '" + parsed->first + "' is given more than once");
    req.options[parsed->first] = parsed->second;
  }
  if (diags.has_errors()) {
    Session::print(diags);
    return kExitError;
  }
  auto outcome = run_package(host, req, diags);
  if (!diags.empty()) Session::print(diags);
  if (!outcome) return kExitError;

  std::filesystem::path out_dir = a.outputs.empty() ? outcome->run_dir : std::filesystem::path(absolute_cli_path(a.outputs));
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  nlohmann::ordered_json written = nlohmann::ordered_json::object();
  for (const auto &[name, arr] : outcome->outputs) {
    auto path = out_dir / (name + ".npy");
    if (auto err = write_npy(path, arr)) {
      Session::print(*err);
      return kExitError;
    }
    written[name] = path.string();
  }
  if (a.json) {
    nlohmann::ordered_json j;
    j["binding"] = outcome->binding;
    j["run_dir"] = outcome->run_dir.string();
    j["outputs"] = written;
    j["report"] = outcome->report;
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::cout << "ran " << (a.entry.empty() ? "the entry" : "'" + a.entry + "'") << " with binding " << outcome->binding;
  if (outcome->report.is_object() && outcome->report.contains("path"))
    std::cout << " (" << outcome->report["path"].dump() << ")";
  std::cout << "\n  run directory " << outcome->run_dir.string() << '\n';
  for (const auto &[name, path] : written.items()) std::cout << "  output " << name << " -> " << path.get<std::string>() << '\n';
  return kExitOk;
}

}  // namespace

void register_run_command(CLI::App &app, Session &session) {
  auto args = std::make_shared<RunArgs>();
  auto *cmd = app.add_subcommand("run", "Run a package entry with the binding its plan chose");
  cmd->add_option("PACKAGE", args->package, "Package directory")->required();
  cmd->add_option("--entry,-e", args->entry, "Entrypoint name (default: the only one)");
  cmd->add_option("--inputs,-i", args->inputs, "Tensor argument NAME=file.npy (repeatable, each NAME once)");
  cmd->add_option("--scalar,-s", args->scalars, "Scalar argument NAME=NUMBER (repeatable, each NAME once; an integer in range for an integer dtype; nan, inf or -inf for a float)");
  cmd->add_option("--outputs,-o", args->outputs, "Directory for out/inout tensors as NAME.npy (default: the run directory)");
  cmd->add_option("--cache", args->cache, "Build cache directory (default: $HTP_CACHE_DIR or ~/.cache/htp)");
  cmd->add_option("--run-dir", args->run_dir, "Directory for the binding's report, logs and trace (default: PKG/logs/run)");
  cmd->add_option("--option", args->options, "Binding option KEY=JSON, a bare word being a string (repeatable)");
  cmd->add_flag("--json", args->json, "Print the outcome and the run report as JSON");
  cmd->callback([&session, args] { session.action = [&session, args] { return run_run(session, *args); }; });
}

}  // namespace htp::cli
