// The plugin manifest `htp-<name>.plugin.json` that sits next to each plugin library (htp.plugin.v1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"

namespace htp {

inline constexpr const char *kPluginManifestSchema = "htp.plugin.v1";

/// What a plugin declares about itself before it is loaded.
struct PluginManifest {
  std::string name;
  std::string version;
  std::string description;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::string library;               ///< File name of the shared object, e.g. "htp-dialect-wsp.so".
  std::vector<Component> components; ///< Declared components (plugin identity left empty).
};

/// The manifest path for a plugin library: `dir/htp-x.so` -> `dir/htp-x.plugin.json`.
std::filesystem::path manifest_path_for(const std::filesystem::path &library);

/// Reads and validates a manifest; errors name the file and the JSON path.
Expected<PluginManifest> read_plugin_manifest(const std::filesystem::path &file);

/// Parses manifest text (for tests and fuzzing); `file` is used in messages.
Expected<PluginManifest> parse_plugin_manifest(std::string_view text, const std::string &file);

/// The manifest as JSON, deterministic.
nlohmann::json plugin_manifest_to_json(const PluginManifest &m);

}  // namespace htp
