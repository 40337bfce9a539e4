"""The ``drm:`` backend: :class:`DrmDevice`, a display through dumb buffers on a card.

Where ``/dev/fbN`` is missing (kernels without ``CONFIG_FB_DEVICE``) or is DRM's fbdev
emulation with one page, fbgfx drives KMS directly: ``fbgfx.open("drm:")``.

What :class:`DrmDevice` does, in the terms of the fbdev model :class:`fbgfx.Framebuffer`
drives (:class:`fbgfx.backend.Backend`):

- At open it becomes DRM master (or raises :class:`~fbgfx.errors.FramebufferError`
  saying which program holds the display), picks a connector (or several: a mirror),
  a mode and a CRTC each, saves what the CRTCs show, creates two dumb buffers and
  sets the CRTCs to the first. Displays of one program on one card share the card's
  descriptor and DRM master (:mod:`fbgfx.drm.shared`); each has its own CRTCs,
  buffers and flips.
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
- Monitors come and go (:mod:`fbgfx.drm.hotplug`): a display whose monitor is gone
  keeps drawing and flipping into its buffers (flips the kernel refuses are skipped);
  when it comes back the CRTC is set again to the latest frame, at the same mode if
  the monitor offers it, else at its preferred mode, and a
  :class:`~fbgfx.display_events.DisplayEvent` says so.
- On close, on fatal signals and at exit (:mod:`fbgfx._restore`) the CRTCs get back
  their framebuffer, mode and position; buffers are freed and master dropped. A display
  dropped without close is closed as it is collected (:mod:`fbgfx._closing`).
"""

from __future__ import annotations

import errno
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .. import _closing, _restore
from .._ffi import lib
from ..backend import fbdev_only
from ..display_events import DisplayEvent, DisplayEvents
from ..errors import FramebufferError, ModeError
from ..modes import Mode
from ..screeninfo import (
    FB_ACTIVATE_TEST,
    FB_VISUAL_TRUECOLOR,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
)
from . import hotplug
from .atomic import Atomic, mode_blob, plane_rect
from .buffers import Buffers
from .card import BY_FOURCC, FOURCC_FORMATS, Card, CardLike, Connector, CrtcState, DrmMode, Plane
from .choose import (
    encoder_crtc,
    mode_for_size,
    pick_connectors,
    pick_crtc,
    pick_modes,
    shared_modes,
    without_sizeless_modes,
)
from .discovery import find_cards, find_display, parse_spec
from .shared import Claim, SharedCard

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
        connector: The connector's name (``HDMI-A-1``; a mirror's names joined by
            commas), ``connector_id`` the (first) connector's object id.
        crtc_id, plane_id: The (first) CRTC and primary plane (0 when not found) in use.
        mode: The mode set on the (first) CRTC.
        fourcc: The buffers' format code (``"XR24"``).
        pages: Buffers to flip between (2, or 1 when the driver had no room).
        page: The buffer on screen (0 or 1), ``page_rows`` the row of ``fb.memory``
            where the second starts (``fb.pan(0, page_rows)`` flips to it).
        fb_ids: Their framebuffer object ids.
        flips: Page flips queued since open; ``flip_events`` their completion events
            read so far (one per flip).
        plane_formats: The formats the primary plane scans out.
        connected: A monitor is connected (to at least one connector of a mirror), as
            the last hotplug event or flip found; it follows an unplug within a second
            or two.
        connectors: Each connector's name.
        crtc_ids: Each connector's CRTC.
        atomic: The display is driven by atomic commits (modeset, flips and restore);
            False on legacy KMS (``SETCRTC``, ``PAGE_FLIP``).
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
    connected: bool = True
    connectors: tuple[str, ...] = ()
    crtc_ids: tuple[int, ...] = ()
    atomic: bool = False


class _Head:
    """One connector of a display, the CRTC that drives it and what it showed before."""

    def __init__(self, connector: Connector, crtc_id: int, crtc_index: int, mode: DrmMode) -> None:
        self.connector = connector
        self.crtc_id = crtc_id
        self.crtc_index = crtc_index
        self.mode = mode
        self.connected = connector.connected
        self.lit = False  # the CRTC shows this display's buffers
        self.plane_id = 0
        self.primary = 0  # the CRTC's primary plane, for atomic commits
        self.saved: CrtcState | None = None
        self.saved_connectors: list[int] = []


def _connector_names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


class DrmDevice:
    """A display driven through DRM/KMS: the :class:`fbgfx.backend.Backend` of ``drm:``.

    Args:
        card: An open :class:`Card` (tests pass a fake :class:`CardLike`), or the
            :class:`~fbgfx.drm.shared.SharedCard` other displays of this program use.
            It is closed with the last display on it.
        path: The spec as the user named it, for messages.
        connector: A connector name (``HDMI-A-1``), or several joined by commas to show
            one picture on each (a mirror); default: the first connected connector this
            program does not show on yet.
        mode: ``"WxH"`` or ``"WxH@HZ"``, one of the connector's modes (of every
            connector, for a mirror); default: the preferred mode (a mirror: the largest
            size all its connectors offer).
        format: ``"XRGB8888"`` (default) or another of :data:`FOURCC_FORMATS` the
            plane scans out (``"RGB565"`` halves the memory written per frame).
        console: Switch the VT to graphics mode while the device is open (True), or not.

    Raises:
        FramebufferError: Another program owns the display, no connected connector,
            the connector is already open in this program (``EBUSY``), no dumb buffers,
            or the kernel refused the buffers or the CRTC.
        ModeError: ``mode`` is not one of the connector's modes, or a mirror's
            connectors share none (the message lists them).
    """

    #: No other process changes what this device shows while it is DRM master.
    shared = False
    #: var, fix and the colour map are derived from the mode and buffers, not fbdev's.
    fbdev = False

    def __init__(
        self,
        card: CardLike | SharedCard,
        path: str,
        *,
        connector: str | None = None,
        mode: str | None = None,
        format: str | None = None,
        console: bool = True,
    ) -> None:
        self.shared_card = card if isinstance(card, SharedCard) else SharedCard.for_card(card)
        self.card: CardLike = self.shared_card.card
        self.path = path
        self._claim = Claim(path)  # what the card counts: the card keeps no display alive
        #: Monitor changes for :meth:`fbgfx.Framebuffer.display_events`.
        self.display_events: DisplayEvents | None = DisplayEvents()
        self.heads: list[_Head] = []
        self._closed = False
        self._pid = os.getpid()  # a forked child only lets go of its descriptors (see close)
        self._buffers: Buffers | None = None  # what the program draws in
        self._shown: Buffers | None = None  # what the CRTCs show: the same, or a copy at another size
        self._pending: set[int] = set()  # tokens of the flips in flight
        self._flips = 0
        self._events = 0
        self._blanked = False
        self._dirty_ok = True
        self._watched = False
        #: Atomic modesetting where the driver has it (None: legacy KMS).
        self.atomic: Atomic | None = None
        try:
            self._open(_connector_names(connector), mode, format, console)
        except BaseException:
            self._teardown()
            raise

    @classmethod
    def open(cls, spec: str, *, console: bool = True, opener: CardFactory = Card) -> DrmDevice:
        """Open a ``drm:`` spec (see :func:`parse_spec`); with no card named, the card
        that has the connector named, else the first with a connected display this
        program does not show on yet."""
        path, options = parse_spec(spec)
        names = _connector_names(options.get("connector"))
        if path is None:
            busy = {(s.key or "", n) for s in SharedCard.open_cards() for n in s.connector_names()}
            path = find_display(connector=names[0] if names else None, skip=busy)
            if path is None and busy:
                path = find_display()  # every display is open already: the card says so (EBUSY)
            if path is None:
                cards = find_cards()
                what = f"no DRM card has a connector {names[0]}" if names else "no DRM card with a connected display"
                raise FramebufferError(
                    errno.ENOENT,
                    what + (f" (cards: {', '.join(cards)})" if cards else " (no /dev/dri/card*: no DRM driver loaded)"),
                    spec,
                )
        shared = SharedCard.for_path(path, opener)
        args = {"connector": options.get("connector"), "mode": options.get("mode"), "format": options.get("format")}
        try:
            return cls(shared, spec, console=console, **args)
        except FramebufferError as e:
            if e.errno != errno.EBADF or shared.card.fd >= 0:
                raise
        # The card closed meanwhile: the closer thread was closing the last display on
        # it, which the program had dropped unclosed. Open it anew.
        return cls(SharedCard.for_path(path, opener), spec, console=console, **args)

    # -- opening -------------------------------------------------------------------------------

    def _open(self, names: list[str], mode_text: str | None, fmt: str | None, console: bool) -> None:
        card, shared = self.card, self.shared_card
        _closing.start_closer()  # where a collected display is closed (see __del__)
        self.driver = card.driver()
        try:
            has_dumb = card.get_cap(lib.DRM_CAP_DUMB_BUFFER)
        except FramebufferError:
            has_dumb = 0
        if not has_dumb:
            raise FramebufferError(errno.ENOTSUP, f"the {self.driver} driver has no dumb buffers to draw in", self.path)
        shared.join(self._claim, console=console)
        self.atomic = Atomic.enable(card)
        crtcs, conns, _ = card.resources()
        self._crtc_ids = crtcs
        connectors = without_sizeless_modes([card.connector(c) for c in conns], self.path)
        try:
            self._claim_heads(connectors, names, mode_text)
        except FramebufferError as e:
            if e.errno != errno.EBUSY:
                raise
            # A display of this program dropped without close may hold the connector
            # until the garbage collector finds it: have it found and closed, then look again.
            # (generous: on a loaded machine the closer thread may be slow to get its turn)
            _closing.close_unreferenced(timeout=30.0)
            self._claim_heads(connectors, names, mode_text)
        self._update_mode_choices()
        self.planes = self._planes()
        name = (fmt or "XRGB8888").upper()
        self._check_format(name)
        for h in self.heads:
            h.saved = card.crtc(h.crtc_id)
            h.saved_connectors = [
                c.id for c in connectors if c.encoder_id and encoder_crtc(card, c.encoder_id) == h.crtc_id
            ]
        _restore.register(self, self._restore_crtc)
        self._buffers = self._shown = Buffers.make(card, self.heads[0].mode, name, self.path)
        with shared.lock:
            for h in self.heads:
                self._light(h, self._buffers)
        self.mode = self.heads[0].mode
        self._find_planes(self._buffers)
        hotplug.watch(self)
        self._watched = True

    def _claim_heads(self, connectors: list[Connector], names: list[str], mode_text: str | None) -> None:
        """Choose the connectors, modes and CRTCs and claim them on the card."""
        shared, crtcs = self.shared_card, self._crtc_ids
        with shared.lock:
            chosen = pick_connectors(connectors, names, shared.connector_names(), self.path)
            for c in chosen:
                if not c.modes:
                    raise FramebufferError(errno.ENODEV, f"connector {c.name} lists no modes", self.path)
            modes = pick_modes(chosen, mode_text, self.path)
            taken = set(shared.crtcs)
            heads: list[_Head] = []
            for conn, m in zip(chosen, modes):
                crtc = pick_crtc(self.card, conn, crtcs, connectors, taken, self.path)
                taken.add(crtc)
                heads.append(_Head(conn, crtc, crtcs.index(crtc), m))
            self.heads = heads
            for h in heads:
                shared.crtcs[h.crtc_id] = self._claim
                shared.connectors[h.connector.id] = (h.connector.name, self._claim)

    def _update_mode_choices(self) -> None:
        self.mode_choices = shared_modes([h.connector for h in self.heads])
        #: The connector's modes (a mirror's: those all its connectors offer), as
        #: ``fb.modes()`` lists them.
        self.mode_list: list[Mode] = [m.to_mode() for m in self.mode_choices]

    @property
    def connector(self) -> Connector:
        """The (first) connector."""
        return self.heads[0].connector

    @property
    def crtc_id(self) -> int:
        """The (first) connector's CRTC."""
        return self.heads[0].crtc_id

    @property
    def plane_id(self) -> int:
        """The (first) CRTC's primary plane (0 when not found)."""
        return self.heads[0].plane_id

    def _planes(self) -> list[Plane]:
        try:
            return list(self.card.planes())
        except FramebufferError:
            return []

    def _find_planes(self, bufs: Buffers) -> None:
        planes = self._planes()
        for h in self.heads:
            bit = 1 << h.crtc_index
            h.plane_id = next((p.id for p in planes if p.fb_id in bufs.fb_ids and p.possible_crtcs & bit), h.plane_id)

    def plane_formats(self) -> tuple[str, ...]:
        """The formats the planes that can show on this display's (first) CRTC scan out."""
        bit = 1 << self.heads[0].crtc_index
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

    def _light(self, head: _Head, bufs: Buffers, mode: DrmMode | None = None) -> None:
        """Show ``bufs``' front page on ``head`` (hold the card's lock)."""
        mode = mode or head.mode
        fb_id = bufs.fb_ids[bufs.front]
        if self.atomic is None or not self._light_atomic(self.atomic, head, fb_id, mode):
            self.card.set_crtc(head.crtc_id, fb_id, 0, 0, [head.connector.id], mode)
        head.mode, head.lit = mode, True

    def _primary(self, atomic: Atomic, head: _Head) -> int:
        """The primary plane of ``head``'s CRTC (0: none found)."""
        if not head.primary:
            possible = atomic.possible(head.crtc_index)
            primaries = [p for p in atomic.planes() if p.type == "primary" and p.id in possible]
            on_crtc = [p for p in primaries if p.crtc_id == head.crtc_id]
            head.primary = (on_crtc or primaries)[0].id if primaries else 0
        return head.primary

    def _light_atomic(
        self,
        atomic: Atomic,
        head: _Head,
        fb_id: int,
        mode: DrmMode,
        connectors: Sequence[int] = (),
        x: int = 0,
        y: int = 0,
    ) -> bool:
        """Set ``mode`` on ``head``'s CRTC showing ``fb_id`` from (x, y), in one atomic
        commit; False when the driver refused it (the caller then tries legacy KMS)."""
        primary = self._primary(atomic, head)
        if not primary:
            return False
        conns = list(connectors) or [head.connector.id]
        try:
            atomic.values(head.crtc_id, lib.DRM_MODE_OBJECT_CRTC)
            for c in conns:
                atomic.values(c, lib.DRM_MODE_OBJECT_CONNECTOR)
            blob = mode_blob(atomic, mode)
        except OSError:
            return False
        w, h = mode.hdisplay, mode.vdisplay
        plane = {"FB_ID": fb_id, "CRTC_ID": head.crtc_id, **plane_rect(0, 0, w, h, w, h)}
        plane["SRC_X"], plane["SRC_Y"] = x << 16, y << 16
        changes = [(head.crtc_id, {"MODE_ID": blob, "ACTIVE": 1}), *[(c, {"CRTC_ID": head.crtc_id}) for c in conns]]
        changes.append((primary, plane))
        try:
            atomic.commit(changes, modeset=True, doing=f"lighting {head.connector.name}")
        except OSError:
            return False
        finally:
            try:
                atomic.destroy_blob(blob)  # the CRTC keeps its copy
            except OSError:
                pass
        return True

    def _light_if_there(self, head: _Head, bufs: Buffers, mode: DrmMode | None = None) -> None:
        """:meth:`_light`, where a refusal because the monitor is gone only leaves the
        head dark until it is back."""
        try:
            self._light(head, bufs, mode)
        except FramebufferError:
            if self._still_connected(head):
                raise
            head.mode, head.lit = mode or head.mode, False

    # -- Backend: screen info -------------------------------------------------------------------

    def get_var(self) -> VarScreenInfo:
        bufs = self._bufs()
        return self._var_for(self.mode, bufs.fourcc, bufs.rows, bufs.pages).replace(yoffset=bufs.front * bufs.rows)

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
        """Test (``FB_ACTIVATE_TEST``) or set a mode: one of the connector's modes (a
        size every connector of a mirror offers)."""
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
        if (mode, FOURCC_FORMATS[name][0]) == (self.mode, bufs.fourcc) and self._shown is bufs:
            self._check_virtual(var, self.get_var())
            if var.yoffset != self.get_var().yoffset:
                self.pan(var)
            return self.get_var()
        modes = [mode] + [mode_for_size(h.connector, mode.hdisplay, mode.vdisplay) or mode for h in self.heads[1:]]
        new = Buffers.make(self.card, mode, name, self.path)
        self._wait_pending()
        with self.shared_card.lock:
            try:
                self._bufs()
                for h, m in zip(self.heads, modes):
                    self._light_if_there(h, new, m)
            except BaseException:
                new.free(self.card, self.path)
                raise
            old, shown = self._buffers, self._shown
            self._buffers = self._shown = new
            self.mode = mode
            for stale in {id(b): b for b in (old, shown) if b is not None}.values():
                stale.free(self.card, self.path)
        self._find_planes(new)
        return self.get_var()

    def _mode_for(self, var: VarScreenInfo) -> DrmMode:
        if (var.xres, var.yres) == (self.mode.hdisplay, self.mode.vdisplay):
            return self.mode
        for m in self.mode_choices:
            if (m.hdisplay, m.vdisplay) == (var.xres, var.yres):
                return m
        names = " and ".join(h.connector.name for h in self.heads)
        what = f"a mode of {names}; its modes" if len(self.heads) == 1 else f"a mode {names} all offer; they share"
        raise ModeError(
            errno.EINVAL,
            f"{var.xres}x{var.yres} is not {what}: {self._mode_listing()}",
            self.path,
            {"xres": var.xres, "yres": var.yres},
        )

    def _mode_listing(self) -> str:
        seen: list[str] = []
        for m in self.mode_choices:
            if str(m) not in seen:
                seen.append(str(m))
        return ", ".join(seen)

    def _format_for(self, var: VarScreenInfo, bufs: Buffers) -> str:
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
        """Flip to the page at ``var.yoffset``: queued with a completion event on each
        lit CRTC; returns once queued (after the previous flip's events). A CRTC whose
        monitor is gone and whose flip the kernel refuses is skipped: the frame waits
        in the buffer for the monitor's return."""
        bufs = self._bufs()
        if var.xoffset or var.yoffset % max(bufs.rows, 1) or var.yoffset // max(bufs.rows, 1) >= bufs.pages:
            raise FramebufferError(
                errno.EINVAL,
                f"drm: pages start at y = 0 and {bufs.rows}, not ({var.xoffset}, {var.yoffset})",
                self.path,
            )
        page = var.yoffset // bufs.rows
        self._wait_pending()
        with self.shared_card.lock:
            bufs = self._bufs()
            if page == bufs.front:
                return
            if self._blanked:
                bufs.front = page  # shown when unblanked
                return
            shown = self._shown
            if shown is not bufs and shown is not None:
                bufs.front = page  # a monitor back at another size shows a copy until the program follows
                shown.copy_from(bufs, page)
                self._dirty_all(shown)
                return
            tokens: set[int] = set()
            try:
                for head in self.heads:
                    if head.lit:
                        self._flip(head, bufs.fb_ids[page], tokens)
            finally:
                if tokens:
                    self._flips += 1
                    self._pending = tokens
            bufs.front = page

    def _flip(self, head: _Head, fb_id: int, tokens: set[int]) -> None:
        token = self.shared_card.token()
        try:
            if self.atomic is not None and head.primary:
                # one commit of the primary plane alone; layers' planes keep their buffers
                self.shared_card.wait_idle(head.crtc_id, FLIP_TIMEOUT)
                self.atomic.commit([(head.primary, {"FB_ID": fb_id})], event=token, doing="flipping pages")
                self.shared_card.note_commit(head.crtc_id, token)
            else:
                self.card.page_flip(head.crtc_id, fb_id, token)
        except FramebufferError:
            if self._still_connected(head):
                raise
            head.lit = False  # lit again, at the latest frame, when the monitor is back
            return
        tokens.add(token)

    def _still_connected(self, head: _Head) -> bool:
        try:
            head.connected = self.card.connector(head.connector.id, probe=False).connected
        except OSError:
            head.connected = False
        return head.connected

    def wait_flip(self, timeout: float = FLIP_TIMEOUT) -> bool:
        """Wait until the last queued flip is on screen (its events arrived).

        Returns:
            True when a flip was in flight, False when none was.
        """
        if not self._pending:
            return False
        self._wait_pending(timeout)
        return True

    def _wait_pending(self, timeout: float = FLIP_TIMEOUT) -> None:
        # Taken in one step, so that two threads (a flip and a close) never wait for
        # the same events: one waits, the other goes on.
        pending, self._pending = self._pending, set()
        if not pending:
            return
        left = self.shared_card.wait_flips(pending, timeout)
        if not left:
            self._events += 1
            return
        self.shared_card.cancel(left)  # count them done if their events come late
        if all(self._still_connected(h) for h in self.heads):
            raise FramebufferError(errno.ETIMEDOUT, f"no page-flip event within {timeout:g} s", self.path)
        # a monitor went: its CRTC may never finish the flip; the frame is in the buffer

    def dirty(self, rects: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        """Tell the driver which rectangles (x0, y0, x1, y1) of the page on screen were
        written (``DIRTYFB``); None: all of it. A no-op where the driver scans out
        the buffer itself."""
        with self.shared_card.lock:
            bufs = self._bufs()
            if self._blanked:
                return
            shown = self._shown
            if shown is not bufs and shown is not None:
                shown.copy_from(bufs, bufs.front)
                self._dirty_all(shown)
                return
            self._dirty(bufs, rects)

    def _dirty_all(self, bufs: Buffers) -> None:
        self._dirty(bufs, None)

    def _dirty(self, bufs: Buffers, rects: Sequence[tuple[int, int, int, int]] | None) -> None:
        if not self._dirty_ok:
            return
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
            self.card.dirty_fb(bufs.fb_ids[bufs.front], clips)
        except FramebufferError as e:
            if e.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTTY, errno.EOPNOTSUPP):
                raise
            self._dirty_ok = False  # the driver scans out the buffer: nothing to tell

    def get_cmap(self, start: int, length: int) -> np.ndarray:
        del start, length  # the Backend's; a drm: display has no colour map
        raise fbdev_only("a colour map (palette)", self.path)

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        del start, entries  # the Backend's; a drm: display has no colour map
        raise fbdev_only("a colour map (palette)", self.path)

    def blank(self, level: int) -> bool:
        """Blank by turning the CRTCs off; unblank by showing the front page again."""
        self._bufs()
        self._wait_pending()
        with self.shared_card.lock:
            shown = self._shown
            if shown is None:
                self._bufs()
                return True
            if level and not self._blanked:
                for h in self.heads:
                    self.card.set_crtc(h.crtc_id, 0, 0, 0, [], None)
                    h.lit = False
                self._blanked = True
            elif not level and self._blanked:
                for h in self.heads:
                    self._light_if_there(h, shown)
                self._blanked = False
        return True

    def wait_for_vsync(self) -> None:
        """Wait for the flip in flight, else for the next vertical blank."""
        if self.wait_flip():
            return
        self.card.wait_vblank(self.heads[0].crtc_index)

    def map(self, length: int) -> Any:
        bufs = self._bufs()
        if length > bufs.size * bufs.pages:
            raise FramebufferError(errno.EINVAL, f"mapping {length} bytes of {bufs.size * bufs.pages}", self.path)
        return bufs.memory

    def unmap(self, memory: Any) -> None:
        """Nothing to do: closing the display detaches its buffers' mapping."""
        del memory

    def check(self) -> None:
        """Nothing to check: the buffers are this process's while it is open."""
        return None

    def drm_info(self) -> DrmInfo:
        """What ``fb.drm`` returns."""
        bufs = self._bufs()
        names = tuple(h.connector.name for h in self.heads)
        return DrmInfo(
            card=self.card.path,
            driver=self.driver,
            connector=",".join(names),
            connector_id=self.connector.id,
            crtc_id=self.crtc_id,
            plane_id=self.plane_id,
            mode=self.mode,
            fourcc=bufs.fourcc,
            pages=bufs.pages,
            page=bufs.front,
            page_rows=bufs.rows,
            fb_ids=tuple(bufs.fb_ids),
            flips=self._flips,
            flip_events=self._events,
            plane_formats=self.plane_formats(),
            connected=any(h.connected for h in self.heads),
            connectors=names,
            crtc_ids=tuple(h.crtc_id for h in self.heads),
            atomic=self.atomic is not None,
        )

    # -- monitors that come and go ------------------------------------------------------------

    def reprobe(self, probe: bool = True) -> None:
        """Read the connectors again and act on what changed (the hotplug watcher calls
        it on each DRM uevent): a monitor gone is noted; one back is lit again with the
        latest frame. Posts a :class:`DisplayEvent` for each change."""
        posts: list[DisplayEvent] = []
        with self.shared_card.lock:
            if self._closed or self._buffers is None:
                return
            back: list[_Head] = []
            for head in self.heads:
                try:
                    conn = self.card.connector(head.connector.id, probe)
                except OSError:
                    continue
                if not probe and conn.connected != head.connected:
                    try:
                        conn = self.card.connector(head.connector.id, True)  # changed: read its modes
                    except OSError:
                        continue
                was, head.connected = head.connected, conn.connected
                if conn.modes:
                    head.connector = conn
                if was and not conn.connected:
                    posts.append(self._event("disconnected", head))
                elif conn.connected and (not was or not head.lit) and not self._blanked:
                    back.append(head)
            if back:
                self._update_mode_choices()
                posts += self._relight(back)
        queue = self.display_events
        for event in posts:
            if queue is not None:
                queue.post(event)

    def _relight(self, back: list[_Head]) -> list[DisplayEvent]:
        """Light the heads whose monitor is back (hold the card's lock)."""
        shown, bufs = self._shown, self._buffers
        if shown is None or bufs is None:
            return []
        connected = [h for h in self.heads if h.connected]
        size = (shown.width, shown.height)
        if all(mode_for_size(h.connector, *size) for h in connected):
            events = []
            for h in back:
                same = h.mode if h.mode in h.connector.modes else mode_for_size(h.connector, *size)
                try:
                    self._light(h, shown, same)
                except OSError as e:
                    h.lit = False
                    _warn(f"could not show the display on {h.connector.name} again: {e}")
                    continue
                events.append(self._event("connected", h))
            return events
        # Back at another size: a new set of buffers at the new mode shows the latest
        # frame (top-left) until the program follows (fb.display_events() / refresh()).
        try:
            modes = pick_modes([h.connector for h in connected], None, self.path)
            new = Buffers.make(self.card, modes[0], BY_FOURCC[bufs.fourcc], self.path)
        except OSError as e:
            _warn(f"could not show the display at its new size: {e}")
            return []
        new.copy_from(bufs, bufs.front)
        for h, m in zip(connected, modes):
            try:
                self._light(h, new, m)
            except OSError as e:
                h.lit = False
                _warn(f"could not show the display on {h.connector.name} again: {e}")
        if shown is not bufs:
            shown.free(self.card, self.path)
        self._shown = new
        self._find_planes(new)
        return [self._event("resized", h) for h in back if h.lit]

    def _event(self, kind: str, head: _Head) -> DisplayEvent:
        shown = self._shown
        size = (shown.width, shown.height) if shown is not None else (self.mode.hdisplay, self.mode.vdisplay)
        return DisplayEvent(kind, head.connector.name, head.connected, size, str(head.mode))

    def follow(self) -> bool:
        """Take on the size a monitor came back at: from now on ``get_var``/``get_fix``/
        ``map`` describe the buffers on screen. :meth:`fbgfx.Framebuffer.refresh` calls it.

        Returns:
            True when the size changed.
        """
        with self.shared_card.lock:
            shown, bufs = self._shown, self._buffers
            if shown is None or bufs is None or shown is bufs:
                return False
            self._buffers = shown
            self.mode = self.heads[0].mode
            bufs.free(self.card, self.path)
            return True

    # -- closing -------------------------------------------------------------------------------------

    def _bufs(self) -> Buffers:
        if self._closed or self._buffers is None:
            raise FramebufferError(errno.EBADF, "the display is closed", self.path)
        return self._buffers

    def _restore_crtc(self) -> None:
        """Show what the CRTCs showed before open (on close, fatal signals and exit)."""
        _restore.unregister(self)
        try:
            self._wait_pending(1.0)
        except OSError:
            pass
        with self.shared_card.lock:
            for h in self.heads:
                saved, h.saved = h.saved, None
                if saved is None:
                    continue
                try:
                    self._disable_layer_planes(h)
                    if saved.fb_id and saved.mode is not None:
                        conns = h.saved_connectors or [h.connector.id]
                        atomic = self.atomic
                        if atomic is None or not self._light_atomic(
                            atomic, h, saved.fb_id, saved.mode, conns, saved.x, saved.y
                        ):
                            self.card.set_crtc(saved.id, saved.fb_id, saved.x, saved.y, conns, saved.mode)
                    else:
                        self.card.set_crtc(saved.id, 0, 0, 0, [], None)
                except OSError as e:
                    if self._still_connected(h):  # a monitor that is gone has nothing to restore
                        _warn(f"could not restore the display on {self.path}: {e}")
                h.lit = False

    def _disable_layer_planes(self, head: _Head) -> None:
        """Turn off the overlay planes layers enabled on ``head``'s CRTC (a layer left
        open at exit or on a fatal signal)."""
        atomic, shared = self.atomic, self.shared_card
        planes = [p for p, crtc in shared.layer_planes.items() if crtc == head.crtc_id]
        if atomic is None or not planes:
            return
        shared.wait_idle(head.crtc_id, 1.0)
        try:
            atomic.commit([(p, {"FB_ID": 0, "CRTC_ID": 0}) for p in planes], doing="turning off the layers' planes")
        except OSError as e:
            _warn(f"could not turn off the layers' planes on {self.path}: {e}")
        for p in planes:
            shared.layer_planes.pop(p, None)

    def plane_pool(self) -> Any:
        """The planes layers may use on this display (:class:`fbgfx.drm.planes.PlanePool`)."""
        from .planes import PlanePool  # noqa: PLC0415 (the layers' module, loaded when layers are opened)

        return PlanePool(self)

    def close(self) -> None:
        """Give the display back as it was, free the buffers, drop master with the last
        display on the card; safe twice."""
        if self._closed:
            return
        if os.getpid() != self._pid:
            # A forked child: the CRTCs, the buffers and DRM master are the parent's
            # (they belong to the open file both share); let go of the descriptors only.
            self._closed, self._buffers, self._shown = True, None, None
            _restore.unregister(self)
            self.shared_card.release_in_child(self._claim)
            return
        self._teardown()

    def __del__(self) -> None:
        # Dropped without close(): closed as it goes, as a file is. Nothing of fbgfx's
        # keeps an open display alive (the card counts its claim, the hotplug watcher
        # and the restore registry hold it weakly), so a display whose own callback
        # refers to it goes with the garbage collector, which hands it to the closer
        # thread. Programs close.
        _closing.close_dropped(self)

    def _teardown(self) -> None:
        if self._watched:
            self._watched = False
            hotplug.unwatch(self)
        try:
            self._restore_crtc()
            with self.shared_card.lock:
                self._closed = True
                for bufs in {id(b): b for b in (self._buffers, self._shown) if b is not None}.values():
                    bufs.free(self.card, self.path)
                self._buffers = self._shown = None
        finally:
            self._closed = True
            self.shared_card.release(self._claim)


def _warn(message: str) -> None:
    warnings.warn(f"fbgfx: {message}", RuntimeWarning, stacklevel=3)
