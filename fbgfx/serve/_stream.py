"""What ``fbgfx serve`` streams: pictures read from a display, the rectangles that changed, encoded.

A :class:`DisplaySource` reads what a display shows (a :class:`~fbgfx.Framebuffer`, or the
buffer a ``drm:`` card scans out). :class:`Stream` grabs it at up to a frame rate,
compares each grab with the one before in tiles (one vectorised pass over the native
bytes), keeps the changed tiles of the last :data:`HISTORY` grabs, and encodes what a
viewer needs from where it is: the exact changed rectangles for one that kept up, the
changed tiles since its last update for one that fell behind, the whole picture for a
new one. Nothing is queued per viewer; a slow one simply asks less often.

An update on the wire (one WebSocket binary message, little-endian)::

    u8 kind (1)  u8 encoding  u16 count  u32 version  count x { u16 x, y, width, height }  payload

The payload holds each rectangle's pixels in turn as RGB (3 bytes a pixel, rows
packed): raw (``encoding`` 0), or all of them as one zlib stream (1; level 1: a third
of PNG's time at PNG's size; the browser inflates it with ``DecompressionStream``, once
per update: each inflate costs the page about a millisecond whatever its size).
Pixels are expanded to RGB exactly as ``fb.snapshot()`` does (:meth:`PixelFormat.unpack`
with the palette), so the canvas equals the snapshot.
"""

from __future__ import annotations

import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._screen.region import mask_runs
from ..convert import from_native
from ..device import Framebuffer
from ..pixelformat import PixelFormat

__all__ = ["HISTORY", "Frame", "FramebufferSource", "ScanoutSource", "DisplaySource", "Stream", "changed_rects"]

#: How many grabs' changed tiles are kept for viewers that fell behind.
HISTORY = 32
#: Tile height in rows and width in bytes of the comparison.
TILE_ROWS = 16
TILE_BYTES = 64
#: More rectangles than this in one update become their bounding box.
MAX_RECTS = 48

ENCODING_RAW = 0
ENCODING_ZLIB = 1
_UPDATE = struct.Struct("<BBHI")
_RECT = struct.Struct("<HHHH")
# zlib is tried on this many bytes first: a picture it cannot shrink (noise, video) is
# sent raw instead of costing its full, useless compression time.
_PROBE = 16384


class DisplaySource(Protocol):
    """Reads what a display shows."""

    def read(self) -> tuple[PixelFormat, np.ndarray, np.ndarray | None, int]:
        """(format, native pixels (a contiguous copy), palette or None, width in pixels)."""
        ...


class FramebufferSource:
    """The visible page of an open :class:`~fbgfx.Framebuffer`.

    A display opened read-only (as ``fbgfx serve`` opens it) is re-read at every grab,
    to follow another program's pans, mode and palette changes; an app's own display
    knows its own changes, and is left alone by the server's thread.
    """

    def __init__(self, fb: Framebuffer) -> None:
        self.fb = fb

    def read(self) -> tuple[PixelFormat, np.ndarray, np.ndarray | None, int]:
        fb = self.fb
        if fb.readonly:
            fb.refresh()
        fb.check()  # a framebuffer file another program truncated: an error the viewers are shown
        palette = fb.palette
        native = np.array(fb.pixels, copy=True)
        fb.check()  # truncated while it was read (fbgfx.virtual._guard: zeros, not SIGBUS)
        return fb.format, native, None if palette is None else palette.copy(), fb.width


class ScanoutSource:
    """What a ``drm:`` card scans out, read while another program is its master (``GETFB2``)."""

    def __init__(self, path: str, connector: str | None = None) -> None:
        self.path = path
        self.connector = connector

    def read(self) -> tuple[PixelFormat, np.ndarray, np.ndarray | None, int]:
        from .. import drm  # noqa: PLC0415 (the DRM layer only for a drm: display)

        name, native = drm.read_scanout(self.path, self.connector)
        return PixelFormat.from_name(name), native, None, native.shape[1]


@dataclass(frozen=True)
class Frame:
    """One grab: the native pixels and what they mean."""

    version: int
    format: PixelFormat
    native: np.ndarray
    palette: np.ndarray | None
    width: int
    height: int
    #: Bumped when size, format or palette change: a viewer then needs everything again.
    epoch: int

    @property
    def mode(self) -> dict[str, Any]:
        """What a viewer is told before the first update of an epoch."""
        return {"type": "mode", "width": self.width, "height": self.height, "format": self.format.name}


def _bytes_view(native: np.ndarray) -> np.ndarray:
    return native.reshape(native.shape[0], -1).view(np.uint8)


def _tile_mask(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Which (TILE_ROWS x TILE_BYTES) tiles differ between two byte arrays of one shape."""
    # Compared in the widest words that divide a row: 8-byte words take a third of the
    # time of bytes, and the tile reduction runs over 8 times fewer columns.
    h, w = old.shape
    word = next(n for n in (8, 4, 2, 1) if w % n == 0)
    kind = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[word]
    ne = old.view(kind) != new.view(kind)
    rows = np.logical_or.reduceat(ne, np.arange(0, h, TILE_ROWS), axis=0)
    return np.logical_or.reduceat(rows, np.arange(0, w // word, TILE_BYTES // word), axis=1)


def changed_rects(
    mask: np.ndarray, old: np.ndarray | None = None, new: np.ndarray | None = None
) -> list[tuple[int, int, int, int]]:
    """Byte rectangles (top, bottom, left, right; exclusive ends) covering a tile mask.

    Given the two byte arrays the mask came from, each rectangle shrinks to the bytes
    that differ in it.
    """
    h = mask.shape[0] * TILE_ROWS if new is None else new.shape[0]
    w = mask.shape[1] * TILE_BYTES if new is None else new.shape[1]
    rects = []
    for t0, t1, c0, c1 in mask_runs(mask):
        top, bottom = t0 * TILE_ROWS, min(t1 * TILE_ROWS, h)
        left, right = c0 * TILE_BYTES, min(c1 * TILE_BYTES, w)
        if old is not None and new is not None:
            ne = old[top:bottom, left:right] != new[top:bottom, left:right]
            rows, cols = np.flatnonzero(ne.any(axis=1)), np.flatnonzero(ne.any(axis=0))
            if not len(rows):
                continue
            top, bottom = top + int(rows[0]), top + int(rows[-1]) + 1
            left, right = left + int(cols[0]), left + int(cols[-1]) + 1
        rects.append((top, bottom, left, right))
    if len(rects) > MAX_RECTS:
        rects = [
            (min(r[0] for r in rects), max(r[1] for r in rects), min(r[2] for r in rects), max(r[3] for r in rects))
        ]
    return rects


def _compress(data: bytes) -> tuple[int, bytes]:
    if len(data) > 2 * _PROBE and len(zlib.compress(data[:_PROBE], 1)) > _PROBE * 0.9:
        return ENCODING_RAW, data
    packed = zlib.compress(data, 1)
    return (ENCODING_ZLIB, packed) if len(packed) < len(data) else (ENCODING_RAW, data)


def encode(frame: Frame, byte_rects: Sequence[tuple[int, int, int, int]]) -> bytes:
    """One update message carrying these byte rectangles of ``frame`` as RGB pixels."""
    fmt, bpp = frame.format, frame.format.bpp
    rects: list[bytes] = []
    pixels: list[bytes] = []
    for top, bottom, left, right in byte_rects:
        x0 = left * 8 // bpp
        x1 = min(frame.width, -(-right * 8 // bpp))
        if x1 <= x0 or bottom <= top:
            continue
        native = frame.native[top:bottom]
        if fmt.is_packed:
            per_byte = 8 // bpp
            native = fmt.unpack_bits(native[:, x0 // per_byte : -(-x1 // per_byte)], x1 - x0)
            rgb = np.ascontiguousarray(fmt.unpack(native, frame.palette))
        else:
            rgb = from_native(native[:, x0:x1], fmt, palette=frame.palette)  # in C; what unpack() gives
        rects.append(_RECT.pack(x0, top, x1 - x0, bottom - top))
        pixels.append(rgb.tobytes())
    encoding, payload = _compress(b"".join(pixels))
    return b"".join([_UPDATE.pack(1, encoding, len(rects), frame.version & 0xFFFFFFFF), *rects, payload])


class Stream:
    """Grabs a :class:`DisplaySource` and answers each viewer with what changed since it last looked.

    Thread-safe: :meth:`grab` runs in one worker thread, :meth:`update_for` in others.
    """

    def __init__(self, source: DisplaySource) -> None:
        self.source = source
        self._lock = threading.Lock()
        self._frame: Frame | None = None
        self._epoch = 0
        # (version, tile mask from version-1, the encoded update from version-1 or None)
        self._history: deque[tuple[int, np.ndarray, bytes | None]] = deque(maxlen=HISTORY)
        self.grab_seconds = 0.0  # the time the last grab took (read, compare, encode)

    @property
    def frame(self) -> Frame | None:
        """The newest grab (None before the first)."""
        return self._frame

    def grab(self, encode_delta: bool = True) -> bool:
        """Read the source once; True when the picture changed (a new version).

        Args:
            encode_delta: Encode the update from the previous version now (viewers
                that keep up all send it), instead of on first request.
        """
        t0 = time.perf_counter()
        fmt, native, palette, width = self.source.read()
        height = native.shape[0]
        old = self._frame
        same_mode = (
            old is not None
            and old.format == fmt
            and old.native.shape == native.shape
            and old.width == width
            and (old.palette is None) == (palette is None)
            and (palette is None or np.array_equal(old.palette, palette))  # type: ignore[arg-type]
        )
        if old is not None and same_mode:
            a, b = _bytes_view(old.native), _bytes_view(native)
            mask = _tile_mask(a, b)
            if not mask.any():
                self.grab_seconds = time.perf_counter() - t0
                return False
            frame = Frame(old.version + 1, fmt, native, palette, width, height, old.epoch)
            payload = encode(frame, changed_rects(mask, a, b)) if encode_delta else None
        else:
            self._epoch += 1
            frame = Frame((old.version + 1) if old else 1, fmt, native, palette, width, height, self._epoch)
            mask, payload = None, None
        with self._lock:
            if mask is None:
                self._history.clear()
            else:
                self._history.append((frame.version, mask, payload))
            self._frame = frame
        self.grab_seconds = time.perf_counter() - t0
        return True

    def update_for(self, version: int, epoch: int) -> tuple[Frame, bytes] | None:
        """What a viewer at ``version`` (of ``epoch``) needs to show the newest grab.

        Returns:
            (the frame, its update message), or None when the viewer is up to date.
            A viewer of another epoch gets the whole picture (tell it the mode first).
        """
        with self._lock:
            frame = self._frame
            if frame is None or (frame.version == version and frame.epoch == epoch):
                return None
            history = list(self._history)
        full = [(0, _bytes_view(frame.native).shape[0], 0, _bytes_view(frame.native).shape[1])]
        if epoch != frame.epoch:
            return frame, encode(frame, full)
        newer = [(v, m, p) for v, m, p in history if v > version]
        if not newer or newer[0][0] != version + 1:
            return frame, encode(frame, full)  # older than the history: everything
        if len(newer) == 1 and newer[0][2] is not None:
            return frame, newer[0][2]
        mask = newer[0][1].copy()
        for _, m, _ in newer[1:]:
            mask |= m
        return frame, encode(frame, changed_rects(mask, None, _bytes_view(frame.native)))
