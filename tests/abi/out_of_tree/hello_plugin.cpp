// An out-of-tree plugin: one pass, registered with the SDK's C++ helpers.
#include <htp/plugin.hpp>

static void register_components(htp::Registrar &r) {
  r.add(htp::PassSpec{.info = {.id = "hello.greet", .version = "0.1.0", .summary = "Says hello",
                               .provides = {"IR.Greeted"}},
                      .stage = HTP_STAGE_ANALYZE});
}

HTP_DEFINE_PLUGIN("hello", "0.1.0", "An out-of-tree plugin built against the installed SDK", register_components)
