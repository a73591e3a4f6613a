// Benchmark plugin: passes that do nothing, so a pipeline of them measures the pass manager itself.
#include <htp/ast.hpp>

namespace {

void nothing(htp::PassContext &) {}

void register_components(htp::Registrar &r) {
  for (int i = 0; i < 100; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "noop.pass%03d", i);
    r.add(htp::PassSpec{.info = {.id = id, .version = "1.0.0", .provides = {"IR.Noop" + std::to_string(i)},
                                 .requires_ = i ? std::vector<std::string>{"IR.Noop" + std::to_string(i - 1)}
                                                : std::vector<std::string>{}},
                        .stage = HTP_STAGE_ANALYZE,
                        .run = htp::pass_body<nothing>});
  }
}

}  // namespace

HTP_DEFINE_PLUGIN("bench-noop", "1.0.0", "100 passes that do nothing", register_components)
