#include "a2a3_binding.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "a2a3_toolchain.hpp"
#ifdef HTP_PTO_HAVE_SIM
#include "sim/binding.hpp"
#endif

namespace ptobe {

namespace {

nlohmann::json read_registry(const std::string &pkg) {
  const std::string path = pkg + "/codegen/pto/kernel_registry.json";
  std::ifstream in(path);
  if (!in) throw htp::RunError("package " + pkg + " has no codegen/pto/kernel_registry.json (not a pto package)");
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) throw htp::RunError(path + " is not valid JSON");
  return doc;
}

std::string write_recipe(const std::string &pkg, const nlohmann::json &registry) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(pkg) / "build" / "a2a3";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path recipe = dir / "build_recipe.sh";
  std::ofstream out(recipe, std::ios::binary | std::ios::trunc);
  out << a2a3_build_recipe(registry);
  if (!out) throw htp::RunError("cannot write " + recipe.string());
  out.close();
  fs::permissions(recipe, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add, ec);
  return recipe.string();
}

std::string quoted(const std::string &s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs the recipe with the tools found (CCEC, LD_LLD, CROSS_CXX), its log in the run directory.
void build_for_device(htp::RunContext &ctx, const std::string &recipe, const Toolchain &tc, const std::string &ld) {
  const std::string log = ctx.run_dir() + "/a2a3_build.log";
  const std::string cmd = "CCEC=" + quoted(tc.ccec) + " LD_LLD=" + quoted(ld) + " CROSS_CXX=" + quoted(tc.cross_cxx) +
                          " sh " + quoted(recipe) + " > " + quoted(log) + " 2>&1";
  if (int rc = std::system(cmd.c_str()); rc != 0)
    throw htp::RunError("the device build of " + ctx.package_dir() + " failed (status " + std::to_string(rc) +
                            "); see " + log,
                        "pto.a2a3.build");
}

}  // namespace

void run_a2a3(htp::RunContext &ctx) {
  const std::string pkg = ctx.package_dir();
  const nlohmann::json registry = read_registry(pkg);
  const std::string recipe = write_recipe(pkg, registry);
  const ToolchainEnv env = ToolchainEnv::system();
  Toolchain tc = find_a2a3_toolchain(env);
  if (!tc.complete()) throw htp::RunError(missing_toolchain_message(tc, recipe), "pto.a2a3.toolchain");
  const auto ld = find_ld_lld(env, tc);
  if (!ld)
    throw htp::RunError("target pto-a2a3 needs ld.lld, the ccec linker (next to " + tc.ccec +
                            ", in $ASCEND_HOME_PATH/bin or on PATH). The build recipe is in " + recipe,
                        "pto.a2a3.toolchain");
#ifdef HTP_PTO_HAVE_SIM
  htp_ptosim::check_device_runtime(pkg);  // a runtime built for the device, at the package's revision
  build_for_device(ctx, recipe, tc, *ld);
  std::vector<std::string> kernels;
  for (const auto &k : registry.value("kernels", nlohmann::json::array()))
    kernels.push_back(pkg + "/" + a2a3_kernel_binary(k.value("name", std::string())));
  htp_ptosim::launch_on_device(ctx, pkg + "/" + a2a3_orchestration_binary(ctx.entry()), kernels, recipe);
#else
  build_for_device(ctx, recipe, tc, *ld);
  throw htp::RunError("the package was built for the device (" + pkg +
                          "/build/a2a3), but this backend-pto was built without plugins/backend-pto/sim, which "
                          "holds the pto-runtime launcher",
                      "pto.a2a3.run");
#endif
}

}  // namespace ptobe
