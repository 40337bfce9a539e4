"""The ``drm:`` backend: :class:`DrmDevice`, a display through dumb buffers on a card.

Where ``/dev/fbN`` is missing (kernels without ``CONFIG_FB_DEVICE``) or is DRM's fbdev
emulation with one page, fbgfx drives KMS directly: ``fbgfx.open("drm:")``.

What :class:`DrmDevice` does, in the terms of the fbdev model :class:`fbgfx.Framebuffer`
drives (:class:`fbgfx.backend.Backend`):

- At open it becomes DRM master (or raises :class:`~fbgfx.errors.FramebufferError`
  saying which program holds the display), picks a connector, a mode and a CRTC,
  saves what the CRTC shows, creates two dumb buffers and sets the CRTC to the first.
- The two buffers are mapped end to end at one address, so the Framebuffer sees one
  memory of two pages (``yres_virtual`` = 2 pages, ``ypanstep`` = one page). A "pan"
  to the other page is a real page flip (``DRM_IOCTL_MODE_PAGE_FLIP`` with
  ``DRM_MODE_PAGE_FLIP_EVENT``): it returns once the flip is queued; the flip's
  event is read before the next flip and by :meth:`DrmDevice.wait_flip`. Separate
  buffers rather than one buffer with two offsets, because some drivers (virtio-gpu)
  scan out from the start of the buffer whatever the framebuffer's offset says.
- ``var``/``fix`` are synthesized for the Framebuffer's arithmetic (fourcc to
  bitfields, pitch to ``line_length``); the public ``fb.var``/``fb.fix`` say they are
  fbdev-only. A colour map does not exist (``ENOTTY``).
- A mode change is a connector mode: new buffers of that size, ``SETCRTC``, the old
  buffers freed. Anything else is a :class:`~fbgfx.errors.ModeError` listing the modes.
- :meth:`DrmDevice.dirty` sends ``DIRTYFB`` with clip rectangles, which drivers that
  show a shadow copy (virtio-gpu, cirrus, SPI panels) need to show direct writes.
- On close, on fatal signals and at exit (:mod:`fbgfx._restore`) the CRTC gets back
  its framebuffer, mode and position; buffers are freed and master dropped.
"""

from __future__ import annotations

import errno
import math
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import _restore
from .._ffi import lib
from ..backend import fbdev_only
from ..console import Console, find_vt
from ..errors import FramebufferError, ModeError
from ..modes import Mode
from ..screeninfo import (
    FB_ACTIVATE_TEST,
    FB_VISUAL_TRUECOLOR,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
)
from .card import BY_FOURCC, FOURCC_FORMATS, Card, CardLike, Connector, CrtcState, DrmMode, Plane
from .discovery import find_cards, find_display, parse_mode_option, parse_spec

__all__ = ["DIRTY_FULL_ROWS", "FLIP_TIMEOUT", "CardFactory", "DrmDevice", "DrmInfo"]

#: How long a page flip may take before fbgfx stops waiting for its event (seconds):
#: generous, because a display under emulation can be very slow.
FLIP_TIMEOUT = 5.0
_MAX_CLIPS = 256  # the kernel's DRM_MODE_FB_DIRTY_MAX_CLIPS
#: Drivers that place a DIRTYFB rectangle wrongly unless it spans whole rows: Linux
#: 6.1's cirrus converts XRGB8888 to 24-bit VRAM but offsets a rectangle's start by 4
#: bytes a pixel (seen under qemu: a 40x20 change drawn 33 pixels to the right).
DIRTY_FULL_ROWS = frozenset({"cirrus"})

#: Opens a card by path (tests pass one that returns a fake card).
CardFactory = Callable[[str], CardLike]


@dataclass(frozen=True)
class DrmInfo:
    """What ``fb.drm`` tells: the card, connector, CRTC, plane and mode in use.

    Attributes:
        card: The card's device path (``/dev/dri/card0``).
        driver: The kernel driver (``bochs-drm``, ``virtio_gpu``, ``vc4``).
        connector: The connector's name (``HDMI-A-1``), ``connector_id`` its object id.
        crtc_id, plane_id: The CRTC and primary plane (0 when not found) in use.
        mode: The mode set on the CRTC.
        fourcc: The buffers' format code (``"XR24"``).
        pages: Buffers to flip between (2, or 1 when the driver had no room).
        page: The buffer on screen (0 or 1), ``page_rows`` the row of ``fb.memory``
            where the second starts (``fb.pan(0, page_rows)`` flips to it).
        fb_ids: Their framebuffer object ids.
        flips: Page flips queued since open; ``flip_events`` their completion events
            read so far (one per flip).
        plane_formats: The formats the primary plane scans out.
    """

    card: str
    driver: str
    connector: str
    connector_id: int
    crtc_id: int
    plane_id: int
    mode: DrmMode
    fourcc: str
    pages: int
    page: int
    page_rows: int
    fb_ids: tuple[int, ...]
    flips: int
    flip_events: int
    plane_formats: tuple[str, ...]


class _Buffers:
    """The dumb buffers of one mode, mapped end to end, and their framebuffer ids."""

    def __init__(self) -> None:
        self.handles: list[int] = []
        self.fb_ids: list[int] = []
        self.width = self.height = self.rows = self.pitch = self.size = 0
        self.fourcc = "XR24"
        self.bpp = 32
        self.memory: Any = None
        self.addr = 0

    @property
    def pages(self) -> int:
        return len(self.fb_ids)


class DrmDevice:
    """A display driven through DRM/KMS: the :class:`fbgfx.backend.Backend` of ``drm:``.

    Args:
        card: An open :class:`Card` (tests pass a fake :class:`CardLike`). It is
            closed with the device.
        path: The spec as the user named it, for messages.
        connector: A connector name (``HDMI-A-1``); default: the first connected one.
        mode: ``"WxH"`` or ``"WxH@HZ"``, one of the connector's modes; default: the
            preferred mode.
        format: ``"XRGB8888"`` (default) or another of :data:`FOURCC_FORMATS` the
            plane scans out (``"RGB565"`` halves the memory written per frame).
        console: Switch the VT to graphics mode while the device is open (True), or not.

    Raises:
        FramebufferError: Another program owns the display, no connected connector,
            no dumb buffers, or the kernel refused the buffers or the CRTC.
        ModeError: ``mode`` is not one of the connector's modes (the message lists them).
    """

    #: No other process changes what this device shows while it is DRM master.
    shared = False
    #: var, fix and the colour map are derived from the mode and buffers, not fbdev's.
    fbdev = False

    def __init__(
        self,
        card: CardLike,
        path: str,
        *,
        connector: str | None = None,
        mode: str | None = None,
        format: str | None = None,
        console: bool = True,
    ) -> None:
        self.card = card
        self.path = path
        self._closed = False
        self._pid = os.getpid()  # a forked child only closes its descriptors (see close)
        self._buffers: _Buffers | None = None
        self._front = 0
        self._pending: int | None = None  # user_data of the flip in flight
        self._flips = 0
        self._events = 0
        self._blanked = False
        self._dirty_ok = True
        self._saved: CrtcState | None = None
        self._saved_connectors: list[int] = []
        self._console: Console | None = None
        try:
            self._open(connector, mode, format, console)
        except BaseException:
            self._teardown()
            raise

    @classmethod
    def open(cls, spec: str, *, console: bool = True) -> DrmDevice:
        """Open a ``drm:`` spec (see :func:`parse_spec`)."""
        path, options = parse_spec(spec)
        if path is None:
            path = find_display()
            if path is None:
                cards = find_cards()
                raise FramebufferError(
                    errno.ENOENT,
                    "no DRM card with a connected display"
                    + (f" (cards: {', '.join(cards)})" if cards else " (no /dev/dri/card*: no DRM driver loaded)"),
                    spec,
                )
        return cls(
            Card(path),
            spec,
            connector=options.get("connector"),
            mode=options.get("mode"),
            format=options.get("format"),
            console=console,
        )

    # -- opening -------------------------------------------------------------------------------

    def _open(self, connector_name: str | None, mode_text: str | None, fmt: str | None, console: bool) -> None:
        card = self.card
        self.driver = card.driver()
        try:
            has_dumb = card.get_cap(lib.DRM_CAP_DUMB_BUFFER)
        except FramebufferError:
            has_dumb = 0
        if not has_dumb:
            raise FramebufferError(errno.ENOTSUP, f"the {self.driver} driver has no dumb buffers to draw in", self.path)
        self._take_master()
        crtcs, conns, _ = card.resources()
        self._crtc_ids = crtcs
        connectors = [card.connector(c) for c in conns]
        self.connector = self._pick_connector(connectors, connector_name)
        self.mode_choices = list(self.connector.modes)
        #: The connector's modes, as ``fb.modes()`` lists them.
        self.mode_list: list[Mode] = [m.to_mode() for m in self.mode_choices]
        if not self.mode_choices:
            raise FramebufferError(errno.ENODEV, f"connector {self.connector.name} lists no modes", self.path)
        mode = self._pick_mode(mode_text)
        self.crtc_id = self._pick_crtc(connectors)
        self._crtc_index = crtcs.index(self.crtc_id)
        self.planes = self._planes()
        name = (fmt or "XRGB8888").upper()
        self._check_format(name)
        self._saved = card.crtc(self.crtc_id)
        self._saved_connectors = [
            c.id for c in connectors if c.encoder_id and self._encoder_crtc(c.encoder_id) == self.crtc_id
        ]
        if console:
            # Graphics mode before the CRTC is ours, so it is restored after it.
            self._console = Console(find_vt(), owns=True)
            self._console.graphics()
        _restore.register(self, self._restore_crtc)
        self._buffers = self._make_buffers(mode, name)
        self._show(self._buffers, mode)
        self.mode = mode
        self.plane_id = next((p.id for p in self._planes() if p.fb_id in self._buffers.fb_ids), 0)

    def _take_master(self) -> None:
        try:
            self.card.set_master()
        except FramebufferError as e:
            if e.errno in (errno.EBUSY, errno.EACCES, errno.EPERM):
                raise FramebufferError(
                    e.errno,
                    "another program owns this display (it is DRM master): a desktop (X, a Wayland compositor), "
                    "a display manager or another fbgfx program. Stop it, or switch to a text console "
                    "(Ctrl+Alt+F3) and run there; fbgfx never draws into a buffer nobody sees",
                    self.path,
                ) from None
            raise

    def _pick_connector(self, connectors: list[Connector], name: str | None) -> Connector:
        listing = (
            ", ".join(f"{c.name} ({'connected' if c.connected else 'disconnected'})" for c in connectors) or "none"
        )
        if name is not None:
            for c in connectors:
                if c.name == name:
                    if not c.connected and not c.modes:
                        raise FramebufferError(errno.ENODEV, f"connector {name} has no display connected", self.path)
                    return c
            raise FramebufferError(errno.ENODEV, f"no connector {name!r}; connectors: {listing}", self.path)
        for c in connectors:
            if c.connected and c.modes:
                return c
        raise FramebufferError(errno.ENODEV, f"no connected display; connectors: {listing}", self.path)

    def _pick_mode(self, text: str | None) -> DrmMode:
        modes = self.mode_choices
        if text is None:
            return next((m for m in modes if m.preferred), modes[0])
        w, h, hz = parse_mode_option(text)
        for m in modes:
            if (m.hdisplay, m.vdisplay) == (w, h) and (hz is None or m.vrefresh == hz):
                return m
        raise ModeError(
            errno.EINVAL,
            f"{text} is not a mode of {self.connector.name}; its modes: {self._mode_listing()}",
            self.path,
            {"xres": w, "yres": h},
        )

    def _mode_listing(self) -> str:
        seen: list[str] = []
        for m in self.mode_choices:
            if str(m) not in seen:
                seen.append(str(m))
        return ", ".join(seen)

    def _encoder_crtc(self, encoder_id: int) -> int:
        try:
            return int(self.card.encoder(encoder_id).crtc_id)
        except FramebufferError:
            return 0

    def _pick_crtc(self, connectors: list[Connector]) -> int:
        conn = self.connector
        if conn.encoder_id:
            crtc = self._encoder_crtc(conn.encoder_id)
            if crtc:
                return crtc
        busy = {self._encoder_crtc(c.encoder_id) for c in connectors if c.id != conn.id and c.encoder_id}
        for enc_id in conn.encoders:
            try:
                enc = self.card.encoder(enc_id)
            except FramebufferError:
                continue
            for index, crtc in enumerate(self._crtc_ids):
                if enc.possible_crtcs & (1 << index) and crtc not in busy:
                    return int(crtc)
        raise FramebufferError(errno.ENODEV, f"no CRTC can drive connector {conn.name}", self.path)

    def _planes(self) -> list[Plane]:
        try:
            return list(self.card.planes())
        except FramebufferError:
            return []

    def plane_formats(self) -> tuple[str, ...]:
        """The formats the planes that can show on this CRTC scan out."""
        bit = 1 << self._crtc_index
        found: list[str] = []
        for p in self.planes:
            if p.possible_crtcs & bit:
                found += [f for f in p.formats if f not in found]
        return tuple(found)

    def _check_format(self, name: str) -> None:
        if name not in FOURCC_FORMATS:
            raise FramebufferError(errno.EINVAL, f"format {name} is not one of {', '.join(FOURCC_FORMATS)}", self.path)
        code = FOURCC_FORMATS[name][0]
        offered = self.plane_formats()
        if offered and code not in offered:
            readable = [BY_FOURCC[c] for c in offered if c in BY_FOURCC]
            raise FramebufferError(
                errno.EINVAL,
                f"the display does not scan out {name} ({code}); it offers {', '.join(readable) or ', '.join(offered)}",
                self.path,
            )

    # -- buffers ------------------------------------------------------------------------------------

    def _make_buffers(self, mode: DrmMode, name: str) -> _Buffers:
        """Two buffers for ``mode`` (one when the driver has no room for two)."""
        code, bpp = FOURCC_FORMATS[name][0], FOURCC_FORMATS[name][1]
        bufs = _Buffers()
        bufs.width, bufs.height, bufs.fourcc, bufs.bpp = mode.hdisplay, mode.vdisplay, code, bpp
        page = os.sysconf("SC_PAGE_SIZE")
        try:
            rows = bufs.height
            handle, pitch, size = self.card.create_dumb(bufs.width, rows, bpp)
            if size % page or size % pitch:
                # Rows padded so that a buffer is a whole number of memory pages: the
                # buffers then sit end to end in one mapping, a whole number of rows apart.
                self.card.destroy_dumb(handle)
                rows = _padded_rows(bufs.height, pitch, page)
                handle, pitch, size = self.card.create_dumb(bufs.width, rows, bpp)
            bufs.handles.append(handle)
            bufs.pitch, bufs.size, bufs.rows = pitch, size, size // max(pitch, 1)
            try:
                handle, pitch, size = self.card.create_dumb(bufs.width, rows, bpp)
            except FramebufferError as e:
                if e.errno not in (errno.ENOMEM, errno.ENOSPC, errno.E2BIG):
                    raise
                # No room for a second page (a small VRAM at a large mode): one page,
                # which Screen shows by copying.
            else:
                if (pitch, size) == (bufs.pitch, bufs.size):
                    bufs.handles.append(handle)
                else:
                    self.card.destroy_dumb(handle)
            if bufs.size % page or bufs.size % bufs.pitch:
                raise FramebufferError(
                    errno.EINVAL,
                    f"the driver made a {bufs.size}-byte buffer for {bufs.pitch}-byte "
                    "rows, which cannot be mapped page by page",
                    self.path,
                )
            for handle in bufs.handles:
                bufs.fb_ids.append(self.card.add_fb2(bufs.width, bufs.height, code, handle, bufs.pitch))
            offsets = [self.card.map_offset(h) for h in bufs.handles]
            bufs.memory, bufs.addr = self.card.map_pages(offsets, bufs.size)
        except BaseException:
            self._free(bufs)
            raise
        return bufs

    def _free(self, bufs: _Buffers) -> None:
        """Forget a set of buffers: views of them stay valid but show nothing."""
        steps: list[tuple[str, Callable[[Any], None], Any]] = []
        if bufs.addr:
            steps.append(("mapping", self._detach, bufs))
        steps += [("framebuffer", self.card.rm_fb, f) for f in bufs.fb_ids]
        steps += [("buffer", self.card.destroy_dumb, h) for h in bufs.handles]
        for what, step, arg in steps:
            try:
                step(arg)
            except OSError as e:
                warnings.warn(f"fbgfx: could not free a {what} on {self.path}: {e}", RuntimeWarning, stacklevel=3)
        bufs.fb_ids, bufs.handles, bufs.addr = [], [], 0

    def _detach(self, bufs: _Buffers) -> None:
        self.card.detach(bufs.addr, bufs.size * len(bufs.handles))

    def _show(self, bufs: _Buffers, mode: DrmMode) -> None:
        self._wait_pending()
        self.card.set_crtc(self.crtc_id, bufs.fb_ids[0], 0, 0, [self.connector.id], mode)
        self._front = 0

    # -- Backend: screen info -------------------------------------------------------------------

    def get_var(self) -> VarScreenInfo:
        bufs = self._bufs()
        return self._var_for(self.mode, bufs.fourcc, bufs.rows, bufs.pages).replace(yoffset=self._front * bufs.rows)

    def _var_for(self, mode: DrmMode, code: str, rows: int, pages: int) -> VarScreenInfo:
        name = BY_FOURCC[code]
        _, bpp, red, green, blue = FOURCC_FORMATS[name]
        clock = mode.clock or 1
        return VarScreenInfo(
            xres=mode.hdisplay,
            yres=mode.vdisplay,
            xres_virtual=mode.hdisplay,
            yres_virtual=rows * pages if pages > 1 else mode.vdisplay,
            bits_per_pixel=bpp,
            red=Bitfield(*red),
            green=Bitfield(*green),
            blue=Bitfield(*blue),
            height=self.connector.mm_height or 0,
            width=self.connector.mm_width or 0,
            pixclock=1_000_000_000 // clock,  # picoseconds from kHz
            left_margin=mode.htotal - mode.hsync_end,
            right_margin=mode.hsync_start - mode.hdisplay,
            upper_margin=mode.vtotal - mode.vsync_end,
            lower_margin=mode.vsync_start - mode.vdisplay,
            hsync_len=mode.hsync_end - mode.hsync_start,
            vsync_len=mode.vsync_end - mode.vsync_start,
            vmode=1 if mode.interlaced else 0,
        )

    def get_fix(self) -> FixScreenInfo:
        bufs = self._bufs()
        return FixScreenInfo(
            id=self.driver[:15],
            smem_start=bufs.addr,
            smem_len=bufs.size * bufs.pages,
            visual=FB_VISUAL_TRUECOLOR,
            ypanstep=bufs.rows if bufs.pages > 1 else 0,
            line_length=bufs.pitch,
        )

    def put_var(self, var: VarScreenInfo) -> VarScreenInfo:
        """Test (``FB_ACTIVATE_TEST``) or set a mode: one of the connector's modes."""
        bufs = self._bufs()
        mode = self._mode_for(var)
        name = self._format_for(var, bufs)
        if var.activate & FB_ACTIVATE_TEST:
            rows = (
                bufs.rows
                if (mode.hdisplay, mode.vdisplay, name) == (bufs.width, bufs.height, BY_FOURCC[bufs.fourcc])
                else mode.vdisplay
            )
            want = self._var_for(mode, FOURCC_FORMATS[name][0], rows, 2)
            self._check_virtual(var, want)
            return want
        if (mode, FOURCC_FORMATS[name][0]) == (self.mode, bufs.fourcc):
            self._check_virtual(var, self.get_var())
            if var.yoffset != self.get_var().yoffset:
                self.pan(var)
            return self.get_var()
        new = self._make_buffers(mode, name)
        try:
            self._show(new, mode)
        except BaseException:
            self._free(new)
            raise
        old, self._buffers, self.mode = self._buffers, new, mode
        if old is not None:
            self._free(old)
        self.plane_id = next((p.id for p in self._planes() if p.fb_id in new.fb_ids), self.plane_id)
        return self.get_var()

    def _mode_for(self, var: VarScreenInfo) -> DrmMode:
        if (var.xres, var.yres) == (self.mode.hdisplay, self.mode.vdisplay):
            return self.mode
        for m in self.mode_choices:
            if (m.hdisplay, m.vdisplay) == (var.xres, var.yres):
                return m
        raise ModeError(
            errno.EINVAL,
            f"{var.xres}x{var.yres} is not a mode of {self.connector.name}; its modes: {self._mode_listing()}",
            self.path,
            {"xres": var.xres, "yres": var.yres},
        )

    def _format_for(self, var: VarScreenInfo, bufs: _Buffers) -> str:
        current = BY_FOURCC[bufs.fourcc]
        if var.bits_per_pixel in (0, bufs.bpp):
            return current
        candidates = [n for n, spec in FOURCC_FORMATS.items() if spec[1] == var.bits_per_pixel]
        offered = self.plane_formats()
        for n in candidates:
            if not offered or FOURCC_FORMATS[n][0] in offered:
                return n
        raise ModeError(
            errno.EINVAL,
            f"the display scans out no {var.bits_per_pixel}-bit format fbgfx draws in "
            f"(it offers {', '.join(offered) or 'none listed'})",
            self.path,
            {"bits_per_pixel": var.bits_per_pixel},
        )

    def _check_virtual(self, asked: VarScreenInfo, have: VarScreenInfo) -> None:
        if asked.xres_virtual > have.xres_virtual or asked.yres_virtual > have.yres_virtual:
            raise ModeError(
                errno.EINVAL,
                f"drm: buffers are {have.xres_virtual}x{have.yres_virtual} (two pages); "
                f"{asked.xres_virtual}x{asked.yres_virtual} virtual is not possible",
                self.path,
                {"xres_virtual": asked.xres_virtual, "yres_virtual": asked.yres_virtual},
            )

    # -- Backend: operations ------------------------------------------------------------------------

    def pan(self, var: VarScreenInfo) -> None:
        """Flip to the page at ``var.yoffset``: queued with a completion event; returns
        once queued (after the previous flip's event)."""
        bufs = self._bufs()
        if var.xoffset or var.yoffset % max(bufs.rows, 1) or var.yoffset // max(bufs.rows, 1) >= bufs.pages:
            raise FramebufferError(
                errno.EINVAL,
                f"drm: pages start at y = 0 and {bufs.rows}, not ({var.xoffset}, {var.yoffset})",
                self.path,
            )
        page = var.yoffset // bufs.rows
        self._wait_pending()
        if page == self._front:
            return
        if self._blanked:
            self._front = page  # shown when unblanked
            return
        self._flips += 1
        self.card.page_flip(self.crtc_id, bufs.fb_ids[page], self._flips)
        self._pending = self._flips
        self._front = page

    def wait_flip(self, timeout: float = FLIP_TIMEOUT) -> bool:
        """Wait until the last queued flip is on screen (its event arrived).

        Returns:
            True when a flip was in flight, False when none was.
        """
        if self._pending is None:
            return False
        self._wait_pending(timeout)
        return True

    def _wait_pending(self, timeout: float = FLIP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while self._pending is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                self._pending = None
                raise FramebufferError(errno.ETIMEDOUT, f"no page-flip event within {timeout:g} s", self.path)
            for kind, user_data, _seq, _crtc in self.card.read_events(left):
                if kind == lib.DRM_EVENT_FLIP_COMPLETE:
                    self._events += 1
                    if user_data == self._pending:
                        self._pending = None

    def dirty(self, rects: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        """Tell the driver which rectangles (x0, y0, x1, y1) of the page on screen were
        written (``DIRTYFB``); None: all of it. A no-op where the driver scans out
        the buffer itself."""
        if not self._dirty_ok or self._blanked:
            return
        bufs = self._bufs()
        w, h = bufs.width, bufs.height
        clips = [(max(0, x0), max(0, y0), min(w, x1), min(h, y1)) for x0, y0, x1, y1 in (rects or [(0, 0, w, h)])]
        clips = [c for c in clips if c[0] < c[2] and c[1] < c[3]]
        if not clips:
            return
        if self.driver in DIRTY_FULL_ROWS and bufs.bpp == 32:
            clips = [(0, y0, w, y1) for _, y0, _, y1 in clips]
        if len(clips) > _MAX_CLIPS:  # the kernel takes a bounded number: send what holds them all
            clips = [
                (min(c[0] for c in clips), min(c[1] for c in clips), max(c[2] for c in clips), max(c[3] for c in clips))
            ]
        try:
            self.card.dirty_fb(bufs.fb_ids[self._front], clips)
        except FramebufferError as e:
            if e.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTTY, errno.EOPNOTSUPP):
                raise
            self._dirty_ok = False  # the driver scans out the buffer: nothing to tell

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        raise fbdev_only("a colour map (palette)", self.path)

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        raise fbdev_only("a colour map (palette)", self.path)

    def blank(self, level: int) -> bool:
        """Blank by turning the CRTC off; unblank by showing the front page again."""
        bufs = self._bufs()
        self._wait_pending()
        if level and not self._blanked:
            self.card.set_crtc(self.crtc_id, 0, 0, 0, [], None)
            self._blanked = True
        elif not level and self._blanked:
            self.card.set_crtc(self.crtc_id, bufs.fb_ids[self._front], 0, 0, [self.connector.id], self.mode)
            self._blanked = False
        return True

    def wait_for_vsync(self) -> None:
        """Wait for the flip in flight, else for the next vertical blank."""
        if self.wait_flip():
            return
        self.card.wait_vblank(self._crtc_index)

    def map(self, length: int) -> Any:
        bufs = self._bufs()
        if length > bufs.size * bufs.pages:
            raise FramebufferError(errno.EINVAL, f"mapping {length} bytes of {bufs.size * bufs.pages}", self.path)
        return bufs.memory

    def unmap(self, memory: Any) -> None:
        """Nothing to do: closing the display detaches its buffers' mapping."""
        return None

    def check(self) -> None:
        """Nothing to check: the buffers are this process's while it is open."""
        return None

    def drm_info(self) -> DrmInfo:
        """What ``fb.drm`` returns."""
        bufs = self._bufs()
        return DrmInfo(
            card=getattr(self.card, "path", ""),
            driver=self.driver,
            connector=self.connector.name,
            connector_id=self.connector.id,
            crtc_id=self.crtc_id,
            plane_id=self.plane_id,
            mode=self.mode,
            fourcc=bufs.fourcc,
            pages=bufs.pages,
            page=self._front,
            page_rows=bufs.rows,
            fb_ids=tuple(bufs.fb_ids),
            flips=self._flips,
            flip_events=self._events,
            plane_formats=self.plane_formats(),
        )

    # -- closing -------------------------------------------------------------------------------------

    def _bufs(self) -> _Buffers:
        if self._closed or self._buffers is None:
            raise FramebufferError(errno.EBADF, "the display is closed", self.path)
        return self._buffers

    def _restore_crtc(self) -> None:
        """Show what the CRTC showed before open (on close, fatal signals and exit)."""
        saved, self._saved = self._saved, None
        _restore.unregister(self)
        if saved is None:
            return
        try:
            self._wait_pending(1.0)
        except OSError:
            pass
        try:
            if saved.fb_id and saved.mode is not None:
                conns = self._saved_connectors or [self.connector.id]
                self.card.set_crtc(saved.id, saved.fb_id, saved.x, saved.y, conns, saved.mode)
            else:
                self.card.set_crtc(saved.id, 0, 0, 0, [], None)
        except OSError as e:
            warnings.warn(f"fbgfx: could not restore the display on {self.path}: {e}", RuntimeWarning, stacklevel=2)

    def close(self) -> None:
        """Give the display back as it was, free the buffers, drop master; safe twice."""
        if self._closed:
            return
        if os.getpid() != self._pid:
            # A forked child: the CRTC, the buffers and DRM master are the parent's
            # (they belong to the open file both share); let go of the descriptors only.
            self._closed, self._buffers, self._saved = True, None, None
            try:
                if self._console is not None:
                    self._console.restore()
            finally:
                self.card.close()
            return
        self._teardown()

    def _teardown(self) -> None:
        self._closed = True
        try:
            self._restore_crtc()
            bufs, self._buffers = self._buffers, None
            if bufs is not None:
                self._free(bufs)
            try:
                if self.card.fd >= 0:
                    self.card.drop_master()
            except OSError:
                pass  # not master (open failed there), or the fd is gone: closing drops it
        finally:
            try:
                if self._console is not None:
                    self._console.restore()
            finally:
                self.card.close()


def _padded_rows(height: int, pitch: int, page: int) -> int:
    """The fewest rows >= ``height`` whose bytes fill whole memory pages."""
    step = page // math.gcd(pitch, page)
    return -(-height // step) * step
