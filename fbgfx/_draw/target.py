"""What the drawing mixins (``batch``, ``images``, ``text``) use of the Surface they are
mixed into: one Protocol, :class:`DrawTarget`.

Each mixin derives from it (as :data:`Mixin`) for the type checker only (at run time their base is
``object``, so nothing is added to a drawing call), and :class:`fbgfx.Surface`, which
derives from the mixins, is checked by mypy to provide every member with a compatible
type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..color import ColorLike, Ink, Packer
    from ..pixelformat import PixelFormat
    from . import smooth

__all__ = ["DrawTarget", "Kernel", "Mixin", "Rect"]

#: A C rasteriser from fbgfx._native: returns 0 or -errno.
Kernel = Callable[..., int]
#: A clip box (x0, y0, x1, y1), x1 and y1 exclusive.
Rect = tuple[int, int, int, int]


class DrawTarget(Protocol):
    """The members of :class:`fbgfx.Surface` its drawing mixins read and call."""

    format: PixelFormat
    palette: Any
    width: int
    height: int
    _cbox: Rect
    _packer: Packer
    _quiet: bool
    _boxes: bool

    @property
    def array(self) -> np.ndarray: ...

    def _ink(self, color: ColorLike) -> Ink: ...

    def _run(self, ink: Ink, fn: Kernel, *args: Any) -> None: ...

    def _smooth_run(self, ink: Ink, call: smooth.Call | None) -> None: ...

    def _paint_mask(self, mask: np.ndarray, x: int, y: int, ink: Ink, check_empty: bool = True) -> None: ...

    def _before_write(self) -> None: ...

    def _notify(self, x0: int, y0: int, x1: int, y1: int) -> None: ...


if TYPE_CHECKING:
    #: The base of each drawing mixin: the Protocol for mypy, ``object`` at run time, so
    #: that nothing sits between Surface and object.
    Mixin = DrawTarget
else:
    Mixin = object
