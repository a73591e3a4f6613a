"""Loading Python extensions into htp-host (a C++ process with an embedded interpreter; see
host/python/embed.cpp). ``load`` registers the extensions of one ``.py`` file into the host's PluginHost and
reports problems into its diagnostic list, exactly as ``htp.Context`` does for Python callers."""
from __future__ import annotations

from . import _htp, extension


def load(spec: str, host, diagnostics) -> bool:
    try:
        found, source = extension.extensions_of(spec)
    except Exception as e:  # the module raised while importing, or defines no Extension
        _htp.report_into(diagnostics, extension.import_failure(spec, e))
        return False
    for ext in found:
        bad = ext.capability_errors()
        for d in bad:
            _htp.report_into(diagnostics, d)
        if bad:
            return False
        if not _htp.load_python_extension_into(host, diagnostics, ext.name, ext.version, ext.summary, str(source),
                                               ext.descriptors()):
            return False
    return True
