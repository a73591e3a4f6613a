#include "cache/cache_dir.hpp"

#include <atomic>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

namespace htp {

namespace fs = std::filesystem;

fs::path default_cache_dir() {
  if (const char *d = std::getenv("HTP_CACHE_DIR"); d && *d) return d;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "htp";
  if (const char *h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "htp";
  return fs::temp_directory_path() / "htp-cache";
}

FileLock::FileLock(const fs::path &path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

std::optional<Diagnostic> atomic_write_file(const fs::path &path, const std::string &bytes) {
  static std::atomic<unsigned> counter{0};
  fs::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << bytes;
    if (!f) return Diagnostic::error("io.write", "cannot write '" + path.string() + "'");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Diagnostic::error("io.write", "cannot write '" + path.string() + "': " + ec.message());
  }
  return std::nullopt;
}

}  // namespace htp
