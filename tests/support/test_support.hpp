// Helpers for ABI tests: fixture paths, scratch directories, running htp-host.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace htp::test {

/// fixtures/<name>/htp-<name>.so in the build tree.
std::filesystem::path fixture(const std::string &name);

/// A fresh private (0700) directory, removed when the object dies.
class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::filesystem::path &path() const { return path_; }
  /// Copies a fixture library and its manifest into this directory; returns the copied library.
  std::filesystem::path copy_fixture(const std::string &name) const;
  /// Writes a file with the given content.
  std::filesystem::path write(const std::string &name, const std::string &content) const;

private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs htp-host with arguments (no shell), capturing stdout and stderr.
CommandResult run_host(const std::vector<std::string> &args);

/// The bytes of a file ("" when it cannot be read).
std::string read(const std::filesystem::path &path);

/// `text` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, const std::string &from, const std::string &to);

}  // namespace htp::test
