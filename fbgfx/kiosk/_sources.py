"""What :mod:`fbgfx.kiosk.mirror` reads: the picture a display shows now, whoever draws it.

A :class:`FramebufferSource` looks at ``/dev/fbN`` or a file-backed ``virtual:`` display
opened read-only (following its mode changes); a :class:`ScanoutSource` looks at what a
DRM CRTC scans out while another program is the card's master: the CRTC's framebuffer
is asked for again at every look (``GETCRTC``, ``GETFB2``), so a flip to another buffer
or a new mode is seen at once, and each buffer is mapped once and read in place. A
source that shows nothing (a CRTC turned off, a display gone) answers None; the mirror
keeps the last picture and asks again.
"""

from __future__ import annotations

import errno
import mmap
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

import fbgfx

from ..device import Framebuffer
from ..drm.card import ALPHA_ALIASES, BY_FOURCC, FOURCC_FORMATS, Card, FbInfo
from ..drm.discovery import find_display, is_drm_spec, parse_spec
from ..errors import FramebufferError
from ..pixelformat import PixelFormat

__all__ = ["DEFAULT_REFRESH", "FramebufferSource", "MirrorSource", "Picture", "ScanoutSource", "open_source"]

#: Frames a second assumed when a source does not say its refresh rate.
DEFAULT_REFRESH = 60.0
# How often a source that is gone (or shows nothing) is looked for again, in seconds.
_RETRY = 0.5
# Mapped scanout buffers kept (a program flipping between two or three buffers).
_MAPPINGS = 4


@dataclass(frozen=True)
class Picture:
    """What a source shows at one look.

    Attributes:
        format: Its pixel format.
        native: Its pixels in that format, (height, width) words, (height, width, 3)
            bytes for 24-bit formats, (height, row bytes) for packed formats; often a
            view of video memory: read it, keep no reference.
        palette: The colour map of a palette format, else None.
        width, height: Its size in pixels.
        refresh: Its refresh rate in Hz, None when unknown.
    """

    format: PixelFormat
    native: np.ndarray
    palette: np.ndarray | None
    width: int
    height: int
    refresh: float | None


class MirrorSource(Protocol):
    """A display to look at."""

    name: str

    def look(self) -> Picture | None:
        """What the display shows now; None when it shows nothing (yet, or anymore)."""
        ...

    def close(self) -> None:
        """Let the display go (safe twice)."""
        ...


def open_source(spec: str) -> MirrorSource:
    """The source for a display spec: ``drm:...`` (what its CRTC scans out), else any
    display :func:`fbgfx.open` reads (``/dev/fbN``, ``virtual:...:file=PATH``).

    Raises:
        FramebufferError: No such display, no permission, or no DRM card with a display.
    """
    if is_drm_spec(spec):
        card, options = parse_spec(spec)
        if card is None:
            card = find_display()
            if card is None:
                raise FramebufferError(errno.ENOENT, "no DRM card with a connected display", spec)
        return ScanoutSource(card, options.get("connector"))
    return FramebufferSource(spec)


class FramebufferSource:
    """A display opened read-only with :func:`fbgfx.open`, re-read at every look.

    A display that goes away (a file-backed virtual display removed, an unplugged
    device) answers None and is opened again when it is back.
    """

    def __init__(self, spec: str) -> None:
        self.name = spec
        self._fb: Framebuffer | None = fbgfx.open(spec, readonly=True)
        self._retry_at = 0.0

    def look(self) -> Picture | None:
        fb = self._fb
        if fb is None:
            if time.monotonic() < self._retry_at:
                return None
            try:
                fb = self._fb = fbgfx.open(self.name, readonly=True)
            except OSError:
                self._retry_at = time.monotonic() + _RETRY
                return None
        try:
            fb.refresh()
            fb.check()
            return Picture(fb.format, fb.pixels, fb.palette, fb.width, fb.height, _fbdev_refresh(fb))
        except OSError:
            self._drop()
            return None

    def _drop(self) -> None:
        fb, self._fb = self._fb, None
        self._retry_at = time.monotonic() + _RETRY
        if fb is not None:
            try:
                fb.close()
            except OSError:
                pass

    def close(self) -> None:
        fb, self._fb = self._fb, None
        if fb is not None:
            fb.close()


def _fbdev_refresh(fb: Framebuffer) -> float | None:
    """The refresh rate the fbdev timings give, None without timings (vfb, virtual)."""
    try:
        v = fb.var
        total = (v.xres + v.left_margin + v.right_margin + v.hsync_len) * (
            v.yres + v.upper_margin + v.lower_margin + v.vsync_len
        )
    except (AttributeError, OSError):
        return None
    if not v.pixclock or total <= 0:
        return None
    return 1e12 / v.pixclock / total


class ScanoutSource:
    """What a DRM connector's CRTC scans out, read while another program draws it.

    The card is opened and DRM master dropped at once (the first opener of a card
    becomes its master and would lock out the program being watched). Reading
    another program's buffers needs root (``CAP_SYS_ADMIN``): the kernel hands out
    no buffer handle otherwise.

    Args:
        path: The card (``/dev/dri/card0``).
        connector: The connector's name (``HDMI-A-1``); default the first lit CRTC.
    """

    def __init__(self, path: str, connector: str | None = None) -> None:
        self.name = f"drm:{path}" + (f":connector={connector}" if connector else "")
        self.path, self.connector = path, connector
        self._card: Card | None = Card(path)
        try:
            self._card.drop_master()
        except FramebufferError:
            pass  # not master: someone else is, as expected
        self._crtc_id = 0
        self._maps: dict[tuple[int, int], tuple[mmap.mmap, FbInfo]] = {}

    def _card_open(self) -> Card:
        if self._card is None:
            raise FramebufferError(errno.EBADF, "the source is closed", self.path)
        return self._card

    def _find_crtc(self) -> int:
        card = self._card_open()
        crtcs, conns, _ = card.resources()
        if self.connector is None:
            lit = [c for c in crtcs if card.crtc(c).fb_id]
            return lit[0] if lit else 0
        for cid in conns:
            conn = card.connector(cid, probe=False)
            if conn.name == self.connector:
                return card.encoder(conn.encoder_id).crtc_id if conn.encoder_id else 0
        names = ", ".join(card.connector(c, probe=False).name for c in conns)
        raise FramebufferError(errno.ENODEV, f"no connector {self.connector!r}; connectors: {names}", self.path)

    def look(self) -> Picture | None:
        card = self._card_open()
        if not self._crtc_id:
            self._crtc_id = self._find_crtc()
            if not self._crtc_id:
                return None
        state = card.crtc(self._crtc_id)
        if not state.fb_id or state.mode is None:
            self._crtc_id = 0  # off: the program may light another CRTC next
            return None
        try:
            info = card.get_fb(state.fb_id)
        except FramebufferError as e:
            if e.errno in (errno.ENOENT, errno.EINVAL):
                return None  # removed between the two calls: its program is leaving
            raise
        if not info.handle:
            raise FramebufferError(
                errno.EACCES,
                "the kernel gives another program's buffer on screen only to root (CAP_SYS_ADMIN): run as root (sudo)",
                self.path,
            )
        try:
            offset = card.map_offset(info.handle)
            key = (state.fb_id, offset)
            if key not in self._maps:
                length = info.offset + info.pitch * info.height
                try:
                    m = mmap.mmap(card.fd, length, mmap.MAP_SHARED, mmap.PROT_READ, offset=offset)
                except OSError as e:
                    raise FramebufferError.from_errno(
                        e.errno or errno.EIO, "mapping the buffer on screen", self.path
                    ) from None
                while len(self._maps) >= _MAPPINGS:
                    del self._maps[next(iter(self._maps))]  # unmapped when no view holds it
                self._maps[key] = (m, info)
        finally:
            card.gem_close(info.handle)
        m, info = self._maps[key]
        code = ALPHA_ALIASES.get(info.fourcc, info.fourcc)
        name = BY_FOURCC.get(code)
        if name is None:
            raise FramebufferError(
                errno.ENOTSUP, f"the framebuffer on screen is {info.fourcc}, which fbgfx does not read", self.path
            )
        fmt = PixelFormat.from_name(name)
        bpp = FOURCC_FORMATS[name][1]
        mode = state.mode
        w, h = min(mode.hdisplay, info.width - state.x), min(mode.vdisplay, info.height - state.y)
        start = info.offset + state.y * info.pitch + state.x * bpp // 8
        if bpp == 24:
            native = np.ndarray((h, w, 3), np.uint8, m, start, (info.pitch, 3, 1))
        else:
            native = np.ndarray((h, w), "<u4" if bpp == 32 else "<u2", m, start, (info.pitch, bpp // 8))
        return Picture(fmt, native, None, w, h, float(mode.vrefresh) or None)

    def close(self) -> None:
        self._maps.clear()
        card, self._card = self._card, None
        if card is not None:
            card.close()
