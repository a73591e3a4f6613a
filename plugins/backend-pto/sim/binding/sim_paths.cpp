// Locating the simulator headers at run time, from a build tree or an installation.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "sim_run.hpp"

namespace htp_ptosim {

namespace fs = std::filesystem;

namespace {
bool has_headers(const fs::path &dir) {
  return fs::exists(dir / "pto_orchestration_api.h");
}
} // namespace

std::string locate_sim_include(const nlohmann::json &options) {
  if (options.contains("sim_include")) {
    const fs::path dir = options["sim_include"].get<std::string>();
    if (!has_headers(dir))
      throw RunFailure("pto.sim.headers",
                       "option sim_include: " + dir.string() + " holds no pto_orchestration_api.h");
    return fs::absolute(dir).string();
  }
  if (const char *env = std::getenv("HTP_PTOSIM_INCLUDE"); env && *env) {
    if (!has_headers(env))
      throw RunFailure("pto.sim.headers",
                       std::string("HTP_PTOSIM_INCLUDE=") + env + " holds no pto_orchestration_api.h");
    return fs::absolute(env).string();
  }
  std::vector<fs::path> tried;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void *>(&locate_sim_include), &info) && info.dli_fname) {
    const fs::path data =
        fs::path(info.dli_fname).parent_path() / "htp-backend-pto.data" / "ptosim" / "include";
    if (has_headers(data)) return fs::absolute(data).string();
    tried.push_back(data);
  }
  std::string where;
  for (const auto &t : tried)
    where += (where.empty() ? "" : ", ") + t.string();
  throw RunFailure("pto.sim.headers", "the PTO simulator headers were not found (looked in " + where +
                                          "); set HTP_PTOSIM_INCLUDE or --option sim_include=...");
}

} // namespace htp_ptosim
