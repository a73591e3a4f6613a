"""Layouts as types (plugin layout-axe): ``from htp.dialects.layout import Layout, relayout, allreduce``.

Attach a layout to a tensor parameter with ``@``: ``A: In[Tensor[64, 64, f32] @ Layout("S(0)R")]``.
The text has one element per tensor dim: ``R`` (replicated) or ``S(i)`` (sharded on mesh axis i of the
kernel's ``mapping=[...]``). See docs/dialects/layout-axe.md.
"""
from typing import Any, Literal, Mapping, Optional, Sequence, Tuple, TypeVar, Union

_T = TypeVar("_T")

Axis = str  # "mesh.x", "mesh.y", ..., "core", "m" (local memory offset), "<space>.bank"
Iter = Tuple[int, int, Axis]  # (extent, stride, axis)
Space = Literal["GM", "UB", "L1", "L0A", "L0B", "L0C", "L2", "tile", "memtile", "DDR"]
Reduction = Literal["sum", "max", "min"]

class Layout:
    """A layout: distribution (text or Axe iters), memory facet and hardware facet."""

    def __init__(
        self,
        dist: str = ...,
        *,
        strides: Optional[Sequence[int]] = ...,
        order: Optional[Sequence[int]] = ...,
        swizzle: Union[int, str, None] = ...,
        pack: Union[int, str, None] = ...,
        space: Union[Space, str, None] = ...,
    ) -> None: ...
    @staticmethod
    def axe(
        *,
        shard: Sequence[Iter] = ...,
        replica: Sequence[Iter] = ...,
        offset: Mapping[Axis, int] = ...,
        strides: Optional[Sequence[int]] = ...,
        order: Optional[Sequence[int]] = ...,
        swizzle: Union[int, str, None] = ...,
        pack: Union[int, str, None] = ...,
        space: Union[Space, str, None] = ...,
    ) -> "Layout":
        """The full Axe form: shard iters decompose the row-major index over named axes."""
    def __rmatmul__(self, tensor_type: Any) -> Any: ...

def relayout(x: _T, to: Layout) -> _T:
    """Moves a value to another layout (explicit data movement)."""

def allreduce(x: _T, axis: Union[int, Axis, None] = ..., op: Reduction = ...) -> _T:
    """Discharges the pending reduction over ``axis``; the result is replicated over it."""

def allgather(x: _T, dim: Optional[int] = ...) -> _T:
    """Gathers a dim sharded over the mesh: the dim becomes replicated."""

def reduce_scatter(x: _T, dim: Optional[int] = ..., axis: Union[int, Axis, None] = ..., op: Reduction = ...) -> _T:
    """Discharges the pending reduction over ``axis`` and shards ``dim`` on that axis."""
