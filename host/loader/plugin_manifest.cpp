#include "loader/plugin_manifest.hpp"

#include <fstream>
#include <sstream>

#include "json/json_reader.hpp"
#include "registry/component_json.hpp"

namespace htp {

std::filesystem::path manifest_path_for(const std::filesystem::path &library) {
  auto p = library;
  p.replace_extension(".plugin.json");
  return p;
}

Expected<PluginManifest> parse_plugin_manifest(std::string_view text, const std::string &file) {
  auto json = parse_json_text(text, file);
  if (!json) {
    Diagnostic d = json.error();
    d.code = "manifest.syntax";
    d.message = "plugin manifest " + d.message;
    return d;
  }
  try {
    JsonReader r(*json);
    r.object();
    PluginManifest m;
    auto schema = r.at("schema");
    if (schema.str() != kPluginManifestSchema)
      schema.fail("unsupported schema '" + schema.str() + "', expected '" + kPluginManifestSchema + "'");
    m.name = r.at("name").str();
    m.version = r.at("version").str();
    if (auto d = r.maybe("description")) m.description = d->str();
    auto abi = r.at("abi");
    auto major = abi.at("major"), minor = abi.at("minor");
    if (major.integer() < 0 || major.integer() > UINT32_MAX) major.fail("ABI major out of range");
    if (minor.integer() < 0 || minor.integer() > UINT32_MAX) minor.fail("ABI minor out of range");
    m.abi_major = static_cast<uint32_t>(major.integer());
    m.abi_minor = static_cast<uint32_t>(minor.integer());
    m.library = r.at("library").str();
    for (const auto &c : r.at("components").items()) m.components.push_back(component_from_json(c));
    return m;
  } catch (const JsonSchemaError &e) {
    return Diagnostic::error("manifest.schema", "invalid plugin manifest '" + file + "': " + e.what());
  }
}

Expected<PluginManifest> read_plugin_manifest(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Diagnostic::error("manifest.missing", "cannot read plugin manifest '" + file.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_plugin_manifest(ss.str(), file.string());
}

nlohmann::json plugin_manifest_to_json(const PluginManifest &m) {
  nlohmann::json j = nlohmann::json::object();
  j["schema"] = kPluginManifestSchema;
  j["name"] = m.name;
  j["version"] = m.version;
  if (!m.description.empty()) j["description"] = m.description;
  j["abi"] = {{"major", m.abi_major}, {"minor", m.abi_minor}};
  j["library"] = m.library;
  j["components"] = nlohmann::json::array();
  for (const auto &c : m.components) j["components"].push_back(component_to_json(c));
  return j;
}

}  // namespace htp
