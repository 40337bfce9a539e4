"""Writing a Screen's frames into pages of video memory.

A :class:`~fbgfx.Screen` composes frames in RAM in the device's pixel format, one
array element a pixel (see :meth:`fbgfx.PixelFormat.array_shape`), in its own
coordinates. A :class:`Transfer` writes parts of such a frame, or a whole RGB
picture, into a page as :meth:`fbgfx.Framebuffer.view` shapes it. Chosen once per
Screen by :func:`transfer_for`:

- :class:`_Plain`: the page has the frame's layout; a copy is a slice assignment.
- :class:`_Packed`: formats of fewer than 8 bits; pixels are packed into bytes
  (whole bytes around the region are rewritten).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from . import convert
from ._region import Region
from .pixelformat import PixelFormat

__all__ = ["Transfer", "transfer_for"]


class Transfer(ABC):
    """Writes frames (the Screen's layout) into pages (the device's layout).

    Args:
        fmt: The device's pixel format.
        palette: Its colour map (palette formats), else None.
        width: Frame width in pixels.
        height: Frame height in pixels.
    """

    #: True when a page has the frame's layout, so a frame can be drawn in it directly.
    in_place: bool = False

    def __init__(self, fmt: PixelFormat, palette: np.ndarray | None, width: int, height: int) -> None:
        self.format, self.palette = fmt, palette
        self.width, self.height = width, height

    @abstractmethod
    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        """Write ``region`` of ``frame`` (native pixels, one element each) into ``page``."""

    @abstractmethod
    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        """Write a whole frame given as (height, width, 3) RGB uint8 into ``page``."""


class _Plain(Transfer):
    """The page has the frame's layout."""

    in_place = True

    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        for y0, y1, x0, x1 in region.runs():
            page[y0:y1, x0:x1] = frame[y0:y1, x0:x1]

    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        convert.to_native(rgb, self.format, page, palette=self.palette)


class _Packed(Transfer):
    """Fewer than 8 bits a pixel: several pixels a byte in the page."""

    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        fmt = self.format
        per_byte = 8 // fmt.bpp
        for y0, y1, x0, x1 in region.runs():
            b0, b1 = x0 // per_byte, -(-x1 // per_byte)
            page[y0:y1, b0:b1] = fmt.pack_bits(frame[y0:y1, b0 * per_byte : min(b1 * per_byte, self.width)])

    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        fmt = self.format
        native = np.empty(fmt.array_shape(self.height, self.width), fmt.dtype)
        convert.to_native(rgb, fmt, native, palette=self.palette)
        page[...] = fmt.pack_bits(native)


def transfer_for(fmt: PixelFormat, palette: np.ndarray | None, width: int, height: int) -> Transfer:
    """The :class:`Transfer` for frames of ``width`` x ``height`` into ``fmt`` pages."""
    cls = _Packed if fmt.is_packed else _Plain
    return cls(fmt, palette, width, height)
