// The per-user cache directory and the two primitives every writer of it uses: an exclusive file lock
// and write-to-temporary-then-rename, so concurrent processes never see a partial file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "diag/diagnostic.hpp"

namespace htp {

/// $HTP_CACHE_DIR, else $XDG_CACHE_HOME/htp, else $HOME/.cache/htp, else <tmp>/htp-cache.
std::filesystem::path default_cache_dir();

/// An exclusive advisory lock (flock) on `path` (created if missing), held until destruction.
class FileLock {
public:
  explicit FileLock(const std::filesystem::path &path);
  ~FileLock();
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  bool locked() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

/// Writes `bytes` to a unique temporary sibling of `path` and renames it into place (readers never see
/// a partial file); an `io.write` diagnostic naming `path` on failure.
std::optional<Diagnostic> atomic_write_file(const std::filesystem::path &path, const std::string &bytes);

}  // namespace htp
