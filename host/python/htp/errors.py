"""Exceptions of the htp package and the diagnostics they carry.

``PluginError`` and ``CompileError`` are raised by the C++ host (``_htp``) with its rendered diagnostics
as the message; ``CaptureError`` is a ``CompileError`` raised by the Python frontend before the host is
involved and also keeps the diagnostics as dicts (``severity``, ``code``, ``message``, ``span``)."""
from __future__ import annotations

from . import _htp

PluginError = _htp.PluginError
CompileError = _htp.CompileError
RunError = _htp.RunError


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
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(render(d) for d in self.diagnostics))
