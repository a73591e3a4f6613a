#include "binding.hpp"

#include <htp/run.hpp>

#include "ptort_run.hpp"
#include "run_support.hpp"
#include "sim_run.hpp"

namespace htp_ptosim {

namespace {

SimRunRequest make_request(htp::RunContext &ctx) {
  SimRunRequest req;
  req.package_dir = ctx.package_dir();
  req.entry = ctx.entry();
  req.target = ctx.target();
  req.cache_dir = ctx.cache_dir();
  req.run_dir = ctx.run_dir();
  try {
    req.options = nlohmann::json::parse(ctx.options_json().empty() ? "{}" : ctx.options_json());
  } catch (const nlohmann::json::exception &e) {
    throw htp::RunError(std::string("the binding options are not valid JSON: ") + e.what(), "pto.sim.option");
  }
  for (size_t i = 0; i < ctx.arg_count(); ++i) {
    const HtpRunArg &a = ctx.arg(i);
    req.args.push_back(RunArgument{ctx.arg_name(i), a.tensor, a.scalar_int, a.scalar_float});
  }
  return req;
}

/// The runtime's commit as a log shows it.
std::string revision_label(const nlohmann::json &report) {
  const std::string r = report["runtime"].value("revision", std::string());
  return r.empty() ? "(revision unknown)" : r.substr(0, 9);
}

void run_a2a3sim(htp::RunContext &ctx) {
  const SimRunRequest req = make_request(ctx);
  try {
    const nlohmann::json report = run_package(req);
    const nlohmann::json &build = report["build"];
    const std::string where = report["path"] == "pto-runtime"
                                  ? "on pto-runtime " + revision_label(report) + " (a2a3sim)"
                                  : std::to_string(report["tasks"].get<uint64_t>()) + " tasks on the CPU simulator";
    ctx.log(HTP_LOG_INFO, "pto.a2a3sim: " + where + ", build cache " + build["cache"].get<std::string>() + ", " +
                              std::to_string(build["compiler_invocations"].get<int>()) + " compiler invocations");
  } catch (const RunFailure &e) {
    throw htp::RunError(e.what(), e.code);
  }
}

PtoRuntimeRoots device_roots(const PackageSpec &pkg) {
  return *find_pto_runtime("pto-runtime", PtoPlatform::A2A3, {pkg.runtime_revision, pkg.isa_revision, true});
}

} // namespace

void check_device_runtime(const std::string &package_dir) {
  try {
    const PackageSpec pkg = read_package(package_dir, "");
    device_roots(pkg);
  } catch (const RunFailure &e) {
    throw htp::RunError(e.what(), e.code);
  }
}

void launch_on_device(htp::RunContext &ctx, const std::string &orchestration,
                      const std::vector<std::string> &kernels, const std::string &recipe) {
  try {
    const auto start = Clock::now();
    SimRunRequest req = make_request(ctx);
    check_options(req.options);
    const PackageSpec pkg = read_package(req.package_dir, req.entry);
    BuiltPackage built{orchestration, kernels, {}, recipe};
    const nlohmann::json report = launch_on_pto_runtime(req, pkg, device_roots(pkg), PtoPlatform::A2A3, built, start);
    ctx.log(HTP_LOG_INFO, "pto.a2a3: ran on pto-runtime " + revision_label(report) + " (a2a3 device)");
  } catch (const RunFailure &e) {
    throw htp::RunError(e.what(), e.code);
  }
}

void register_bindings(htp::Registrar &r) {
  r.add(htp::BindingSpec{
      .info = {.id = "pto.a2a3sim",
               .version = "0.1.0",
               .summary = "pto-a2a3sim packages on HTP's PTO CPU simulator (or a built pto-runtime)",
               .provides = {"Binding.PTO(variant=a2a3sim)"}},
      .targets = {"pto-a2a3sim"},
      .priority = 10,
      .run = htp::run_body<run_a2a3sim>});
}

} // namespace htp_ptosim
