// The backend's passes: aie.map (lower: the module's IR contracts -> one AIE design per entrypoint, kept in
// module attribute aie.designs), aie.validate (lower: the device rules), aie.emit (emit: codegen/aie/<entry>/
// and htp.entrypoints). And the bindings aie-sim and aie-xrt.
#pragma once

#include <htp/ast.hpp>
#include <htp/run.hpp>

namespace htp::aie {

void map_pass(htp::PassContext &ctx);
void validate_pass(htp::PassContext &ctx);
void emit_pass(htp::PassContext &ctx);

void run_sim(htp::RunContext &ctx);
void run_xrt(htp::RunContext &ctx);

}  // namespace htp::aie
