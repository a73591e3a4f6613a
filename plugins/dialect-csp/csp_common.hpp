// Shared vocabulary of the dialect-csp passes: JSON, spans, surface names, the module attributes they
// exchange. The passes communicate only through the AST and module attributes, like every plugin.
#pragma once

#include <htp/ast.hpp>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace csp {

using Json = nlohmann::json;

/// Internal module attribute written by csp.canonicalize and completed by csp.effects (documented in
/// docs/dialects/csp.md): the declarations of every program, the input of csp.build-graph.
inline constexpr const char *kProgramsAttr = "csp.programs";
inline constexpr const char *kProgramsSchema = "htp.csp.programs.v1";
/// Facts the passes provide (docs/ir-contracts.md names the graph fact IR.CSP.Graph, which the capability
/// grammar — Namespace.Name — does not accept; the names live here so that the spelling changes in one
/// place).
inline constexpr const char *kCapCanonical = "IR.CSPCanonical";
inline constexpr const char *kCapEffects = "IR.CSPEffects";
inline constexpr const char *kCapGraph = "IR.CSPGraph";
/// csp.build-graph runs after the tile dialect's typecheck when it is selected (to read tile.type).
inline constexpr const char *kCapTileTypedOptional = "?IR.TileTyped";
/// ... and after dialect-wsp's typecheck, whose lowering of a pipe workload (wsp.workload) holds the stages.
inline constexpr const char *kCapWspCheckedOptional = "?IR.WSPChecked";
/// Node attribute on a channel operation after canonicalization: {"op": "send"|"recv"|"consume", "channel":
/// c}.
inline constexpr const char *kOpAttr = "csp.op";
/// Node attribute on a lifted process FunctionDef: {"program": p, "process": name}.
inline constexpr const char *kProcessAttr = "csp.process";

/// The last identifier of a Name/Attribute chain ("csp.send" -> "send"), so that `send`, `csp.send` and
/// `htp.dialects.csp.send` all name the surface function.
std::string surface_name(htp::NodeRef callee);

/// Whether `call` is a Call of the surface function `name` (by its last identifier).
bool is_call_of(htp::NodeRef call, std::string_view name);

/// The span of a node as contract JSON {"file","line","col","end_line","end_col"}.
Json span_json(htp::NodeRef n);

/// A SourceSpan from span JSON (empty span for null).
htp::SourceSpan source_span(const Json &span);

/// A node attribute parsed as JSON (nullopt when absent or malformed).
std::optional<Json> node_json(htp::NodeRef n, std::string_view key);

/// A module attribute parsed as JSON (nullopt when absent or malformed).
std::optional<Json> module_json(const htp::ModuleRef &m, std::string_view key);

/// The compile-time constants the frontend resolved (module attribute htp.capture, key "constants").
Json captured_constants(const htp::ModuleRef &m);

/// Reports a diagnostic of `severity` at a JSON span (for passes that work from module attributes).
void report_at(htp::PassContext &ctx, HtpSeverity severity, const Json &span, std::string_view code,
               std::string_view message);

/// `Tile[32, 128, f32]`, `Tensor[256, 128, f32]`, `None` (an event): a contract type for messages.
std::string type_text(const Json &type);

/// A top-level FunctionDef of the module by name (empty view when absent).
htp::NodeRef find_function(const htp::ModuleRef &m, std::string_view name);

} // namespace csp
