// The dialect-csp plugin: processes and bounded typed channels (docs/dialects/csp.md).
#include "csp_common.hpp"
#include "passes.hpp"

namespace {

void register_components(htp::Registrar &r) {
  r.add(htp::DialectSpec{.info = {.id = "csp.dialect",
                                  .version = "0.1.0",
                                  .summary = "Communicating sequential processes over bounded typed channels",
                                  .provides = {"Dialect.CSP"}},
                         .name = "csp",
                         .surface = {"program", "process", "Channel", "Event", "send", "recv", "consume",
                                     "connect", "replicate"},
                         .scan = htp::pass_body<csp::scan>});
  r.add(htp::PassSpec{
      .info = {.id = "csp.canonicalize",
               .version = "0.1.0",
               .summary = "Read programs, check declared ends, lift processes and mark them as tile bodies",
               .provides = {csp::kCapCanonical}},
      .stage = HTP_STAGE_CANONICALIZE,
      .applies_to = {"Uses.Dialect(name=csp)"},
      .run = htp::pass_body<csp::canonicalize>});
  r.add(htp::PassSpec{
      .info = {.id = "csp.effects",
               .version = "0.1.0",
               .summary = "Put/get counts, balance, element types and deadlock freedom (slot tokens)",
               .provides = {csp::kCapEffects},
               .requires_ = {csp::kCapCanonical}},
      .stage = HTP_STAGE_ANALYZE,
      .applies_to = {"Uses.Dialect(name=csp)"},
      .run = htp::pass_body<csp::check_effects>});
  r.add(htp::PassSpec{
      .info = {.id = "csp.build-graph",
               .version = "0.1.0",
               .summary = "The process/channel graph csp.graph (htp.csp.graph.v1)",
               .provides = {csp::kCapGraph},
               .requires_ = {csp::kCapEffects, csp::kCapTileTypedOptional, csp::kCapWspCheckedOptional}},
      .stage = HTP_STAGE_SCHEDULE,
      .applies_to = {"Uses.Dialect(name=csp)"},
      .run = htp::pass_body<csp::build_graph>});
}

} // namespace

HTP_DEFINE_PLUGIN("dialect-csp", "0.1.0",
                  "Communicating sequential processes: processes and bounded typed channels",
                  register_components)
