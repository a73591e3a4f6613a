"""The `htp-host` console script of a pip install: runs the htp-host executable that belongs to this
package's host library (inside the package, or the build tree for an editable install).

HTP_PYTHON, the interpreter `htp-host compile prog.py` captures programs with, defaults to this one, so
that captured programs see the packages of the environment htp is installed in."""
import os
import sys

from . import _htp


def main() -> None:
    exe = _htp.host_executable()
    if not exe:
        sys.exit(f"htp-host: no htp-host executable beside the host library of {_htp.__file__}")
    os.environ.setdefault("HTP_PYTHON", sys.executable)
    os.execv(exe, [exe, *sys.argv[1:]])
