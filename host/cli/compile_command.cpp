// `htp-host compile PROG --target T -o OUT`: capture (Python file or htp.ast.v1 JSON), resolve, run
// the passes and write the package.
#include <iostream>
#include <sstream>

#include "cli/cli_session.hpp"
#include "compile/compiler.hpp"
#include "frontend/python_capture.hpp"

namespace htp::cli {

namespace {

struct CompileArgs {
  std::string program;
  std::string target;
  std::string out;
  std::string dump_ir = "none";
  bool force = false;
  bool keep_failed = false;
  bool pin_timings = false;
  double pass_time_limit = 600;
  std::string backend;
  std::string binding;
  std::vector<std::string> pipeline;
  std::string locked;
  std::vector<std::string> options;
};

std::vector<std::string> split_commas(const std::vector<std::string> &items) {
  std::vector<std::string> out;
  for (const auto &item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

int run_compile(Session &session, const CompileArgs &a) {
  PluginHost &host = session.plugins();
  if (session.plugin_errors()) return kExitError;

  std::filesystem::path program(absolute_cli_path(a.program));
  DiagnosticList diags;
  Expected<ast::Module> module = Diagnostic::error("", "");
  if (program.extension() == ".json") {
    module = load_ast_json_file(program);
  } else {
    PythonFrontend frontend = PythonFrontend::from_environment();
    for (const auto &s : session.plugin_specs) frontend.plugin_specs.push_back(absolute_cli_path(s));
    frontend.builtin_plugins = !session.no_builtin_plugins;
    module = capture_python_file(frontend, program, diags);
  }
  if (!module) {
    if (!module.error().message.empty() && !diags.has_errors()) diags.report(module.error());
    Session::print(diags);
    return kExitError;
  }

  CompileOptions o;
  o.target = a.target;
  o.out = absolute_cli_path(a.out);
  o.dump = DumpOptions::parse(a.dump_ir);
  o.force = a.force;
  o.keep_failed = a.keep_failed;
  o.pin_timings = a.pin_timings;
  o.pass_time_limit_s = a.pass_time_limit;
  if (!a.backend.empty()) o.backend = a.backend;
  if (!a.binding.empty()) o.binding = a.binding;
  if (!a.pipeline.empty()) o.passes = split_commas(a.pipeline);
  if (!a.locked.empty()) o.locked = absolute_cli_path(a.locked);
  for (const auto &kv : a.options) {
    auto parsed = parse_key_json(kv);
    if (!parsed) {
      Session::print(Diagnostic::error("cli.option", "--option expects KEY=JSON, got '" + kv + "'"));
      return kExitUsage;
    }
    o.pass_options[parsed->first] = parsed->second;
  }

  Compiler compiler(host);
  CompileResult r = compiler.compile(std::move(*module), o);
  diags.append(r.diagnostics);
  if (!diags.empty()) Session::print(diags);
  if (!r.ok) {
    if (r.failed) std::cerr << "htp-host: kept the failed compile in " << r.failed->string() << '\n';
    return kExitError;
  }
  std::cout << r.package.string() << '\n';
  return kExitOk;
}

}  // namespace

void register_compile_command(CLI::App &app, Session &session) {
  auto args = std::make_shared<CompileArgs>();
  auto *cmd = app.add_subcommand("compile", "Compile a Python program (or htp.ast.v1 JSON) into a package");
  cmd->add_option("PROGRAM", args->program, "Python file, or an htp.ast.v1 .json file")->required();
  cmd->add_option("--target,-t", args->target, "Target, e.g. pto-a2a3sim or aie-npu1")->required();
  cmd->add_option("-o,--output", args->out, "Package directory to create")->required();
  cmd->add_option("--dump-ir", args->dump_ir, "none|all|after|PASS: write ir/NN_<pass>.py and .ast.json")
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "Replace an existing output directory (atomically)");
  cmd->add_flag("--keep-failed", args->keep_failed, "Keep <out>.failed/ with diagnostics and dumps on failure");
  cmd->add_flag("--pin-timings", args->pin_timings, "Pin measured times in traces (fully byte-identical package)");
  cmd->add_option("--pass-time-limit", args->pass_time_limit,
                  "Seconds one pass may run; past it htp-host stops, naming the pass and its plugin (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--backend", args->backend, "Backend component id, when several claim the target");
  cmd->add_option("--binding", args->binding, "Binding component id, when several claim the target");
  cmd->add_option("--pipeline", args->pipeline, "Explicit pass ids (comma-separated), checked by the resolver");
  cmd->add_option("--locked", args->locked, "Reproduce the plan of this htp.lock.json or fail naming differences");
  cmd->add_option("--option", args->options, "Pass option KEY=JSON, a bare word being a string (repeatable)");
  cmd->callback([&session, args] { session.action = [&session, args] { return run_compile(session, *args); }; });
}

}  // namespace htp::cli
