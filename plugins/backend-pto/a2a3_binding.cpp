#include "a2a3_binding.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "a2a3_toolchain.hpp"

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

}  // namespace

void run_a2a3(htp::RunContext &ctx) {
  const std::string pkg = ctx.package_dir();
  const std::string recipe = write_recipe(pkg, read_registry(pkg));
  Toolchain tc = find_a2a3_toolchain(ToolchainEnv::system());
  if (!tc.complete()) throw htp::RunError(missing_toolchain_message(tc, recipe), "pto.a2a3.toolchain");
  const std::string log = ctx.run_dir() + "/a2a3_build.log";
  const std::string cmd = "sh '" + recipe + "' > '" + log + "' 2>&1";
  if (int rc = std::system(cmd.c_str()); rc != 0)
    throw htp::RunError("the device build of " + pkg + " failed (status " + std::to_string(rc) + "); see " + log,
                        "pto.a2a3.build");
  throw htp::RunError("the package was built for the device (" + pkg +
                          "/build/a2a3); launching it through pto-runtime's device Worker is not implemented by this "
                          "binding",
                      "pto.a2a3.run");
}

}  // namespace ptobe
