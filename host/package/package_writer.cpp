#include "package/package_writer.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "digest/sha256.hpp"
#include "package/package_path.hpp"

namespace fs = std::filesystem;

namespace htp {

namespace {

Diagnostic io_error(const std::string &what, const fs::path &p, const std::string &why) {
  return Diagnostic::error("package.io", what + " '" + p.string() + "': " + why);
}

std::optional<Diagnostic> write_bytes(const fs::path &file, std::string_view bytes) {
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  if (!f) return io_error("cannot create", file, std::strerror(errno));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.flush();
  if (!f) return io_error("cannot write", file, std::strerror(errno));
  return std::nullopt;
}

/// Atomically swaps two directory entries (Linux renameat2 RENAME_EXCHANGE).
bool exchange(const fs::path &a, const fs::path &b) {
  return ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + std::to_string(rd() % 1000000);
}

bool is_reserved(std::string_view path) { return path == kManifestFile || path == "htp.lock.json"; }

}  // namespace

Expected<std::unique_ptr<PackageWriter>> PackageWriter::begin(const fs::path &out, const PackageOptions &options) {
  std::unique_ptr<PackageWriter> w(new PackageWriter());
  std::error_code ec;
  w->out_ = fs::absolute(out, ec).lexically_normal();
  if (ec) return io_error("cannot resolve", out, ec.message());
  if (w->out_.filename().empty()) w->out_ = w->out_.parent_path();
  w->options_ = options;
  // (a file is not replaced, --force or not: only a directory is a package to replace)
  if (fs::exists(w->out_, ec) && !fs::is_directory(w->out_, ec))
    return Diagnostic::error("package.exists", "output '" + w->out_.string() +
                                                   "' exists and is not a directory; choose another output path");
  if (fs::exists(w->out_, ec) && !options.force)
    return Diagnostic::error("package.exists", "output directory '" + w->out_.string() +
                                                   "' already exists; pass --force (force=True in Python) to replace it");
  fs::create_directories(w->out_.parent_path(), ec);
  if (ec) return io_error("cannot create", w->out_.parent_path(), ec.message());
  // Staging directories of earlier compiles of this output whose process is gone (it crashed, or was killed)
  // are removed: "<pid>-..." names the process that made each.
  const std::string prefix = "." + w->out_.filename().string() + ".htp-tmp-";
  for (const auto &e : fs::directory_iterator(w->out_.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    const std::string rest = name.substr(prefix.size());
    char *end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid > 0 && end && *end == '-' && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      fs::remove_all(e.path(), ec);
  }
  ec.clear();
  w->staging_ = w->out_.parent_path() / (prefix + unique_suffix());
  if (!fs::create_directory(w->staging_, ec) || ec)
    return io_error("cannot create staging directory", w->staging_, ec ? ec.message() : "it exists");
  return w;
}

PackageWriter::~PackageWriter() {
  if (!finished_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

std::optional<Diagnostic> PackageWriter::write(std::string_view path, std::string_view bytes, std::string_view role,
                                               std::string_view writer, bool volatile_content) {
  if (finished_) return Diagnostic::error("package.closed", "the package is already finished");
  std::string p(path);
  if (auto problem = package_path_problem(path))
    return Diagnostic::error("package.path", "component '" + std::string(writer) + "' tried to write '" + p +
                                                 "' outside the rules of the package: " + *problem);
  if (is_reserved(path) && writer != kHostWriter)
    return Diagnostic::error("package.reserved", "component '" + std::string(writer) + "' tried to write '" + p +
                                                     "', which only the host writes");
  // logs/ and build/ belong to runs (a run replaces logs/run/ and caches builds under build/), outside the
  // manifest: a file listed there would stop verifying after the first run.
  if (p.rfind("logs/", 0) == 0 || p.rfind("build/", 0) == 0)
    return Diagnostic::error("package.reserved", "component '" + std::string(writer) + "' tried to write '" + p +
                                                     "': logs/ and build/ belong to runs, outside the manifest; write "
                                                     "package files elsewhere (codegen/, kernels/, ...)");
  if (auto it = files_.find(p); it != files_.end() && it->second.writer != writer)
    return Diagnostic::error("package.overwrite", "component '" + std::string(writer) + "' tried to overwrite '" + p +
                                                      "', written by '" + it->second.writer + "'");
  fs::path file = staging_ / p;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) return io_error("cannot create", file.parent_path(), ec.message());
  // A component could have created a directory where a file goes (or the reverse); both are errors.
  if (fs::is_directory(file, ec))
    return Diagnostic::error("package.path", "component '" + std::string(writer) + "' tried to write '" + p +
                                                 "', which is a directory of the package");
  if (auto e = write_bytes(file, bytes)) return e;
  files_[p] = PackageFile{std::string(role), std::string(writer), sha256_hex(bytes), bytes.size(), volatile_content};
  return std::nullopt;
}

std::optional<Diagnostic> PackageWriter::commit(nlohmann::ordered_json manifest) {
  if (finished_) return Diagnostic::error("package.closed", "the package is already finished");
  nlohmann::ordered_json files = nlohmann::ordered_json::array(), volatile_files = nlohmann::ordered_json::array();
  for (const auto &[path, f] : files_) {  // std::map: sorted by path, so the manifest is deterministic
    if (f.volatile_content)
      volatile_files.push_back({{"path", path}, {"role", f.role}, {"writer", f.writer}});
    else
      files.push_back({{"path", path}, {"role", f.role}, {"writer", f.writer}, {"sha256", f.sha256}, {"size", f.size}});
  }
  manifest["files"] = std::move(files);
  manifest["volatile_files"] = std::move(volatile_files);
  if (auto e = write_bytes(staging_ / kManifestFile, manifest.dump(2) + "\n")) return e;

  std::error_code ec;
  if (fs::exists(out_, ec)) {
    if (!options_.force)
      return Diagnostic::error("package.exists", "output directory '" + out_.string() + "' appeared meanwhile");
    if (!exchange(staging_, out_)) return io_error("cannot replace", out_, std::strerror(errno));
    fs::remove_all(staging_, ec);  // now holds the previous package
  } else {
    fs::rename(staging_, out_, ec);
    if (ec) return io_error("cannot move the package to", out_, ec.message());
  }
  finished_ = true;
  return std::nullopt;
}

std::optional<fs::path> PackageWriter::abandon(const DiagnosticList &diagnostics) {
  if (finished_) return std::nullopt;
  finished_ = true;
  std::error_code ec;
  if (!options_.keep_failed) {
    fs::remove_all(staging_, ec);
    return std::nullopt;
  }
  fs::path failed = out_;
  failed += ".failed";
  (void)write_bytes(staging_ / "diagnostics.txt", diagnostics.render());
  fs::remove_all(failed, ec);
  fs::rename(staging_, failed, ec);
  if (ec) {
    fs::remove_all(staging_, ec);
    return std::nullopt;
  }
  return failed;
}

}  // namespace htp
