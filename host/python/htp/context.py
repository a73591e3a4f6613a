"""``htp.Context``: a loaded plugin set and the compile entry point; ``htp.Package``: its result."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import types

from . import _ast_json, _htp, extension, report
from .errors import (ArgumentTypeError, ArgumentValueError, CaptureError, CompileError, PluginError, RunError,
                     issue_warnings, raise_at_source)
from .surface import register_components


def _specs(plugins):
    """(plugin specs for the host, Python extension specs): ``.py`` files and module objects are the latter."""
    if plugins is None:
        return [], []
    if isinstance(plugins, (str, os.PathLike)) or isinstance(plugins, types.ModuleType):
        plugins = [plugins]
    host, python = [], []
    for p in plugins:
        if extension.is_extension_spec(p):
            python.append(p)
        else:
            host.append(os.path.abspath(os.fspath(p)))
    return host, python


def _raise_plugin_error(diags):
    raise PluginError("".join(d["rendered"] + "\n" for d in diags).rstrip("\n"), diags)


class Context:
    """Loads a plugin set: the built-in plugins (unless ``builtins=False``), plus ``plugins``: plugin
    directories, ``.so`` files and plugin-set JSON files (a library named like a built-in one replaces
    it); HTP_PLUGIN_PATH is searched too unless ``use_environment=False``. A plugin that fails to load
    raises ``htp.PluginError``; load warnings are issued as ``htp.CompileWarning``."""

    def __init__(self, plugins=None, *, builtins: bool = True, use_environment: bool = True):
        host_specs, python_specs = _specs(plugins)
        self._host = _htp.Context(host_specs, builtins, use_environment)
        diags = self._host.load_diagnostics()
        if any(d["severity"] == "error" for d in diags):
            _raise_plugin_error(diags)
        issue_warnings(diags)
        self._extensions = []
        self._extension_sources = set()  # (a file given twice is loaded once, as a library is)
        for spec in python_specs + self._host.python_extensions_found():  # (a file found twice loads once)
            self.load_extension(spec)
        register_components(self._host.components())

    def load_extension(self, spec) -> None:
        """Loads a Python extension (a ``.py`` file or a module object defining ``htp.extension.Extension``
        objects): its components join the registry as the components of a plugin named like the Extension,
        identified by the sha256 of the module's source. Raises ``htp.PluginError`` (at the Python line for
        a malformed capability, at the failing line for a module that raises while importing)."""
        loaded, diags = extension.load(spec, lambda ext, source: self._host.load_python_extension(
            ext.name, ext.version, ext.summary, str(source), ext.descriptors()), self._extension_sources)
        self._extensions += loaded
        if any(d["severity"] == "error" for d in diags):
            _raise_plugin_error(diags)
        issue_warnings(diags)
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

    def run_pass(self, pass_id: str, module, *, options: dict | None = None, repeat: int = 1) -> dict:
        """Runs one loaded pass (C++ or Python) over ``module`` (a captured function or list of them, or an
        htp.ast.v1 document) without a plan, ``repeat`` times on the same tree: for unit-testing a pass and
        timing it. Returns ``{"module": <htp.ast.v1 document after the runs>, "seconds": [per run],
        "source": <the module printed as Python>, "diagnostics": [...]}``; raises ``htp.CompileError`` when the
        pass reports an error."""
        from .capture import capture

        if isinstance(module, dict):
            doc = module
        else:
            doc = capture(module, loaded_dialects={d["name"] for d in self.dialects()},
                          loaded_plugins={p["name"]: p["path"] for p in self.plugins()})
        opts = json.dumps(dict(options or {}))
        r = self._host.run_pass(pass_id, _ast_json.dumps(doc), opts, repeat)
        if not r["ok"]:
            raise_at_source(CompileError(_errors_first(r) or f"pass {pass_id} failed", r["diagnostics"]))
        issue_warnings(r["diagnostics"])
        return {"module": _ast_json.loads(r["module"]), "seconds": list(r["seconds"]),
                "source": _htp.ast_unparse_json(r["module"]), "diagnostics": r["diagnostics"]}

    def compile(self, fn, target: str, out, *, dump_ir: str | None = None, keep_failed: bool = False,
                pipeline=None, force: bool = False, pin_timings: bool = False, backend: str | None = None,
                binding: str | None = None, options: dict | None = None, locked=None,
                pass_time_limit: float | None = None) -> "Package":
        """Captures ``fn`` (a captured function or a list of them, plus what they reference) and compiles
        it for ``target`` into the package directory ``out``. The host runs with the GIL released.
        Raises ``htp.CaptureError`` / ``htp.CompileError`` carrying the diagnostics (its traceback ends at
        the source line of the first located error); warnings are issued as ``htp.CompileWarning``."""
        from .capture import capture

        if not isinstance(target, str):
            raise TypeError(f"compile(): target is a target name such as 'pto-a2a3sim' or 'aie-npu1', "
                            f"got {type(target).__name__}")
        try:
            doc = capture(fn, loaded_dialects={d["name"] for d in self.dialects()},
                          loaded_plugins={p["name"]: p["path"] for p in self.plugins()})
        except CaptureError as e:
            failed = e
        else:
            failed = None
        if failed is not None:
            raise_at_source(failed)
        opts = {"dump_ir": dump_ir, "keep_failed": keep_failed, "force": force, "pin_timings": pin_timings,
                "backend": backend, "binding": binding, "pass_time_limit": pass_time_limit}
        if pipeline is not None:
            opts["pipeline"] = pipeline.split(",") if isinstance(pipeline, str) else list(pipeline)
        if options:
            opts["pass_options"] = json.dumps(options)
        if locked is not None:
            opts["locked"] = os.fspath(locked)
        r = self._host.compile(_ast_json.dumps(doc), target, os.fspath(out), opts)
        if not r["ok"]:
            text = _errors_first(r) or "compile failed"
            if r["failed_dir"]:
                text += f"\nkept the failed compile in {r['failed_dir']}"
            error = CompileError(text, r["diagnostics"])
            error.failed_dir = pathlib.Path(r["failed_dir"]) if r["failed_dir"] else None
            raise_at_source(error)
        issue_warnings(r["diagnostics"])
        return Package(r["package"], diagnostics=r["diagnostics"], source_file=_source_file(fn))


class Package:
    """A compiled artifact package: ``path``, ``manifest`` (manifest.json), ``files`` (relative paths),
    ``passes`` (pass ids of the plan, in order) and ``dump(pass_id)`` (the ``ir/NN_<pass>.py`` text)."""

    def __init__(self, path, diagnostics=None, source_file=None):
        self.path = pathlib.Path(path)
        self.diagnostics = list(diagnostics or [])
        # The program's file when compiled from Python here: a run error located in the program (a runtime
        # check names the file by its name only) is raised at that line of it.
        self.source_file = source_file
        if not (self.path / "manifest.json").is_file():
            raise FileNotFoundError(f"'{self.path}' is not an HTP package ("
                                    + ("it has no manifest.json" if self.path.is_dir() else "no such directory")
                                    + "): compile one with ctx.compile(...) or htp-host compile")
        with open(self.path / "manifest.json", "rb") as f:
            text = f.read()
        self.manifest = json.loads(text)
        self._manifest_digest = hashlib.sha256(text).hexdigest()

    def changed_on_disk(self) -> bool:
        """Whether the directory now holds another package than this object read (a compile into the same
        ``out`` with ``force=True`` since): its manifest.json differs."""
        try:
            with open(self.path / "manifest.json", "rb") as f:
                return hashlib.sha256(f.read()).hexdigest() != self._manifest_digest
        except OSError:
            return True

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
    """Outputs of one run: ``outputs`` (out/inout tensors by name; also ``result["C"]``): the caller's own
    tensor object where one was passed (written in place), else a new tensor of the caller's kind (torch
    when any argument was a torch tensor, else NumPy); ``report`` (the binding's htp.run.v1 report: which
    path ran, build cache, timings, trace file, and ``arguments``: where each tensor lived during the run,
    e.g. ``"caller memory (zero-copy)"``), ``run_dir`` and ``binding``."""

    def __init__(self, raw: dict, outputs: dict):
        self.outputs = outputs
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


def _is_torch(value) -> bool:
    return type(value).__module__.split(".")[0] == "torch"


def _as_tensor(name: str, value):
    """A tensor argument as an object the host imports through DLPack (array-likes through NumPy)."""
    import numpy as np

    if type(value).__name__ == "PyCapsule" or hasattr(value, "__dlpack__"):
        if isinstance(value, np.ndarray) and _read_only(value):
            return value.copy()  # NumPy cannot export a read-only array through DLPack
        return value
    array = np.asarray(value)
    if array.dtype.kind not in "biufc":  # strings, objects, dates: no element type a kernel reads
        raise ArgumentTypeError(f"argument '{name}' is a {type(value).__name__}, not a tensor (an object with "
                                "__dlpack__, e.g. a NumPy array or a torch tensor)")
    return array


# The values a scalar parameter of each integer dtype holds: a larger number would wrap silently.
_INTEGER_RANGES = {f"{k}{b}": ((-(1 << (b - 1)), (1 << (b - 1)) - 1) if k == "i" else (0, (1 << b) - 1))
                   for k in "iu" for b in (8, 16, 32, 64)}


def _read_only(value) -> bool:
    """Whether an array argument cannot be written (a NumPy array with writeable unset, a broadcast view)."""
    flags = getattr(value, "flags", None)
    return flags is not None and hasattr(flags, "writeable") and not flags.writeable


_DIRECTIONS = {"in": "In", "out": "Out", "inout": "InOut"}


def _self_overlapping(value) -> bool:
    """Whether a tensor's elements share memory (a stride of 0, as torch's expand makes, or strides that
    overlap), read from its shape and strides (torch's stride() in elements, NumPy's strides in bytes)."""
    shape = tuple(getattr(value, "shape", ()) or ())
    stride = None
    if callable(getattr(value, "stride", None)):
        try:
            stride = tuple(value.stride())
        except Exception:  # noqa: BLE001 (not a torch tensor's stride())
            stride = None
    elif getattr(value, "strides", None) is not None and getattr(value, "itemsize", 0):
        stride = tuple(st // value.itemsize for st in value.strides)
    if stride is None or len(stride) != len(shape):
        return False
    reach = 0  # the farthest element the smaller-strided dimensions reach
    for st, n in sorted((abs(st), n) for st, n in zip(stride, shape) if n > 1):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _scalar(value):
    import numbers

    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


def _to_torch(array, dtype: str):
    """A host-allocated NumPy output as a torch tensor (shared memory); bf16 arrives as 16-bit words."""
    import numpy as np
    import torch

    if dtype == "bf16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _errors_first(raw: dict) -> str:
    """The rendered diagnostics of a result, errors first, then warnings, then notes (python.md, Errors)."""
    diags = raw.get("diagnostics") or []
    if not diags or not all(d.get("rendered") for d in diags):
        return raw["rendered"].rstrip("\n")
    rank = {"error": 0, "warning": 1}
    return "\n".join(d["rendered"].rstrip("\n") for d in sorted(diags, key=lambda d: rank.get(d.get("severity"), 2)))


def _source_file(fn) -> str | None:
    """The file of the (first) captured function compiled."""
    first = fn[0] if isinstance(fn, (list, tuple)) and fn else fn
    code = getattr(getattr(first, "fn", first), "__code__", None)
    return code.co_filename if code is not None else None


def _run_error(raw: dict) -> RunError:
    text = _errors_first(raw) or "run failed"
    codes = {d["code"] for d in raw["diagnostics"] if d["severity"] == "error"}
    cls = (ArgumentTypeError if "run.argument.dtype" in codes else
           ArgumentValueError if codes & {"run.argument.shape", "run.argument.range"} else RunError)
    return cls(text, raw["diagnostics"])


class BoundPackage:
    """A package ready to run with the binding of its plan (loaded from ``context``, else the built-in
    plugins). ``run(**arguments)`` takes tensors (anything with ``__dlpack__`` — NumPy arrays, torch
    tensors — or a DLPack capsule; array-likes are converted with NumPy) and numbers for scalars, by
    parameter name; ``out`` tensors may be omitted (they are allocated). CPU tensors in C order are used
    in place, others are copied (and copied back for outputs). Raises ``htp.RunError``: a wrong dtype is
    also a ``TypeError``, a wrong shape or device a ``ValueError``, each naming the argument."""

    def __init__(self, package, context: "Context | None" = None):
        self.package = package if isinstance(package, Package) else Package(package)
        self.context = context or Context()

    def run(self, entry: str | None = None, *, cache_dir=None, run_dir=None, options: dict | None = None,
            verify: bool = True, **arguments) -> RunResult:
        if self.package.changed_on_disk():  # (it ran the new program, whose entries and parameters it never read)
            raise RunError(f"the package at '{self.package.path}' was replaced after this binding read it (compiled "
                           f"again into the same directory?): bind the new one, htp.bind(ctx.compile(...)) or "
                           f"htp.bind('{self.package.path}')")
        names = [e.get("name") for e in self.package.entrypoints]
        if entry is not None and not isinstance(entry, str):
            raise ArgumentTypeError(f"run() takes tensors and scalars by parameter name (run(x=..., y=...)); its "
                                    f"one positional argument is the name of the entry to run, got a "
                                    f"{type(entry).__name__}")
        if entry is None and len(names) > 1:  # (a workload calling another has both as entry points)
            raise RunError(f"the package has several entrypoints ({', '.join(map(str, names))}); name the one to "
                           f"run: run({names[-1]!r}, ...)")
        tensors, scalars = {}, {}
        declared = {p.get("name"): p for e in self.package.entrypoints if entry in (None, e.get("name"))
                    for p in e.get("params", [])}
        for name, value in arguments.items():
            number = _scalar(value)
            param = declared.get(name, {})
            if param.get("kind") == "scalar":
                if number is None:
                    raise ArgumentTypeError(f"argument '{name}' is a scalar parameter ({param.get('dtype')}), "
                                            f"got a {type(value).__name__}: pass a number")
                # The runner checks integral values and each dtype's range (run.argument.dtype / .range), for
                # the CLI's -s too; an int past 64 bits does not reach it.
                bounds = _INTEGER_RANGES.get(param.get("dtype", ""))
                if isinstance(number, int) and not isinstance(number, bool) and not -(1 << 63) <= number < (1 << 64):
                    if not bounds:  # a float parameter takes the int as a float
                        number = float(number)
                    else:
                        raise ArgumentValueError(f"argument '{name}' is an {param.get('dtype')} parameter; {number} "
                                                 f"is outside its range [{bounds[0]}, {bounds[1]}]")
            if number is not None and param.get("kind") == "tensor":
                raise ArgumentTypeError(f"argument '{name}' is a tensor parameter ({param.get('dtype')}"
                                        f"{list(param.get('shape', []))}), got the number {value!r}: pass an array")
            if number is not None:
                scalars[name] = number
            else:
                if param.get("dir") in ("out", "inout") and _read_only(value):
                    # (an InOut argument is read too, so it cannot be left out)
                    advice = ("pass a writable array, or leave it out and take the result from the run"
                              if param.get("dir") == "out" else f"pass a writable copy ({name}.copy())")
                    raise ArgumentValueError(f"argument '{name}' is a read-only array, but '{name}' is written "
                                             f"({_DIRECTIONS[param.get('dir')]}): {advice}")
                if param.get("dir") in ("out", "inout") and _self_overlapping(value):
                    raise ArgumentValueError(f"argument '{name}' has elements that share memory (a stride of 0, as "
                                             f"torch's expand makes), but '{name}' is written "
                                             f"({_DIRECTIONS[param.get('dir')]}): pass a tensor whose elements are "
                                             "distinct (e.g. its .contiguous() or .copy())")
                tensors[name] = _as_tensor(name, value)
        try:
            raw = self.context._host.run(os.fspath(self.package.path), entry or "", tensors, scalars,
                                         os.fspath(cache_dir) if cache_dir else "",
                                         os.fspath(run_dir) if run_dir else "", json.dumps(options or {}), verify)
        except (TypeError, ValueError) as e:  # a tensor the binding cannot import (device, dtype, DLPack), named
            if not str(e).startswith("argument '"):
                raise
            raise (ArgumentTypeError if isinstance(e, TypeError) else ArgumentValueError)(str(e)) from None
        if not raw["ok"]:
            error = _run_error(raw)
            source = self.package.source_file
            for d in error.diagnostics:  # a runtime check names the program's file by its name: the file itself
                if source and d.span.get("file") == os.path.basename(source):
                    d["span"] = dict(d.span, file=source)
            raise_at_source(error)
        issue_warnings(raw["diagnostics"])
        outputs = {name: arguments[name] for name in raw["in_caller"]}
        torch_in = any(_is_torch(v) for v in arguments.values())
        dtypes = {p.get("name"): p.get("dtype", "") for e in self.package.entrypoints
                  if entry in (None, e.get("name")) for p in e.get("params", [])}
        for name, array in raw["outputs"].items():
            outputs[name] = _to_torch(array, dtypes.get(name, "")) if torch_in else array
        return RunResult(raw, outputs)


def bind(package, context: "Context | None" = None) -> BoundPackage:
    """``htp.bind(pkg).run(**arrays)``: runs a package (a path or an ``htp.Package``) with its binding."""
    return BoundPackage(package, context)
