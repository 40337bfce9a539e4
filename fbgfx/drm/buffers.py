"""The dumb buffers of a ``drm:`` display: two pages for one mode, mapped end to end.

Separate buffers rather than one buffer with two offsets, because some drivers
(virtio-gpu) scan out from the start of the buffer whatever the framebuffer's offset
says. Mapped end to end at one address, they read as one memory of two pages.
"""

from __future__ import annotations

import errno
import math
import os
import warnings
from typing import Any

import numpy as np

from ..errors import FramebufferError
from .card import FOURCC_FORMATS, CardLike, DrmMode

__all__ = ["Buffers"]


class Buffers:
    """The dumb buffers of one mode, mapped end to end, and their framebuffer ids.

    Attributes:
        width, height: The mode's size; ``rows`` the rows a page spans in memory
            (``height``, padded so that a page fills whole memory pages).
        pitch, size: Bytes a row, bytes a page.
        fourcc, bpp: The format.
        handles, fb_ids: The buffers and their framebuffer objects (one each a page).
        memory, addr: The mapping (an object with the buffer protocol) and its address.
        front: The page on screen.
    """

    def __init__(self) -> None:
        self.handles: list[int] = []
        self.fb_ids: list[int] = []
        self.width = self.height = self.rows = self.pitch = self.size = 0
        self.fourcc = "XR24"
        self.bpp = 32
        self.memory: Any = None
        self.addr = 0
        self.front = 0

    @property
    def pages(self) -> int:
        """Pages to flip between (2, or 1 when the driver had no room)."""
        return len(self.fb_ids)

    @classmethod
    def make(
        cls, card: CardLike, mode: DrmMode, name: str, path: str, *, fourcc: tuple[str, int] | None = None
    ) -> Buffers:
        """Two buffers for ``mode`` in format ``name`` (one when the driver has no room
        for two), zeroed by the kernel, each with a framebuffer object, mapped.
        ``fourcc`` = (code, bits per pixel) instead of ``name``: a plane's format that
        is not one fbgfx opens displays in (``AR24`` for a layer with alpha)."""
        code, bpp = fourcc if fourcc is not None else (FOURCC_FORMATS[name][0], FOURCC_FORMATS[name][1])
        bufs = cls()
        bufs.width, bufs.height, bufs.fourcc, bufs.bpp = mode.hdisplay, mode.vdisplay, code, bpp
        page = os.sysconf("SC_PAGE_SIZE")
        try:
            rows = bufs.height
            handle, pitch, size = card.create_dumb(bufs.width, rows, bpp)
            if size % page or size % pitch:
                # Rows padded so that a buffer is a whole number of memory pages: the
                # buffers then sit end to end in one mapping, a whole number of rows apart.
                card.destroy_dumb(handle)
                rows = _padded_rows(bufs.height, pitch, page)
                handle, pitch, size = card.create_dumb(bufs.width, rows, bpp)
            bufs.handles.append(handle)
            bufs.pitch, bufs.size, bufs.rows = pitch, size, size // max(pitch, 1)
            try:
                handle, pitch, size = card.create_dumb(bufs.width, rows, bpp)
            except FramebufferError as e:
                if e.errno not in (errno.ENOMEM, errno.ENOSPC, errno.E2BIG):
                    raise
                # No room for a second page (a small VRAM at a large mode): one page,
                # which Screen shows by copying.
            else:
                if (pitch, size) == (bufs.pitch, bufs.size):
                    bufs.handles.append(handle)
                else:
                    card.destroy_dumb(handle)
            if bufs.size % page or bufs.size % bufs.pitch:
                raise FramebufferError(
                    errno.EINVAL,
                    f"the driver made a {bufs.size}-byte buffer for {bufs.pitch}-byte "
                    "rows, which cannot be mapped page by page",
                    path,
                )
            for handle in bufs.handles:
                bufs.fb_ids.append(card.add_fb2(bufs.width, bufs.height, code, handle, bufs.pitch))
            offsets = [card.map_offset(h) for h in bufs.handles]
            bufs.memory, bufs.addr = card.map_pages(offsets, bufs.size)
        except BaseException:
            bufs.free(card, path)
            raise
        return bufs

    def free(self, card: CardLike, path: str) -> None:
        """Forget the buffers: views of them stay valid but show nothing."""
        steps: list[tuple[str, Any, Any]] = []
        if self.addr:
            steps.append(("mapping", lambda a: card.detach(a, self.size * len(self.handles)), self.addr))
        steps += [("framebuffer", card.rm_fb, f) for f in self.fb_ids]
        steps += [("buffer", card.destroy_dumb, h) for h in self.handles]
        for what, step, arg in steps:
            try:
                step(arg)
            except OSError as e:
                warnings.warn(f"fbgfx: could not free a {what} on {path}: {e}", RuntimeWarning, stacklevel=3)
        self.fb_ids, self.handles, self.addr = [], [], 0

    def page(self, index: int) -> np.ndarray:
        """Page ``index`` as (height, width * bytes a pixel) uint8 rows."""
        raw = np.frombuffer(self.memory, np.uint8, count=self.size * self.pages)
        start = index * self.size
        rows = raw[start : start + self.rows * self.pitch].reshape(self.rows, self.pitch)
        return rows[: self.height, : self.width * self.bpp // 8]

    def copy_from(self, other: Buffers, page: int) -> None:
        """Put ``other``'s page ``page`` into this set's front page: top-left, cropped
        to fit, the rest black (a monitor back at another size shows the last frame)."""
        if self.memory is None or other.memory is None or other.fourcc != self.fourcc or not self.pages:
            return
        src, dst = other.page(page), self.page(self.front)
        h, w = min(src.shape[0], dst.shape[0]), min(src.shape[1], dst.shape[1])
        dst[:h, :w] = src[:h, :w]
        dst[h:, :] = 0
        dst[:h, w:] = 0


def _padded_rows(height: int, pitch: int, page: int) -> int:
    """The fewest rows >= ``height`` whose bytes fill whole memory pages."""
    step = page // math.gcd(pitch, page)
    return -(-height // step) * step
