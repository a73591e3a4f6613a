// Shared helpers of the backend-pto tests: IR fixtures and golden package comparison.
#pragma once

#include <string>
#include <vector>

#include "legality.hpp"
#include "package_builder.hpp"

namespace ptotest {

/// The module attributes of an IR fixture as JSON (null when absent), for tests to break before building.
struct Inputs {
  nlohmann::json tile_kernels, task_graph, csp_graph;
  ptobe::Origin origin;
};

/// fixtures/<name>.json for `target`.
Inputs load_fixture(const std::string &name, const std::string &target = "pto-a2a3sim");

/// What the backend's passes build from the attributes: each read by its SDK reader (which throws
/// htp::IrDocumentError when it is malformed).
ptobe::PackageInputs package_inputs(const Inputs &in);

/// Builds the package of `in`; fails the test (and returns no files) on problems.
std::vector<std::pair<std::string, std::string>> emit_files(const Inputs &in);

/// The problems building `in` reports.
std::vector<ptobe::Problem> problems_of(const Inputs &in);

/// Compares `files` with golden/<name>/ (every file, no extra or missing one); HTP_UPDATE_GOLDENS=1 rewrites.
void expect_golden(const std::string &name, const std::vector<std::pair<std::string, std::string>> &files);

/// The text of a file relative to the test directory.
std::string read_text(const std::string &relative);

}  // namespace ptotest
