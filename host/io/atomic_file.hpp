// File primitives every host writer shares: an exclusive advisory lock and write-to-a-unique-temporary-
// then-rename, so concurrent threads and processes never see (or produce) a partial file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "diag/diagnostic.hpp"

namespace htp {

/// An exclusive advisory lock (flock) on `path` (created if missing), held until destruction.
class FileLock {
public:
  explicit FileLock(const std::filesystem::path &path);
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  bool locked() const { return fd_ >= 0; }
  /// Why it is not locked (an errno value), 0 when it is.
  int error() const { return error_; }

private:
  int fd_ = -1;
  int error_ = 0;
};

/// Writes `bytes` to a temporary sibling of `path` unique to this process and call, then renames it into
/// place (readers never see a partial file); an `io.write` diagnostic naming `path` on failure.
std::optional<Diagnostic> atomic_write_file(const std::filesystem::path &path, const std::string &bytes);

}  // namespace htp
