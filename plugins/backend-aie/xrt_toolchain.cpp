#include "xrt_toolchain.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace htp::aie {

namespace fs = std::filesystem;

namespace {

std::string on_path(const std::string &path, const std::vector<std::string> &names) {
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    for (const auto &n : names) {
      std::error_code ec;
      if (fs::is_regular_file(fs::path(dir) / n, ec)) return dir;
    }
  }
  return {};
}

}  // namespace

XrtToolchain find_xrt_toolchain(const std::string &path, const char *peano_env, const char *xrt_env) {
  XrtToolchain tc;
  std::error_code ec;
  tc.aiecc_dir = on_path(path, {"aiecc", "aiecc.py"});
  if (tc.aiecc_dir.empty()) tc.missing.push_back("aiecc (the MLIR-AIE compiler driver; neither aiecc nor aiecc.py is on PATH)");
  if (peano_env && *peano_env && fs::is_regular_file(fs::path(peano_env) / "bin" / "clang++", ec)) tc.peano = peano_env;
  else if (peano_env && *peano_env)
    tc.missing.push_back(std::string("Peano (PEANO_INSTALL_DIR=") + peano_env + " has no bin/clang++)");
  else tc.missing.push_back("Peano (the llvm-aie kernel compiler; set PEANO_INSTALL_DIR to its install directory)");
  for (std::string dir : {std::string(xrt_env ? xrt_env : ""), std::string("/opt/xilinx/xrt")})
    if (!dir.empty() && fs::is_regular_file(fs::path(dir) / "lib" / "libxrt_coreutil.so", ec)) {
      tc.xrt = dir;
      break;
    }
  if (tc.xrt.empty())
    tc.missing.push_back(xrt_env && *xrt_env
                             ? std::string("XRT (XILINX_XRT=") + xrt_env + " has no lib/libxrt_coreutil.so)"
                             : std::string("XRT (set XILINX_XRT, or install it in /opt/xilinx/xrt)"));
  return tc;
}

XrtToolchain find_xrt_toolchain() {
  const char *path = std::getenv("PATH");
  return find_xrt_toolchain(path ? path : "", std::getenv("PEANO_INSTALL_DIR"), std::getenv("XILINX_XRT"));
}

std::string missing_toolchain_message(const std::string &entry, const XrtToolchain &tc) {
  std::string s = "aie-xrt cannot build or run entry '" + entry + "': missing ";
  for (size_t i = 0; i < tc.missing.size(); ++i) s += (i ? "; " : "") + tc.missing[i];
  return s + ". Use the aie-sim binding (the default for AIE targets) to run the design on the CPU";
}

}  // namespace htp::aie
