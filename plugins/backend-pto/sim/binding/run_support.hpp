// htp_ptosim: what both run paths of the a2a3sim binding share (HTP's simulator, sim_run.cpp, and the real
// pto-runtime, ptort_run.cpp): the options, scalar encoding, the compiler choice, dlopen'ed objects and files.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "sim_run.hpp"

namespace htp_ptosim {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t);

/// Rejects unknown option keys (docs §4, §5 of pto-sim.md; §8 of pto.md).
void check_options(const nlohmann::json &options);
/// Option `runtime`: "auto" (default), "sim" or "pto-runtime".
std::string runtime_choice(const nlohmann::json &options);
/// Option `check_revision` (default true).
bool revision_check(const nlohmann::json &options);
/// Option `timeout_s`: the run's time limit in seconds (0: none), kDefaultTimeoutSeconds when absent.
inline constexpr double kDefaultTimeoutSeconds = 60.0;
double timeout_seconds(const nlohmann::json &options);
/// Option `cxx`, else $CXX, else c++.
std::string compiler_name(const nlohmann::json &options);

/// The raw 64-bit slot of a scalar argument of manifest dtype `dtype` ("" when unknown).
uint64_t scalar_bits(const RunArgument &a, const std::string &dtype);
/// The manifest dtype of parameter `name` ("" when unknown).
std::string param_dtype(const PackageSpec &pkg, const std::string &name);

void write_text(const std::filesystem::path &path, const std::string &text);

/// A dlopen'ed object, closed when destroyed.
class Library {
public:
  Library(const std::string &path, const std::string &label, const char *code = "pto.sim.load");
  ~Library();
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;
  /// The symbol `name`; throws RunFailure when absent.
  void *symbol(const std::string &name, const std::string &label) const;
  void *find(const std::string &name) const; ///< nullptr when absent
private:
  void *handle_ = nullptr;
  std::string code_;
};

} // namespace htp_ptosim
