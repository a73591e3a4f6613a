// The external kernels of a design compiled for the host (aie-sim): one shared library per distinct set
// of sources and compiler, kept in a content-hash cache, loaded with dlopen and left loaded.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "simulator.hpp"

namespace htp::aie::sim {

struct CompiledKernels {
  std::map<std::string, KernelEntry> entries;  ///< kernel name -> htp_aie_call_<name>
  std::filesystem::path library;
  bool cache_hit = false;
  std::string compiler;
  void *bind_stop = nullptr;  ///< the library's htp::kBindStopSymbol (its loops' time limit), or nullptr
};

/// Compiles (or finds in `cache_dir`) the kernels `sources` (name -> C++ text) with the host compiler
/// ($HTP_AIE_SIM_CXX, else $CXX, else c++); compiler output goes to `log`. Throws SimError on failure.
CompiledKernels compile_kernels(const std::map<std::string, std::string> &sources,
                                const std::filesystem::path &cache_dir, const std::filesystem::path &log);

}  // namespace htp::aie::sim
