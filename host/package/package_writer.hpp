// PackageWriter: the only way files enter an artifact package. The package is assembled in a temporary
// sibling directory and renamed into place on commit, so a failed compile leaves no partial package.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

inline constexpr const char *kManifestFile = "manifest.json";
inline constexpr const char *kHostWriter = "htp";  ///< Writer name of files the host itself writes.

struct PackageOptions {
  bool force = false;        ///< Replace an existing output directory (atomically).
  bool keep_failed = false;  ///< On failure, keep the work as `<out>.failed/` with the diagnostics.
};

/// A file recorded in the package.
struct PackageFile {
  std::string role;    ///< What it is, e.g. "kernel", "orchestration", "ir-dump", "trace".
  std::string writer;  ///< The component that wrote it (or "htp").
  std::string sha256;
  uint64_t size = 0;
  /// Carries measured data (timings) that differs between otherwise identical compiles: listed in the
  /// manifest's `volatile_files` (path and role, no digest) instead of `files`.
  bool volatile_content = false;
};

class PackageWriter {
public:
  /// Starts a package for `out` (absolute or relative to the working directory). Refuses an existing
  /// `out` unless options.force.
  static Expected<std::unique_ptr<PackageWriter>> begin(const std::filesystem::path &out,
                                                        const PackageOptions &options = {});
  /// Abandons the package unless it was committed.
  ~PackageWriter();
  PackageWriter(const PackageWriter &) = delete;
  PackageWriter &operator=(const PackageWriter &) = delete;

  /// Writes `bytes` at `path` for `writer`; an error for a bad path, a reserved name, or a path another
  /// component already wrote. The same writer may overwrite its own file.
  std::optional<Diagnostic> write(std::string_view path, std::string_view bytes, std::string_view role,
                                  std::string_view writer, bool volatile_content = false);

  /// Files written so far, by path.
  const std::map<std::string, PackageFile> &files() const { return files_; }
  /// The final location and the temporary one being filled.
  const std::filesystem::path &out() const { return out_; }
  const std::filesystem::path &staging() const { return staging_; }

  /// Writes manifest.json (`manifest` plus the `files` and `volatile_files` tables) and moves the package into place;
  /// replaces an existing directory with one atomic exchange when forced.
  std::optional<Diagnostic> commit(nlohmann::ordered_json manifest);

  /// Gives up: removes the staging directory, or keeps it as `<out>.failed/` (with `diagnostics.txt`)
  /// when keep_failed was asked for. Returns the kept path, if any.
  std::optional<std::filesystem::path> abandon(const DiagnosticList &diagnostics);

private:
  PackageWriter() = default;

  std::filesystem::path out_;
  std::filesystem::path staging_;
  PackageOptions options_;
  std::map<std::string, PackageFile> files_;
  bool finished_ = false;
};

}  // namespace htp
