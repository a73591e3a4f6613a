#include "build_cache.hpp"

#include <htp/progress.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "sha256.hpp"

extern char **environ;

namespace htp_ptosim {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw BuildError("cannot read " + p.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Holds an exclusive flock for its lifetime.
class FileLock {
public:
  explicit FileLock(const std::string &path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw BuildError("cannot open the cache lock " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;

private:
  int fd_;
};

} // namespace

std::string find_program(const std::string &program) {
  if (program.empty()) return {};
  if (program.find('/') != std::string::npos)
    return fs::exists(program) ? fs::absolute(program).string() : "";
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    const fs::path candidate = fs::path(d.empty() ? "." : d) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

std::string tree_hash(const std::string &dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = memo.find(dir); it != memo.end()) return it->second;
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir));
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto &f : files)
    h.field(f.generic_string()).field(read_file(fs::path(dir) / f));
  return memo[dir] = h.hex();
}

int compiler_major_version(const std::string &cxx) {
  static std::mutex mu;
  static std::map<std::string, int> memo;
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = memo.find(cxx); it != memo.end()) return it->second;
  int major = 0;
  const std::string path = find_program(cxx);
  if (!path.empty() && path.find('\'') == std::string::npos) {
    if (FILE *p = ::popen(("'" + path + "' -dumpversion 2>/dev/null").c_str(), "r")) {
      char buf[64] = {};
      if (std::fgets(buf, sizeof buf, p)) major = std::atoi(buf);
      ::pclose(p);
    }
  }
  return memo[cxx] = major;
}

BuildCache::BuildCache(std::string cache_dir, const std::string &cxx, std::string include_dir)
    : BuildCache(std::move(cache_dir), cxx, std::vector<std::string>{include_dir},
                 std::vector<std::string>{include_dir}) {}

BuildCache::BuildCache(std::string cache_dir, const std::string &cxx, std::vector<std::string> include_dirs,
                       const std::vector<std::string> &hashed_trees)
    : dir_(std::move(cache_dir)), include_dirs_(std::move(include_dirs)) {
  cxx_ = find_program(cxx);
  if (cxx_.empty())
    throw BuildError("the C++ compiler '" + cxx + "' was not found on PATH (set CXX or --option cxx=...)");
  std::error_code ec;
  const fs::path real = fs::canonical(cxx_, ec);
  struct stat st {};
  ::stat(real.c_str(), &st);
  cxx_identity_ = real.string() + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
                  "." + std::to_string(st.st_mtim.tv_nsec);
  if (hashed_trees.size() == 1) {
    header_hash_ = tree_hash(hashed_trees[0]);
  } else {
    Sha256 trees;
    for (const auto &t : hashed_trees)
      trees.field(t).field(tree_hash(t));
    header_hash_ = trees.hex();
  }
  fs::create_directories(dir_, ec);
  if (ec) throw BuildError("cannot create the build cache " + dir_ + ": " + ec.message());
}

std::string BuildCache::key(const CompileJob &job) const {
  Sha256 h;
  h.field("htp-ptosim-cache-v1").field(read_file(job.source)).field(cxx_identity_).field(header_hash_);
  for (const auto &f : job.flags)
    h.field(f);
  for (const auto &s : job.extra_sources)
    h.field(s).field(read_file(s));
  for (const auto &l : job.libs)
    h.field(l);
  if (include_dirs_.size() > 1)
    for (const auto &d : include_dirs_)
      h.field(d);
  return h.hex();
}

void BuildCache::build(std::vector<CompileJob> &jobs, BuildStats &stats, int parallel) {
  htp::Progress progress("building kernels", jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string first_error;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      BuildStats local;
      try {
        build_one(jobs[i], local);
      } catch (const std::exception &e) {
        std::lock_guard<std::mutex> lk(mu);
        if (first_error.empty()) first_error = e.what();
      }
      progress.advance();
      std::lock_guard<std::mutex> lk(mu);
      stats.hits += local.hits;
      stats.misses += local.misses;
      stats.compiler_invocations += local.compiler_invocations;
      stats.pch_builds += local.pch_builds;
    }
  };
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min<int>(parallel, static_cast<int>(jobs.size())));
  for (int i = 1; i < n; ++i)
    threads.emplace_back(worker);
  worker();
  for (auto &t : threads)
    t.join();
  if (!first_error.empty()) throw BuildError(first_error);
}

void BuildCache::build_one(CompileJob &job, BuildStats &stats) {
  const std::string k = key(job);
  const fs::path so = fs::path(dir_) / (k + ".so");
  job.output = so.string();
  if (fs::exists(so)) {
    job.hit = true;
    ++stats.hits;
    return;
  }
  FileLock lock((fs::path(dir_) / (k + ".lock")).string());
  if (fs::exists(so)) { // another process built it while we waited
    job.hit = true;
    ++stats.hits;
    return;
  }
  const std::string tmp = so.string() + ".tmp." + std::to_string(::getpid());
  const std::string log = (fs::path(dir_) / (k + ".log")).string();
  ++stats.misses;
  ++stats.compiler_invocations;
  CompileJob with = job;
  if (!job.prelude.empty())
    if (const std::string header = prelude(job, stats); !header.empty())
      with.flags.insert(with.flags.end(), {"-include", header});
  compile(with, tmp, log);
  fs::rename(tmp, so);
}

std::string BuildCache::prelude(const CompileJob &job, BuildStats &stats, bool prebuilt) {
  std::vector<std::string> flags;  // the job's, without the link-only ones: GCC takes a .gch built with them
  for (const auto &f : job.flags)
    if (f != "-shared") flags.push_back(f);
  Sha256 h;
  h.field("htp-ptosim-pch-v1").field(job.prelude).field(cxx_identity_).field(header_hash_);
  for (const auto &f : flags) h.field(f);
  for (const auto &d : include_dirs_) h.field(d);
  const std::string k = h.hex();
  if (prebuilt && !prebuilt_.empty())
    if (const fs::path p = fs::path(prebuilt_) / "pch" / k / "prelude.hpp"; fs::exists(p.string() + ".gch"))
      return p.string();
  const fs::path dir = fs::path(dir_) / "pch" / k, header = dir / "prelude.hpp", gch = dir / "prelude.hpp.gch";
  if (fs::exists(gch)) return header.string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {};
  FileLock lock((fs::path(dir_) / "pch" / (k + ".lock")).string());
  if (fs::exists(gch)) return header.string();
  const std::string log = (fs::path(dir_) / "pch" / (k + ".log")).string();
  std::ofstream(header, std::ios::binary) << job.prelude;
  const std::string tmp = gch.string() + ".tmp." + std::to_string(::getpid());
  std::vector<std::string> argv_s = {cxx_};
  argv_s.insert(argv_s.end(), flags.begin(), flags.end());
  for (const auto &d : include_dirs_) argv_s.push_back("-I" + d);
  argv_s.insert(argv_s.end(), {"-x", "c++-header", "-o", tmp, header.string()});
  try {
    run_compiler(argv_s, log, "precompiling the simulator headers");
  } catch (const BuildError &) {
    fs::remove(tmp, ec);
    return {};  // compile without it: slower, the same object
  }
  fs::rename(tmp, gch, ec);
  if (ec) return {};
  ++stats.pch_builds;
  return header.string();
}

void BuildCache::compile(const CompileJob &job, const std::string &tmp_out,
                         const std::string &log_path) const {
  std::vector<std::string> argv_s = {cxx_};
  argv_s.insert(argv_s.end(), job.flags.begin(), job.flags.end());
  for (const auto &d : include_dirs_)
    argv_s.push_back("-I" + d);
  argv_s.insert(argv_s.end(), {"-o", tmp_out, job.source});
  argv_s.insert(argv_s.end(), job.extra_sources.begin(), job.extra_sources.end());
  argv_s.insert(argv_s.end(), job.libs.begin(), job.libs.end());
  try {
    run_compiler(std::move(argv_s), log_path, "compiling " + job.label);
  } catch (const BuildError &) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    throw;
  }
}

void BuildCache::run_compiler(std::vector<std::string> argv_s, const std::string &log_path,
                              const std::string &what) const {
  std::vector<char *> argv;
  for (auto &s : argv_s)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cxx_.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw BuildError("cannot start " + cxx_ + ": " + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string out = read_file(log_path);
  if (out.size() > 4000) out = out.substr(0, 4000) + "\n...";
  throw BuildError(what + " failed (" + cxx_ + ", log " + log_path + "):\n" + out);
}

} // namespace htp_ptosim
