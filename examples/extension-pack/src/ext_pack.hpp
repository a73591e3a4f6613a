// The extension pack's components, one file each; plugin.cpp registers them all.
#pragma once

#include <htp/ast.hpp>
#include <htp/run.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace extpack {

using json = nlohmann::ordered_json;

/// Capability facts the pack's passes provide (one '.' each, docs/capabilities.md §1).
inline constexpr const char *kElementwiseLowered = "IR.ExtElementwiseLowered";

/// The JSON value of a node attribute, or null when absent or malformed.
json node_attr(htp::NodeRef n, std::string_view key);

// elementwise_dialect.cpp — dialect `ext`: @elementwise(tile=(R, C)) functions over whole tensors.
void scan_ext(htp::PassContext &ctx);
bool is_axpby_call(htp::NodeRef n);  // axpby(...) / ext.axpby(...)
void lower_elementwise(htp::PassContext &ctx);

// axpby_intrinsic.cpp — intrinsic `ext.axpby(a, b, alpha, beta)` = alpha * a + beta * b.
void lower_axpby_to_tile(htp::PassContext &ctx);   // PTO (and any target): portable tile intrinsics
void lower_axpby_cpu_ref(htp::PassContext &ctx);   // cpu-ref: a fused foreign op where the type is known

// place_layout.cpp — layout kind `place`: Place("UB") puts a value in a memory space.
void scan_place(htp::PassContext &ctx);
void place_to_axe(htp::PassContext &ctx);
void place_from_axe(htp::PassContext &ctx);

// kernel_stats.cpp — an analysis pass: loads, stores and other calls per tile kernel (`ext.kernel_stats`).
void kernel_stats(htp::PassContext &ctx);

// cpu_ref_emitter.cpp — C++ loops for the host CPU from tile.kernels.
void emit_cpu_ref(htp::PassContext &ctx);

// cpu_ref_binding.cpp — builds the emitted C++ (content-hash cache) and runs an entry.
void run_cpu_ref(htp::RunContext &ctx);

}  // namespace extpack
