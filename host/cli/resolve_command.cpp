// `htp-host resolve`: picks the components for a target and prints, explains, draws or locks the plan.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_session.hpp"
#include "resolver/lockfile.hpp"
#include "resolver/plan_dot.hpp"
#include "resolver/resolver.hpp"

namespace htp::cli {

namespace {

struct ResolveArgs {
  std::string target;
  std::vector<std::string> uses;
  std::string backend;
  std::string binding;
  std::vector<std::string> passes;
  bool explain = false;
  bool json = false;
  std::string dot;
  std::string lock;
  std::string locked;
};

/// The default output: what was chosen, one line each, and the passes in run order.
std::string summary(const Plan &plan) {
  std::string s = "target " + plan.target + "\n";
  auto line = [&](const char *what, const Component *c) {
    s += std::string("  ") + what + " ";
    s += c ? c->id + " " + c->version + " (plugin " + c->plugin.name + " " + c->plugin.version + ")"
           : "(none)";
    s += "\n";
  };
  line("backend ", plan.backend);
  line("binding ", plan.binding);
  line("pipeline", plan.pipeline);
  s += "  passes  " + std::to_string(plan.passes.size()) + "\n";
  for (size_t i = 0; i < plan.passes.size(); ++i)
    s += "    " + std::to_string(i + 1) + ". [" + pass_stage_name(plan.passes[i].component->stage) + "] " +
         plan.passes[i].component->id + "\n";
  return s;
}

int run_resolve(Session &session, const ResolveArgs &args) {
  ResolveRequest request;
  request.target = args.target;
  DiagnosticList usage;
  for (size_t i = 0; i < args.uses.size(); ++i) {
    // `--uses:N:COL` locates an error in the N-th --uses argument.
    auto o = parse_obligation(args.uses[i], Span{"--uses", static_cast<uint32_t>(i + 1), 0, 0, 0});
    if (o)
      request.obligations.push_back(std::move(*o));
    else
      usage.report(o.error());
  }
  if (!usage.empty()) {
    Session::print(usage);
    return kExitUsage;
  }
  if (!args.backend.empty()) request.backend = args.backend;
  if (!args.binding.empty()) request.binding = args.binding;
  if (!args.passes.empty()) request.passes = args.passes;

  PluginHost &host = session.plugins();
  const Registry &registry = host.registry_with_digests();
  request.known_unloaded = host.known_unloaded_components();

  DiagnosticList lock_diffs;
  std::optional<Lockfile> lock;
  if (!args.locked.empty()) {
    Expected<Lockfile> read = read_lockfile(absolute_cli_path(args.locked));
    if (!read) {
      Session::print(read.error());
      return kExitError;
    }
    lock = std::move(*read);
    lock_diffs.append(apply_lockfile(*lock, registry, request, args.locked));
    if (lock->target != request.target) {  // (lock.target: nothing to compare)
      Session::print(lock_diffs);
      return kExitError;
    }
  }

  Resolution resolution = resolve(registry, request);
  if (!resolution.diagnostics.empty()) Session::print(resolution.diagnostics);
  if (lock && resolution.plan) lock_diffs.append(compare_lockfile_plan(*lock, *resolution.plan, args.locked));
  if (!lock_diffs.empty()) Session::print(lock_diffs);
  if (!resolution.ok() || lock_diffs.has_errors()) return kExitError;
  const Plan &plan = *resolution.plan;

  if (args.json)
    plan.write_json(std::cout);
  else if (args.explain)
    std::cout << plan.explain();
  else if (args.dot != "-")  // `--dot -` alone prints only the graph
    std::cout << summary(plan);
  std::cout << std::flush;

  DiagnosticList io;
  if (!args.dot.empty())
    if (auto e = write_output_file(args.dot == "-" ? "-" : absolute_cli_path(args.dot), plan_to_dot(plan)))
      io.report(*e);
  if (!args.lock.empty())
    if (auto e = write_lockfile(Lockfile::from_plan(plan), absolute_cli_path(args.lock))) io.report(*e);
  if (!io.empty()) {
    Session::print(io);
    return kExitError;
  }
  return kExitOk;
}

} // namespace

void register_resolve_command(CLI::App &app, Session &session) {
  auto args = std::make_shared<ResolveArgs>();
  auto *cmd = app.add_subcommand("resolve", "Choose the backend, binding, pipeline and passes for a target");
  cmd->add_option("--target", args->target, "Target, e.g. pto-a2a3sim")->required()->type_name("TARGET");
  cmd->add_option("--uses", args->uses,
                  "A program obligation, e.g. 'Uses.Intrinsic(set=pto,op=add)'; repeatable")
      ->type_name("CAP");
  cmd->add_option("--backend", args->backend, "Use this backend id instead of the highest-priority one")
      ->type_name("ID");
  cmd->add_option("--binding", args->binding, "Use this binding id instead of the highest-priority one")
      ->type_name("ID");
  cmd->add_option("--passes", args->passes, "Explicit pass list replacing the pipeline template (checked)")
      ->delimiter(',')
      ->type_name("ID,...");
  cmd->add_flag("--explain", args->explain, "Print the derivation of every choice");
  cmd->add_flag("--json", args->json, "Print the htp.plan.v1 document");
  cmd->add_option("--dot", args->dot, "Write the plan as Graphviz DOT ('-' for stdout)")->type_name("FILE");
  cmd->add_option("--lock", args->lock, "Write the lockfile (htp.lock.v1) of the resolved plugin set")
      ->type_name("FILE");
  cmd->add_option("--locked", args->locked, "Reproduce a lockfile's plan or fail naming each difference")
      ->type_name("FILE");
  cmd->callback(
      [&session, args] { session.action = [&session, args] { return run_resolve(session, *args); }; });
}

} // namespace htp::cli
