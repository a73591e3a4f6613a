// The Ascend hardware profile as data (hardware/<name>.json, embedded at build time): core counts,
// memory spaces with capacities and alignment, vector block size and cube fractal alignment, and the peak
// rates the estimated device time uses (each with its source).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <htp/device_estimate.hpp>
#include <nlohmann/json.hpp>

namespace ptobe {

/// One on-chip or global memory space.
struct MemorySpace {
  std::string name;        ///< GM L1 L0A L0B L0C UB
  uint64_t capacity = 0;   ///< bytes per core
  uint32_t alignment = 0;  ///< bytes; every buffer starts at a multiple
  std::string core;        ///< "aic", "aiv" or "any"
};

/// Peak rates for the estimated device time ("performance"; docs/packages.md): each number with its source.
struct PerformanceProfile {
  htp::ProfileNumber clock;                                   ///< GHz
  std::map<std::string, htp::ProfileNumber> cube_flops_per_cycle;  ///< by input dtype, per AIC
  htp::ProfileNumber vector_bytes_per_cycle;                  ///< per AIV
  htp::ProfileNumber transcendental_bytes_per_cycle;          ///< per AIV
  htp::ProfileNumber hbm_bandwidth;                           ///< GB/s, whole chip
  htp::ProfileNumber l2_bandwidth;                            ///< GB/s, whole chip (stated, not charged)
  htp::ProfileNumber gm_sharing_cores;                        ///< cores sharing the HBM bandwidth evenly
  htp::ProfileNumber launch;                                  ///< ns per task

  /// The per-core rates the roofline uses.
  htp::RooflineRates rates() const;
  /// Every number with its source, as the report states them.
  nlohmann::json to_json() const;
};

/// A chip's profile.
struct HardwareProfile {
  std::string name;
  int aic_cores = 0;
  int aiv_cores = 0;
  std::map<std::string, MemorySpace> memory;
  uint32_t block_bytes = 32;    ///< a vector tile row must be a multiple of this many bytes
  uint32_t m_align = 16;        ///< cube: rows of left/accumulator tiles are padded to this
  uint32_t k_align_bytes = 32;  ///< cube: the contraction dimension is padded to this many bytes
  uint32_t n_align = 16;        ///< cube: columns of right/accumulator tiles are padded to this
  std::vector<std::string> cube_input_dtypes;
  std::vector<std::string> acc_dtypes;
  PerformanceProfile performance;

  /// The memory space `name`; throws std::out_of_range naming it when absent.
  const MemorySpace &space(const std::string &name) const;
};

/// Parses a profile document (htp.pto.hardware.v1); throws std::runtime_error naming the bad key.
HardwareProfile parse_hardware_profile(const nlohmann::json &doc);

/// The built-in a2a3 profile (hardware/a2a3.json), parsed once.
const HardwareProfile &a2a3_profile();

/// The text of hardware/a2a3.json as embedded (generated source).
const char *a2a3_profile_json();

}  // namespace ptobe
