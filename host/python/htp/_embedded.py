"""Loading Python extensions into htp-host (a C++ process with an embedded interpreter; see
host/python/embed.cpp). ``load`` registers the extensions of one ``.py`` file into the host's PluginHost and
reports into its diagnostic list what ``htp.Context`` raises or warns for Python callers."""
from __future__ import annotations

import ctypes

from . import _htp, extension


# The files each PluginHost (by address) has loaded: a file given twice is loaded once, as a library is.
_loaded_sources: dict[int, set] = {}


def _address(capsule) -> int:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, b"htp.PluginHost") or 0


def load(spec: str, host, diagnostics) -> bool:
    loaded, diags = extension.load(spec, lambda ext, source: _htp.load_python_extension_into(
        host, ext.name, ext.version, ext.summary, str(source), ext.descriptors()),
                                   _loaded_sources.setdefault(_address(host), set()))
    for d in diags:
        _htp.report_into(diagnostics, d)
    return not any(d["severity"] == "error" for d in diags)
