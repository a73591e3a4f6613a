// The dialect-wsp plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("dialect-wsp", "0.1.0", "Workload/schedule programming: parallel grids, dynamic axes, dispatch policies", register_components)
