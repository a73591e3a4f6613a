// The dialect-tile plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("dialect-tile", "0.1.0", "Tile programming surface: kernels, tile and tensor types, portable intrinsics", register_components)
