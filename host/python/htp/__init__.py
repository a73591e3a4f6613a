"""HTP — Heterogeneous Tile Programming: compile Python tile kernels through plugin pass pipelines."""
try:
    from . import _htp as _host  # noqa: F401 - the C++ host; absent only in a partial build
except ModuleNotFoundError as _e:  # htp._ast_json stays usable without it
    if _e.name != __name__ + "._htp":
        raise
else:
    from .errors import (ArgumentTypeError, ArgumentValueError, CaptureError, CompileError, CompileWarning,
                         Diagnostic, Error, PluginError, RunError)
    from .context import BoundPackage, Context, Package, RunResult, bind
    from . import dialects, intrinsics
from .report import show

# htp.capture (the capture module, also `python -m htp.capture`) is imported on first use, so that running
# it as __main__ finds no copy of it already imported.
__all__ = ["Context", "Package", "BoundPackage", "RunResult", "bind", "show", "dialects", "intrinsics", "Error",
           "Diagnostic", "CaptureError", "CompileError", "CompileWarning", "PluginError", "RunError",
           "ArgumentTypeError", "ArgumentValueError"]
