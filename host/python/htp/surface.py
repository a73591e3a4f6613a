"""Symbolic dialect and intrinsic surfaces, built from what plugins declare.

The shim names no dialect: ``htp.dialects.<name>`` and ``htp.intrinsics.<set>`` exist for every dialect /
intrinsic-set component a *known* plugin declares — the manifests of the built-in plugin directory and
HTP_PLUGIN_PATH (read without loading any library), plus every plugin a ``Context`` loaded or a capture
was told about. Programs are captured, not executed for their semantics, so surface objects are symbols:
callable (as decorators, which capture the function), subscriptable (``Tile[16, 16, f32]``) and open to
attribute access (``P.seq``)."""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import sys
import types

from . import _htp

_components: dict[tuple[str, str], dict] = {}  # (kind, name) -> first declaring component
_defaults_read = False


def register_components(components, replace: bool = False) -> None:
    """Makes the dialects / intrinsic sets of these component dicts known (first declaration wins, unless
    ``replace``: a Python extension re-declares its set as ops are added)."""
    for c in components:
        if c.get("kind") in ("dialect", "intrinsic-set") and c.get("name"):
            if replace:
                _components[(c["kind"], c["name"])] = dict(c)
            else:
                _components.setdefault((c["kind"], c["name"]), dict(c))


def register_plugins(specs=None, use_environment: bool = True, builtins: bool = True) -> list[dict]:
    """Reads the manifests of the built-in plugins and those of ``specs`` and makes their surfaces
    known; returns the declared components."""
    libraries = [str(s) for s in specs or [] if not str(s).endswith(".py")]  # .py: Python extensions
    found = _htp.read_plugin_manifests(libraries, builtins, use_environment)
    register_components(found["components"])
    return found["components"]


def _ensure_defaults() -> None:
    global _defaults_read
    if not _defaults_read:
        _defaults_read = True
        try:
            register_plugins(None)
        except Exception:  # an unreadable default set only means fewer known surfaces
            pass


def find(kind: str, name: str) -> dict | None:
    _ensure_defaults()
    return _components.get((kind, name))


def known(kind: str) -> list[str]:
    _ensure_defaults()
    return sorted(n for (k, n) in _components if k == kind)


class Symbol:
    """A symbolic surface value: ``path`` is its dotted text (``toy.kernel``, ``Tile[...]``)."""

    __slots__ = ("_path", "_dialect", "_decorator")

    def __init__(self, path: str, dialect: str | None = None, decorator: str | None = None):
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_dialect", dialect)
        object.__setattr__(self, "_decorator", decorator)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and inspect.isfunction(args[0]):
            if not self._dialect:  # `@full` where `@kernel` was meant: capture says so at the decorator
                return MisusedDecorator(self._path, args[0])
            return CapturedFunction(args[0], self._dialect, self._decorator or self._path,
                                    _defining_scope(sys._getframe(1)))
        return Symbol(self._path + "(...)", self._dialect, self._decorator)

    def __getitem__(self, item):
        return Symbol(self._path + "[...]", self._dialect, self._decorator)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Symbol(f"{self._path}.{name}", self._dialect, self._decorator)

    def __setattr__(self, name, value):
        raise AttributeError(f"surface symbol '{self._path}' is read-only")

    def _op(self, *_):
        return Symbol(f"({self._path} ...)", self._dialect, self._decorator)

    __matmul__ = __rmatmul__ = __or__ = __ror__ = __add__ = __radd__ = __mul__ = __rmul__ = _op

    def __repr__(self):
        return f"<htp surface {self._path}>"


class MisusedDecorator(Symbol):
    """A function decorated with a surface name that is not a dialect decorator (``@full`` for ``@kernel``):
    ``fn`` is the function, so that compiling it is an error at the decorator, not a TypeError."""

    __slots__ = ("fn",)

    def __init__(self, path: str, fn):
        super().__init__(path + "(...)", None, path)  # (_decorator: the name it was used as)
        object.__setattr__(self, "fn", fn)


def _defining_scope(frame) -> dict:
    """The locals of the function a captured function is decorated in (empty at module level), as they are
    when the decorator runs. A name read only by a local annotation (`buf: Tensor[N, f32]` in a workload
    body) is not a closure variable, so capture looks it up here, after the closure and before the
    globals: sizes computed by a factory function (`def build(cfg): N = cfg.n; @workload ...`) work."""
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


class CapturedFunction:
    """A function decorated by a dialect decorator: captured from its source, compiled by a Context."""

    def __init__(self, fn, dialect: str, decorator: str, scope: dict | None = None):
        self.fn = fn
        self.dialect = dialect
        self.decorator = decorator
        self.scope = scope or {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"'{self.fn.__name__}' is a captured {self.dialect} function: compile it with "
                        "htp.Context().compile(...) instead of calling it")

    def __getitem__(self, item):  # kernel launches such as k[b, h](...) are symbolic
        return Symbol(self.fn.__name__ + "[...]", self.dialect)

    def __repr__(self):
        return f"<captured @{self.dialect}.{self.decorator} {self.fn.__qualname__}>"


class SurfaceModule(types.ModuleType):
    """``htp.dialects.<name>`` or ``htp.intrinsics.<set>``: attributes are the declared surface names."""

    def __init__(self, fullname: str, kind: str, name: str):
        super().__init__(fullname)
        self._kind, self._name = kind, name

    def _names(self) -> list[str]:
        names = set()
        comp = find(self._kind, self._name)
        if comp:
            names.update(comp.get("names", []))
        if self._kind == "dialect":  # a dialect's intrinsics of the same name: `toy.add` next to `toy.kernel`
            ops = find("intrinsic-set", self._name)
            if ops:
                names.update(ops.get("names", []))
        return sorted(names)

    def __getattr__(self, attr):
        if attr == "__all__":  # `from htp.dialects.<name> import *`: every declared surface name
            return [n for n in self._names() if n.isidentifier()]
        if attr.startswith("__"):
            raise AttributeError(attr)
        comp = find(self._kind, self._name) or {}
        if attr in comp.get("names", []):
            if self._kind == "dialect":
                return Symbol(f"{self._name}.{attr}", self._name, attr)
            return Symbol(f"{self._name}.{attr}")
        if attr in self._names():
            return Symbol(f"{self._name}.{attr}")
        what = "dialect" if self._kind == "dialect" else "intrinsic set"
        raise AttributeError(f"{what} '{self._name}' (plugin '{comp.get('plugin', '?')}') declares no "
                             f"'{attr}'; it declares: {', '.join(self._names()) or 'nothing'}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._names()))

    def __repr__(self):
        return f"<htp {self._kind} surface '{self._name}'>"


_PACKAGES = {"htp.dialects": "dialect", "htp.intrinsics": "intrinsic-set"}


class _SurfaceFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        kind = _PACKAGES.get(package)
        if kind is None or not name:
            return None
        if find(kind, name) is None:
            what = "dialect" if kind == "dialect" else "intrinsic set"
            raise ModuleNotFoundError(
                f"no known plugin declares the {what} '{name}' (known: {', '.join(known(kind)) or 'none'}); "
                "load its plugin with htp.Context(plugins=[...]) or htp-host --plugins, or add its directory "
                "to HTP_PLUGIN_PATH", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        package, _, name = spec.name.rpartition(".")
        return SurfaceModule(spec.name, _PACKAGES[package], name)

    def exec_module(self, module):
        pass


def install_finder() -> None:
    if not any(isinstance(f, _SurfaceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SurfaceFinder())


def package_getattr(package: str, name: str):
    """``htp.dialects.<name>`` attribute access (for ``from htp.dialects import toy``)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as e:
        raise AttributeError(str(e)) from None
