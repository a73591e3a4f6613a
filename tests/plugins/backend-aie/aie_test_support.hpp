// Helpers of the backend-aie tests: IR fixtures (JSON documents of the IR contracts), mapping them to
// designs, running a design on the simulator with float buffers, goldens.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "design.hpp"
#include "entry_plan.hpp"
#include "sim/simulator.hpp"

namespace aie_test {

using htp::aie::Design;
using htp::aie::Json;
using htp::aie::Problem;

/// fixtures/<name> parsed.
Json fixture(const std::string &name);
/// The source-tree directory of these tests.
std::filesystem::path test_dir();

struct Mapped {
  std::vector<Design> designs;
  std::vector<Problem> problems;
  /// All problem messages, one per line, with their codes.
  std::string text() const;
};

/// Maps an IR fixture (an object of module attributes) onto `device`.
Mapped map(const Json &attrs, const std::string &device = "npu1");

/// Runs `design` on the simulator: kernels compiled into a per-test cache, buffers by parameter name.
htp::aie::sim::SimResult simulate(const Design &design, std::map<std::string, std::vector<float>> &buffers,
                                  double timeout_seconds = 20.0);

/// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> random_floats(size_t n, unsigned seed);

/// Compares `text` with golden/<name>; HTP_UPDATE_GOLDENS=1 rewrites the golden instead.
::testing::AssertionResult matches_golden(const std::string &name, const std::string &text);

}  // namespace aie_test
