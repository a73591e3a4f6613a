"""``htp.Context``: a loaded plugin set and the compile entry point; ``htp.Package``: its result."""
from __future__ import annotations

import json
import os
import pathlib
import re

from . import _ast_json, _htp, report
from .surface import register_components


def _specs(plugins):
    if plugins is None:
        return None
    if isinstance(plugins, (str, os.PathLike)):
        plugins = [plugins]
    return [os.path.abspath(os.fspath(p)) for p in plugins]


class Context:
    """Loads a plugin set: ``plugins`` lists absolute or relative plugin directories, ``.so`` files and
    plugin-set JSON files; ``None`` loads the built-in plugins (HTP_PLUGIN_PATH is searched too unless
    ``use_environment=False``). A plugin that fails to load raises ``htp.PluginError``."""

    def __init__(self, plugins=None, *, use_environment: bool = True):
        self._host = _htp.Context(_specs(plugins), use_environment)
        register_components(self._host.components())

    def plugins(self) -> list[dict]:
        return self._host.plugins()

    def dialects(self) -> list[dict]:
        """One dict per dialect: ``name``, ``names`` (the surface), ``plugin``, ``id``, ``version``."""
        return self._host.dialects()

    def intrinsic_sets(self) -> list[dict]:
        return self._host.intrinsic_sets()

    def components(self, kind: str | None = None) -> list[dict]:
        return self._host.components(kind)

    def compile(self, fn, target: str, out, *, dump_ir: str | None = None, keep_failed: bool = False,
                pipeline=None, force: bool = False, pin_timings: bool = False, backend: str | None = None,
                binding: str | None = None, options: dict | None = None) -> "Package":
        """Captures ``fn`` (a captured function or a list of them, plus what they reference) and compiles
        it for ``target`` into the package directory ``out``. The host runs with the GIL released.
        Raises ``htp.CaptureError`` / ``htp.CompileError`` carrying the rendered diagnostics."""
        from .capture import capture

        doc = capture(fn, loaded_dialects={d["name"] for d in self.dialects()})
        opts = {"dump_ir": dump_ir, "keep_failed": keep_failed, "force": force, "pin_timings": pin_timings,
                "backend": backend, "binding": binding}
        if pipeline is not None:
            opts["pipeline"] = pipeline.split(",") if isinstance(pipeline, str) else list(pipeline)
        if options:
            opts["pass_options"] = json.dumps(options)
        r = self._host.compile(_ast_json.dumps(doc), target, os.fspath(out), opts)
        return Package(r["package"], diagnostics=r["diagnostics"])


class Package:
    """A compiled artifact package: ``path``, ``manifest`` (manifest.json), ``files`` (relative paths),
    ``passes`` (pass ids of the plan, in order) and ``dump(pass_id)`` (the ``ir/NN_<pass>.py`` text)."""

    def __init__(self, path, diagnostics=None):
        self.path = pathlib.Path(path)
        self.diagnostics = list(diagnostics or [])
        with open(self.path / "manifest.json", encoding="utf-8") as f:
            self.manifest = json.load(f)

    @property
    def target(self) -> str:
        return self.manifest.get("target", "")

    @property
    def files(self) -> list[str]:
        out = [f["path"] for f in self.manifest.get("files", [])]
        out += [f["path"] for f in self.manifest.get("volatile_files", [])]
        return sorted(set(out))

    @property
    def passes(self) -> list[str]:
        return [p["id"] for p in self.manifest.get("plan", {}).get("passes", [])]

    def dumps(self) -> list[str]:
        """The ``ir/NN_<pass>.py`` dumps present, in order."""
        ir = self.path / "ir"
        return sorted(p.name for p in ir.glob("*.py")) if ir.is_dir() else []

    def dump(self, pass_id: str) -> str:
        """The module as printed after ``pass_id`` (``ir/NN_<pass_id>.py``); ``source`` gives 00_source."""
        pattern = re.compile(r"\d+_" + re.escape(pass_id) + r"\.py")
        for name in self.dumps():
            if pattern.fullmatch(name):
                return (self.path / "ir" / name).read_text(encoding="utf-8")
        raise KeyError(f"no dump of '{pass_id}' in {self.path / 'ir'} (compile with dump_ir='all' or "
                       f"dump_ir='{pass_id}'); present: {', '.join(self.dumps()) or 'none'}")

    @property
    def entrypoints(self) -> list[dict]:
        return list(self.manifest.get("entrypoints") or [])

    def bind(self, context: "Context | None" = None) -> "BoundPackage":
        """This package bound to the binding its plan chose (see ``htp.bind``)."""
        return BoundPackage(self, context)

    def __repr__(self):
        return report.package_text(self)

    def _repr_html_(self):
        return report.package_html(self)


class RunResult:
    """Outputs of one run: ``outputs`` (out/inout tensors by name, NumPy arrays; also ``result["C"]``),
    ``report`` (the binding's htp.run.v1 report: which path ran, build cache, timings, trace file),
    ``run_dir`` and ``binding``."""

    def __init__(self, raw: dict):
        self.outputs = dict(raw["outputs"])
        self.report = json.loads(raw["report"]) if raw["report"] not in ("", "null") else None
        self.run_dir = pathlib.Path(raw["run_dir"])
        self.binding = raw["binding"]
        self.diagnostics = list(raw["diagnostics"])

    def __getitem__(self, name):
        return self.outputs[name]

    def __repr__(self):
        return report.run_text(self)

    def _repr_html_(self):
        return report.run_html(self)


class BoundPackage:
    """A package ready to run with the binding of its plan (loaded from ``context``, else the built-in
    plugins). ``run(**arguments)`` takes NumPy arrays for tensors and numbers for scalars by parameter
    name; ``out`` tensors may be omitted (they are allocated). Raises ``htp.RunError`` with the rendered
    diagnostics (a wrong shape or dtype names the argument)."""

    def __init__(self, package, context: "Context | None" = None):
        self.package = package if isinstance(package, Package) else Package(package)
        self.context = context or Context()

    def run(self, entry: str | None = None, *, cache_dir=None, run_dir=None, options: dict | None = None,
            verify: bool = True, **arguments) -> RunResult:
        import numpy as np

        arrays, scalars = {}, {}
        for name, value in arguments.items():
            if isinstance(value, (bool, int, float)):
                scalars[name] = value
            else:
                arrays[name] = np.asarray(value)
        raw = self.context._host.run(os.fspath(self.package.path), entry or "", arrays, scalars,
                                     os.fspath(cache_dir) if cache_dir else "", os.fspath(run_dir) if run_dir else "",
                                     json.dumps(options or {}), verify)
        return RunResult(raw)


def bind(package, context: "Context | None" = None) -> BoundPackage:
    """``htp.bind(pkg).run(**arrays)``: runs a package (a path or an ``htp.Package``) with its binding."""
    return BoundPackage(package, context)
