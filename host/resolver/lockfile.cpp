#include "resolver/lockfile.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "io/atomic_file.hpp"

namespace htp {

Lockfile Lockfile::from_plan(const Plan &plan) {
  Lockfile lock;
  lock.target = plan.target;
  lock.plugins = plan.plugins();
  for (const Component *c : plan.components)
    lock.components.push_back({component_kind_name(c->kind), c->id, c->version, c->plugin.name});
  return lock;
}

nlohmann::ordered_json Lockfile::to_json() const {
  nlohmann::ordered_json j;
  j["schema"] = kLockSchema;
  j["target"] = target;
  auto &ps = j["plugins"] = nlohmann::ordered_json::array();
  for (const PluginRef &p : plugins) {
    ps.push_back({{"name", p.name}, {"version", p.version}, {"sha256", p.sha256}, {"path", p.path}});
    if (!p.language.empty()) ps.back()["language"] = p.language;
  }
  auto &cs = j["components"] = nlohmann::ordered_json::array();
  for (const LockedComponent &c : components)
    cs.push_back({{"kind", c.kind}, {"id", c.id}, {"version", c.version}, {"plugin", c.plugin}});
  return j;
}

std::string Lockfile::to_json_text() const {
  return to_json().dump(2) + "\n";
}

namespace {

/// Where a byte offset falls: 1-based line, 0-based column.
Span span_at(std::string_view text, size_t offset, const std::string &file) {
  Span s;
  s.file = file;
  s.line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++s.line, line_start = i + 1;
  s.col = static_cast<uint32_t>(std::min(offset, text.size()) - line_start);
  s.end_line = s.line;
  s.end_col = s.col + 1;
  return s;
}

/// Reads the lockfile schema, failing at the first field that does not fit, by JSON path.
class LockReader {
public:
  explicit LockReader(const std::string &file) : file_(file) {}
  std::optional<Diagnostic> error;

  const nlohmann::json *member(const nlohmann::json &obj, const std::string &path, const char *key) {
    if (error) return nullptr;
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(path + "/" + key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string string(const nlohmann::json &obj, const std::string &path, const char *key) {
    const nlohmann::json *v = member(obj, path, key);
    if (!v) return {};
    if (!v->is_string()) {
      fail(path + "/" + key, std::string("expected a string, found ") + v->type_name());
      return {};
    }
    return v->get<std::string>();
  }
  const nlohmann::json *array(const nlohmann::json &obj, const std::string &path, const char *key) {
    const nlohmann::json *v = member(obj, path, key);
    if (v && !v->is_array()) {
      fail(path + "/" + key, std::string("expected an array, found ") + v->type_name());
      return nullptr;
    }
    return v;
  }
  bool object(const nlohmann::json &v, const std::string &path) {
    if (error) return false;
    if (!v.is_object())
      fail(path.empty() ? "/" : path, std::string("expected an object, found ") + v.type_name());
    return !error;
  }
  void fail(const std::string &path, const std::string &reason) {
    if (!error)
      error = Diagnostic::error("lock.schema", "malformed lockfile at " + path + ": " + reason,
                                Span{file_, 0, 0, 0, 0});
  }

private:
  std::string file_;
};

} // namespace

Expected<Lockfile> parse_lockfile(std::string_view text, const std::string &file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error &e) {
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string what = e.what();
    if (auto p = what.find("; "); p != std::string::npos) what = what.substr(p + 2);
    return Diagnostic::error("lock.syntax", "malformed lockfile: " + what, span_at(text, offset, file));
  } catch (const nlohmann::json::exception &e) {
    // Not a syntax error with a position: e.g. a number out of range.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return Diagnostic::error("lock.syntax", "malformed lockfile: " + what, Span{file, 0, 0, 0, 0});
  }
  LockReader r(file);
  Lockfile lock;
  if (!r.object(j, "")) return *r.error;
  std::string schema = r.string(j, "", "schema");
  if (!r.error && schema != kLockSchema)
    r.fail("/schema", "expected \"" + std::string(kLockSchema) + "\", found \"" + schema + "\"");
  lock.target = r.string(j, "", "target");
  if (const nlohmann::json *ps = r.array(j, "", "plugins")) {
    for (size_t i = 0; i < ps->size() && !r.error; ++i) {
      std::string path = "/plugins/" + std::to_string(i);
      const nlohmann::json &p = (*ps)[i];
      if (!r.object(p, path)) break;
      PluginRef ref;
      ref.name = r.string(p, path, "name");
      ref.version = r.string(p, path, "version");
      ref.sha256 = r.string(p, path, "sha256");
      ref.path = r.string(p, path, "path");
      if (p.contains("language")) ref.language = r.string(p, path, "language");
      lock.plugins.push_back(std::move(ref));
    }
  }
  if (const nlohmann::json *cs = r.array(j, "", "components")) {
    for (size_t i = 0; i < cs->size() && !r.error; ++i) {
      std::string path = "/components/" + std::to_string(i);
      const nlohmann::json &c = (*cs)[i];
      if (!r.object(c, path)) break;
      LockedComponent lc;
      lc.kind = r.string(c, path, "kind");
      lc.id = r.string(c, path, "id");
      lc.version = r.string(c, path, "version");
      lc.plugin = r.string(c, path, "plugin");
      lock.components.push_back(std::move(lc));
    }
  }
  if (r.error) return *r.error;
  return lock;
}

Expected<Lockfile> read_lockfile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Diagnostic::error("lock.read", "cannot read lockfile '" + path + "'", Span{path, 0, 0, 0, 0});
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_lockfile(ss.str(), path);
}

std::optional<Diagnostic> write_lockfile(const Lockfile &lock, const std::string &path) {
  auto failed = atomic_write_file(path, lock.to_json_text());
  if (failed) failed->code = "lock.write";
  return failed;
}

std::vector<PluginRef> loaded_plugins(const Registry &registry) {
  std::map<std::string, PluginRef> by_name;
  for (const auto &c : registry.components())
    by_name.emplace(c->plugin.name, c->plugin);
  std::vector<PluginRef> out;
  for (auto &[name, ref] : by_name)
    out.push_back(ref);
  return out;
}

DiagnosticList compare_lockfile_plugins(const Lockfile &lock, const std::vector<PluginRef> &loaded,
                                        const std::string &file) {
  DiagnosticList out;
  Span at{file, 0, 0, 0, 0};
  for (const PluginRef &want : lock.plugins) {
    auto it =
        std::find_if(loaded.begin(), loaded.end(), [&](const PluginRef &p) { return p.name == want.name; });
    if (it == loaded.end()) {
      Diagnostic d =
          Diagnostic::error("lock.missing-plugin",
                            "plugin '" + want.name + "' " + want.version + " is locked but not loaded", at);
      if (!want.path.empty()) d.with_note("it was loaded from " + want.path);
      out.report(std::move(d));
      continue;
    }
    if (it->version != want.version) {
      out.report(Diagnostic::error("lock.plugin-version",
                                   "plugin '" + want.name + "' is locked at version " + want.version +
                                       " but version " + it->version + " is loaded",
                                   at));
      continue;
    }
    if (it->sha256 != want.sha256) {
      Diagnostic d =
          Diagnostic::error("lock.plugin-hash",
                            "plugin '" + want.name + "' " + want.version + " is locked with sha256 " +
                                want.sha256 + " but the loaded file has sha256 " + it->sha256,
                            at);
      if (!it->path.empty())
        d.with_note(it->language == "python" ? "the Python extension's source " + it->path + " was edited since it was locked"
                                             : "loaded from " + it->path);
      out.report(std::move(d));
    }
  }
  return out;
}

DiagnosticList compare_lockfile_plan(const Lockfile &lock, const Plan &plan, const std::string &file) {
  DiagnosticList out;
  Span at{file, 0, 0, 0, 0};
  if (lock.target != plan.target)
    out.report(Diagnostic::error("lock.target",
                                 "the lockfile is for target " + lock.target + ", not " + plan.target, at));
  Lockfile now = Lockfile::from_plan(plan);
  for (const LockedComponent &want : lock.components) {
    auto it = std::find_if(now.components.begin(), now.components.end(),
                           [&](const LockedComponent &c) { return c.id == want.id; });
    if (it == now.components.end())
      out.report(Diagnostic::error(
          "lock.component-missing",
          want.kind + " '" + want.id + "' " + want.version + " is locked but no longer chosen", at));
    else if (it->version != want.version || it->plugin != want.plugin)
      out.report(Diagnostic::error("lock.component-version",
                                   want.kind + " '" + want.id + "' is locked at " + want.version +
                                       " from plugin '" + want.plugin + "' but " + it->version +
                                       " from plugin '" + it->plugin + "' is chosen",
                                   at));
  }
  for (const LockedComponent &c : now.components)
    if (std::none_of(lock.components.begin(), lock.components.end(),
                     [&](const LockedComponent &w) { return w.id == c.id; }))
      out.report(Diagnostic::error(
          "lock.component-new",
          c.kind + " '" + c.id + "' " + c.version + " is chosen but not in the lockfile", at));
  return out;
}

} // namespace htp

namespace htp {

DiagnosticList apply_lockfile(const Lockfile &lock, const Registry &registry, ResolveRequest &request,
                              const std::string &file) {
  DiagnosticList diffs = compare_lockfile_plugins(lock, loaded_plugins(registry), file);
  if (lock.target != request.target) {
    // (pinning its backend and binding would blame them, as if --backend had been given for this target)
    diffs.report(Diagnostic::error("lock.target", "lockfile '" + file + "' was made for target " + lock.target +
                                                      ", not " + request.target + ": compile for " + lock.target +
                                                      ", or resolve again without --locked and write a lockfile for " +
                                                      request.target));
    return diffs;
  }
  auto pin = [&](std::optional<std::string> &pick, const char *kind) {
    if (pick) return;
    for (const LockedComponent &c : lock.components) {
      if (c.kind != kind) continue;
      const Component *found = registry.find(c.id);
      if (found && component_kind_name(found->kind) == std::string_view(kind)) pick = c.id;
      return;
    }
  };
  pin(request.backend, "backend");
  pin(request.binding, "binding");
  return diffs;
}

}  // namespace htp
