// Python extensions: passes, intrinsic sets and pipelines written in Python register into the host's
// registry through the same host function table a plugin library's init gets (htp::Registrar), as a
// "script plugin" whose identity is its source file. Python patterns and module bodies are called through
// C trampolines that take the GIL; the tree reaches Python as light views (Node, Rewriter) over the ABI's
// AST functions, so a Python pass sees and edits exactly what a C++ pass sees, and its edits go through
// the host's checks and the rewrite driver's worklist.
#include "extension_bindings.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <htp/ast.hpp>
#include <htp/plugin.hpp>

#include "ast/grammar.hpp"
#include "context_bindings.hpp"
#include "resolver/capability_diagnostic.hpp"
#include "pass/invocation.hpp"

namespace py = pybind11;

namespace htp::python {

namespace {

/// Views handed to the Python calls of one pass invocation die with it: a view kept past the invocation
/// raises instead of touching a node the host may have freed.
struct Epoch {
  bool alive = true;
};
using EpochPtr = std::shared_ptr<Epoch>;

[[noreturn]] void stale() {
  throw py::value_error("this node or rewriter view belongs to a pass call that has returned; views are valid "
                        "only during the call that received them");
}

std::string_view view(HtpStr s) { return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view(); }

/// The host's field kind of `field` in a node of kind `kind`, or nullopt when the type has no such field.
std::optional<ast::FieldKind> field_kind(int32_t kind, std::string_view field) {
  if (kind < 0 || size_t(kind) >= ast::kKindCount) return std::nullopt;
  for (const auto &f : ast::kind_info(static_cast<ast::Kind>(kind)).fields)
    if (f.name == field) return f.kind;
  return std::nullopt;
}

py::object constant_value(const HtpConstant &c) {
  switch (c.kind) {
    case HTP_CONST_NONE: return py::none();
    case HTP_CONST_BOOL: return py::bool_(c.i != 0);
    case HTP_CONST_INT: return py::int_(c.i);
    case HTP_CONST_BIGINT: return py::module_::import("builtins").attr("int")(std::string(view(c.text)));
    case HTP_CONST_FLOAT: return py::float_(c.real);
    case HTP_CONST_COMPLEX: return py::module_::import("builtins").attr("complex")(c.real, c.imag);
    case HTP_CONST_STR: return py::str(std::string(view(c.text)));
    case HTP_CONST_BYTES: return py::bytes(std::string(view(c.text)));
    case HTP_CONST_ELLIPSIS: return py::ellipsis();
    default: return py::none();
  }
}

class Node {
public:
  Node(const HtpHostApi *api, HtpNode *node, EpochPtr epoch) : ref_(api, node), epoch_(std::move(epoch)) {}

  const NodeRef &ref() const {
    if (!epoch_->alive) stale();
    return ref_;
  }
  const EpochPtr &epoch() const { return epoch_; }

  std::string type() const { return std::string(ref().type()); }
  std::string id() const { return ref().id(); }
  py::tuple span() const {
    SourceSpan s = ref().source_span();
    return py::make_tuple(s.file, s.line, s.col, s.end_line, s.end_col);
  }
  std::optional<Node> parent() const { return wrap(ref().parent()); }

  std::vector<std::string> fields() const {
    std::vector<std::string> out;
    const NodeRef &r = ref();
    for (size_t i = 0, n = r.api()->node_field_count(r.api()->host, r.handle()); i < n; ++i)
      out.emplace_back(view(r.api()->node_field_name(r.api()->host, r.handle(), i)));
    return out;
  }

  /// A field's value as Python sees it: a Node (or None), a list of Nodes, a str, a list of str, an int or
  /// a constant's value. KeyError for a field the node type does not have.
  py::object get(const std::string &field) const {
    const NodeRef &r = ref();
    auto kind = field_kind(r.kind(), field);
    if (!kind) throw py::key_error("a " + std::string(r.type()) + " node has no field '" + field + "'");
    switch (*kind) {
      case ast::FieldKind::Node:
      case ast::FieldKind::OptNode: return py::cast(wrap(r.child(field)));
      case ast::FieldKind::NodeList: {
        py::list out;
        for (size_t i = 0, n = r.size(field); i < n; ++i) out.append(py::cast(wrap(r.item(field, i))));
        return out;
      }
      case ast::FieldKind::Ident:
      case ast::FieldKind::OptIdent:
      case ast::FieldKind::String:
      case ast::FieldKind::OptString: {
        auto t = r.text(field);
        return t ? py::object(py::str(*t)) : py::object(py::none());
      }
      case ast::FieldKind::IdentList: {
        py::list out;
        for (size_t i = 0, n = r.size(field); i < n; ++i) {
          HtpStr s{};
          if (r.api()->node_text(r.api()->host, r.handle(), to_htp_str(field), i, &s) == HTP_OK)
            out.append(py::str(std::string(view(s))));
        }
        return out;
      }
      case ast::FieldKind::Int:
      case ast::FieldKind::OptInt: {
        auto v = r.integer(field);
        return v ? py::object(py::int_(*v)) : py::object(py::none());
      }
      case ast::FieldKind::Constant: {
        auto c = r.constant(field);
        return c ? constant_value(*c) : py::object(py::none());
      }
    }
    return py::none();
  }

  std::optional<std::string> attr(const std::string &key) const { return ref().attr(key); }

  bool operator==(const Node &o) const { return ref_.handle() == o.ref_.handle(); }
  size_t hash() const { return std::hash<const void *>()(ref_.handle()); }
  std::string repr() const {
    if (!epoch_->alive) return "<htp Node (expired)>";
    SourceSpan s = ref_.source_span();
    return "<htp Node " + std::string(ref_.type()) + " at " + s.file + ":" + std::to_string(s.line) + ":" +
           std::to_string(s.col) + ">";
  }

  std::optional<Node> wrap(const NodeRef &n) const {
    if (!n) return std::nullopt;
    return Node(ref_.api(), n.handle(), epoch_);
  }

private:
  NodeRef ref_;
  EpochPtr epoch_;
};

/// A pass invocation as Python sees it: the module, its options, diagnostics and the edit calls.
class Rewriter {
public:
  Rewriter(const HtpHostApi *api, HtpPassContext *ctx, EpochPtr epoch) : pc_(api, ctx), epoch_(std::move(epoch)) {}

  void set_matched(HtpNode *n) { matched_ = n; }

  /// The node the pattern was offered (None in a module body).
  std::optional<Node> matched() const {
    if (!matched_) return std::nullopt;
    return node(NodeRef(pc().api(), matched_));
  }

  const PassContext &pc() const {
    if (!epoch_->alive) stale();
    return pc_;
  }
  ModuleRef module() const { return pc().module(); }
  Node node(const NodeRef &n) const { return Node(pc_.api(), n.handle(), epoch_); }
  const NodeRef &unwrap(const Node &n) const {
    if (n.epoch() != epoch_) stale();
    return n.ref();
  }

  std::string pass_id() const { return pc().handle()->component; }
  Node root() const { return node(module().root()); }
  std::string file() const { return module().file(); }
  std::optional<std::string> module_attr(const std::string &key) const { return module().attr(key); }
  void set_module_attr(const std::string &key, const std::string &json) const { module().set_attr(key, json); }
  std::optional<std::string> option(const std::string &key) const { return pc().option(key); }

  Node create(const std::string &type, std::optional<Node> at) const {
    HtpSpan span{};
    if (at) span = unwrap(*at).span();
    return node(module().create(type, at ? &span : nullptr));
  }
  Node clone(const Node &n) const { return node(module().clone(unwrap(n))); }
  void replace(const Node &n, const Node &with) const { module().replace(unwrap(n), unwrap(with)); }
  void insert(const Node &n, const std::string &field, size_t index, const Node &child) const {
    module().insert(unwrap(n), field, index, unwrap(child));
  }
  void erase(const Node &n, const std::string &field, size_t index) const { module().erase(unwrap(n), field, index); }
  void set_attr(const Node &n, const std::string &key, const std::string &json) const {
    unwrap(n).set_attr(key, json, pc().diag());
  }

  /// Sets a field from a Python value of the field's kind (Node or None, str, int, constant value). A value of
  /// another kind is an error diagnostic at the node (python.field-kind) and a TypeError in the pass.
  void set(const Node &n, const std::string &field, const py::object &value) const {
    const NodeRef &r = unwrap(n);
    auto kind = field_kind(r.kind(), field);
    if (!kind) throw py::key_error("a " + std::string(r.type()) + " node has no field '" + field + "'");
    try {
      set_field(r, field, *kind, value);
    } catch (const py::cast_error &) {
      std::string message = "field '" + field + "' of " + std::string(r.type()) + " holds " +
                            std::string(ast::field_kind_name(*kind)) + ", not a " +
                            std::string(py::str(py::type::of(value).attr("__name__")));
      Host(pc().api()).error(pc().diag(), "python.field-kind", message, r.source_span());
      throw py::type_error(message);
    }
  }

private:
  void set_field(const NodeRef &r, const std::string &field, ast::FieldKind kind, const py::object &value) const {
    ModuleRef m = module();
    switch (kind) {
      case ast::FieldKind::Node:
      case ast::FieldKind::OptNode:
        if (value.is_none()) m.set_child(r, field, NodeRef());
        else m.set_child(r, field, unwrap(value.cast<const Node &>()));
        return;
      case ast::FieldKind::Ident:
      case ast::FieldKind::OptIdent:
      case ast::FieldKind::String:
      case ast::FieldKind::OptString: m.set_text(r, field, value.cast<std::string>()); return;
      case ast::FieldKind::Int:
      case ast::FieldKind::OptInt: m.set_int(r, field, value.cast<int64_t>()); return;
      case ast::FieldKind::Constant: {
        HtpConstant c{};
        c.struct_size = sizeof c;
        std::string text;
        if (value.is_none()) c.kind = HTP_CONST_NONE;
        else if (py::isinstance<py::bool_>(value)) c.kind = HTP_CONST_BOOL, c.i = value.cast<bool>();
        else if (py::isinstance<py::int_>(value)) {
          try {
            c.i = value.cast<int64_t>();
            c.kind = HTP_CONST_INT;
          } catch (const py::cast_error &) {
            text = py::str(value);
            c.kind = HTP_CONST_BIGINT;
          }
        } else if (py::isinstance<py::float_>(value)) c.kind = HTP_CONST_FLOAT, c.real = value.cast<double>();
        else if (py::isinstance<py::str>(value)) text = value.cast<std::string>(), c.kind = HTP_CONST_STR;
        else if (py::isinstance<py::bytes>(value)) text = value.cast<std::string>(), c.kind = HTP_CONST_BYTES;
        else if (value.is(py::ellipsis())) c.kind = HTP_CONST_ELLIPSIS;
        else throw py::cast_error("not a constant");
        c.text = to_htp_str(text);
        m.set_constant(r, c, field);
        return;
      }
      case ast::FieldKind::NodeList:
      case ast::FieldKind::IdentList:
        throw py::cast_error("a list field");
    }
  }

public:
  void report(const std::optional<Node> &at, const std::string &severity, const std::string &code,
              const std::string &message) const {
    SourceSpan span;
    if (at) span = unwrap(*at).source_span();
    HtpSeverity sev = severity == "warning" ? HTP_SEV_WARNING : severity == "note" ? HTP_SEV_NOTE : HTP_SEV_ERROR;
    Host(pc().api()).report(pc().diag(), sev, code, message, span);
  }

  /// Runs one island step through the host table's island_run (ABI 1.5), as a C++ pass does: its output,
  /// or None after the host reported why into the pass's diagnostics (tool missing, failed, timed out).
  std::optional<py::bytes> run_island(const std::string &name, const std::vector<std::string> &argv,
                                      const py::bytes &input, const std::optional<Node> &at, double timeout,
                                      const std::string &input_name, const std::string &output_name,
                                      const std::string &package) const {
    PassContext::IslandStep step{name, argv, std::string(input), input_name, output_name,
                                 uint32_t(std::max(timeout, 0.001) * 1000), package};
    NodeRef where = at ? unwrap(*at) : NodeRef();
    std::optional<std::string> out;
    {
      py::gil_scoped_release release;
      out = pc().run_island(step, where);
    }
    if (!out) return std::nullopt;
    return py::bytes(*out);
  }

  void write_file(const std::string &path, const py::bytes &bytes, const std::string &role) const {
    pc().write_file(path, std::string(bytes), role);
  }

private:
  PassContext pc_;
  EpochPtr epoch_;
  HtpNode *matched_ = nullptr;
};

/// The last frame of a Python traceback: (file, line, function), or empty.
struct Frame {
  std::string file, function;
  uint32_t line = 0;
};

/// The deepest frame of the traceback in the user's code (htp.extension.user_frame: not HTP's own Python, not
/// the standard library), so a mistake in a builder or pass is reported at the user's line.
Frame last_frame(const py::error_already_set &e) {
  Frame f;
  py::object tb = e.trace();
  if (!tb || tb.is_none()) return f;
  try {
    py::object found = py::module_::import("htp.extension").attr("user_frame")(tb);
    if (!found.is_none()) {
      auto t = found.cast<py::tuple>();
      f.file = py::str(t[0]);
      f.line = t[1].cast<uint32_t>();
      f.function = py::str(t[2]);
      return f;
    }
  } catch (const py::error_already_set &) {  // (the last frame, then)
  }
  while (!tb.attr("tb_next").is_none()) tb = tb.attr("tb_next");
  py::object code = tb.attr("tb_frame").attr("f_code");
  f.file = py::str(code.attr("co_filename"));
  f.function = py::str(code.attr("co_name"));
  f.line = tb.attr("tb_lineno").cast<uint32_t>();
  return f;
}

/// What a Python callable implements, for messages: "pass 'x'" or "pattern 'p' of pass 'x'".
struct Callable {
  py::object fn;
  std::string what;
  py::object finish;  ///< a pass's finish body beside its module body `fn` (call_finish); null: `fn` is it
};

/// Reports the Python exception in flight as an error naming `what` and the traceback's last frame.
void report_python_error(const HtpHostApi *api, HtpPassContext *ctx, const std::string &what,
                         py::error_already_set &e) {
  Frame f = last_frame(e);
  std::string type = py::str(e.type().attr("__name__"));
  std::string text = py::str(e.value());
  Host host(api);
  SourceSpan span{f.file, f.line, 0, f.line, 0};
  std::string message = "Python " + what + " raised " + type + (text.empty() ? "" : ": " + text);
  if (!f.file.empty()) message += " (last frame: " + f.file + ":" + std::to_string(f.line) + " in " + f.function + ")";
  host.error(api->pass_diag(api->host, ctx), "python.exception", message, span);
  e.restore();
  PyErr_Clear();
}

/// The Python bridge's state for one pass invocation: the GIL, taken at the invocation's first Python call
/// and held until it ends (the driver's loop between calls is short, and taking the GIL per node would cost
/// more than the call), one epoch for the views of all its calls, and one Rewriter.
struct Invocation {
  HtpPassContext *ctx = nullptr;
  PyGILState_STATE gil{};
  EpochPtr epoch;
  py::object rewriter;
  Rewriter *rw = nullptr;
};

thread_local Invocation *current_invocation = nullptr;

Invocation &invocation(const HtpHostApi *api, HtpPassContext *ctx) {
  if (current_invocation && current_invocation->ctx == ctx) return *current_invocation;
  auto *inv = new Invocation;
  inv->ctx = ctx;
  inv->gil = PyGILState_Ensure();
  inv->epoch = std::make_shared<Epoch>();
  inv->rewriter = py::cast(Rewriter(api, ctx, inv->epoch));
  inv->rw = &inv->rewriter.cast<Rewriter &>();
  Invocation *outer = current_invocation;
  current_invocation = inv;
  ctx->at_exit.push_back([inv, outer] {
    inv->epoch->alive = false;
    inv->rewriter = py::object();
    PyGILState_Release(inv->gil);
    current_invocation = outer;
    delete inv;
  });
  return *inv;
}

/// Calls `body(invocation)` for the Python callable `c`; a Python exception becomes a diagnostic naming `c` and
/// its last frame. False on error.
template <class Body> bool call_python(const Callable &c, const HtpHostApi *api, HtpPassContext *ctx, Body &&body) {
  Invocation &inv = invocation(api, ctx);
  try {
    body(inv);
    return true;
  } catch (py::error_already_set &e) {
    // htp.extension.RewriteFailed: the pattern reported its error itself.
    if (!(std::string(py::str(e.type().attr("__name__"))) == "RewriteFailed" && ctx->diagnostics.has_errors()))
      report_python_error(api, ctx, c.what, e);
  } catch (const std::exception &e) {
    Host(api).error(api->pass_diag(api->host, ctx), "python.exception", "Python " + c.what + ": " + e.what());
  }
  return false;
}

HtpRewriteResult call_pattern(void *user, const HtpHostApi *api, HtpPassContext *ctx, HtpNode *node) {
  const auto &c = *static_cast<Callable *>(user);
  bool applied = false, ok_result = true;
  bool ok = call_python(c, api, ctx, [&](Invocation &inv) {
    inv.rw->set_matched(node);
    py::object r = c.fn(Node(api, node, inv.epoch), inv.rewriter);
    inv.rw->set_matched(nullptr);
    // True: it rewrote; False (or None, no return): it does not apply. Anything else is a mistake the driver
    // would read as one or the other (`return "yes"`, `return node`), reported at the pattern's def.
    const std::string type = py::str(py::type::of(r).attr("__name__"));
    if (!r.is_none() && !py::isinstance<py::bool_>(r) && type != "bool_") {
      py::object code = c.fn.attr("__code__");
      const std::string file = py::str(code.attr("co_filename"));
      const auto line = code.attr("co_firstlineno").cast<uint32_t>();
      Host(api).error(api->pass_diag(api->host, ctx), "python.pattern-result",
                      "Python " + c.what + " returned " + std::string(py::repr(r)).substr(0, 80) + " (" + type +
                          "): a pattern returns True when it rewrote the tree through rw, False when it does not "
                          "apply",
                      SourceSpan{file, line, 0, line, 0});
      ok_result = false;
      return;
    }
    applied = !r.is_none() && bool(py::bool_(r));
  });
  return !ok || !ok_result ? HTP_REWRITE_FAILED : applied ? HTP_REWRITE_APPLIED : HTP_REWRITE_NO_MATCH;
}

HtpStatus call_body(void *user, const HtpHostApi *api, HtpPassContext *ctx) {
  const auto &c = *static_cast<Callable *>(user);
  return call_python(c, api, ctx, [&](Invocation &inv) { c.fn(inv.rewriter); }) ? HTP_OK : HTP_ERR;
}

HtpStatus call_finish(void *user, const HtpHostApi *api, HtpPassContext *ctx) {
  const auto &c = *static_cast<Callable *>(user);
  return call_python(c, api, ctx, [&](Invocation &inv) { (c.finish.ptr() ? c.finish : c.fn)(inv.rewriter); })
             ? HTP_OK
             : HTP_ERR;
}

std::vector<std::string> strings(const py::dict &d, const char *key) {
  if (!d.contains(key) || d[key].is_none()) return {};
  return d[key].cast<std::vector<std::string>>();
}

std::string string(const py::dict &d, const char *key, const std::string &fallback = {}) {
  if (!d.contains(key) || d[key].is_none()) return fallback;
  return d[key].cast<std::string>();
}

ComponentSpec component_spec(const py::dict &d) {
  ComponentSpec c;
  c.id = string(d, "id");
  c.version = string(d, "version", "0.0.0");
  c.summary = string(d, "summary");
  c.provides = strings(d, "provides");
  c.requires_ = strings(d, "requires");
  c.conflicts = strings(d, "conflicts");
  c.accepts = strings(d, "accepts");
  return c;
}

HtpPassStage stage_of(const std::string &name) {
  PassStage stage;
  if (!parse_pass_stage(name, stage)) throw py::value_error("unknown pass stage '" + name + "'");
  return static_cast<HtpPassStage>(stage);  // PassStage mirrors HtpPassStage
}

}  // namespace

ExtensionCallables::~ExtensionCallables() = default;

struct ExtensionCallables::Impl {
  std::vector<std::unique_ptr<Callable>> callables;
};

ExtensionCallables::ExtensionCallables() : impl_(std::make_unique<Impl>()) {}

namespace {

Span span_of(const py::dict &d);

/// Registers the components described by `components` (dicts built by htp.extension) into `host` as the
/// script plugin `name`; the callables stay alive in `keep` as long as the host. False with the reason in
/// `diags` when the host refused it.
bool register_extension(PluginHost &host, ExtensionCallables &keep, const std::string &name,
                        const std::string &version, const std::string &description, const std::string &source,
                        const py::list &components, DiagnosticList &diags) {
  auto &callables = keep.impl_->callables;
  auto callable = [&](py::object fn, std::string what) {
    callables.push_back(std::make_unique<Callable>(Callable{std::move(fn), std::move(what)}));
    return callables.back().get();
  };
  // Everything Python is read before init runs, so init itself only talks to the host.
  std::vector<PassSpec> passes;
  std::vector<Span> pass_spans;  // where each was declared (its Python line)
  std::vector<IntrinsicSetSpec> sets;
  std::vector<PipelineSpec> pipelines;
  for (py::handle h : components) {
    py::dict d = py::reinterpret_borrow<py::dict>(h);
    std::string kind = string(d, "kind");
    if (kind == "pass") {
      PassSpec p;
      pass_spans.push_back(span_of(d));
      p.info = component_spec(d);
      p.stage = stage_of(string(d, "stage", "canonicalize"));
      p.applies_to = strings(d, "applies_to");
      p.invalidates = strings(d, "invalidates");
      p.before = strings(d, "before");
      p.after = strings(d, "after");
      if (d.contains("run") && !d["run"].is_none()) {
        p.run = &call_body;
        p.user_data = callable(d["run"], "pass '" + p.info.id + "'");
      }
      if (d.contains("finish") && !d["finish"].is_none()) {  // (one user_data: the finish beside the module body)
        p.finish = &call_finish;
        if (p.user_data)
          static_cast<Callable *>(p.user_data)->finish = d["finish"];
        else
          p.user_data = callable(d["finish"], "pass '" + p.info.id + "'");
      }
      for (py::handle ph : d["patterns"].cast<py::list>()) {
        py::dict pd = py::reinterpret_borrow<py::dict>(ph);
        PatternSpec ps;
        ps.name = string(pd, "name");
        ps.roots = strings(pd, "roots");
        ps.benefit = pd.contains("benefit") ? pd["benefit"].cast<int32_t>() : 0;
        ps.match_and_rewrite = &call_pattern;
        ps.user_data = callable(pd["fn"], "pattern '" + ps.name + "' of pass '" + p.info.id + "'");
        p.patterns.push_back(std::move(ps));
      }
      passes.push_back(std::move(p));
    } else if (kind == "intrinsic-set") {
      IntrinsicSetSpec s;
      s.info = component_spec(d);
      s.set = string(d, "set");
      s.ops = strings(d, "ops");
      sets.push_back(std::move(s));
    } else if (kind == "pipeline") {
      PipelineSpec s;
      s.info = component_spec(d);
      s.targets = strings(d, "targets");
      s.passes = strings(d, "passes");
      pipelines.push_back(std::move(s));
    } else {
      throw py::value_error("a Python extension cannot register a component of kind '" + kind + "'");
    }
  }
  ScriptPlugin script;
  script.name = name;
  script.version = version;
  script.description = description;
  script.language = "python";
  script.source = source;
  script.init = [&](const HtpHostApi *api, HtpDiag *diag) -> HtpStatus {
    HTP_GUARD_BEGIN
    Registrar r(api, diag);
    for (const auto &s : sets) r.add(s);
    for (const auto &p : passes) r.add(p);
    for (const auto &p : pipelines) r.add(p);
    return HTP_OK;
    HTP_GUARD_END(api, diag)
  };
  if (!host.load_script(script, diags)) return false;
  // A pass for a target no loaded backend, binding or pipeline names (`@set.op(targets=["aie-npu9000"])`, a
  // typo) never runs: said here, where it was declared, not as the resolver's refusal of a later compile.
  std::set<std::string> targets;
  for (const auto &c : host.registry().components())
    if (c->kind == ComponentKind::Backend || c->kind == ComponentKind::Binding || c->kind == ComponentKind::Pipeline)
      targets.insert(c->targets.begin(), c->targets.end());
  std::string known;
  for (const std::string &t : targets) known += (known.empty() ? "" : ", ") + t;
  for (size_t i = 0; i < passes.size(); ++i)
    for (const std::string &text : passes[i].applies_to) {
      auto cap = parse_capability(text, CapabilityMode::Requirement);
      if (!cap || cap->ns != "Target" || cap->name != "Selected") continue;
      const CapabilityValue *v = cap->find("name");
      const std::string *target = v ? std::get_if<std::string>(v) : nullptr;
      if (!target || targets.count(*target)) continue;
      diags.report(Diagnostic::warning("python.unknown-target",
                                       "pass '" + passes[i].info.id + "' of Python extension '" + name +
                                           "' applies to target '" + *target + "', which no loaded plugin supports "
                                           "(the targets: " + known + "): it will not run",
                                       pass_spans[i]));
    }
  return true;
}

Span span_of(const py::dict &d) {
  Span s;
  if (!d.contains("span") || d["span"].is_none()) return s;
  py::dict sp = d["span"];
  s.file = string(sp, "file");
  auto num = [&](const char *k) { return sp.contains(k) && !sp[k].is_none() ? sp[k].cast<uint32_t>() : 0u; };
  s.line = num("line"), s.col = num("col"), s.end_line = num("end_line"), s.end_col = num("end_col");
  return s;
}

/// A diagnostic dict (htp.errors' shape) as a host Diagnostic.
Diagnostic diagnostic_of(const py::dict &d) {
  std::string sev = string(d, "severity", "error");
  Diagnostic out = sev == "warning" ? Diagnostic::warning(string(d, "code"), string(d, "message"), span_of(d))
                   : sev == "note"  ? Diagnostic::note(string(d, "message"), span_of(d))
                                    : Diagnostic::error(string(d, "code"), string(d, "message"), span_of(d));
  if (d.contains("notes"))
    for (py::handle n : d["notes"].cast<py::list>()) out.notes.push_back(diagnostic_of(py::reinterpret_borrow<py::dict>(n)));
  return out;
}

template <class T> T *from_capsule(const py::capsule &c, const char *name) {
  if (std::string(c.name() ? c.name() : "") != name) throw py::type_error(std::string("expected a ") + name + " capsule");
  return c.get_pointer<T>();
}

}  // namespace

py::list load_python_extension(PluginHost &host, ExtensionCallables &keep, const std::string &name,
                               const std::string &version, const std::string &description,
                               const std::string &source, const py::list &components) {
  DiagnosticList diags;
  register_extension(host, keep, name, version, description, source, components, diags);
  return diag_list(diags);
}

void bind_extension(py::module_ &m) {
  // Used by htp._embedded inside htp-host, whose PluginHost and DiagnosticList arrive as capsules; the
  // callables live as long as the process (the embedded interpreter is never finalised).
  m.def(
      "load_python_extension_into",
      [](const py::capsule &host, const std::string &name, const std::string &version,
         const std::string &description, const std::string &source, const py::list &components) {
        static auto *keep = new ExtensionCallables();
        return load_python_extension(*from_capsule<PluginHost>(host, "htp.PluginHost"), *keep, name, version,
                                     description, source, components);
      },
      "Registers a Python extension into the PluginHost of an htp-host process (see htp._embedded); returns "
      "the load diagnostics as dicts.");
  m.def(
      "report_into",
      [](const py::capsule &diags, const py::dict &d) {
        from_capsule<DiagnosticList>(diags, "htp.DiagnosticList")->report(diagnostic_of(d));
      },
      "Appends a diagnostic dict to an htp-host DiagnosticList (see htp._embedded).");
  m.def(
      "capability_diagnostic",
      [](const std::string &text, bool fact, const std::string &where, const std::string &file, uint32_t line,
         uint32_t col) -> py::object {
        auto parsed = parse_capability(text, fact ? CapabilityMode::Fact : CapabilityMode::Requirement);
        if (parsed) return py::none();
        return diag_dict(capability_diagnostic(parsed.error(), text, where, Span{file, line, col, line, col}));
      },
      py::arg("text"), py::arg("fact"), py::arg("where"), py::arg("file") = "", py::arg("line") = 0,
      py::arg("col") = 0,
      "None when `text` parses as a capability (a fact, or a requirement when fact=False), else the "
      "capability.syntax diagnostic at file:line:col.");
  py::class_<Node>(m, "Node", "A view of one host AST node, valid during the pass call that received it.")
      .def_property_readonly("type", &Node::type, "The node type (Python 3.11 ast class name).")
      .def_property_readonly("node_id", &Node::id, "The node's stable id (`id` is Name.id, a field).")
      .def_property_readonly("span", &Node::span, "(file, line, col, end_line, end_col).")
      .def_property_readonly("parent", &Node::parent)
      .def("fields", &Node::fields, "The field names of the node's type, in grammar order.")
      .def("get", &Node::get, py::arg("field"),
           "A field's value: Node or None, list of Node, str, list of str, int, or a constant's value.")
      .def("meta_json", &Node::attr, py::arg("key"), "A metadata attribute as JSON text, or None.")
      .def("__eq__", &Node::operator==)
      .def("__hash__", &Node::hash)
      .def("__repr__", &Node::repr);
  py::class_<Rewriter>(m, "Rewriter", "One pass invocation: the module, options, edits and diagnostics.")
      .def_property_readonly("pass_id", &Rewriter::pass_id)
      .def_property_readonly("file", &Rewriter::file)
      .def_property_readonly("matched", &Rewriter::matched, "The node the pattern was offered (None in a module body).")
      .def("root", &Rewriter::root)
      .def("module_attr_json", &Rewriter::module_attr, py::arg("key"))
      .def("set_module_attr_json", &Rewriter::set_module_attr, py::arg("key"), py::arg("json"))
      .def("option_json", &Rewriter::option, py::arg("key"))
      .def("create", &Rewriter::create, py::arg("type"), py::arg("at") = py::none())
      .def("clone", &Rewriter::clone)
      .def("replace", &Rewriter::replace)
      .def("insert", &Rewriter::insert)
      .def("erase", &Rewriter::erase)
      .def("set", &Rewriter::set, py::arg("node"), py::arg("field"), py::arg("value"))
      .def("set_meta_json", &Rewriter::set_attr, py::arg("node"), py::arg("key"), py::arg("json"))
      .def("report", &Rewriter::report, py::arg("at"), py::arg("severity"), py::arg("code"), py::arg("message"))
      .def("write_file", &Rewriter::write_file, py::arg("path"), py::arg("data"), py::arg("role"))
      .def("run_island", &Rewriter::run_island, py::arg("name"), py::arg("argv"), py::arg("input"),
           py::arg("at") = py::none(), py::arg("timeout") = 120.0, py::arg("input_name") = "input",
           py::arg("output_name") = "output", py::arg("package") = "",
           "Runs an external tool on `input` (stdin, or the file {input} in argv); returns its stdout (or the "
           "file {output}) as bytes, or None after reporting why. Recorded under ir/islands/<pass>/<name>/, "
           "cached by content hash, killed after `timeout` seconds; errors at `at` or where the tool points.");
}

}  // namespace htp::python
