"""Extensions written in Python: passes, intrinsic sets and pipelines that register into the host's one
registry next to the plugins' components, chosen, ordered and explained by the same resolver and pinned in
plans, lockfiles and manifests by the sha256 of their source file.

A Python pass is match -> apply patterns over the host's AST (the host's rewrite driver owns the loop:
worklist, fixpoint, deterministic order, iteration bound, provenance), a whole-module body, or both::

    from htp.extension import Extension

    ext = Extension("strength-reduction", version="1.0.0", summary="x * 2**k -> x << k")

    @ext.pattern_pass("user.mul-pow2-to-shift", roots=["BinOp"], stage="canonicalize",
                      applies_to=["Uses.Dialect(name=tile)"], before=["tile.typecheck"])
    def mul_pow2(node, rw):
        if node.op.type != "Mult" or node.right.type != "Constant":
            return False                      # no match: the tree is unchanged
        ...
        rw.replace(node, rw.expr("x << k", at=node, x=node.left, k=shift))
        return True                           # rewritten

Patterns receive ``node`` (an ``htp.Node``: ``type``, ``node_id`` (the stable id), ``span``, ``parent``,
each field by name, e.g. ``node.left`` or ``node.id`` of a Name (``node.get(field)`` for every field, also one
named like a property, such as ExceptHandler's ``type``), and metadata ``meta(key)``) and ``rw`` (an ``htp.Rewriter``: the module, options, edits
``create``/``clone``/``replace``/``set``/``insert``/``erase``/``expr``, and ``error``/``warning``). Views are
valid only during the call that received them. Load extensions with
``htp.Context(plugins=["my_ext.py"])`` (a file or a module object); see docs/python-extensions.md.
"""
from __future__ import annotations

import ast as _pyast
import hashlib
import importlib.util
import inspect
import json
import os
import pathlib
import sys
import traceback
import types

from . import _htp
from .errors import diagnostic, render

Node = _htp.Node
Rewriter = _htp.Rewriter

_STAGES = ("canonicalize", "analyze", "typecheck", "schedule", "lower", "emit", "package")


def _caller(depth: int = 2) -> tuple[str, int]:
    """(file, line) of the user code that called the declaring function."""
    frame = sys._getframe(depth)
    return frame.f_code.co_filename, frame.f_lineno


def _strings(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{what} holds {type(v).__name__} {v!r}; capabilities and ids are strings")
    return out


class _Component:
    """One declared component: its descriptor dict and where it was declared."""

    def __init__(self, kind: str, id: str, where: tuple[str, int], **fields):
        if not isinstance(id, str) or not id:
            raise ValueError(f"a {kind} needs a non-empty string id")
        self.kind, self.id, self.where = kind, id, where
        self.fields = fields

    def descriptor(self, version: str) -> dict:
        """The descriptor for the host; a component without a version of its own has the extension's."""
        d = {"kind": self.kind, "id": self.id}
        d.update(self.fields)
        d["version"] = self.fields.get("version") or version
        file, line = self.where  # (where the host's warnings about it point)
        d["span"] = {"file": file, "line": line, "col": 0, "end_line": line, "end_col": 0}
        return d

    def capability_errors(self) -> list[dict]:
        """capability.syntax diagnostics at the Python line that declared the component."""
        out = []
        file, line = self.where
        for key, fact in (("provides", True), ("requires", False), ("conflicts", False), ("accepts", False),
                          ("applies_to", False), ("invalidates", False)):
            for i, text in enumerate(self.fields.get(key) or []):
                d = _htp.capability_diagnostic(text, fact, f"{key}[{i}] of {self.kind} '{self.id}'", file, line, 0)
                if d is not None:
                    out.append(d)
        return out


class Pass:
    """A pass being declared: add patterns with ``@p.pattern(roots...)`` and a whole-module body with
    ``@p.module`` (runs before the patterns) or ``@p.finish`` (after their fixpoint)."""

    def __init__(self, component: _Component):
        self._c = component
        self._c.fields.setdefault("patterns", [])

    @property
    def id(self) -> str:
        return self._c.id

    def pattern(self, *roots: str, name: str | None = None, benefit: int = 0):
        """Registers ``fn(node, rw) -> bool`` as a pattern offered the nodes of the given types (all nodes
        when none); it returns True when it rewrote the tree through ``rw``, False when it does not apply."""
        roots = _strings(list(roots), "roots")

        def decorate(fn):
            self._c.fields["patterns"].append(
                {"name": name or fn.__name__.replace("_", "-"), "roots": roots, "benefit": int(benefit), "fn": fn})
            return fn

        return decorate

    def module(self, fn):
        """Registers ``fn(rw)`` as the pass's whole-module body (it runs before the patterns)."""
        self._c.fields["run"] = fn
        return fn

    def finish(self, fn):
        """Registers ``fn(rw)`` to run after the patterns have reached their fixpoint."""
        self._c.fields["finish"] = fn
        return fn


class IntrinsicSet:
    """An intrinsic set declared in Python: ops whose calls in a kernel (``S.op(...)`` after
    ``from htp.intrinsics import S``) are replaced, per target, by what a Python builder returns: existing
    tile ops or another set's ops. Declare each op with ``@iset.op`` on its builder
    ``fn(rw, <the op's parameters>) -> Node`` (the parameters are the op's signature: calls are bound to
    them, and they make the generated stub); give ``targets=[...]`` to lower it only for those targets (a
    builder without targets serves every target that has no builder of its own for that op)."""

    def __init__(self, ext: "Extension", name: str, summary: str, contract: str):
        if not name.isidentifier():
            raise ValueError(f"intrinsic set name '{name}' is not a Python identifier")
        self.ext, self.name, self.summary, self.contract = ext, name, summary, contract
        self.ops: dict[str, dict] = {}  # op -> {"signature", "contract", "doc", "builders": {target|None: fn}}
        self.where = _caller(3)
        _python_sets[name] = self

    def op(self, fn=None, *, name: str | None = None, targets=None, contract: str | None = None):
        def decorate(fn):
            op = name or fn.__name__
            if not op.isidentifier():  # (a lambda's name, "<lambda>", would be the op's name)
                raise ValueError(f"the op name {op!r} of intrinsic set '{self.name}' is not a Python identifier: "
                                 f"declare the builder with def, or give it one with @{self.name}.op(name=...)")
            params = list(inspect.signature(fn).parameters.values())
            if not params:
                raise TypeError(f"builder of {self.name}.{op} must take the rewriter as its first parameter")
            signature = inspect.Signature(params[1:], return_annotation=inspect.signature(fn).return_annotation)
            entry = self.ops.setdefault(op, {"signature": signature, "contract": contract or self.contract,
                                             "doc": inspect.getdoc(fn) or "", "builders": {}})
            if str(entry["signature"]) != str(signature):
                raise TypeError(f"{self.name}.{op}: every builder must take the same parameters "
                                f"({entry['signature']} vs {signature})")
            for t in _strings(targets, "targets") or [None]:
                if t in entry["builders"]:
                    raise ValueError(f"{self.name}.{op} has two builders for {t or 'every target'}")
                entry["builders"][t] = fn
            self.publish()
            return fn

        return decorate(fn) if fn is not None else decorate

    def publish(self) -> None:
        """Makes ``htp.intrinsics.<set>`` (with the ops declared so far) importable."""
        from . import surface

        surface.register_components([{"kind": "intrinsic-set", "id": f"{self.name}.intrinsics", "name": self.name,
                                      "names": sorted(self.ops), "plugin": self.ext.name, "path": self.where[0]}],
                                    replace=True)

    def stub(self) -> str:
        """The editor stub ``htp/intrinsics/<set>.pyi``: each op with its declared signature (surface types
        such as ``Tile`` imported from their dialect, anything else ``Any``)."""
        imports: set[tuple[str, str]] = set()

        def annotation(a) -> str:
            if a is inspect.Parameter.empty:
                return ""
            path = getattr(a, "_path", None)  # a dialect's surface symbol, e.g. tile.Tile
            if isinstance(path, str) and "." in path and path.replace(".", "").isidentifier():
                module, name = path.rsplit(".", 1)
                imports.add((f"htp.dialects.{module}", name))
                return name
            if isinstance(a, type) and a.__module__ == "builtins":
                return a.__name__
            return "Any"

        defs = []
        for op in sorted(self.ops):
            e = self.ops[op]
            params = []
            for p in e["signature"].parameters.values():
                ann = annotation(p.annotation)
                text = p.name + (f": {ann}" if ann else "")
                if p.default is not p.empty:
                    text += f" = {p.default!r}"
                params.append(text)
            ret = annotation(e["signature"].return_annotation)
            sig = f"({', '.join(params)})" + (f" -> {ret}" if ret else "")
            doc = e["doc"].splitlines()[0] if e["doc"] else f"{self.name}.{op} ({e['contract']})"
            defs.append(f"def {op}{sig}:\n    \"\"\"{doc}\"\"\"\n")
        head = [f"# Generated by htp.stubgen: intrinsic set '{self.name}' of Python extension '{self.ext.name}' "
                f"({self.where[0]}). Do not edit.", "from typing import Any"]
        head += [f"from {m} import {n}" for m, n in sorted(imports)]
        return "\n".join(head + [""] + defs)

    def _targets(self) -> list:
        return sorted({t for e in self.ops.values() for t in e["builders"] if t is not None})

    def _lowering(self, target, nested: bool = False):
        """The pattern of the lowering pass for ``target`` (None: the pass for every other target). A targeted
        pass runs first; an op it has no builder for is left to the generic pass (or, without one, to the
        resolver, which has already refused the target). ``nested``: a call another builder returned, lowered
        right away with the target's builder or the generic one."""
        set_name = self.name

        def lower(node, rw):
            func = node.func
            if func.type != "Attribute" or not _is_set_reference(rw, func.value, set_name):
                return False
            op = func.attr
            entry = self.ops.get(op)
            if entry is None:
                rw.error(node, "intrinsic.unknown-op", f"intrinsic set '{set_name}' has no op '{op}' "
                         f"(it has {', '.join(sorted(self.ops)) or 'none'})")
                raise RewriteFailed()
            build = entry["builders"].get(target) or (entry["builders"].get(None) if nested else None)
            if build is None:
                return False
            sig = entry["signature"]
            unknown = [k.arg for k in node.keywords if k.arg not in sig.parameters]
            try:
                if unknown:  # (bind() would say a required argument is missing, not which keyword is wrong)
                    raise TypeError(f"got an unexpected keyword argument '{unknown[0]}'")
                bound = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
            except TypeError as e:
                rw.error(node, "intrinsic.arity", f"{set_name}.{op}{_signature_text(sig)}: {e}")
                raise RewriteFailed() from None
            bound.apply_defaults()
            for pname, value in bound.arguments.items():
                wrong = _evidently_not(sig.parameters[pname].annotation, value)
                if wrong:
                    rw.error(value if isinstance(value, Node) else node, "intrinsic.argument",
                             f"{set_name}.{op}{_signature_text(sig)}: argument '{pname}' {wrong}")
                    raise RewriteFailed()
            _hoist_receiving_arguments(rw, node, bound, f"_htp_{set_name}_{op}")
            replacement = build(rw, *bound.args, **bound.kwargs)
            if not isinstance(replacement, Node):
                rw.error(node, "intrinsic.lowering", f"the builder of {set_name}.{op} returned "
                         f"{type(replacement).__name__}, not a Node")
                raise RewriteFailed()
            if replacement.parent is not None:  # one of its arguments as it is (an identity op): a copy of it
                replacement = rw.clone(replacement)
            rw.replace(node, replacement)
            _lower_nested(rw, replacement, target)
            return True

        lower.__name__ = f"lower_{set_name}"
        return lower

    def components(self) -> list[_Component]:
        """The intrinsic-set component and its lowering passes (one for every target without a builder of its
        own when some builder has no targets, one per named target): each accepts the set's uses, so the
        resolver rejects a target no builder serves, at the call."""
        out = [_Component("intrinsic-set", f"{self.name}.intrinsics", self.where, set=self.name,
                          ops=sorted(self.ops), summary=self.summary)]
        generic = any(None in e["builders"] for e in self.ops.values())
        for target in ([None] if generic else []) + self._targets():
            suffix = "" if target is None else f".{target}"
            ops = sorted(op for op, e in self.ops.items() if target in e["builders"] or (target and None in e["builders"]))
            applies = [f"Uses.Intrinsic(set={self.name})"] + ([f"Target.Selected(name={target})"] if target else [])
            before = ["tile.typecheck"] + ([f"{self.name}.lower"] if target and generic else [])
            where = self.where  # a target's own pass: where its first builder is (the op naming the target)
            if target:
                code = next(e["builders"][target] for e in self.ops.values() if target in e["builders"]).__code__
                where = (code.co_filename, code.co_firstlineno)
            out.append(_Component(
                "pass", f"{self.name}.lower{suffix}", where, stage="canonicalize", requires=[], provides=[],
                invalidates=[], conflicts=[], applies_to=applies, before=before, after=["tile.fold"],
                accepts=[f"Uses.Intrinsic(set={self.name},op={op})" for op in ops], version=None,
                summary=f"lowers intrinsic set '{self.name}'" + (f" for {target}" if target else ""),
                patterns=[{"name": f"lower-{self.name}", "roots": ["Call"], "benefit": 0,
                           "fn": self._lowering(target)}]))
        return out


class RewriteFailed(Exception):
    """Raised by a pattern after it reported its error with ``rw.error``: stops the pass without a second
    diagnostic."""


# Statements an argument can be hoisted in front of: each evaluates its expressions once, in order.
_SIMPLE_STATEMENTS = {"Expr", "Assign", "AugAssign", "AnnAssign", "Return"}
_STATEMENTS = {c.__name__ for c in _pyast.stmt.__subclasses__()}


def _receives(node) -> bool:
    """Whether an expression contains a ``recv(...)`` call (a CSP receive: evaluating it twice receives twice)."""
    if node.type == "Call":
        func = node.get("func")
        if (func.type == "Name" and func.get("id") == "recv") or (func.type == "Attribute" and func.get("attr") == "recv"):
            return True
    for field in node.fields():
        value = node.get(field)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, Node) and _receives(child):
                return True
    return False


def _enclosing_statement(node):
    """(statement, its parent, the list field holding it, its index) for the simple statement holding ``node``,
    or None (the call sits in a loop header, a condition, ...)."""
    child, parent = node, node.parent
    while parent is not None:
        for field in parent.fields():
            value = parent.get(field)
            if isinstance(value, list) and child.type in _STATEMENTS and child in value:
                if child.type not in _SIMPLE_STATEMENTS:
                    return None
                return child, parent, field, value.index(child)
        child, parent = parent, parent.parent
    return None


def _hoist_receiving_arguments(rw, call, bound, prefix: str) -> None:
    """Replaces each argument of an intrinsic call that receives from a channel by a temporary assigned just
    before the statement holding the call, so the builder may use the argument any number of times and the
    program still receives once (a builder's ``rw.expr("mul(x, x)", x=x)`` cloned ``recv(ch)`` twice:
    csp.count-mismatch)."""
    receiving = [(name, value) for name, value in bound.arguments.items() if isinstance(value, Node) and _receives(value)]
    where = _enclosing_statement(call) if receiving else None
    if where is None:
        return
    _, parent, field, index = where
    suffix = hashlib.sha256(str(call.node_id).encode()).hexdigest()[:6]
    for name, value in receiving:  # (in argument order, each just before the statement)
        temp = f"{prefix}_{name}_{suffix}"
        rw.insert(parent, field, index, _build(rw, _pyast.parse(f"{temp} = value").body[0], value, {"value": value}))
        index += 1
        bound.arguments[name] = _build(rw, _pyast.parse(temp, mode="eval").body, value, {})


def _evidently_not(annotation, value) -> str:
    """What is wrong with an op's argument whose kind its syntax settles against the parameter's annotation
    (a number for a ``Tile``, a ``load(...)`` for a ``float``), or ''. The rest is left to ``tile.typecheck``,
    whose errors would name the builder's ops instead of the user's call."""
    if not isinstance(value, Node):
        return ""
    # (a string under `from __future__ import annotations`)
    kind = annotation if isinstance(annotation, str) else getattr(annotation, "_path", None) or \
        getattr(annotation, "__name__", "")
    kind = kind.rsplit(".", 1)[-1] if isinstance(kind, str) else ""
    number, sign = value, ""
    if number.type == "UnaryOp" and number.op.type in ("USub", "UAdd"):
        number, sign = number.operand, "-" if number.op.type == "USub" else ""
    if kind == "Tile" and number.type == "Constant" and type(number.value) in (int, float, bool):
        return f"is a Tile, got the number {sign}{number.value!r}"
    loads = value.type == "Call" and value.func.type == "Name" and value.func.id == "load"
    if kind in ("int", "float", "bool") and loads:
        return f"is a scalar ({kind}), got a tile (a load(...))"
    return ""


def _signature_text(sig: inspect.Signature) -> str:
    """``(a: float, x: Tile) -> Tile``: the op's signature as the user declared it (a surface type by its name,
    not its repr)."""
    def name(a) -> str:
        path = getattr(a, "_path", None)
        if isinstance(path, str):
            return path.rsplit(".", 1)[-1]
        return a.__name__ if isinstance(a, type) else repr(a)

    params = []
    for p in sig.parameters.values():
        text = p.name + ("" if p.annotation is p.empty else f": {name(p.annotation)}")
        params.append(text + ("" if p.default is p.empty else f" = {p.default!r}"))
    ret = "" if sig.return_annotation is sig.empty else f" -> {name(sig.return_annotation)}"
    return f"({', '.join(params)}){ret}"


_python_sets: dict[str, IntrinsicSet] = {}  # every Python intrinsic set declared in this process, by name
_nesting = [0]  # how deep builders' replacements are being lowered


def _calls(node):
    """The Call nodes in ``node``'s subtree, innermost first."""
    out = []
    for field in node.fields():
        value = node.get(field)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, Node):
                out += _calls(child)
    if node.type == "Call":
        out.append(node)
    return out


def _lower_nested(rw, replacement, target) -> None:
    """Lowers the calls to Python intrinsic sets in a builder's replacement (now in the module) at once: a
    builder may return another set's ops (docs/python-extensions.md §3), or its own set's, whose lowering pass may
    run before this one or not be selected at all."""
    if _nesting[0] >= 32:
        rw.error(replacement, "intrinsic.lowering", "intrinsic builders return each other's ops more than 32 deep")
        raise RewriteFailed()
    _nesting[0] += 1
    try:
        for call in _calls(replacement):
            func = call.func
            if func is None or func.type != "Attribute":
                continue
            for name, iset in list(_python_sets.items()):
                if _is_set_reference(rw, func.value, name):
                    iset._lowering(target, nested=True)(call, rw)
                    break
    finally:
        _nesting[0] -= 1


def _is_set_reference(rw, value, set_name: str) -> bool:
    """True when ``value`` (the ``S`` of a call ``S.op(...)``) names intrinsic set ``set_name``: a global bound
    to ``htp.intrinsics.<set>`` (any alias, per the capture's module table) or the dotted path itself."""
    dotted = []
    while value is not None and value.type == "Attribute":
        dotted.append(value.attr)
        value = value.value
    if value is None or value.type != "Name":
        return False
    dotted.append(value.id)
    path = ".".join(reversed(dotted))
    modules = (rw.module_attr("htp.capture", {}) or {}).get("modules", {})
    head, _, rest = path.partition(".")
    if head in modules:
        path = modules[head] + ("." + rest if rest else "")
    return path == f"htp.intrinsics.{set_name}"


class Extension:
    """A named set of Python components: the unit HTP loads, hashes and pins (like one plugin library)."""

    def __init__(self, name: str, version: str = "0.1.0", summary: str = ""):
        self.name, self.version, self.summary = name, version, summary
        self.components: list[_Component] = []
        self.intrinsic_sets: list[IntrinsicSet] = []
        self.declared_at = _caller()

    def intrinsic_set(self, name: str, *, summary: str = "", contract: str = "python") -> IntrinsicSet:
        """Declares intrinsic set ``name``; add ops with ``@iset.op``. Importing the extension makes
        ``htp.intrinsics.<name>`` importable, so kernels can use it before a Context loads the extension."""
        from . import surface

        # (publishing replaces the set's surface: one another plugin declares, a built-in dialect's among
        # them, would stay broken for the whole process although the registry refuses this extension)
        owner = surface.find("intrinsic-set", name)
        if owner is not None and owner.get("plugin") != self.name:
            raise ValueError(f"intrinsic set '{name}' is already declared by plugin '{owner.get('plugin')}'; "
                             f"give this extension's set another name")
        iset = IntrinsicSet(self, name, summary, contract)
        self.intrinsic_sets.append(iset)
        iset.publish()
        return iset

    def _add(self, kind: str, id: str, where, **fields) -> _Component:
        if any(c.id == id for c in self.components):
            raise ValueError(f"extension '{self.name}' declares '{id}' twice")
        c = _Component(kind, id, where, **fields)
        self.components.append(c)
        return c

    def pass_(self, id: str, *, stage: str = "canonicalize", requires=(), provides=(), invalidates=(),
              conflicts=(), applies_to=(), before=(), after=(), version: str | None = None,
              summary: str = "") -> Pass:
        """Declares a pass. ``stage`` is one of canonicalize, analyze, typecheck, schedule, lower, emit,
        package; ``requires``/``provides``/``invalidates``/``conflicts``/``applies_to`` are capability texts,
        ``before``/``after`` pass ids; exactly as a C++ PassSpec."""
        if stage not in _STAGES:
            raise ValueError(f"pass '{id}': unknown stage '{stage}' (one of {', '.join(_STAGES)})")
        return Pass(self._add("pass", id, _caller(), stage=stage, requires=_strings(requires, "requires"),
                              provides=_strings(provides, "provides"),
                              invalidates=_strings(invalidates, "invalidates"),
                              conflicts=_strings(conflicts, "conflicts"),
                              applies_to=_strings(applies_to, "applies_to"), before=_strings(before, "before"),
                              after=_strings(after, "after"), version=version, summary=summary))

    def pattern_pass(self, id: str, roots=(), *, benefit: int = 0, **kwargs):
        """A pass of one pattern: decorates ``fn(node, rw) -> bool`` (see Pass.pattern)."""
        where = _caller()

        def decorate(fn):
            p = self.pass_(id, **kwargs)
            p._c.where = where
            p.pattern(*_strings(roots, "roots"), name=fn.__name__.replace("_", "-"), benefit=benefit)(fn)
            return fn

        return decorate

    def pipeline(self, id: str, *, targets, passes, provides=(), requires=(), version: str | None = None,
                 summary: str = "") -> None:
        """Declares a pipeline template: the ordered pass ids it runs for ``targets``; select it with
        ``compile(..., pipeline=...)`` or let the resolver choose it."""
        self._add("pipeline", id, _caller(), targets=_strings(targets, "targets"), passes=_strings(passes, "passes"),
                  provides=_strings(provides, "provides"), requires=_strings(requires, "requires"), version=version,
                  summary=summary)

    def all_components(self) -> list[_Component]:
        return self.components + [c for iset in self.intrinsic_sets for c in iset.components()]

    def descriptors(self) -> list[dict]:
        return [c.descriptor(self.version) for c in self.all_components()]

    def capability_errors(self) -> list[dict]:
        return [d for c in self.all_components() for d in c.capability_errors()]


# ---- Rewriter conveniences (plain Python on top of the C++ view) ------------------------------------


def _module_attr(rw, key: str, default=None):
    """A module attribute's JSON value, or ``default``."""
    text = rw.module_attr_json(key)
    return default if text is None else json.loads(text)


def _set_module_attr(rw, key: str, value) -> None:
    rw.set_module_attr_json(key, json.dumps(value))


def _option(rw, key: str, default=None):
    """A pass option (``target``, or a parameter passed as ``compile(options=...)``), or ``default``."""
    text = rw.option_json(key)
    return default if text is None else json.loads(text)


def _node_meta(node, key: str, default=None):
    """A metadata attribute's JSON value (e.g. ``node.meta("wsp.axis")``), or ``default``."""
    text = node.meta_json(key)
    return default if text is None else json.loads(text)


def _set_meta(rw, node, key: str, value) -> None:
    rw.set_meta_json(node, key, json.dumps(value))


def _error(rw, node, code: str, message: str) -> None:
    rw.report(node, "error", code, message)


def _warning(rw, node, code: str, message: str) -> None:
    rw.report(node, "warning", code, message)


def _constant(rw, value, at=None):
    n = rw.create("Constant", at)
    rw.set(n, "value", value)
    return n


def _build(rw, py, at, subs):
    """A detached host subtree for a Python ast node; Names listed in ``subs`` are replaced by a clone of
    the given Node, or by a Constant of the given value."""
    if isinstance(py, _pyast.Name) and py.id in subs:
        value = subs[py.id]
        return rw.clone(value) if isinstance(value, Node) else _constant(rw, value, at)
    n = rw.create(type(py).__name__, at)
    for field in py._fields:
        value = getattr(py, field)
        if isinstance(value, _pyast.AST):
            rw.set(n, field, _build(rw, value, at, subs))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, _pyast.AST):
                    rw.insert(n, field, i, _build(rw, item, at, subs))
                else:
                    raise TypeError(f"expr(): list field '{field}' of {type(py).__name__} holds {item!r}")
        elif value is not None or field == "value":
            rw.set(n, field, value)
    return n


def _expr(rw, template: str, at=None, **subs):
    """A new detached expression built from Python source, e.g. ``rw.expr("x << k", at=node, x=node.left,
    k=3)``: names given as keywords become clones of those nodes (or constants); spans come from ``at``
    (default: the node the pattern was offered)."""
    tree = _pyast.parse(template, mode="eval").body
    return _build(rw, tree, at if at is not None else rw.matched, subs)


def _getattr(node, field):
    try:
        return node.get(field)
    except KeyError:
        raise AttributeError(f"a {node.type} node has no field '{field}'") from None


Rewriter.module_attr = _module_attr
Rewriter.set_module_attr = _set_module_attr
Rewriter.option = _option
Rewriter.set_meta = _set_meta
Rewriter.error = _error
Rewriter.warning = _warning
Rewriter.constant = _constant
Rewriter.expr = _expr
Node.meta = _node_meta
Node.__getattr__ = _getattr


# ---- Loading --------------------------------------------------------------------------------------


def _import_file(path: pathlib.Path) -> types.ModuleType:
    # As for a script (and a program HTP captures): its directory is on sys.path, so it imports the modules
    # beside it, then and when its passes run.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"htp_extension_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import '{path}' as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def is_extension_spec(spec) -> bool:
    """True for what ``Context(plugins=...)`` loads as a Python extension: a module object or a ``.py`` path."""
    return isinstance(spec, types.ModuleType) or (isinstance(spec, (str, os.PathLike))
                                                   and os.fspath(spec).endswith(".py"))


def extensions_of(spec) -> tuple[list[Extension], pathlib.Path]:
    """The Extension objects a module (or the ``.py`` file, imported) defines at top level, and its source."""
    if isinstance(spec, types.ModuleType):
        module = spec
        source = getattr(module, "__file__", None)
        if not source:
            raise ValueError(f"module '{module.__name__}' has no source file to hash (__file__ is not set)")
    else:
        source = os.path.abspath(os.fspath(spec))
        if not os.path.isfile(source):
            raise FileNotFoundError(f"Python extension '{source}' does not exist")
        module = _import_file(pathlib.Path(source))
    found = [v for v in vars(module).values() if isinstance(v, Extension)]
    if not found:
        raise NotAnExtension(source)
    return found, pathlib.Path(source).resolve()


class NotAnExtension(ValueError):
    """A module that defines no Extension at top level (what it is, not something it raised)."""

    def __init__(self, source):
        super().__init__(f"'{source}' defines no htp.extension.Extension at top level")
        self.source = os.fspath(source)


def source_of(spec) -> pathlib.Path | None:
    """The resolved source file an extension spec names (a ``.py`` path or a module), or None."""
    path = getattr(spec, "__file__", None) if isinstance(spec, types.ModuleType) else os.fspath(spec)
    return pathlib.Path(path).resolve() if path else None


def load(spec, register, loaded_sources: set | None = None) -> tuple[list[Extension], list[dict]]:
    """Imports the extension ``spec`` (a ``.py`` path or a module) and registers each of its Extensions with
    ``register(ext, source) -> [diagnostic dicts]`` (a Context's host, or htp-host's through htp._embedded).
    Returns the Extensions registered and the diagnostics; it stops at the first error: a module that raises
    while importing, a capability that does not parse (at its Python line), or the host's refusal. A source
    in ``loaded_sources`` (the files this host has loaded; the new one is added) is not loaded again, as a
    plugin library is not."""
    if isinstance(spec, (str, os.PathLike)) and not os.path.exists(spec):  # as for a plugin library
        d = {"severity": "error", "code": "plugins.missing", "notes": [],
             "message": f"Python extension '{os.fspath(spec)}' not found: No such file or directory"}
        d["rendered"] = render(d)
        return [], [d]
    if loaded_sources is not None and source_of(spec) in loaded_sources:
        return [], []
    try:
        found, source = extensions_of(spec)
    except NotAnExtension as e:  # at the user's file: nothing raised there
        d = diagnostic("python.no-extension",
                       f"Python extension {e}: a Python extension is a module that defines htp.extension.Extension "
                       f"objects (python-extensions.md §1)",
                       {"file": e.source, "line": 1, "col": 0, "end_line": 1, "end_col": 0})
        d.update(notes=[], rendered=render(d))
        return [], [d]
    except Exception as e:  # the user's module raised while importing
        return [], [import_failure(spec.__name__ if isinstance(spec, types.ModuleType) else spec, e)]
    loaded, diagnostics = [], []
    for ext in found:
        diags = ext.capability_errors() or register(ext, source)
        diagnostics += diags
        if any(d["severity"] == "error" for d in diags):
            break
        loaded.append(ext)
    if loaded_sources is not None and loaded:
        loaded_sources.add(source)
    return loaded, diagnostics


def user_frame(tb) -> tuple[str, int, str] | None:
    """(file, line, function) of the deepest frame of traceback ``tb`` in the user's code: not in HTP's own Python
    package, the standard library or importlib's frozen modules (an extension's mistake is reported where the
    user made it, not where HTP or ``ast.parse`` noticed it); the last frame when every frame is HTP's."""
    import sysconfig

    skip = (os.path.dirname(os.path.abspath(__file__)) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep, "<frozen ")
    frames = traceback.extract_tb(tb)
    for f in reversed(frames):
        if not f.filename.startswith(skip):
            return f.filename, f.lineno or 0, f.name
    return (frames[-1].filename, frames[-1].lineno or 0, frames[-1].name) if frames else None


def import_failure(source, exc: BaseException) -> dict:
    """A diagnostic dict for an extension whose module raised while importing, at the user's frame (a syntax
    error at its own line)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        frame = (exc.filename, exc.lineno or 0, "")
    else:
        frame = user_frame(exc.__traceback__)
    span = {"file": frame[0] if frame else os.fspath(source), "line": frame[1] if frame else 0, "col": 0,
            "end_line": frame[1] if frame else 0, "end_col": 0}
    message = f"Python extension '{os.fspath(source)}' raised {type(exc).__name__}: {exc}"
    d = {"severity": "error", "code": "python.import", "message": message, "span": span, "notes": []}
    d["rendered"] = render(d)
    return d
