// Reading and verifying an artifact package's manifest.json (htp.manifest.v1, docs/packages.md).
#pragma once

#include <functional>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"

namespace htp {

inline constexpr const char *kPackageManifestSchema = "htp.manifest.v1";
/// The detached Ed25519 signature of manifest.json (`htp-host sign`), next to it.
inline constexpr const char *kSignatureFile = "manifest.sig";

/// The parts of a package manifest the host checks and summarises.
struct PackageManifest {
  struct File {
    std::string path;
    std::string role;
    std::string writer;
    std::string sha256;  ///< Empty for volatile files.
    uint64_t size = 0;
    bool volatile_content = false;
  };
  std::string htp_version;
  std::string target;
  std::vector<PluginRef> plugins;  ///< name, version, sha256
  std::vector<std::string> passes; ///< Pass ids in run order (from the plan).
  std::vector<File> files;         ///< Hashed files, then volatile files.
  nlohmann::json entrypoints;
  nlohmann::json document;         ///< The whole manifest.
  std::string sha256;              ///< Of manifest.json's bytes, when read from a package (read_package_manifest).
};

/// Parses manifest text; errors name `file` and the JSON path of the problem.
Expected<PackageManifest> parse_package_manifest(std::string_view text, const std::string &file);

/// Reads `<dir>/manifest.json`.
Expected<PackageManifest> read_package_manifest(const std::filesystem::path &dir);

/// The most bytes an entrypoint tensor may have (48-bit addresses), as the dialects bound tensor types.
inline constexpr uint64_t kMaxEntrypointTensorBytes = uint64_t{1} << 48;

/// Checks the entrypoints' parameters as `run` relies on them: each a scalar or a tensor with a known dtype
/// and a shape of non-negative integers or symbol names whose byte size, counted with overflow checks,
/// stays within kMaxEntrypointTensorBytes. Errors (`package.entrypoint`) name the entry, parameter and value.
/// `where`, when given, places an entry's diagnostics (the compile: at the entry's function).
DiagnosticList check_entrypoints(const nlohmann::json &entrypoints,
                                 const std::function<Span(const std::string &entry)> &where = {});

/// Checks a package: the manifest's schema; every listed file present with its size and sha256 (naming
/// the file and both hashes when they differ); no unlisted files; no symlink, FIFO, socket or device anywhere
/// in the tree (build/ and logs/ included); the entrypoints (check_entrypoints); and, when `loaded` is given, that the
/// recorded plugin set is loadable (same names, versions and file hashes).
DiagnosticList verify_package(const std::filesystem::path &dir, const std::vector<PluginRef> *loaded);

}  // namespace htp
