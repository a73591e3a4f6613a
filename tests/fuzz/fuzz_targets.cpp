// libFuzzer entry points for the readers of untrusted input: each must turn any bytes into a value or a
// diagnostic, never a crash, a hang or an escaped exception. FUZZ_TARGET selects the reader.
#include <htp/capability.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ast/json_reader.hpp"
#include "loader/plugin_manifest.hpp"
#include "package/package_manifest.hpp"
#include "resolver/lockfile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
#if FUZZ_TARGET == 1
  (void)htp::ast::load_json(text, htp::ast::JsonLimits{1000, 100000}, "fuzz.json");
#elif FUZZ_TARGET == 2
  (void)htp::parse_capability(text, htp::CapabilityMode::Requirement);
  if (auto c = htp::parse_capability(text, htp::CapabilityMode::Fact)) {
    // The canonical form re-parses to the same capability.
    auto again = htp::parse_capability(htp::to_string(*c), htp::CapabilityMode::Fact);
    if (!again || htp::to_string(*again) != htp::to_string(*c)) __builtin_trap();
  }
#elif FUZZ_TARGET == 3
  (void)htp::parse_plugin_manifest(text, "fuzz.plugin.json");
#elif FUZZ_TARGET == 4
  (void)htp::parse_package_manifest(text, "manifest.json");
#elif FUZZ_TARGET == 5
  (void)htp::parse_lockfile(text, "htp.lock.json");
#else
#error "FUZZ_TARGET must be 1..5"
#endif
  return 0;
}
