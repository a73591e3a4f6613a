#include "support/test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace htp::test {

fs::path fixture(const std::string &name) { return fs::path(HTP_FIXTURE_DIR) / name / ("htp-" + name + ".so"); }

ScratchDir::ScratchDir() {
  std::string tmpl = (fs::temp_directory_path() / "htp-abi-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, ec);
  fs::remove_all(path_, ec);
}

fs::path ScratchDir::copy_fixture(const std::string &name) const {
  fs::path lib = fixture(name);
  fs::copy_file(lib, path_ / lib.filename(), fs::copy_options::overwrite_existing);
  fs::path manifest = lib;
  manifest.replace_extension(".plugin.json");
  fs::copy_file(manifest, path_ / manifest.filename(), fs::copy_options::overwrite_existing);
  return path_ / lib.filename();
}

fs::path ScratchDir::write(const std::string &name, const std::string &content) const {
  std::ofstream(path_ / name, std::ios::binary) << content;
  return path_ / name;
}

namespace {
}  // namespace

std::string read(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replace_all(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

CommandResult run_host(const std::vector<std::string> &args) {
  ScratchDir io;
  fs::path out = io.path() / "stdout", err = io.path() / "stderr";
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char *> argv;
    std::string exe = HTP_HOST_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto &a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read(out);
  r.err = read(err);
  return r;
}

}  // namespace htp::test
