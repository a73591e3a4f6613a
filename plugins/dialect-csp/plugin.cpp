// The dialect-csp plugin: its identity. Components are registered as the issues implementing them land.
#include <htp/plugin.hpp>

namespace {

void register_components(htp::Registrar &) {}

}  // namespace

HTP_DEFINE_PLUGIN("dialect-csp", "0.1.0", "Communicating sequential processes: processes and bounded typed channels", register_components)
