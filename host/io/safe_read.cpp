#include "io/safe_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace htp {

namespace {

std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symlink";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

Diagnostic read_error(const std::filesystem::path &path, const std::string &why) {
  return Diagnostic::error("io.read", "cannot read '" + path.string() + "': " + why);
}

/// An open descriptor of the regular file at `path`, or a diagnostic; `size` gets its size.
Expected<int> open_regular(const std::filesystem::path &path, uint64_t &size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) return read_error(path, "it is a symlink; only regular files are read");
    return read_error(path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = kind_of(st.st_mode);
    ::close(fd);
    return read_error(path, "it is " + kind + "; only regular files are read");
  }
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

std::string file_kind(const std::filesystem::path &path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "nothing";
  return kind_of(st.st_mode);
}

Expected<std::string> read_regular_file(const std::filesystem::path &path, uint64_t max_bytes) {
  uint64_t size = 0;
  auto fd = open_regular(path, size);
  if (!fd) return fd.error();
  if (size > max_bytes) {
    ::close(*fd);
    return read_error(path, "it has " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                                " this reader accepts");
  }
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(*fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(*fd);
  if (got != out.size()) return read_error(path, "it changed size while being read");
  return out;
}

std::optional<Diagnostic> stream_regular_file(const std::filesystem::path &path,
                                              const std::function<void(const char *, size_t)> &sink) {
  uint64_t size = 0;
  auto fd = open_regular(path, size);
  if (!fd) return fd.error();
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = ::read(*fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(*fd);
      return read_error(path, why);
    }
    if (n == 0) break;
    sink(buf.data(), static_cast<size_t>(n));
  }
  ::close(*fd);
  return std::nullopt;
}

}  // namespace htp
