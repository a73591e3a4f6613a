// The backend-aie plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("backend-aie", "0.1.0", "AMD AIE backend: MLIR-AIE designs for NPU1/NPU2", register_components)
