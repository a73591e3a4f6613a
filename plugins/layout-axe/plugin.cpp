// The layout-axe plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("layout-axe", "0.1.0", "Axe layouts as types: distribution, memory and hardware facets", register_components)
