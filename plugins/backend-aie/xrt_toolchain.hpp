// What aie-xrt needs on the machine: aiecc (MLIR-AIE), Peano (llvm-aie) and XRT, found from PATH and
// the environment (PEANO_INSTALL_DIR, XILINX_XRT); the message that names exactly what is missing.
#pragma once

#include <string>
#include <vector>

namespace htp::aie {

struct XrtToolchain {
  std::string aiecc_dir;   ///< directory holding aiecc (or aiecc.py)
  std::string peano;       ///< Peano install (bin/clang++)
  std::string xrt;         ///< XRT install (lib/libxrt_coreutil.so)
  std::vector<std::string> missing;  ///< one phrase per missing piece
};

/// Looks for the three pieces; `path`, `peano_env` and `xrt_env` default to the process environment.
XrtToolchain find_xrt_toolchain();
XrtToolchain find_xrt_toolchain(const std::string &path, const char *peano_env, const char *xrt_env);

/// "aie-xrt cannot build or run entry 'E': missing A; B; C".
std::string missing_toolchain_message(const std::string &entry, const XrtToolchain &tc);

}  // namespace htp::aie
