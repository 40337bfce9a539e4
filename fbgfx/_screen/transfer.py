"""Writing a Screen's frames into pages of video memory.

A :class:`~fbgfx.Screen` composes frames in RAM in the device's pixel format, one
array element a pixel (see :meth:`fbgfx.PixelFormat.array_shape`), in its own
coordinates. A :class:`Transfer` writes parts of such a frame, or a whole RGB
picture, into a page as :meth:`fbgfx.Framebuffer.view` shapes it. Chosen once per
Screen by :func:`transfer_for`:

- :class:`_Plain`: the page has the frame's layout; a copy is a slice assignment.
- :class:`_Packed`: formats of fewer than 8 bits; pixels are packed into bytes
  (whole bytes around the region are rewritten).
- :class:`_Turned`: the panel shows the frame turned (``Screen(rotate=...)``); every
  rectangle is turned as it is written, by the tiled C kernels of native/rotate.c
  (RGB is converted and turned in one pass), so a 32x32 change costs a 32x32 write.
- :class:`_TurnedPacked`: turned, and fewer than 8 bits a pixel.

Rotation is clockwise on the panel: with ``rotate=90`` the frame's top-left pixel
is shown at the panel's top-right corner, its top row down the panel's right edge.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .. import convert
from .._ffi import check_value, ffi, lib
from ..pixelformat import PixelFormat
from .region import Region

#: Degrees a Screen may turn its picture (clockwise on the panel).
ROTATIONS = (0, 90, 180, 270)

__all__ = ["ROTATIONS", "Transfer", "transfer_for"]


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

    def to_page(self, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int]:
        """Where the frame's rectangle [x0, x1) x [y0, y1) is on the panel, as (x0, y0, x1, y1)."""
        return x0, y0, x1, y1

    @abstractmethod
    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        """Write ``region`` of ``frame`` (native pixels, one element each) into ``page``."""

    @abstractmethod
    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        """Write a whole frame given as (height, width, 3) RGB uint8 into ``page``."""


class _Plain(Transfer):
    """The page has the frame's layout."""

    in_place = True

    def __init__(self, fmt: PixelFormat, palette: np.ndarray | None, width: int, height: int) -> None:
        super().__init__(fmt, palette, width, height)
        self._pack = convert.FramePacker(fmt, palette, height, width)

    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        for y0, y1, x0, x1 in region.runs():
            page[y0:y1, x0:x1] = frame[y0:y1, x0:x1]

    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        self._pack(rgb, page)


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


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _pointer(a: np.ndarray, writable: bool = False) -> Any:
    """A pointer to ``a``'s first element; the caller keeps ``a`` referenced across the C
    call. A contiguous array's costs less through its buffer than its interface."""
    if a.flags.c_contiguous:
        return ffi.from_buffer("uint8_t[]", a, writable)
    return ffi.cast("uint8_t *", _address(a))


def _turnable(a: np.ndarray, size: int) -> int | None:
    """``a``'s address when the kernels can address it, else None: pixels of ``size``
    bytes packed along rows, rows going down, and (2 and 4 byte pixels) rows and start
    aligned to the pixel size."""
    if a.strides[1] != size or a.strides[0] <= 0:
        return None
    at = _address(a)
    return at if size == 3 or (a.strides[0] % size == 0 and at % size == 0) else None


class _Turned(Transfer):
    """The panel shows the frame turned ``rotate`` degrees clockwise.

    Pages are the panel's size (``height`` x ``width`` frames are ``width`` pixels
    tall on the panel when turned a quarter turn).
    """

    def __init__(self, fmt: PixelFormat, palette: np.ndarray | None, width: int, height: int, rotate: int) -> None:
        super().__init__(fmt, palette, width, height)
        self.turn = rotate // 90
        self.page_width, self.page_height = (height, width) if self.turn % 2 else (width, height)
        self._size = max(fmt.bpp // 8, 1)  # bytes of one pixel in a frame
        self._spec = _pack_spec(fmt)
        self._rgb_shape = (height, width, 3)
        self._page_shape, self._dtype = fmt.array_shape(self.page_height, self.page_width), fmt.dtype
        # A frame in the device's layout, unturned, for conversions rotate_pack cannot do
        # (gray, palette, 24 bpp, channels of more than 8 bits): converted, then turned.
        self._scratch: np.ndarray | None = None

    def to_page(self, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int]:
        """Where the frame's rectangle [x0, x1) x [y0, y1) is on the panel, as (x0, y0, x1, y1)."""
        w, h = self.width, self.height
        if self.turn == 1:
            return h - y1, x0, h - y0, x1
        if self.turn == 2:
            return w - x1, h - y1, w - x0, h - y0
        return y0, w - x1, y1, w - x0

    def to_frame(self, x0: int, y0: int, x1: int, y1: int) -> tuple[int, int, int, int]:
        """The frame's rectangle shown at the panel's [x0, x1) x [y0, y1) (inverse of :meth:`to_page`)."""
        w, h = self.width, self.height
        if self.turn == 1:
            return y0, h - x1, y1, h - x0
        if self.turn == 2:
            return w - x1, h - y1, w - x0, h - y0
        return w - y1, x0, w - y0, x1

    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        runs, size, w, h = region.runs(), self._size, self.width, self.height
        src = self._kernel_pointer(frame, h, w, writable=False)
        dst = self._kernel_pointer(page, self.page_height, self.page_width, writable=True)
        if src is None or dst is None:  # e.g. a view of odd alignment
            for y0, y1, x0, x1 in runs:
                px0, py0, px1, py1 = self.to_page(x0, y0, x1, y1)
                self._turn(frame[y0:y1, x0:x1], page[py0:py1, px0:px1])
            return
        # Each run is a place in the two arrays, not two views of them: a small change's
        # flip often comes after a whole frame has emptied the caches, and there each
        # view and address read costs more than turning the pixels (a 32x32 change at
        # 16 bpp: 30 -> 22 us).
        ss, ds = frame.strides[0], page.strides[0]
        for y0, y1, x0, x1 in runs:
            if not (0 <= x0 <= x1 <= w and 0 <= y0 <= y1 <= h):
                raise ValueError(f"copy: the run {(x0, y0, x1, y1)} is outside the {w}x{h} frame")
            px0, py0, _, _ = self.to_page(x0, y0, x1, y1)
            check_value(
                lib.rotate_copy(
                    src + (y0 * ss + x0 * size), ss,
                    dst + (py0 * ds + px0 * size), ds, x1 - x0, y1 - y0, size, self.turn,
                ),
                "turning a frame",
            )  # fmt: skip

    def _kernel_pointer(self, a: np.ndarray, height: int, width: int, writable: bool) -> Any:
        """A pointer to ``a``, ``height`` x ``width`` native pixels, for the kernels; None
        when they cannot address it or it is not that size (or not writable when asked)."""
        if a.shape[:2] != (height, width):
            return None
        flags = a.flags
        if writable and not flags.writeable:
            return None
        if flags.c_contiguous and flags.aligned and a.nbytes == height * width * self._size:
            return ffi.from_buffer("uint8_t[]", a, writable)  # (cheaper than its address)
        at = _turnable(a, self._size)
        return None if at is None else ffi.cast("uint8_t *", at)

    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        spec = self._spec
        # what holds for every frame (shapes, dtype, the kernel's format) is settled in
        # __init__; per frame, only what keeps the kernel inside the two arrays
        if (
            spec is not None
            and rgb.shape == self._rgb_shape
            and rgb.dtype == np.uint8
            and page.shape == self._page_shape
            and page.dtype == self._dtype
            and page.strides[1] == self._size
            and page.strides[0] > 0
            and page.flags.aligned  # address and row stride a multiple of the pixel size
            and page.flags.writeable
        ):
            step = rgb.strides[1]
            if rgb.strides[2] != 1 or step not in (3, 4) or rgb.strides[0] < 0:
                rgb = np.ascontiguousarray(rgb)
                step = 3
            check_value(
                lib.rotate_pack(
                    _pointer(rgb), rgb.strides[0], step, _pointer(page, True), page.strides[0],
                    self.width, self.height, self.turn, spec,
                ),
                "present: turning the picture",
            )  # fmt: skip
            return
        scratch = self._frame_scratch()
        convert.to_native(rgb, self.format, scratch, palette=self.palette)
        self._turn(scratch, page)

    def _frame_scratch(self) -> np.ndarray:
        if self._scratch is None:
            self._scratch = np.empty(self.format.array_shape(self.height, self.width), self.format.dtype)
        return self._scratch

    def _turn(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Write ``src`` (native pixels of the frame) turned into ``dst`` (its place on the panel)."""
        h, w = src.shape[:2]
        if h == 0 or w == 0:
            return
        turned = (w, h) if self.turn % 2 else (h, w)
        if dst.shape[:2] != turned:
            raise ValueError(f"turning a frame: {w}x{h} pixels do not fit {dst.shape[1]}x{dst.shape[0]}")
        s_p = self._kernel_pointer(src, h, w, writable=False)
        d_p = self._kernel_pointer(dst, *turned, writable=True)
        if s_p is None or d_p is None:  # e.g. a view of odd alignment
            dst[...] = np.rot90(src, -self.turn)  # (a read-only page: NumPy's ValueError)
            return
        check_value(
            lib.rotate_copy(s_p, src.strides[0], d_p, dst.strides[0], w, h, self._size, self.turn),
            "turning a frame",
        )


class _TurnedPacked(_Turned):
    """Turned, and fewer than 8 bits a pixel: turned one byte a pixel, then packed
    (whole bytes around each rectangle are rewritten from the frame)."""

    def copy(self, frame: np.ndarray, region: Region, page: np.ndarray) -> None:
        per_byte = 8 // self.format.bpp
        for y0, y1, x0, x1 in region.runs():
            px0, py0, px1, py1 = self.to_page(x0, y0, x1, y1)
            b0, b1 = px0 // per_byte, -(-px1 // per_byte)
            px0, px1 = b0 * per_byte, min(b1 * per_byte, self.page_width)
            fx0, fy0, fx1, fy1 = self.to_frame(px0, py0, px1, py1)
            turned = np.empty((py1 - py0, px1 - px0), np.uint8)
            self._turn(frame[fy0:fy1, fx0:fx1], turned)
            page[py0:py1, b0:b1] = self.format.pack_bits(turned)

    def convert(self, rgb: np.ndarray, page: np.ndarray) -> None:
        scratch = self._frame_scratch()
        convert.to_native(rgb, self.format, scratch, palette=self.palette)
        turned = np.empty((self.page_height, self.page_width), np.uint8)
        self._turn(scratch, turned)
        page[...] = self.format.pack_bits(turned)


def _pack_spec(fmt: PixelFormat) -> Any:
    """rotate_pack's description of ``fmt``, or None when it takes another path."""
    fields = (fmt.red, fmt.green, fmt.blue, fmt.transp)
    if fmt.indexed or fmt.gray or fmt.bpp not in (16, 32) or any(bf.length > 8 for bf in fields):
        return None
    spec = ffi.new("rotate_format *")
    spec.bytes = fmt.bpp // 8
    for i, bf in enumerate(fields):
        spec.off[i], spec.len[i] = bf.offset, bf.length
    return spec


def transfer_for(fmt: PixelFormat, palette: np.ndarray | None, width: int, height: int, rotate: int = 0) -> Transfer:
    """The :class:`Transfer` for ``width`` x ``height`` frames into ``fmt`` pages, the
    picture turned ``rotate`` degrees clockwise on the panel (one of :data:`ROTATIONS`)."""
    if rotate not in ROTATIONS:
        raise ValueError(f"rotate must be one of 0, 90, 180, 270 (degrees clockwise), not {rotate!r}")
    if rotate:
        turned = _TurnedPacked if fmt.is_packed else _Turned
        return turned(fmt, palette, width, height, rotate)
    plain = _Packed if fmt.is_packed else _Plain
    return plain(fmt, palette, width, height)
