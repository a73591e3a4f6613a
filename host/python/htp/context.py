"""``htp.Context``: a loaded plugin set and the compile entry point; ``htp.Package``: its result."""
from __future__ import annotations

import json
import os
import pathlib
import re

from . import _ast_json, _htp
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

    def __repr__(self):
        return f"<htp.Package {self.path} target={self.target!r}>"
