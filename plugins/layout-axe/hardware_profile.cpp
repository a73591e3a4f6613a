#include "hardware_profile.hpp"

namespace htp::axe {

namespace {

constexpr int64_t kKiB = 1024;

HardwareProfile pto_profile() {
  // Ascend AI core (a2a3): unified buffer, L1 and the cube's L0 buffers; GM is off-chip.
  return HardwareProfile{
      "pto",
      {{"UB", 192 * kKiB}, {"L1", 512 * kKiB}, {"L0A", 64 * kKiB}, {"L0B", 64 * kKiB}, {"L0C", 128 * kKiB}},
      {{"GM", true}}};
}

HardwareProfile aie_profile() {
  // AIE-ML NPU: a compute tile's data memory (L1), a mem tile (L2); DDR behind the shim.
  return HardwareProfile{
      "aie",
      {{"L1", 64 * kKiB}, {"tile", 64 * kKiB}, {"L2", 512 * kKiB}, {"memtile", 512 * kKiB}},
      {{"GM", true}, {"DDR", true}, {"L3", true}}};
}

std::optional<HardwareProfile> named_profile(std::string_view name) {
  if (name == "pto") return pto_profile();
  if (name == "aie") return aie_profile();
  return std::nullopt;
}

} // namespace

std::optional<HardwareProfile> profile_for_target(std::string_view target) {
  auto dash = target.find('-');
  return named_profile(target.substr(0, dash));
}

Result<HardwareProfile> profile_from_option(const nlohmann::json &option) {
  if (option.is_string()) {
    if (auto p = named_profile(option.get<std::string>())) return *p;
    return fail("layout.profile",
                "unknown hardware profile '" + option.get<std::string>() + "' (known: aie, pto)");
  }
  if (!option.is_object() || !option.contains("spaces") || !option["spaces"].is_object())
    return fail("layout.profile",
                "option axe.profile must be a profile name or {\"spaces\": {SPACE: BYTES|null}}");
  HardwareProfile p;
  p.name = option.value("name", std::string("custom"));
  for (const auto &[space, bytes] : option["spaces"].items()) {
    if (bytes.is_null())
      p.unbounded[space] = true;
    else if (bytes.is_number_integer() && bytes.get<int64_t>() > 0)
      p.capacity[space] = bytes.get<int64_t>();
    else
      return fail("layout.profile", "capacity of space '" + space + "' must be a positive integer or null");
  }
  return p;
}

} // namespace htp::axe
