"""Dialect surfaces: ``htp.dialects.<name>`` for every dialect a known plugin declares (see htp.surface)."""
from .. import surface as _surface

_surface.install_finder()


def __getattr__(name):
    return _surface.package_getattr(__name__, name)


def __dir__():
    return _surface.known("dialect")
