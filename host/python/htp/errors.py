"""Exceptions of the htp package and the diagnostics they carry.

Every error the host reports reaches Python as an ``htp.Error`` subclass whose message is the rendered
``file:line:col: error: ...`` text and whose ``diagnostics`` lists ``htp.Diagnostic`` objects (``code``,
``severity``, ``message``, ``span``, ``notes``; also readable as dicts). When the first error has a source
span, the traceback ends at that line of the user's program. Argument errors of a run are also
``TypeError`` (dtype) or ``ValueError`` (shape), so ordinary ``except`` clauses catch them. Warnings from
passes are issued as ``htp.CompileWarning`` through Python's ``warnings`` module, located at their span."""
from __future__ import annotations

import linecache
import warnings


class Diagnostic(dict):
    """One host diagnostic: a dict (``severity``, ``code``, ``message``, ``span``, ``notes``) with the same
    names as attributes; ``str()`` is its rendered text."""

    def __init__(self, d: dict):
        super().__init__(d)
        self["notes"] = [n if isinstance(n, Diagnostic) else Diagnostic(n) for n in d.get("notes") or []]
        self.setdefault("span", {"file": "", "line": 0, "col": 0, "end_line": 0, "end_col": 0})

    code = property(lambda self: self.get("code", ""))
    severity = property(lambda self: self.get("severity", "error"))
    message = property(lambda self: self.get("message", ""))
    span = property(lambda self: self["span"])
    notes = property(lambda self: self["notes"])

    def __str__(self):
        return self.get("rendered") or render(self)

    def __repr__(self):
        return f"<htp.Diagnostic {self.severity} [{self.code}] {self.message!r}>"


class Error(Exception):
    """Base of HTP's exceptions: ``str(e)`` is the rendered diagnostics, ``e.diagnostics`` their objects."""

    def __init__(self, message: str, diagnostics=()):
        super().__init__(message)
        self.diagnostics = [d if isinstance(d, Diagnostic) else Diagnostic(d) for d in diagnostics]

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


class PluginError(Error):
    """A plugin could not be loaded."""


class CompileError(Error):
    """A compile failed; ``failed_dir`` is the kept failed package (``keep_failed=True``), else None."""

    failed_dir = None


class RunError(Error):
    """A run failed (a bad argument, a runtime check, a binding error)."""


class ArgumentTypeError(RunError, TypeError):
    """A tensor argument has the wrong dtype (or is not a tensor)."""


class ArgumentValueError(RunError, ValueError):
    """A tensor argument has the wrong shape, or is on a device HTP cannot read."""


class CompileWarning(UserWarning):
    """A warning a pass reported (its ``diagnostic`` attribute holds the host's diagnostic)."""


def span_of(node, file: str) -> dict:
    """The span dict of an ``ast`` node (columns 0-based, as Python's ast and the host use)."""
    line = getattr(node, "lineno", 0) or 0
    col = getattr(node, "col_offset", 0) or 0
    return {"file": file, "line": line, "col": col,
            "end_line": getattr(node, "end_lineno", None) or line,
            "end_col": getattr(node, "end_col_offset", None) or col}


def diagnostic(code: str, message: str, span: dict | None = None, severity: str = "error") -> dict:
    return {"severity": severity, "code": code, "message": message,
            "span": span or {"file": "", "line": 0, "col": 0, "end_line": 0, "end_col": 0}}


def render(d: dict) -> str:
    """``file:line:col: error: message`` (column printed 1-based), like the host's Diagnostic::render."""
    s = d.get("span") or {}
    where = ""
    if s.get("file"):
        where = s["file"]
        if s.get("line"):
            where += f":{s['line']}:{s.get('col', 0) + 1}"
        where += ": "
    return f"{where}{d.get('severity', 'error')}: {d['message']}"


class CaptureError(CompileError):
    """The frontend could not capture a program; ``diagnostics`` lists why, each with its span."""

    def __init__(self, diagnostics: list[dict]):
        super().__init__("\n".join(render(d) for d in diagnostics), diagnostics)


def raise_at_source(error: Error):
    """Raises ``error`` so that its traceback's last frame is the source line of its first located error
    (the frame is compiled with that file name and line, so tracebacks and debuggers show the user's
    line); without such a span it is raised as is."""
    span = next((d.span for d in error.errors if d.span.get("file") and d.span.get("line")), None)
    if span is None:
        raise error
    file, line = span["file"], int(span["line"])
    linecache.checkcache(file)
    error.with_traceback(None)  # frames of where it was detected would follow the user's line
    code = compile("\n" * (line - 1) + "raise __htp_error__", file, "exec")
    try:
        exec(code, {"__htp_error__": error, "__name__": "__htp_diagnostic__"})
    except Error as e:
        raise e.with_traceback(e.__traceback__.tb_next) from None


def issue_warnings(diagnostics):
    """Issues the warnings among ``diagnostics`` as ``CompileWarning`` at their spans."""
    for d in diagnostics:
        d = d if isinstance(d, Diagnostic) else Diagnostic(d)
        if d.severity != "warning":
            continue
        span = d.span
        w = CompileWarning(f"[{d.code}] {d.message}")
        w.diagnostic = d
        if span.get("file") and span.get("line"):
            warnings.warn_explicit(w, CompileWarning, span["file"], int(span["line"]), module="htp")
        else:
            warnings.warn(w, stacklevel=3)
