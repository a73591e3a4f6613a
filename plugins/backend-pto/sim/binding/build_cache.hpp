// htp_ptosim: the content-hash build cache of the a2a3sim binding. Each job (one source, plus any extra
// sources linked into the same object) becomes one shared object at <cache>/<sha256>.so; the key covers the
// sources' text, the flags, the compiler's identity (resolved path, size, mtime: no process is started to ask
// it) and every header tree the build reads (the simulator headers, or a pto-runtime and PTO-ISA checkout),
// so an unchanged package starts no compiler. A build holds an exclusive flock on <key>.lock and renames its
// result into place.
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
  std::vector<std::string> extra_sources = {}; ///< compiled and linked into the same object
  std::vector<std::string> libs = {};          ///< link arguments after the sources (-ldl, ...)
  /// Headers every source of this kind starts with (a prelude, e.g. `#include <pto/pto-inst.hpp>`): when
  /// given, the cache precompiles them once per compiler, flags and header trees (<cache>/pch/<key>/) and
  /// the job's compile reads the precompiled form (-include). Empty: no precompiled header.
  std::string prelude = {};
};

struct BuildStats {
  int hits = 0;
  int misses = 0;
  int compiler_invocations = 0;  ///< compiles of jobs (precompiled headers not counted)
  int pch_builds = 0;            ///< precompiled preludes built (once per cache, compiler, flags and headers)
  double seconds = 0;
};

class BuildCache {
public:
  /// `cxx`: a compiler name or path (searched on PATH); `include_dir`: the simulator headers.
  BuildCache(std::string cache_dir, const std::string &cxx, std::string include_dir);
  /// Several include directories (passed as -I in order); `hashed_trees` are the directories whose every
  /// file goes into the key (they cover the include directories).
  BuildCache(std::string cache_dir, const std::string &cxx, std::vector<std::string> include_dirs,
             const std::vector<std::string> &hashed_trees);

  /// A directory whose pch/<key>/ holds precompiled preludes built ahead (the build tree's, next to the
  /// simulator headers): looked up before the cache's own, never written.
  void use_prebuilt(std::string dir) { prebuilt_ = std::move(dir); }
  /// The precompiled prelude of `job` in this cache, built when missing: the header to -include, or empty
  /// when it cannot be built (the build tree's tool: htp_ptosim_pch).
  std::string precompile(const CompileJob &job) {
    BuildStats stats;
    return prelude(job, stats, false);
  }

  /// Builds (or finds) every job, at most `parallel` compilers at once; throws BuildError.
  void build(std::vector<CompileJob> &jobs, BuildStats &stats, int parallel = 2);

  const std::string &compiler() const { return cxx_; }
  /// The cache key of a job (exposed for tests).
  std::string key(const CompileJob &job) const;

private:
  void build_one(CompileJob &job, BuildStats &stats);
  void compile(const CompileJob &job, const std::string &tmp_out, const std::string &log_path) const;
  /// The precompiled prelude of `job` (building it on first use): the header to -include, or empty when it
  /// could not be built (the job then compiles without one; the reason is in <cache>/pch/<key>.log).
  std::string prelude(const CompileJob &job, BuildStats &stats, bool prebuilt = true);
  void run_compiler(std::vector<std::string> argv_s, const std::string &log_path, const std::string &what) const;

  std::string dir_;
  std::string cxx_;
  std::string cxx_identity_;
  std::vector<std::string> include_dirs_;
  std::string header_hash_;
  std::string prebuilt_;
};

/// Absolute path of `program` (itself if it contains '/'), searching PATH; empty when not found.
std::string find_program(const std::string &program);
/// SHA-256 over every file under `dir` (relative paths and contents, sorted); cached per process.
std::string tree_hash(const std::string &dir);
/// The major version a GCC-compatible compiler reports with -dumpversion (0 if it cannot be run); cached.
int compiler_major_version(const std::string &cxx);

} // namespace htp_ptosim
