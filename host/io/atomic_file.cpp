#include "io/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

namespace htp {

namespace fs = std::filesystem;

FileLock::FileLock(const fs::path &path) {
  // (a lock file is never followed through a symlink, which could create a file elsewhere)
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    error_ = errno;
    return;
  }
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;  // a signal interrupted the wait
    error_ = errno;
    ::close(fd_);
    fd_ = -1;
    return;
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
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Diagnostic::error("io.write", "cannot write '" + path.string() + "'");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // (before the clean-up reuses ec: it said "Success")
    fs::remove(tmp, ec);
    return Diagnostic::error("io.write", "cannot write '" + path.string() + "': " + why);
  }
  return std::nullopt;
}

}  // namespace htp
