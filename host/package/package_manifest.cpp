#include "package/package_manifest.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "digest/sha256.hpp"
#include "io/safe_read.hpp"
#include "json/json_reader.hpp"
#include "package/package_path.hpp"
#include "package/package_writer.hpp"
#include "run/npy.hpp"

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
  const std::string kind = file_kind(file);
  if (kind == "nothing")
    return Diagnostic::error("package.no-manifest", "'" + dir.string() + "' is not a package: no manifest.json");
  if (kind != "a regular file")
    return Diagnostic::error("package.special-file", "'" + file.string() + "' is " + kind +
                                                         ", not a regular file; refusing to read it");
  auto text = read_regular_file(file, kMaxDocumentBytes);
  if (!text) return text.error();
  auto m = parse_package_manifest(*text, file.string());
  if (m) m->sha256 = sha256_hex(*text);
  return m;
}

DiagnosticList check_entrypoints(const nlohmann::json &entrypoints,
                                 const std::function<Span(const std::string &entry)> &place) {
  DiagnosticList diags;
  std::string current;  // the entry being checked, for `place`
  auto bad = [&](const std::string &where, const std::string &what) {
    Diagnostic d = Diagnostic::error("package.entrypoint", where + ": " + what);
    if (place && !current.empty()) d.span = place(current);
    diags.report(std::move(d));
  };
  if (!entrypoints.is_array()) {
    if (!entrypoints.is_null()) bad("entrypoints", "must be an array, got " + std::string(json_type_name(entrypoints)));
    return diags;
  }
  std::set<std::string> names;
  for (const auto &e : entrypoints) {
    if (!e.is_object()) {
      bad("entrypoints", "an entry must be an object, got " + std::string(json_type_name(e)));
      continue;
    }
    const std::string entry = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "?";
    current = entry == "?" ? "" : entry;
    if (entry != "?" && !names.insert(entry).second)
      bad("entry '" + entry + "'", "is declared twice; an entry point is run by its name");
    const nlohmann::json params = e.value("params", nlohmann::json::array());
    if (!params.is_array()) {
      bad("entry '" + entry + "'", "params must be an array");
      continue;
    }
    for (const auto &p : params) {
      const std::string name = p.is_object() && p.contains("name") && p["name"].is_string() ? p["name"].get<std::string>() : "?";
      const std::string where = "entry '" + entry + "' parameter '" + name + "'";
      if (!p.is_object() || name == "?") {
        bad("entry '" + entry + "'", "a parameter without a name: " + p.dump());
        continue;
      }
      const nlohmann::json dtype = p.value("dtype", nlohmann::json());
      if (!dtype.is_string() || dtype_size(dtype.get<std::string>()) == 0) {
        bad(where, "unknown dtype " + dtype.dump());
        continue;
      }
      if (p.value("kind", "tensor") == "scalar") continue;
      const nlohmann::json shape = p.value("shape", nlohmann::json());
      if (!shape.is_array()) {
        bad(where, "shape must be an array, got " + shape.dump());
        continue;
      }
      uint64_t bytes = dtype_size(dtype.get<std::string>());
      bool ok = true;
      for (const auto &d : shape) {
        if (d.is_string() && !d.get<std::string>().empty()) continue;  // bound by the inputs at run time
        if (!d.is_number_integer() || d.get<int64_t>() < 0) {
          bad(where, "dimension " + d.dump() + " of shape " + shape.dump() + " is not a non-negative integer or a name");
          ok = false;
          break;
        }
        if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d.get<int64_t>()), &bytes) ||
            bytes > kMaxEntrypointTensorBytes) {
          bad(where, "shape " + shape.dump() + " of " + dtype.get<std::string>() + " is larger than " +
                         std::to_string(kMaxEntrypointTensorBytes) + " bytes");
          ok = false;
          break;
        }
      }
      (void)ok;
    }
  }
  return diags;
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
    const std::string kind = file_kind(p);
    if (kind == "nothing") {
      diags.report(Diagnostic::error("package.missing-file", "file '" + f.path + "' listed in the manifest is missing"));
      continue;
    }
    if (kind != "a regular file") {
      diags.report(Diagnostic::error("package.special-file", "'" + f.path + "' is " + kind +
                                                                  "; a package holds regular files and directories only"));
      continue;
    }
    if (f.volatile_content) continue;
    std::error_code size_ec;
    auto size = fs::file_size(p, size_ec);
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
  // A file that is not a regular file or a directory; false for those.
  auto special = [&](const std::string &rel, const std::string &kind) {
    if (kind == "a regular file" || kind == "a directory") return false;
    diags.report(Diagnostic::error("package.special-file", "'" + rel + "' is " + kind +
                                                                "; a package holds regular files and directories only"));
    return true;
  };
  std::error_code ec;
  std::vector<fs::path> outputs;  // build/ and logs/: binding outputs, which the compile manifest does not cover
  // The walk never follows a symlink (a symlinked directory is reported, not entered).
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string rel = it->path().lexically_relative(dir).generic_string();  // fs::relative would follow links
    const std::string kind = file_kind(it->path());
    if (kind == "a directory" && (rel == "build" || rel == "logs")) {
      outputs.push_back(it->path());
      it.disable_recursion_pending();
      continue;
    }
    if (kind == "a directory" || special(rel, kind)) continue;
    if (!listed.count(rel) && rel != kSignatureFile)
      diags.report(Diagnostic::error("package.unlisted-file", "file '" + rel + "' is not listed in the manifest"));
  }
  if (ec) diags.report(Diagnostic::error("package.walk", "cannot list '" + dir.string() + "': " + ec.message()));
  // A run of the package may be replacing its outputs while they are walked: what vanishes is passed over.
  for (const fs::path &out : outputs) {
    std::error_code oec;
    for (fs::recursive_directory_iterator it(out, oec), end; !oec && it != end; it.increment(oec)) {
      const std::string kind = file_kind(it->path());
      if (kind != "nothing") special(it->path().lexically_relative(dir).generic_string(), kind);
    }
  }
  // A signature records the sha256 of the manifest it signed: checkable without the key, it catches a manifest
  // edited after signing (its digests rewritten to match edited files), which the checks above cannot.
  if (file_kind(dir / kSignatureFile) == "a regular file") {
    auto sig = read_regular_file(dir / kSignatureFile, 64 * 1024);
    nlohmann::json doc = sig ? nlohmann::json::parse(*sig, nullptr, false) : nlohmann::json();
    const std::string signed_sha = doc.is_object() ? doc.value("manifest_sha256", std::string()) : std::string();
    if (!signed_sha.empty() && signed_sha != m->sha256)
      diags.report(Diagnostic::error("package.signature-stale",
                                     std::string(kSignatureFile) + " signed a manifest of sha256 " + signed_sha +
                                         ", but manifest.json is now " + m->sha256 +
                                         ": the package was changed after it was signed (verify --key KEY checks "
                                         "the signature itself)"));
  }
  diags.append(check_entrypoints(m->entrypoints));
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
