"""Intrinsic surfaces: ``htp.intrinsics.<set>`` for every intrinsic set a known plugin declares."""
from .. import surface as _surface

_surface.install_finder()


def __getattr__(name):
    return _surface.package_getattr(__name__, name)


def __dir__():
    return _surface.known("intrinsic-set")
