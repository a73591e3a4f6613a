// The backend-pto plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("backend-pto", "0.1.0", "Huawei Ascend PTO backend: PTO-ISA kernels and pto-runtime packages (a2a3sim, a2a3)", register_components)
