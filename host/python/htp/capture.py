"""Capture: from decorated Python functions to an htp.ast.v1 compile unit.

``capture(functions)`` parses the defining file of each captured function with ``ast.parse`` (spans point
at the original lines), adds every other captured function they reference (and those attached to one:
`@schedule(w)` comes with workload `w`), and resolves each global or closure name they read (a name only a
local annotation reads comes from the defining function's locals as they were when the decorator ran,
surface.py): numbers, strings, booleans, None and tuples of these become constants, and names
bound to modules are recorded with the module's name (module attribute ``htp.capture``); captured functions are included (each FunctionDef carries the node
attributes ``htp.dialect`` and ``htp.decorator``, whatever the decorator's spelling); surface symbols, modules and builtins are
fine; anything else is a diagnostic at the name's span.

``python -m htp.capture PROG --output OUT.json --diagnostics DIAG.json [--plugins SPEC ...]`` is the
contract ``htp-host compile prog.py`` uses: it runs PROG as a module, captures every captured function
PROG defines, writes the document to OUT.json and the diagnostics (a JSON array, always) to DIAG.json;
exit status 0 on success, 1 on a diagnosed failure."""
from __future__ import annotations

import argparse
import ast
import builtins
import copy
import json
import linecache
import math
import os
import sys
import tokenize
import traceback
import types

from . import _ast_json
from .errors import CaptureError, diagnostic, render, span_of
from .surface import CapturedFunction, MisusedDecorator, Symbol, SurfaceModule, find, register_plugins

ATTR = "htp.capture"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _NotConstant(Exception):
    pass


class _ConstantRange(Exception):
    pass


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _constant(v):
    if isinstance(v, int) and not isinstance(v, bool) and not _INT64_MIN <= v <= _INT64_MAX:
        # Sizes, indices and device integers are 64-bit everywhere after capture.
        raise _ConstantRange(f"{v.bit_length()}-bit integer")
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise _NotConstant("non-finite float")
        return v
    if isinstance(v, tuple):
        return [_constant(x) for x in v]
    raise _NotConstant(type(v).__name__)


def _read_source(path: str) -> str:
    with tokenize.open(path) as f:
        return f.read()


def _parameters(a: ast.arguments) -> list[ast.arg]:
    """Every parameter of a signature: positional-only, positional, keyword-only, *args and **kwargs."""
    return [x for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None]


def _args_of(a: ast.arguments):
    return [x.arg for x in _parameters(a)]


def _bound_names(fn: ast.AST) -> set[str]:
    """Names bound anywhere inside ``fn`` (parameters, assignments, loop / comprehension targets, nested
    definitions, imports, handlers, match captures) minus those declared ``global``."""
    bound, declared_global = set(_args_of(fn.args)), set()
    for stmt in fn.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                bound.add(n.id)
            elif isinstance(n, (*_FUNCS, ast.ClassDef)):
                bound.add(n.name)
                if not isinstance(n, ast.ClassDef):
                    bound.update(_args_of(n.args))
            elif isinstance(n, ast.Lambda):
                bound.update(_args_of(n.args))
            elif isinstance(n, ast.alias):
                bound.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.ExceptHandler) and n.name:
                bound.add(n.name)
            elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
                bound.add(n.name)
            elif isinstance(n, ast.MatchMapping) and n.rest:
                bound.add(n.rest)
            elif isinstance(n, ast.Global):
                declared_global.update(n.names)
    return bound - declared_global


def _reads(nodes) -> dict[str, ast.Name]:
    """First Load of each name in ``nodes``, in source order."""
    found: dict[str, ast.Name] = {}
    for root in nodes:
        for n in ast.walk(root):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                prev = found.get(n.id)
                if prev is None or (n.lineno, n.col_offset) < (prev.lineno, prev.col_offset):
                    found[n.id] = n
    return found


def _attached(unit, included, roots) -> list:
    """Captured functions not yet included whose decorator is a call naming an included one
    (`@schedule(vadd)` when `vadd` is captured): compiling a workload takes its schedule with it. They are
    looked for where the included functions are defined: their module and their defining scopes."""
    names = {cf.fn.__name__: cf for cf, _ in included.values()}
    candidates = []
    for cf, _ in included.values():
        for pool in (cf.fn.__globals__, cf.scope):
            candidates.extend(v for v in pool.values() if isinstance(v, CapturedFunction))
    out, seen = [], {id(cf) for cf, _ in included.values()}
    for c in candidates:
        if id(c) in seen or c.fn.__code__.co_filename != roots[0].fn.__code__.co_filename:
            continue
        node = unit.function_node(c.fn)
        targets = [a.id for d in (node.decorator_list if node is not None else []) if isinstance(d, ast.Call)
                   for a in d.args if isinstance(a, ast.Name) and a.id in names]
        if any(_lookup(c.fn, t, c.scope)[1] is names[t] for t in targets):
            out.append(c)
            seen.add(id(c))
    return out


def _module_definition(tree: ast.Module, name: str) -> ast.expr | None:
    """The value of the one module-level `name = <value>` of the file (None when there is none or several)."""
    found = [n.value for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    found += [n.value for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
              and n.target.id == name and n.value is not None]
    return found[0] if len(found) == 1 else None


class _Inline(ast.NodeTransformer):
    """Replaces the reads of surface values bound to names by their definitions (spans: the definition's)."""

    def __init__(self, values: dict[str, ast.expr], bound: set[str]):
        self.values = {k: v for k, v in values.items() if k not in bound}

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node


def _parse_string_annotations(fn: ast.FunctionDef) -> None:
    """Replaces a parameter's or the return's string annotation (`x: 'In[Tensor[32, 64, f32]]'`, PEP 563 style)
    by the expression it spells, located at the string (a string that does not parse stays a string)."""
    for holder, field in [(x, "annotation") for x in _parameters(fn.args)] + [(fn, "returns")]:
        ann = getattr(holder, field)
        if not (isinstance(ann, ast.Constant) and isinstance(ann.value, str)):
            continue
        try:
            parsed = ast.parse(ann.value.strip(), mode="eval").body
        except SyntaxError:
            continue
        for n in ast.walk(parsed):
            if "lineno" in n._attributes:
                ast.copy_location(n, ann)
        setattr(holder, field, parsed)


class _Unalias(ast.NodeTransformer):
    """Renames the reads of dialect names imported under another name to the dialect's name, unless the function
    also reads that name bound to something else (Python's own `max` beside `tmax`)."""

    def __init__(self, aliases: dict[str, str], fn_node, cf):
        reads = {n.id for n in ast.walk(fn_node) if isinstance(n, ast.Name)}
        def same(canonical, alias):
            if canonical not in reads:
                return True
            kind, value = _lookup(cf.fn, canonical, cf.scope)
            _, other = _lookup(cf.fn, alias, cf.scope)
            # (a builtin of that name, such as max, is the dialect's op in a captured function anyway)
            return kind in ("builtin", "missing") or (isinstance(value, Symbol) and value._path == other._path)
        self.aliases = {a: c for a, c in aliases.items() if same(c, a)}

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            return ast.copy_location(ast.Name(id=self.aliases[node.id], ctx=node.ctx), node)
        return node


def _lookup(fn, name: str, scope: dict | None = None):
    code = fn.__code__
    if name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return "closure variable", cell.cell_contents
        except ValueError:
            return "unbound", None
    if scope and name in scope:  # the enclosing function's locals when the decorator ran (surface.py)
        return "enclosing-scope variable", scope[name]
    g = fn.__globals__
    if name in g:
        return "global", g[name]
    b = g.get("__builtins__", builtins)
    b = b if isinstance(b, dict) else vars(b)
    if name in b:
        return "builtin", b[name]
    return "missing", None


class _Unit:
    def __init__(self, file: str):
        self.file = file
        self.source = _read_source(file)
        self.tree = ast.parse(self.source, filename=file)

    def function_node(self, fn):
        code = fn.__code__
        for n in ast.walk(self.tree):
            if isinstance(n, _FUNCS) and n.name == code.co_name:
                if min([n.lineno] + [d.lineno for d in n.decorator_list]) == code.co_firstlineno:
                    return n
        return None


def _decorator_node(node, cf: CapturedFunction):
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        text = ast.unparse(target)
        if text == cf.decorator or text.endswith("." + cf.decorator):
            return d
    return node.decorator_list[0] if node.decorator_list else node


def _not_loaded(cf: CapturedFunction, span: dict, loaded_plugins: dict | None = None) -> dict:
    comp = find("dialect", cf.dialect)
    where = ""
    if comp and loaded_plugins and comp["plugin"] in loaded_plugins:
        # (a plugin of that name is loaded, another build of it: loading "it" again would not help)
        where = (f"; plugin '{comp['plugin']}' is loaded ({loaded_plugins[comp['plugin']]}) but registers no dialect "
                 f"'{cf.dialect}'")
        if comp.get("path") and comp["path"] != loaded_plugins[comp["plugin"]]:
            where += f", unlike the plugin of that name at {comp['path']}"
    elif comp:
        where = f"; it is declared by plugin '{comp['plugin']}'"
        if comp.get("path"):
            where += f" ({comp['path']})"
        where += ", load it with htp.Context(plugins=[...]) or htp-host --plugins"
    return diagnostic("capture.dialect-not-loaded",
                      f"@{cf.decorator} on '{cf.fn.__name__}' comes from dialect '{cf.dialect}', which is not "
                      f"loaded{where}", span)


def capture(functions, *, loaded_dialects=None, loaded_plugins=None) -> dict:
    """The htp.ast.v1 document of the compile unit holding ``functions`` (captured functions) and every
    captured function they reference. ``loaded_dialects``: names of the dialects the compiling plugin set
    has (``None``: not checked); ``loaded_plugins``: its plugins' paths by name, for the reason when a dialect
    is missing. Raises CaptureError with every problem found."""
    roots = list(functions) if isinstance(functions, (list, tuple)) else [functions]
    if not roots:
        raise CaptureError([diagnostic("capture.nothing", "nothing to compile: pass a function decorated by a "
                                       "dialect decorator, or a non-empty list of them")])
    diags: list[dict] = []
    for r in roots:
        fn = r.fn if isinstance(r, MisusedDecorator) else r if isinstance(r, types.FunctionType) else None
        if fn is not None:  # a function the user meant to decorate: an error at its decorator (or def) line
            line = fn.__code__.co_firstlineno
            what = "is not decorated by a dialect decorator"
            if isinstance(r, MisusedDecorator):
                written = linecache.getline(fn.__code__.co_filename, line).strip()  # the decorator as written
                if not written.startswith("@"):
                    written = "@" + r._decorator.rsplit(".", 1)[-1]
                what = f"is decorated with {written}, which is not a dialect decorator"
            raise CaptureError([diagnostic("capture.not-captured",
                                           f"'{fn.__name__}' {what}: decorate it with @kernel, @workload or @program "
                                           "(or another loaded dialect's decorator)",
                                           {"file": fn.__code__.co_filename, "line": line, "col": 0,
                                            "end_line": line, "end_col": 0})])
        if not isinstance(r, CapturedFunction):
            raise TypeError(f"expected a function decorated by a dialect decorator, got {type(r).__name__}")
    units: dict[str, _Unit] = {}

    def unit_of(cf):
        path = cf.fn.__code__.co_filename
        if path not in units:
            units[path] = _Unit(path)
        return units[path]

    file = roots[0].fn.__code__.co_filename
    if not os.path.isfile(file):
        raise CaptureError([diagnostic("capture.no-source",
                                       f"cannot capture '{roots[0].fn.__name__}': its source file '{file}' "
                                       "cannot be read (functions defined interactively cannot be captured)")])
    unit = unit_of(roots[0])
    included: dict[int, tuple[CapturedFunction, ast.AST]] = {}
    surface_values: dict[int, dict[str, ast.expr]] = {}  # per function: name -> its module-level definition
    aliases: dict[int, dict[str, str]] = {}  # per function: a dialect name imported as another -> the dialect's
    constants: dict[str, object] = {}
    modules: dict[str, str] = {}  # global name -> the module it is bound to, for dialects' call rules
    work = list(roots)
    while work:
        cf = work.pop(0)
        if id(cf) in included:
            continue
        if cf.fn.__code__.co_filename != file:
            diags.append(diagnostic("capture.other-file",
                                    f"captured function '{cf.fn.__name__}' is defined in "
                                    f"'{cf.fn.__code__.co_filename}', not in '{file}': a compile unit holds "
                                    "the captured functions of one file"))
            continue
        node = unit.function_node(cf.fn)
        if node is None:
            diags.append(diagnostic("capture.no-source",
                                    f"cannot find the definition of '{cf.fn.__name__}' in '{file}'"))
            continue
        included[id(cf)] = (cf, node)
        _parse_string_annotations(node)
        if loaded_dialects is not None and cf.dialect not in loaded_dialects:
            diags.append(_not_loaded(cf, span_of(_decorator_node(node, cf), file), loaded_plugins))
        bound = _bound_names(node)
        a = node.args
        outer = list(node.decorator_list) + list(a.defaults) + [d for d in a.kw_defaults if d is not None]
        outer += [x.annotation for x in _parameters(a) if x.annotation is not None]
        if node.returns is not None:
            outer.append(node.returns)
        strict = _reads(node.body)
        lenient = _reads(outer)
        pending = list(strict.items()) + [(k, v) for k, v in lenient.items() if k not in strict]
        seen = {k for k, _ in pending}
        while pending:
            name, use = pending.pop(0)
            is_strict = name in strict
            if is_strict and name in bound:
                continue
            kind, value = _lookup(cf.fn, name, cf.scope)
            span = span_of(use, file)
            if kind in ("missing", "unbound"):
                if is_strict:
                    diags.append(diagnostic("capture.undefined", f"name '{name}' is not defined", span))
                continue
            if isinstance(value, types.ModuleType):  # SurfaceModule too: `pto` -> htp.intrinsics.pto
                if modules.setdefault(name, value.__name__) != value.__name__:
                    diags.append(diagnostic("capture.conflicting-module",
                                            f"'{name}' is bound to different modules in the captured functions "
                                            f"({modules[name]} and {value.__name__})", span))
                continue
            if isinstance(value, Symbol) and value._path.endswith((")", "]")) and name not in surface_values.get(id(cf), {}):
                # A dialect value bound to a name (`BLOCKED = Layout.axe(...)`): its arguments live only in the
                # source, so its one module-level definition takes the name's place where the function reads it.
                definition = _module_definition(unit.tree, name) if kind == "global" else None
                if definition is None:
                    diags.append(diagnostic("capture.surface-value",
                                            f"{kind} '{name}' holds {value._path}, a dialect value HTP reads from "
                                            "the source: assign it once at module level "
                                            f"({name} = {value._path.split('.', 1)[-1]}) or write it where it is "
                                            "used", span))
                    continue
                surface_values.setdefault(id(cf), {})[name] = definition
                # (the names the definition reads, `Tensor[N, 64, f32]`, are resolved as the function's own)
                for k, v in _reads([definition]).items():
                    if k not in seen:
                        seen.add(k)
                        pending.append((k, v))
                continue
            if isinstance(value, Symbol) and kind != "builtin":
                # A dialect name imported under another name (`from htp.dialects.tile import max as tmax`, to keep
                # Python's max): its reads take the dialect's name, which the dialect's passes know.
                dialect, _, canonical = value._path.partition(".")
                if (canonical.isidentifier() and canonical != name and f"htp.dialects.{dialect}" in sys.modules
                        and name not in bound):
                    aliases.setdefault(id(cf), {})[name] = canonical
                continue
            if kind == "builtin":
                continue
            if isinstance(value, CapturedFunction):
                if value.fn.__code__.co_filename != file:
                    diags.append(diagnostic("capture.other-file",
                                            f"captured function '{name}' is defined in "
                                            f"'{value.fn.__code__.co_filename}', not in '{file}': a compile "
                                            "unit holds the captured functions of one file", span))
                else:
                    work.append(value)
                continue
            try:
                c = _constant(value)
            except _ConstantRange as e:
                diags.append(diagnostic("capture.constant-range",
                                        f"{kind} '{name}' is a {e}, outside the 64-bit range "
                                        f"[-2**63, 2**63 - 1] that HTP computes sizes and indices in", span))
                continue
            except _NotConstant:
                if not is_strict:
                    continue
                hint = ("decorate it with a dialect decorator to capture it"
                        if isinstance(value, types.FunctionType) else
                        "only numbers, strings, booleans, None, tuples of these, captured functions, "
                        "dialect surfaces and modules can be used in a captured function")
                diags.append(diagnostic("capture.unsupported-global",
                                        f"cannot capture {kind} '{name}' of type {type(value).__name__}: {hint}",
                                        span))
                continue
            if name in constants and constants[name] != c:
                diags.append(diagnostic("capture.conflicting-constant",
                                        f"'{name}' has different values in the captured functions "
                                        f"({constants[name]!r} and {c!r})", span))
                continue
            constants[name] = c
        if not work:  # the captured functions attached to an included one: `@schedule(w)` for workload w
            work.extend(_attached(unit, included, roots))
    if diags:
        diags.sort(key=lambda d: (d["span"]["line"], d["span"]["col"]))
        raise CaptureError(diags)
    members = sorted(included.values(), key=lambda p: (p[1].lineno, p[1].col_offset))
    for cf, node in members:
        if id(cf) in surface_values:
            _Inline(surface_values[id(cf)], _bound_names(node)).visit(node)
        if id(cf) in aliases:
            _Unalias(aliases[id(cf)], node, cf).visit(node)
    for cf, node in members:  # the resolved dialect, whatever the decorator's spelling (`t.kernel`, `kernel`)
        node._htp_attrs = {**getattr(node, "_htp_attrs", {}), "htp.dialect": cf.dialect,
                           "htp.decorator": cf.decorator}
    module = ast.Module(body=[node for _, node in members], type_ignores=[])
    attrs = {ATTR: {
        "entries": [{"name": cf.fn.__name__, "dialect": cf.dialect, "decorator": cf.decorator,
                     "line": node.lineno} for cf, node in members],
        "constants": dict(sorted(constants.items())),
        "modules": dict(sorted(modules.items())),
    }}
    return _ast_json.to_json(module, file, source=unit.source, attrs=attrs)


# --------------------------------------------------------------------------------------------- CLI


def _exception_span(exc: BaseException, file: str) -> dict | None:
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == file:
            line = lineno
    if line is None:
        return None
    return {"file": file, "line": line, "col": 0, "end_line": line, "end_col": 0}


def capture_file(path: str, plugin_specs=None, builtins: bool = True) -> tuple[dict | None, list[dict]]:
    """Runs the program at ``path`` as a module and captures every captured function it defines,
    checking their dialects against the built-in plugins (unless ``builtins`` is false) and those of
    ``plugin_specs``."""
    try:
        source = _read_source(path)
    except (OSError, SyntaxError, UnicodeDecodeError) as e:
        return None, [diagnostic("capture.read", f"cannot read '{path}': {e}")]
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        line = e.lineno or 0
        col = max((e.offset or 1) - 1, 0)
        span = {"file": path, "line": line, "col": col, "end_line": e.end_lineno or line,
                "end_col": max((e.end_offset or (col + 1)) - 1, col)}
        return None, [diagnostic("capture.syntax", f"{type(e).__name__}: {e.msg}", span)]
    except ValueError as e:  # a NUL byte (Python 3.11 says so with ValueError, not SyntaxError)
        text = source if isinstance(source, str) else source.decode("utf-8", "replace")
        at = text.find("\0")
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        col = at - (text.rfind("\n", 0, at) + 1) if at >= 0 else 0
        span = {"file": path, "line": line, "col": col, "end_line": line, "end_col": col}
        return None, [diagnostic("capture.syntax", f"the source cannot be compiled: {e}", span)]
    try:
        declared = register_plugins(plugin_specs, builtins=builtins)
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return None, [diagnostic("capture.plugins", f"cannot read the plugin manifests: {e}")]
    loaded = {c["name"] for c in declared if c["kind"] == "dialect"}
    # A Python extension among the plugins (`htp-host --plugins ext.py`) is imported first, as a Context
    # loading it does, so that the program's `from htp.intrinsics import <set>` finds the sets it declares.
    from . import extension

    for spec in plugin_specs or []:
        if extension.is_extension_spec(spec):
            try:
                extension.extensions_of(spec)
            except Exception as e:  # noqa: BLE001 - reported, not raised
                return None, [extension.import_failure(spec, e)]

    module = types.ModuleType("__htp_program__")
    module.__file__ = path
    sys.modules[module.__name__] = module
    sys.path.insert(0, os.path.dirname(path))
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001 - the program's failure is a diagnostic
        if isinstance(e, SystemExit) and not e.code:
            pass
        else:
            return None, [diagnostic("capture.run", f"running '{path}' failed: {type(e).__name__}: {e}",
                                     _exception_span(e, path))]
    found = [v for v in module.__dict__.values()
             if isinstance(v, CapturedFunction) and v.fn.__code__.co_filename == path]
    unique = list({id(v): v for v in found}.values())
    unique.sort(key=lambda v: v.fn.__code__.co_firstlineno)
    if not unique:
        return None, [diagnostic("capture.empty",
                                 f"'{path}' defines no captured function (decorate one with a dialect "
                                 "decorator, e.g. `from htp.dialects import <name>`)",
                                 {"file": path, "line": 1, "col": 0, "end_line": 1, "end_col": 0})]
    try:
        doc = capture(unique, loaded_dialects=loaded,
                      loaded_plugins={c["plugin"]: c.get("path", "") for c in declared if c.get("plugin")})
        return doc, []
    except CaptureError as e:
        return None, e.diagnostics
    except Exception as e:  # noqa: BLE001 - an input capture cannot represent is still a located diagnostic
        line = unique[0].fn.__code__.co_firstlineno
        return None, [diagnostic("capture.failed", f"cannot capture '{unique[0].fn.__name__}': "
                                 f"{type(e).__name__}: {e}",
                                 {"file": path, "line": line, "col": 0, "end_line": line, "end_col": 0})]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m htp.capture", description=__doc__.split("\n\n")[0])
    p.add_argument("program")
    p.add_argument("--output", required=True)
    p.add_argument("--diagnostics", required=True)
    p.add_argument("--plugins", action="append", default=None)
    p.add_argument("--no-builtin-plugins", action="store_true")
    a = p.parse_args(argv)
    path = os.path.abspath(a.program)
    doc, diags = capture_file(path, a.plugins, builtins=not a.no_builtin_plugins)
    ok = doc is not None and not any(d["severity"] == "error" for d in diags)
    if ok:
        try:
            text = _ast_json.dumps(doc)
        except (ValueError, TypeError, RecursionError) as e:  # reported at the program, never a traceback
            ok = False
            diags = [diagnostic("capture.failed", f"cannot encode the captured module of '{path}': "
                                f"{type(e).__name__}: {e}",
                                {"file": path, "line": 1, "col": 0, "end_line": 1, "end_col": 0})]
        else:
            with open(a.output, "w", encoding="utf-8") as f:
                f.write(text)
    with open(a.diagnostics, "w", encoding="utf-8") as f:
        json.dump(diags, f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
