#include "island/island.hpp"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cache/cache_dir.hpp"
#include "digest/sha256.hpp"
#include "io/safe_read.hpp"
#include "island/process.hpp"
#include "package/package_writer.hpp"

namespace fs = std::filesystem;

namespace htp {

namespace {

constexpr size_t kStderrTail = 20;

/// The first line of `tool --version` that names a version (run once per tool and process).
std::string tool_version(const fs::path &tool) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mu);
  auto it = known.find(tool.string());
  if (it != known.end()) return it->second;
  ProcessResult r = run_process({tool.string(), "--version"}, "", std::chrono::milliseconds(10000));
  std::string text = r.out.empty() ? r.err : r.out, first, version;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (first.empty()) first = line;
    if (version.empty() && line.find("version") != std::string::npos) version = line;
  }
  return known[tool.string()] = !version.empty() ? version : !first.empty() ? first : "unknown";
}

std::string replace_all(std::string s, const std::string &from, const std::string &to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

/// `file:line:col: error: message` lines of a tool's stderr, as diagnostics at those spans; a location in
/// the tool's stdin (`<stdin>`) is one in the recorded input file `stdin_record`.
std::vector<Diagnostic> located_errors(const std::string &tool, const std::string &err, const std::string &stdin_record) {
  static const std::regex line_re(R"(^(.+?):(\d+):(\d+): error: (.*)$)");
  std::vector<Diagnostic> out;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line) && out.size() < 10;) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    uint32_t ln = uint32_t(std::stoul(m[2])), col = uint32_t(std::stoul(m[3]));
    const std::string file = m[1].str() == "<stdin>" ? stdin_record : m[1].str();
    out.push_back(Diagnostic::error("island.tool-error", fs::path(tool).filename().string() + ": " + m[4].str(),
                                    Span{file, ln, col > 0 ? col - 1 : 0, ln, col > 0 ? col - 1 : 0}));
  }
  return out;
}

}  // namespace

fs::path find_executable(const std::string &tool) {
  if (tool.empty()) return {};
  if (tool.find('/') != std::string::npos) return ::access(tool.c_str(), X_OK) == 0 ? fs::absolute(tool) : fs::path();
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / tool;
    if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate);
  }
  return {};
}

std::optional<IslandResult> run_island(const IslandStep &step, PackageWriter *records, DiagnosticList &diags) {
  const std::string what = "island step '" + step.name + "' of pass '" + step.pass + "'";
  if (step.argv.empty()) {
    diags.report(Diagnostic::error("island.command", what + " has an empty command", step.at));
    return std::nullopt;
  }
  const fs::path tool = find_executable(step.argv[0]);
  if (tool.empty()) {
    Diagnostic d = Diagnostic::error("island.tool-missing", what + " needs '" + step.argv[0] + "', which is not installed" +
                                                                (step.package.empty() ? std::string()
                                                                                      : " (install the Debian package " +
                                                                                            step.package + ")"),
                                     step.at);
    diags.report(std::move(d));
    return std::nullopt;
  }
  IslandResult result;
  result.tool_version = tool_version(tool);
  const bool input_file = std::any_of(step.argv.begin(), step.argv.end(),
                                      [](const std::string &a) { return a.find("{input}") != std::string::npos; });
  const bool output_file = std::any_of(step.argv.begin(), step.argv.end(),
                                       [](const std::string &a) { return a.find("{output}") != std::string::npos; });
  // The command with its placeholders naming `in` and `out`; as recorded, they name the record's files.
  auto command = [&](const std::string &in, const std::string &out) {
    std::vector<std::string> argv{tool.string()};
    for (size_t i = 1; i < step.argv.size(); ++i)
      argv.push_back(replace_all(replace_all(step.argv[i], "{input}", in), "{output}", out));
    return argv;
  };
  const std::vector<std::string> shown = command(step.input_name, step.output_name);
  std::string key_text = result.tool_version + '\0' + std::to_string(input_file) + std::to_string(output_file);
  for (const auto &a : shown) key_text += '\0' + a;
  const std::string key = sha256_hex(key_text + '\0' + sha256_hex(step.input));
  const fs::path cache_root = step.cache_dir.empty() ? default_cache_dir() / "islands" : step.cache_dir;
  const fs::path cached = cache_root / key.substr(0, 2) / (key + ".out");
  const fs::path cached_err = cache_root / key.substr(0, 2) / (key + ".err");  // its stderr (warnings), if any

  ProcessResult run;
  std::error_code ec;
  if (fs::is_regular_file(cached, ec)) {
    auto bytes = read_regular_file(cached, uint64_t(1) << 31);
    if (bytes) {
      result.output = std::move(*bytes);
      result.cached = true;
      // (the package records the tool's stderr whether the step ran or came from the cache)
      if (auto err = read_regular_file(cached_err, uint64_t(1) << 24))
        run.err = std::move(*err);
    }
  }
  if (!result.cached) {
    char tmpl[] = "/tmp/htp-island-XXXXXX";
    if (!::mkdtemp(tmpl)) {
      diags.report(Diagnostic::error("island.io", what + ": cannot create a work directory", step.at));
      return std::nullopt;
    }
    const fs::path work(tmpl);
    const fs::path in = work / step.input_name, out = work / step.output_name;
    if (input_file) (void)atomic_write_file(in, step.input);
    run = run_process(command(in.string(), out.string()), input_file ? std::string() : step.input, step.timeout);
    result.seconds = run.seconds.count();
    if (run.ok()) {
      if (output_file) {
        auto bytes = read_regular_file(out, uint64_t(1) << 31);
        if (bytes) result.output = std::move(*bytes);
        else run.error = "it wrote no " + step.output_name;
      } else {
        result.output = run.out;
      }
    }
    fs::remove_all(work, ec);
  }

  // The record, whatever happened: command, version, input, output, stderr.
  const std::string dir = "ir/islands/" + step.pass + "/" + step.name + "/";
  if (records) {
    nlohmann::ordered_json cmd = {{"command", shown},
                                  {"tool", tool.string()},
                                  {"tool_version", result.tool_version},
                                  {"stdin", input_file ? nlohmann::ordered_json() : nlohmann::ordered_json(step.input_name)},
                                  {"stdout", output_file ? nlohmann::ordered_json() : nlohmann::ordered_json(step.output_name)},
                                  {"timeout_s", double(step.timeout.count()) / 1000.0},
                                  {"cache_key", key},
                                  {"cached", result.cached},
                                  {"seconds", result.seconds},
                                  {"exit_code", result.cached ? 0 : run.exit_code}};
    (void)records->write(dir + "command.json", cmd.dump(2) + "\n", "island", step.pass, /*volatile=*/true);
    (void)records->write(dir + step.input_name, step.input, "island", step.pass);
    if (result.cached || run.ok()) (void)records->write(dir + step.output_name, result.output, "island", step.pass);
    if (!run.err.empty()) (void)records->write(dir + "stderr.txt", run.err, "island", step.pass, true);
  }

  if (result.cached || (run.ok() && run.error.empty())) {
    if (!result.cached) {
      fs::create_directories(cached.parent_path(), ec);
      if (!run.err.empty()) (void)atomic_write_file(cached_err, run.err);  // first: a reader of .out finds it
      (void)atomic_write_file(cached, result.output);
    }
    return result;
  }
  Diagnostic d;
  if (!run.started) {
    d = Diagnostic::error("island.failed", what + ": cannot run '" + tool.string() + "': " + run.error, step.at);
  } else if (run.timed_out) {
    d = Diagnostic::error("island.timeout",
                          what + ": '" + step.argv[0] + "' did not finish within " +
                              std::to_string(double(step.timeout.count()) / 1000.0).substr(0, 5) + " s and was killed",
                          step.at);
  } else if (run.signal) {
    d = Diagnostic::error("island.failed", what + ": '" + step.argv[0] + "' was killed by signal " +
                                               std::to_string(run.signal), step.at);
  } else if (run.exit_code != 0) {
    d = Diagnostic::error("island.failed",
                          what + ": '" + step.argv[0] + "' exited with status " + std::to_string(run.exit_code), step.at);
  } else {
    d = Diagnostic::error("island.no-output", what + ": '" + step.argv[0] + "' " + run.error, step.at);
  }
  if (!run.err.empty()) d.with_note("stderr (last lines):\n" + tail_lines(run.err, kStderrTail));
  d.with_note("the command, input and stderr are in the package under " + dir + " (compile with keep_failed to keep it)");
  for (auto &located : located_errors(step.argv[0], run.err, dir + step.input_name)) diags.report(std::move(located));
  diags.report(std::move(d));
  return std::nullopt;
}

}  // namespace htp
