"""Whole-tensor elementwise maps (plugin ext-pack): ``from htp.dialects.ext import elementwise, axpby``.

``@elementwise(tile=(R, C))`` turns a function over 2-D tensors of one shape and dtype into a tile kernel
over (R, C) tiles. Its body stores ``out[...] = <expression>``; expressions combine the tensors with
``+ - * /``, scalars and tile intrinsics. See docs/writing-a-plugin.md.
"""
from typing import Any, Callable, Tuple, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

def elementwise(*, tile: Tuple[int, int]) -> Callable[[_F], _F]:
    """Makes a function a whole-tensor elementwise map, lowered over tiles of shape ``tile``."""
    ...

def axpby(a: Any, b: Any, alpha: float, beta: float) -> Any:
    """``alpha * a + beta * b`` on tiles (intrinsic ``ext.axpby``)."""
    ...
