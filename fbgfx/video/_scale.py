"""Decoded video frames into a display's pixel format, through libswscale.

A :class:`Converter` writes each decoded frame (any of FFmpeg's YUV or RGB layouts) at
the size it is shown straight into the Screen's back buffer, in the device's own
layout where libswscale has it (``bgr0``, ``rgb565le``, ``rgb24``, ``gray``...): one
pass, no allocation per frame. Where it has no such layout (palettes, alpha bits that
must be set, fewer than 8 bits a pixel) libswscale writes RGB into a scratch buffer
made once and fbgfx's own kernels (:func:`fbgfx.convert.to_native`) pack it. A video
whose display matrix turns it (phones) is scaled into a scratch buffer and turned into
place by fbgfx's C rotation kernel.

libswscale is called through cffi in ABI mode, on the very copy PyAV loaded (found in
``/proc/self/maps``), so frames are handed over as PyAV decoded them: plane pointers
and line sizes, no copies. PyAV's own ``reformat`` allocates a new frame per call.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any, NamedTuple

import numpy as np

from .. import convert
from .._ffi import check_value
from .._ffi import ffi as native_ffi
from .._ffi import lib as native_lib
from .._foreign import load
from ..pixelformat import PixelFormat

__all__ = ["Converter", "YuvWriter", "native_pix_fmt", "swscale"]

# libswscale's scaler for frames shown at another size (what ffmpeg's -s uses).
SWS_BICUBIC = 4


# FFmpeg's name for a layout of 8-bit-or-more channels, by the bit offsets (red, green,
# blue, alpha or None) within a little-endian pixel of that many bits.
_LAYOUTS: dict[tuple[int, int, int, int, int | None], str] = {
    (32, 16, 8, 0, None): "bgr0",
    (32, 16, 8, 0, 24): "bgra",
    (32, 0, 8, 16, None): "rgb0",
    (32, 0, 8, 16, 24): "rgba",
    (32, 24, 16, 8, None): "0bgr",
    (32, 24, 16, 8, 0): "abgr",
    (32, 8, 16, 24, None): "0rgb",
    (32, 8, 16, 24, 0): "argb",
    (24, 16, 8, 0, None): "bgr24",
    (24, 0, 8, 16, None): "rgb24",
}
# 16-bit layouts, by (red, green, blue) (offset, length): no alpha bit (swscale leaves it 0).
_LAYOUTS16: dict[tuple[tuple[int, int], ...], str] = {
    ((11, 5), (5, 6), (0, 5)): "rgb565le",
    ((0, 5), (5, 6), (11, 5)): "bgr565le",
    ((10, 5), (5, 5), (0, 5)): "rgb555le",
    ((0, 5), (5, 5), (10, 5)): "bgr555le",
    ((8, 4), (4, 4), (0, 4)): "rgb444le",
    ((0, 4), (4, 4), (8, 4)): "bgr444le",
}


def native_pix_fmt(fmt: PixelFormat) -> str | None:
    """FFmpeg's pixel format with ``fmt``'s memory layout, or None when it has none
    (palettes, fewer than 8 bits a pixel, 16-bit layouts with an alpha bit)."""
    if fmt.indexed or fmt.is_packed:
        return None
    if fmt.gray:
        return "gray" if fmt.bpp == 8 else None
    r, g, b, a = fmt.red, fmt.green, fmt.blue, fmt.transp
    if fmt.bpp == 16:
        if a.length:
            return None
        return _LAYOUTS16.get(((r.offset, r.length), (g.offset, g.length), (b.offset, b.length)))
    if not (r.length == g.length == b.length == 8) or a.length not in (0, 8):
        return None
    return _LAYOUTS.get((fmt.bpp, r.offset, g.offset, b.offset, a.offset if a.length else None))


class _Swscale:
    """libswscale and libavutil as PyAV loaded them."""

    def __init__(self) -> None:
        importlib.import_module("av.video.reformatter")  # loads libswscale into the process
        scale, util = _loaded("libswscale"), _loaded("libavutil")
        if scale is None or util is None:
            raise ImportError("PyAV is installed but its libswscale/libavutil could not be found in the process")
        self.ffi, (self.scale, self.util) = load("swscale", scale, util)
        self._pix_fmts: dict[str, int] = {}

    def pix_fmt(self, name: str) -> int:
        """FFmpeg's number for a pixel format name."""
        value = self._pix_fmts.get(name)
        if value is None:
            value = self._pix_fmts[name] = int(self.util.av_get_pix_fmt(name.encode()))
        return value


_SWSCALE: _Swscale | None = None
_LOCK = threading.Lock()


def swscale() -> _Swscale:
    """The process's libswscale (loaded on first use)."""
    global _SWSCALE
    with _LOCK:
        if _SWSCALE is None:
            _SWSCALE = _Swscale()
        return _SWSCALE


def _loaded(stem: str) -> str | None:
    """The path of the shared library ``stem`` (e.g. ``libswscale``) mapped into this process."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.rstrip("\n").split(None, 5)[-1]
            name = os.path.basename(path)
            if name.startswith(stem) and (name[len(stem)] in "-." if len(name) > len(stem) else False):
                return path
    return None


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


# Alignment libswscale gets for what it writes: its SIMD stores assume 16-byte rows.
_ALIGN = 16


def _aligned(height: int, width: int, channels: int, dtype: Any) -> np.ndarray:
    """An uninitialised (height, width[, channels]) array whose start and rows are
    64-byte aligned (rows padded), for libswscale to write."""
    pixel = np.dtype(dtype).itemsize * channels
    row = -(-width * pixel // 64) * 64
    raw = np.empty(height * row + 64, np.uint8)
    start = -_address(raw) % 64
    rows = raw[start : start + height * row].reshape(height, row)[:, : width * pixel]
    if channels > 1:
        return rows.reshape(height, width, channels)
    return rows.view(dtype)


class _Placement(NamedTuple):
    """Where and how a :class:`Converter` puts pictures: its arguments, for its routes."""

    dst: np.ndarray
    fmt: PixelFormat
    palette: np.ndarray | None
    size: tuple[int, int]
    crop: tuple[int, int]
    turn: int
    threads: int


class Converter:
    """Writes decoded frames of one video into a fixed place of a native-format array.

    A device whose channels are narrower than 8 bits (RGB565, XRGB4444...) gets RGB
    and palette frames (PNG, FFV1 RGB, GIF) through RGB and fbgfx's own packing, as
    :meth:`fbgfx.Screen.present` packs them: libswscale's RGB-to-RGB565 path packs
    them with colour fringes. YUV frames take libswscale's one pass.

    Args:
        dst: Where the picture goes: a view of the back buffer (the shown rectangle).
        fmt: The device's pixel format; ``palette`` its colour map (palette formats).
        size: (width, height) the upright picture is scaled to, before ``crop``.
        crop: (x, y) of ``dst``'s top-left corner within that scaled picture
            (``fill`` and ``center`` cut the overflow).
        turn: Quarter turns clockwise that bring the decoded picture upright.
        threads: libswscale's worker threads.
    """

    def __init__(
        self,
        dst: np.ndarray,
        fmt: PixelFormat,
        palette: np.ndarray | None,
        size: tuple[int, int],
        crop: tuple[int, int],
        turn: int,
        threads: int,
    ) -> None:
        self._args = _Placement(dst, fmt, palette, size, crop, turn, threads)
        self._direct: _Route | None = None  # made for the first frame that needs it (none, for a cut)
        narrow = native_pix_fmt(fmt) is not None and min(fmt.red.length, fmt.green.length, fmt.blue.length) < 8
        self._rgb: _Route | None = None  # made for the first RGB frame, where narrow
        self._narrow = narrow
        # shown 1:1 but cut (fit="center" of a large picture): convert only the part shown
        self._cut = crop if not turn % 4 and crop != (0, 0) else None
        self._size = size
        self._windows: dict[tuple[int, int, bool], _Route] = {}

    def close(self) -> None:
        """Free libswscale's contexts; safe twice."""
        for route in (self._direct, self._rgb, *self._windows.values()):
            if route is not None:
                route.close()

    def __call__(self, frame: Any) -> None:
        """Write ``frame`` (a decoded ``av.VideoFrame``) into the destination."""
        rgb = self._narrow and _is_rgb(frame.format)
        if self._cut is not None and (frame.width, frame.height) == self._size:
            window = _window(frame, self._cut, self._args.dst.shape[:2])
            if window is not None:
                key = (window.rx, window.ry, rgb)
                if key not in self._windows:
                    place = self._args._replace(size=(window.width, window.height), crop=(window.rx, window.ry), turn=0)
                    self._windows[key] = _Route(place, rgb=rgb)
                self._windows[key](window)
                return
        if rgb:
            if self._rgb is None:
                self._rgb = _Route(self._args, rgb=True)
            self._rgb(frame)
        else:
            if self._direct is None:
                self._direct = _Route(self._args, rgb=False)
            self._direct(frame)


class YuvWriter:
    """Writes decoded frames into the planes of a YUV picture (``nv12`` or ``yuv420p``),
    scaled to its size, through libswscale: the frame stays YUV, no RGB step (for a
    display plane that scans out NV12 or YUV420, :class:`fbgfx.drm.yuv.YuvBuffer`).

    A frame of the picture's size and format is copied plane by plane; another 4:2:0
    layout has its chroma moved; full-range frames (``yuvj420p``) are brought to the
    video range (16-235), which planes assume.

    Args:
        planes: The picture's planes as uint8 (rows, bytes) views: Y and CbCr (``nv12``),
            or Y, Cb and Cr (``yuv420p``), e.g. ``YuvBuffer.planes()``.
        pix_fmt: ``"nv12"`` or ``"yuv420p"``.
        threads: libswscale's worker threads.

    Raises:
        ValueError: Another ``pix_fmt``, planes of the wrong count or shape.
    """

    def __init__(self, planes: list[np.ndarray], pix_fmt: str, threads: int = 1) -> None:
        if pix_fmt not in ("nv12", "yuv420p"):
            raise ValueError(f"YuvWriter writes nv12 or yuv420p, not {pix_fmt!r}")
        count = 2 if pix_fmt == "nv12" else 3
        if len(planes) != count:
            raise ValueError(f"{pix_fmt} has {count} planes, not {len(planes)}")
        height, width = planes[0].shape
        chroma = (height // 2, width) if pix_fmt == "nv12" else (height // 2, width // 2)
        if width % 2 or height % 2 or any(p.shape != chroma for p in planes[1:]):
            raise ValueError(f"planes of shapes {[p.shape for p in planes]} are not a {pix_fmt} picture")
        self.sws = swscale()
        self.planes, self.pix_fmt, self.threads = planes, pix_fmt, threads
        self.width, self.height = width, height
        # libswscale's SIMD stores want 16-byte aligned rows: unaligned planes get a scratch copy
        aligned = all(_address(p) % _ALIGN == 0 and p.strides[0] % _ALIGN == 0 for p in planes)
        self._targets = planes if aligned else [_aligned(p.shape[0], p.shape[1], 1, np.uint8) for p in planes]
        ffi = self.sws.ffi
        self._dst_ptr = ffi.new("uint8_t *[4]")
        self._dst_stride = ffi.new("int[4]")
        for i, target in enumerate(self._targets):
            self._dst_ptr[i] = ffi.cast("uint8_t *", _address(target))
            self._dst_stride[i] = target.strides[0]
        self._src_ptr = ffi.new("const uint8_t *[4]")
        self._src_stride = ffi.new("int[4]")
        self._ctx: Any = None
        self._key: tuple[int, int, str] | None = None

    def close(self) -> None:
        """Free libswscale's context; safe twice."""
        if self._ctx is not None:
            self.sws.scale.sws_freeContext(self._ctx)
            self._ctx = None

    def _context(self, frame: Any) -> Any:
        name = frame.format.name
        key = (frame.width, frame.height, name)
        if key == self._key:
            return self._ctx
        self.close()
        sws = self.sws
        ctx = _new_context(sws, key, (self.width, self.height, self.pix_fmt), self.threads)
        if name.startswith("yuvj") or getattr(frame, "color_range", None) == 2:  # full range (AVCOL_RANGE_JPEG)
            table = sws.scale.sws_getCoefficients(5)
            sws.scale.sws_setColorspaceDetails(ctx, table, 1, table, 0, 0, 1 << 16, 1 << 16)
        self._ctx, self._key = ctx, key
        return ctx

    def __call__(self, frame: Any) -> None:
        """Write ``frame`` (a decoded ``av.VideoFrame``) into the planes."""
        ctx = self._context(frame)
        _scale_planes(self.sws, ctx, frame, self._src_ptr, self._src_stride, self._dst_ptr, self._dst_stride)
        if self._targets is not self.planes:
            for plane, target in zip(self.planes, self._targets):
                plane[...] = target


def _new_context(sws: _Swscale, src: tuple[int, int, str], dst: tuple[int, int, str], threads: int) -> Any:
    """A libswscale context from ``src`` to ``dst`` (width, height, FFmpeg pixel format name),
    bicubic, on ``threads`` threads; the caller frees it.

    Raises:
        MemoryError: libswscale could not allocate it.
        ValueError: libswscale does not know a format, or cannot convert between them.
    """
    (width, height, name), (out_w, out_h, out_name) = src, dst
    ctx = sws.scale.sws_alloc_context()
    if ctx == sws.ffi.NULL:
        raise MemoryError("libswscale: out of memory")
    src_format = sws.pix_fmt(name)
    if src_format < 0:
        sws.scale.sws_freeContext(ctx)
        raise ValueError(f"libswscale does not know the pixel format {name!r}")
    opt = sws.util.av_opt_set_int
    for option, value in (
        (b"srcw", width),
        (b"srch", height),
        (b"src_format", src_format),
        (b"dstw", out_w),
        (b"dsth", out_h),
        (b"dst_format", sws.pix_fmt(out_name)),
        (b"sws_flags", SWS_BICUBIC),
    ):
        opt(ctx, option, value, 0)
    opt(ctx, b"threads", threads, 0)  # an option since FFmpeg 5.0; older ones have one thread
    if sws.scale.sws_init_context(ctx, sws.ffi.NULL, sws.ffi.NULL) < 0:
        sws.scale.sws_freeContext(ctx)
        raise ValueError(f"libswscale cannot convert {name} {width}x{height} to {out_name}")
    return ctx


def _scale_planes(sws: _Swscale, ctx: Any, frame: Any, src: Any, src_stride: Any, dst: Any, dst_stride: Any) -> None:
    """One ``sws_scale`` of ``frame``'s planes (PyAV's, or a :class:`_Window`'s) through
    ``ctx`` into the destination planes ``dst`` / ``dst_stride`` (``src`` and
    ``src_stride``: the caller's four-entry arrays, filled here)."""
    ffi = sws.ffi
    keep = []  # the buffers C reads stay alive for the whole call
    for i, plane in enumerate(frame.planes[:4]):
        buffer = ffi.from_buffer("uint8_t[]", plane.data if isinstance(plane, _Plane) else plane)
        keep.append(buffer)
        src[i] = buffer
        src_stride[i] = plane.line_size
    for i in range(len(keep), 4):
        src[i] = ffi.NULL
        src_stride[i] = 0
    rows = sws.scale.sws_scale(ctx, src, src_stride, 0, frame.height, dst, dst_stride)
    if rows < 0:  # 0 is success too: FFmpeg 5's ARM (NEON) converters return 0
        raise ValueError(f"libswscale failed on a {frame.format.name} frame ({rows})")
    del keep


class _Plane:
    """A plane of a :class:`_Window`: its bytes from the window's first pixel, and its line size."""

    def __init__(self, data: memoryview, line_size: int) -> None:
        self.data, self.line_size = data, line_size


class _Window:
    """The part of a decoded frame that is shown, as libswscale reads a frame: plane
    pointers moved to the part's first pixel, the frame's line sizes. Its left and top
    edges are rounded down to the chroma subsampling; ``rx``, ``ry`` are what was added."""

    def __init__(self, frame: Any, planes: list[_Plane], size: tuple[int, int], extra: tuple[int, int]) -> None:
        self.format, self.planes = frame.format, planes
        self.colorspace = getattr(frame, "colorspace", None)
        self.color_range = getattr(frame, "color_range", None)
        (self.width, self.height), (self.rx, self.ry) = size, extra


def _window(frame: Any, at: tuple[int, int], shape: tuple[int, int]) -> _Window | None:
    """The ``shape`` (rows, columns) part of ``frame`` at ``at``, or None for a layout this
    cannot cut (palettes, bitstreams, Bayer, an old PyAV): then the whole is converted.

    The part read is a little larger: its edges on the chroma grid, two chroma samples
    more on each side where the frame has them, and whole chroma samples wide and high,
    so libswscale interpolates the shown pixels' colour from the same samples as it
    would in the whole frame."""
    pix = frame.format
    try:
        if pix.has_palette or pix.is_bit_stream or _is_bayer(pix):
            return None
        hs, vs = 16 // pix.chroma_width(16), 16 // pix.chroma_height(16)
        rows, columns = shape
        left, width = _span(at[0], columns, frame.width, hs)
        top, height = _span(at[1], rows, frame.height, vs)
        planes = [
            _Plane(memoryview(plane)[offset:], plane.line_size)
            for plane, offset in zip(frame.planes, _offsets(frame, left, top, hs, vs))
        ]
    except (AttributeError, TypeError, ValueError, ZeroDivisionError):
        return None
    return _Window(frame, planes, (width, height), (at[0] - left, at[1] - top))


def _is_bayer(pix: Any) -> bool:
    """True for a Bayer mosaic (PyAV 10, Debian bookworm's, has no ``is_bayer``: by name)."""
    is_bayer = getattr(pix, "is_bayer", None)
    return bool(str(pix.name).startswith("bayer_") if is_bayer is None else is_bayer)


def _span(start: int, length: int, total: int, step: int) -> tuple[int, int]:
    """(first, length) of what is read along one axis to show ``length`` from ``start``."""
    first = max(start - start % step - 2 * step, 0)
    end = min(start + length + 2 * step, total)
    end = min(first + -(-(end - first) // step) * step, total)
    return first, end - first


def _offsets(frame: Any, x: int, y: int, hs: int, vs: int) -> list[int]:
    """Each plane's byte offset of the pixel (x, y) (both on the chroma grid)."""
    pix = frame.format
    components = list(pix.components)
    offsets = []
    for index, plane in enumerate(frame.planes):
        mine = [c for c in components if c.plane == index]
        if pix.is_planar:
            step = sum(-(-c.bits // 8) for c in mine)
            chroma = any(c.is_chroma for c in mine)
        elif pix.padded_bits_per_pixel % 8 == 0:
            step, chroma = pix.padded_bits_per_pixel // 8, False
        else:
            raise ValueError("a packed layout of bits, not bytes")
        px, py = (x // hs, y // vs) if chroma else (x, y)
        offsets.append(py * plane.line_size + px * step)
    return offsets


def _is_rgb(pix_fmt: Any) -> bool:
    """True for FFmpeg's RGB and palette layouts (``rgb24``, ``gbrp``, ``bgr0``, ``pal8``...)."""
    is_rgb = getattr(pix_fmt, "is_rgb", None)
    if is_rgb is None:  # older PyAV: by name
        name = str(pix_fmt.name)
        return name.startswith(("rgb", "bgr", "gbr", "argb", "abgr", "0rgb", "0bgr", "pal8"))
    return bool(is_rgb or getattr(pix_fmt, "has_palette", False))


class _Route:
    """One way into the destination: libswscale into the device's layout (where it has
    one and ``rgb`` is False), else libswscale into RGB and fbgfx's kernels.

    Args:
        place: :class:`Converter`'s arguments.
        rgb: Always through RGB.
    """

    def __init__(self, place: _Placement, *, rgb: bool) -> None:
        dst, fmt, palette, size, crop, turn, threads = place
        self.sws = swscale()
        self.dst, self.format, self.palette = dst, fmt, palette
        self.turn, self.threads = turn % 4, threads
        width, height = size
        # libswscale writes the decoded orientation: turned back it is the upright size.
        self.out_w, self.out_h = (height, width) if self.turn % 2 else (width, height)
        self.crop = crop
        name = None if rgb else native_pix_fmt(fmt)
        bpp = fmt.bytes_per_pixel
        direct = (
            name is not None
            and not self.turn
            and crop == (0, 0)
            and dst.shape[:2] == (height, width)
            and dst.strides[0] > 0
            and (dst.ndim == 2 and dst.strides[1] == bpp or dst.ndim == 3 and dst.strides[1] == 3)
            # libswscale's SIMD stores want 16-byte rows (ARM's NEON faults otherwise)
            and _address(dst) % _ALIGN == 0
            and dst.strides[0] % _ALIGN == 0
        )
        self.packed = name is not None  # libswscale writes the device's layout
        self.out_name = name if name is not None else "rgb24"
        if direct:
            self.scratch: np.ndarray | None = None
            target = dst
        else:
            channels = 1 if name is not None and fmt.bpp != 24 else 3
            self.scratch = target = _aligned(
                self.out_h, self.out_w, channels, fmt.dtype if name is not None else np.uint8
            )
            upright = np.rot90(target, -self.turn) if self.turn else target
            cx, cy = crop
            self._shown = upright[cy : cy + dst.shape[0], cx : cx + dst.shape[1]]
            # a whole turned picture goes through the C rotation kernel in one pass
            self._turn_whole = bool(self.turn) and self._shown.shape == upright.shape and _turnable(dst, fmt)
        ffi = self.sws.ffi
        self._dst_ptr = ffi.new("uint8_t *[4]")
        self._dst_stride = ffi.new("int[4]")
        self._dst_ptr[0] = ffi.cast("uint8_t *", _address(target))
        self._dst_stride[0] = target.strides[0]
        self._src_ptr = ffi.new("const uint8_t *[4]")
        self._src_stride = ffi.new("int[4]")
        self._ctx: Any = None
        self._key: tuple[int, int, str] | None = None
        self._colors: tuple[int, int] | None = None

    def close(self) -> None:
        """Free libswscale's context; safe twice."""
        if self._ctx is not None:
            self.sws.scale.sws_freeContext(self._ctx)
            self._ctx = None

    def _context(self, width: int, height: int, name: str) -> Any:
        key = (width, height, name)
        if key == self._key:
            return self._ctx
        self.close()
        ctx = _new_context(self.sws, key, (self.out_w, self.out_h, self.out_name), self.threads)
        self._ctx, self._key, self._colors = ctx, key, None
        return ctx

    def _colorspace(self, ctx: Any, frame: Any) -> None:
        """Tell libswscale the frame's YUV matrix and range when the file states them."""
        space = getattr(frame, "colorspace", None)
        color_range = getattr(frame, "color_range", None)
        if space is None or color_range is None:
            return
        colors = (int(space), int(color_range))
        if colors == self._colors:
            return
        self._colors = colors
        sws = self.sws.scale
        if colors[0] in (1, 4, 5, 6, 7, 9, 10):  # BT.709, FCC, BT.601 (x2), SMPTE 240M, BT.2020
            coefficients = sws.sws_getCoefficients(colors[0])
        else:
            coefficients = sws.sws_getCoefficients(5)  # unspecified: BT.601, as ffmpeg does
        full = 1 if colors[1] == 2 else 0  # AVCOL_RANGE_JPEG
        sws.sws_setColorspaceDetails(ctx, coefficients, full, coefficients, 1, 0, 1 << 16, 1 << 16)

    def __call__(self, frame: Any) -> None:
        """Write ``frame`` (a decoded ``av.VideoFrame``) into the destination."""
        ctx = self._context(frame.width, frame.height, frame.format.name)
        self._colorspace(ctx, frame)
        _scale_planes(self.sws, ctx, frame, self._src_ptr, self._src_stride, self._dst_ptr, self._dst_stride)
        if self.scratch is not None:
            self._place()

    def _place(self) -> None:
        """Scratch (scaled, maybe turned or larger than shown) into the destination."""
        shown, dst, src = self._shown, self.dst, self.scratch
        assert src is not None
        if not self.packed:
            convert.to_native(shown, self.format, dst, palette=self.palette)
        elif self._turn_whole:
            h, w = src.shape[:2]
            check_value(
                native_lib.rotate_copy(
                    native_ffi.cast("uint8_t *", _address(src)), src.strides[0],
                    native_ffi.cast("uint8_t *", _address(dst)), dst.strides[0],
                    w, h, self.format.bytes_per_pixel, self.turn,
                ),
                "turning a video frame",
            )  # fmt: skip
        else:
            dst[...] = shown


def _turnable(a: np.ndarray, fmt: PixelFormat) -> bool:
    """True when the C rotation kernel can write ``a`` (as for a Screen's pages)."""
    size = fmt.bytes_per_pixel
    if a.strides[1] != (3 if size == 3 else size) or a.strides[0] <= 0:
        return False
    return size == 3 or (a.strides[0] % size == 0 and _address(a) % size == 0)
