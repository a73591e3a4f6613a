"""Memory placement as a layout kind (plugin ext-pack): ``from htp.dialects.place import Place``.

``t: Tile[32, 128, f32] @ Place("UB") = ...`` puts a value in a memory space of the target; it is
checked as an Axe layout (hardware facet) by layout-axe. See docs/writing-a-plugin.md.
"""
from typing import Any

class Place:
    """The memory space a value lives in ("GM", "UB", "L1", ...)."""

    def __init__(self, space: str) -> None: ...
    def __rmatmul__(self, other: Any) -> Any: ...
