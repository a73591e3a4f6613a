"""Loading Python extensions into htp-host (a C++ process with an embedded interpreter; see
host/python/embed.cpp). ``load`` registers the extensions of one ``.py`` file into the host's PluginHost and
reports into its diagnostic list what ``htp.Context`` raises or warns for Python callers."""
from __future__ import annotations

from . import _htp, extension


def load(spec: str, host, diagnostics) -> bool:
    loaded, diags = extension.load(spec, lambda ext, source: _htp.load_python_extension_into(
        host, ext.name, ext.version, ext.summary, str(source), ext.descriptors()))
    for d in diags:
        _htp.report_into(diagnostics, d)
    return not any(d["severity"] == "error" for d in diags)
