#include "package/package_manifest.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "digest/sha256.hpp"
#include "json/json_reader.hpp"
#include "package/package_path.hpp"
#include "package/package_writer.hpp"

namespace fs = std::filesystem;

namespace htp {

Expected<PackageManifest> parse_package_manifest(std::string_view text, const std::string &file) {
  auto json = parse_json_text(text, file);
  if (!json) return json.error();
  try {
    JsonReader r(*json);
    r.object();
    PackageManifest m;
    auto schema = r.at("schema");
    if (schema.str() != kPackageManifestSchema)
      schema.fail("unsupported schema '" + schema.str() + "', expected '" + kPackageManifestSchema + "'");
    m.htp_version = r.at("htp_version").str();
    m.target = r.at("target").str();
    for (const auto &p : r.at("plugins").items())
      m.plugins.push_back(PluginRef{p.at("name").str(), p.at("version").str(), {}, p.at("sha256").str()});
    if (auto plan = r.maybe("plan"))
      if (auto passes = plan->maybe("passes"))
        for (const auto &p : passes->items()) m.passes.push_back(p.at("id").str());
    auto read_file = [&](const JsonReader &f, bool is_volatile) {
      PackageManifest::File out;
      out.path = f.at("path").str();
      if (auto problem = package_path_problem(out.path)) f.at("path").fail("bad package path: " + *problem);
      out.role = f.at("role").str();
      out.writer = f.at("writer").str();
      out.volatile_content = is_volatile;
      if (!is_volatile) {
        out.sha256 = f.at("sha256").str();
        auto size = f.at("size");
        if (size.integer() < 0) size.fail("negative size");
        out.size = static_cast<uint64_t>(size.integer());
      }
      m.files.push_back(std::move(out));
    };
    for (const auto &f : r.at("files").items()) read_file(f, false);
    if (auto v = r.maybe("volatile_files"))
      for (const auto &f : v->items()) read_file(f, true);
    if (auto e = r.maybe("entrypoints")) m.entrypoints = e->value();
    m.document = std::move(*json);
    return m;
  } catch (const JsonSchemaError &e) {
    return Diagnostic::error("manifest.schema", "invalid package manifest '" + file + "': " + e.what());
  }
}

Expected<PackageManifest> read_package_manifest(const fs::path &dir) {
  fs::path file = dir / kManifestFile;
  std::ifstream in(file, std::ios::binary);
  if (!in) return Diagnostic::error("package.no-manifest", "'" + dir.string() + "' is not a package: no manifest.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_package_manifest(ss.str(), file.string());
}

DiagnosticList verify_package(const fs::path &dir, const std::vector<PluginRef> *loaded) {
  DiagnosticList diags;
  auto m = read_package_manifest(dir);
  if (!m) {
    diags.report(m.error());
    return diags;
  }
  std::set<std::string> listed{kManifestFile};
  for (const auto &f : m->files) {
    listed.insert(f.path);
    fs::path p = dir / f.path;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      diags.report(Diagnostic::error("package.missing-file", "file '" + f.path + "' listed in the manifest is missing"));
      continue;
    }
    if (f.volatile_content) continue;
    auto size = fs::file_size(p, ec);
    auto digest = sha256_file(p);
    if (!digest) {
      diags.report(digest.error());
      continue;
    }
    if (*digest != f.sha256)
      diags.report(Diagnostic::error("package.hash-mismatch", "file '" + f.path + "' was modified: manifest sha256 " +
                                                                  f.sha256 + ", file sha256 " + *digest));
    else if (size != f.size)
      diags.report(Diagnostic::error("package.size-mismatch", "file '" + f.path + "' has " + std::to_string(size) +
                                                                  " bytes, the manifest says " + std::to_string(f.size)));
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), dir).generic_string();
    // Binding outputs live in build/ and logs/, which the compile manifest does not cover.
    if (rel.rfind("build/", 0) == 0 || rel.rfind("logs/", 0) == 0) continue;
    if (!listed.count(rel))
      diags.report(Diagnostic::error("package.unlisted-file", "file '" + rel + "' is not listed in the manifest"));
  }
  if (loaded) {
    for (const auto &want : m->plugins) {
      auto it = std::find_if(loaded->begin(), loaded->end(), [&](const PluginRef &p) { return p.name == want.name; });
      if (it == loaded->end())
        diags.report(Diagnostic::error("package.plugin-missing", "the package was built with plugin '" + want.name +
                                                                     "' " + want.version + ", which is not loaded"));
      else if (it->version != want.version)
        diags.report(Diagnostic::error("package.plugin-version",
                                       "the package was built with plugin '" + want.name + "' " + want.version +
                                           ", the loaded one is " + it->version));
      else if (it->sha256 != want.sha256)
        diags.report(Diagnostic::error("package.plugin-hash", "plugin '" + want.name + "' " + want.version +
                                                                  " differs from the one the package was built with: "
                                                                  "sha256 " + it->sha256 + ", recorded " + want.sha256));
    }
  }
  return diags;
}

}  // namespace htp
