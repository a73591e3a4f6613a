#include "frontend/python_capture.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ast/json_reader.hpp"
#include "diag/diagnostic_json.hpp"

namespace fs = std::filesystem;

namespace htp {

namespace {

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The directories holding the `htp` Python package relative to the host library: the build tree's
/// `python/`, the installed package directory and the site-packages of pip's wheel (which holds the host
/// library inside the package).
std::vector<std::string> default_python_path() {
  Dl_info info{};
  std::vector<std::string> out;
  if (::dladdr(reinterpret_cast<void *>(&default_python_path), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::canonical(info.dli_fname, ec).parent_path();
    for (fs::path candidate : {lib.parent_path() / "python", (lib / HTP_PYTHON_SUBDIR).lexically_normal(),
                               (lib / HTP_WHEEL_PYTHON_SUBDIR).lexically_normal()})
      if (fs::exists(candidate / "htp" / "__init__.py", ec)) out.push_back(candidate.string());
  }
  return out;
}

}  // namespace

PythonFrontend PythonFrontend::from_environment() {
  PythonFrontend f;
  if (const char *py = std::getenv("HTP_PYTHON"); py && *py) f.python = py;
  f.python_path = default_python_path();
  return f;
}

Expected<ast::Module> load_ast_json_file(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Diagnostic::error("io.read", "cannot read '" + file.string() + "'");
  std::string text = slurp(file);
  return ast::load_json(text, {}, file.string());
}

Expected<ast::Module> capture_python_file(const PythonFrontend &frontend, const fs::path &file,
                                          DiagnosticList &diags) {
  if (frontend.python_path.empty())
    return Diagnostic::error("frontend.missing",
                             "the Python frontend (package 'htp') was not found next to the host library; "
                             "build the _htp module (HTP_BUILD_PYTHON=ON) or install HTP");
  char tmpl[] = "/tmp/htp-capture-XXXXXX";
  if (!::mkdtemp(tmpl)) return Diagnostic::error("io.tmp", "cannot create a temporary directory");
  fs::path dir(tmpl);
  fs::path out = dir / "module.json", err = dir / "diagnostics.json";

  std::string pythonpath;
  for (const auto &p : frontend.python_path) pythonpath += (pythonpath.empty() ? "" : ":") + p;
  if (const char *existing = std::getenv("PYTHONPATH"); existing && *existing) pythonpath += std::string(":") + existing;

  std::vector<std::string> args = {frontend.python, "-m", "htp.capture", file.string(), "--output", out.string(),
                                   "--diagnostics", err.string()};
  for (const auto &s : frontend.plugin_specs) {
    args.push_back("--plugins");
    args.push_back(s);
  }
  if (!frontend.builtin_plugins) args.push_back("--no-builtin-plugins");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(frontend.python.c_str(), argv.data());
    std::fprintf(stderr, "htp: cannot run %s: %s\n", frontend.python.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  // The frontend reports its diagnostics as JSON (spans included), whatever its exit status.
  if (fs::exists(err)) {
    auto j = nlohmann::json::parse(slurp(err), nullptr, false);
    if (j.is_array())
      for (const auto &d : j) diags.report(diagnostic_from_json(d));
  }
  Expected<ast::Module> result = Diagnostic::error("frontend.failed", "");
  if (code == 0 && fs::exists(out)) {
    result = ast::load_json(slurp(out), {}, out.string());
  } else if (!diags.has_errors()) {
    result = Diagnostic::error("frontend.failed", "the Python frontend failed on '" + file.string() +
                                                      "' (exit status " + std::to_string(code) + ")");
  } else {
    result = Diagnostic::error("frontend.failed", "capture of '" + file.string() + "' failed");
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return result;
}

}  // namespace htp
