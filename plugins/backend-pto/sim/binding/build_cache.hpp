// htp_ptosim: the content-hash build cache of the a2a3sim binding. Each source becomes one shared object at
// <cache>/<sha256>.so; the key covers the source text, the flags, the compiler's identity (resolved path,
// size, mtime: no process is started to ask it) and the simulator headers, so an unchanged package starts no
// compiler. A build holds an exclusive flock on <key>.lock and renames its result into place.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace htp_ptosim {

/// A failed build; the message names the source and carries the compiler's output.
struct BuildError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CompileJob {
  std::string source;             ///< absolute path of the .cpp
  std::string label;              ///< path shown in messages (package-relative)
  std::vector<std::string> flags; ///< besides -I<headers>, -o and the source
  std::string output;             ///< filled in: the cached shared object
  bool hit = false;               ///< filled in: it came from the cache
};

struct BuildStats {
  int hits = 0;
  int misses = 0;
  int compiler_invocations = 0;
  double seconds = 0;
};

class BuildCache {
public:
  /// `cxx`: a compiler name or path (searched on PATH); `include_dir`: the simulator headers.
  BuildCache(std::string cache_dir, const std::string &cxx, std::string include_dir);

  /// Builds (or finds) every job, at most `parallel` compilers at once; throws BuildError.
  void build(std::vector<CompileJob> &jobs, BuildStats &stats, int parallel = 2);

  const std::string &compiler() const { return cxx_; }
  /// The cache key of a job (exposed for tests).
  std::string key(const CompileJob &job) const;

private:
  void build_one(CompileJob &job, BuildStats &stats);
  void compile(const CompileJob &job, const std::string &tmp_out, const std::string &log_path) const;

  std::string dir_;
  std::string cxx_;
  std::string cxx_identity_;
  std::string include_dir_;
  std::string header_hash_;
};

/// Absolute path of `program` (itself if it contains '/'), searching PATH; empty when not found.
std::string find_program(const std::string &program);
/// SHA-256 over every file under `dir` (relative paths and contents, sorted); cached per process.
std::string tree_hash(const std::string &dir);

} // namespace htp_ptosim
