// Islands: a pass hands part of the program to an external compiler (mlir-opt, llc, ...) and takes the result
// back. The host runs the tool as a child process with a time limit, caches its output by content hash
// (tool, version, command, input), records the exact command, the tool's version, the input and the output
// in the package under ir/islands/<pass>/<step>/, and turns the tool's errors into diagnostics: at the
// source line the tool names (MLIR prints `file:line:col: error:` for the `loc(...)` an island gave its
// input), else at the matched node.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.hpp"

namespace htp {

class PackageWriter;

struct IslandStep {
  std::string pass;                ///< The pass running it (its records go to ir/islands/<pass>/).
  std::string name;                ///< The step, e.g. "softmax_rows.mlir-opt": ir/islands/<pass>/<name>/.
  std::vector<std::string> argv;   ///< argv[0] is the tool; "{input}" and "{output}" become file paths.
  std::string input;               ///< Given on stdin, or written to the {input} file.
  std::string input_name = "input";    ///< Record (and {input} file) name.
  std::string output_name = "output";  ///< Record (and {output} file) name; without {output}, stdout.
  std::chrono::milliseconds timeout{120000};
  Span at;                         ///< The matched node: where errors go when the tool names no location.
  std::string package;             ///< Debian package that provides the tool, for the "not installed" message.
  std::filesystem::path cache_dir; ///< Empty: default_cache_dir() / "islands".
};

struct IslandResult {
  std::string output;
  bool cached = false;
  double seconds = 0;  ///< The tool's run time (0 for a cache hit).
  std::string tool_version;
};

/// Runs one island step (or takes its cached output); nullopt with diagnostics when the tool is missing,
/// fails, hangs past the limit or produces no output. Records go through `records` (may be null).
std::optional<IslandResult> run_island(const IslandStep &step, PackageWriter *records, DiagnosticList &diags);

/// The absolute path of `tool` (a path, or a name looked up in PATH), or empty when it is not executable.
std::filesystem::path find_executable(const std::string &tool);

}  // namespace htp
