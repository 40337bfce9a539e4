"""The DRM/KMS backend: a display through ``/dev/dri/cardN`` dumb buffers.

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

The structs and ioctl numbers come from ``native/drm_uapi.h`` through :mod:`fbgfx._ffi`;
no cdata leaves this module.
"""

from __future__ import annotations

import dataclasses
import errno
import glob
import math
import os
import re
import select
import struct
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _restore
from ._ffi import check, ffi, lib
from .console import Console, find_vt
from .errors import FramebufferError, ModeError
from .modes import Mode
from .screeninfo import (
    FB_ACTIVATE_TEST,
    FB_VISUAL_TRUECOLOR,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
)

__all__ = [
    "DIRTY_FULL_ROWS",
    "FOURCC_FORMATS",
    "Connector",
    "CrtcState",
    "DrmDevice",
    "DrmInfo",
    "DrmMode",
    "Plane",
    "find_cards",
    "find_display",
    "fourcc",
    "fourcc_name",
    "parse_spec",
    "probe",
    "read_scanout",
]

DRM_MAJOR = 226
DRI_DIR = "/dev/dri"
#: How long a page flip may take before fbgfx stops waiting for its event (seconds):
#: generous, because a display under emulation can be very slow.
FLIP_TIMEOUT = 5.0

# Connector type names as the kernel spells them in /sys/class/drm/card0-<name>-<n>.
CONNECTOR_TYPES = (
    "Unknown",
    "VGA",
    "DVI-I",
    "DVI-D",
    "DVI-A",
    "Composite",
    "SVIDEO",
    "LVDS",
    "Component",
    "DIN",
    "DP",
    "HDMI-A",
    "HDMI-B",
    "TV",
    "eDP",
    "Virtual",
    "DSI",
    "DPI",
    "Writeback",
    "SPI",
    "USB",
)
_MODE_FLAG_INTERLACE = 1 << 4
_MAX_CLIPS = 256  # the kernel's DRM_MODE_FB_DIRTY_MAX_CLIPS
#: Drivers that place a DIRTYFB rectangle wrongly unless it spans whole rows: Linux
#: 6.1's cirrus converts XRGB8888 to 24-bit VRAM but offsets a rectangle's start by 4
#: bytes a pixel (seen under qemu: a 40x20 change drawn 33 pixels to the right).
DIRTY_FULL_ROWS = frozenset({"cirrus"})
_VERSION_NAME_LEN = 64


def fourcc(code: str) -> int:
    """The DRM fourcc number of a four-letter code (``"XR24"``)."""
    if len(code) != 4:
        raise ValueError(f"a fourcc is four characters, not {code!r}")
    a, b, c, d = (ord(ch) for ch in code)
    return a | (b << 8) | (c << 16) | (d << 24)


def fourcc_name(value: int) -> str:
    """The four-letter code of a DRM fourcc number (``"XR24"``)."""
    return "".join(chr((value >> s) & 0xFF) for s in (0, 8, 16, 24))


#: The fourccs fbgfx draws in: fbgfx format name -> (fourcc code, bpp, red, green, blue).
FOURCC_FORMATS: dict[str, tuple[str, int, tuple[int, int], tuple[int, int], tuple[int, int]]] = {
    "XRGB8888": ("XR24", 32, (16, 8), (8, 8), (0, 8)),
    "XBGR8888": ("XB24", 32, (0, 8), (8, 8), (16, 8)),
    "RGB565": ("RG16", 16, (11, 5), (5, 6), (0, 5)),
    "BGR565": ("BG16", 16, (0, 5), (5, 6), (11, 5)),
    "RGB888": ("RG24", 24, (16, 8), (8, 8), (0, 8)),
}
_BY_FOURCC = {spec[0]: name for name, spec in FOURCC_FORMATS.items()}
# fourccs with an alpha channel read as their X variant: the scanout ignores alpha.
_ALPHA_ALIASES = {"AR24": "XR24", "AB24": "XB24"}


# -- what a card has ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DrmMode:
    """A display mode as KMS lists it (``struct drm_mode_modeinfo``)."""

    clock: int
    hdisplay: int
    hsync_start: int
    hsync_end: int
    htotal: int
    hskew: int
    vdisplay: int
    vsync_start: int
    vsync_end: int
    vtotal: int
    vscan: int
    vrefresh: int
    flags: int
    type: int
    name: str

    @property
    def width(self) -> int:
        """Visible width in pixels."""
        return self.hdisplay

    @property
    def height(self) -> int:
        """Visible height in pixels."""
        return self.vdisplay

    @property
    def preferred(self) -> bool:
        """The connector's preferred mode (``DRM_MODE_TYPE_PREFERRED``)."""
        return bool(self.type & lib.DRM_MODE_TYPE_PREFERRED)

    @property
    def interlaced(self) -> bool:
        """An interlaced mode."""
        return bool(self.flags & _MODE_FLAG_INTERLACE)

    def __str__(self) -> str:
        return f"{self.hdisplay}x{self.vdisplay}@{self.vrefresh}"

    def to_mode(self) -> Mode:
        """This mode as a :class:`fbgfx.modes.Mode` (what ``fb.modes()`` lists)."""
        return Mode(
            self.hdisplay,
            self.vdisplay,
            None,
            None,
            None,
            self.vrefresh or None,
            self.interlaced,
            self.name,
            "connector",
        )


_MODE_FIELDS = tuple(f.name for f in dataclasses.fields(DrmMode) if f.name != "name")


@dataclass(frozen=True)
class Connector:
    """A connector (an output: ``HDMI-A-1``, ``Virtual-1``) and its modes."""

    id: int
    name: str
    connected: bool
    modes: tuple[DrmMode, ...]
    encoder_id: int
    encoders: tuple[int, ...]
    mm_width: int = 0
    mm_height: int = 0


@dataclass(frozen=True)
class Encoder:
    """An encoder: which CRTC drives it and which could."""

    id: int
    crtc_id: int
    possible_crtcs: int


@dataclass(frozen=True)
class CrtcState:
    """What a CRTC shows: framebuffer, position and mode (None: the CRTC is off)."""

    id: int
    fb_id: int
    x: int
    y: int
    mode: DrmMode | None


@dataclass(frozen=True)
class Plane:
    """A plane, its current CRTC and framebuffer, and the formats it scans out."""

    id: int
    crtc_id: int
    fb_id: int
    possible_crtcs: int
    formats: tuple[str, ...]


@dataclass(frozen=True)
class FbInfo:
    """A framebuffer object (``GETFB2``): its size, format and first buffer."""

    id: int
    width: int
    height: int
    fourcc: str
    handle: int
    pitch: int
    offset: int


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


@dataclass(frozen=True)
class CardInfo:
    """Everything :func:`probe` finds on a card (for ``fbgfx info``)."""

    path: str
    driver: str
    connectors: tuple[Connector, ...]
    crtcs: tuple[CrtcState, ...]
    planes: tuple[Plane, ...]


# -- the card: thin ioctl wrappers -------------------------------------------------------------


def _open_error(e: OSError, path: str) -> FramebufferError:
    if e.errno == errno.ENOENT:
        cards = find_cards()
        have = ", ".join(cards) if cards else "none (no DRM driver loaded)"
        return FramebufferError(errno.ENOENT, f"no such DRM card; available: {have}", path)
    if e.errno in (errno.EACCES, errno.EPERM):
        return FramebufferError(
            e.errno,
            "permission denied: add your user to the 'video' group (sudo usermod -aG video $USER) and log in "
            "again, or run from a console seat that logind gives the card to",
            path,
        )
    return FramebufferError(e.errno or errno.EIO, f"cannot open: {e.strerror}", path)


class Card:
    """An open ``/dev/dri/cardN``: each method is one ioctl (or a read) and raises
    :class:`~fbgfx.errors.FramebufferError` with the kernel's errno."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError as e:
            raise _open_error(e, path) from None
        try:
            st = os.fstat(self.fd)
            if not (os.major(st.st_rdev) == DRM_MAJOR and (st.st_mode & 0o170000) == 0o020000):
                raise FramebufferError(
                    errno.ENOTTY, "not a DRM card (expected a /dev/dri/cardN character device)", path
                )
        except BaseException:
            os.close(self.fd)
            raise

    def _ioctl(self, request: int, arg: Any, doing: str) -> None:
        check(lib.fbgfx_drm_ioctl(self.fd, request, arg), doing, self.path)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # -- identity and capabilities

    def driver(self) -> str:
        v = ffi.new("struct drm_version *")
        name = ffi.new("char[]", _VERSION_NAME_LEN)
        v.name, v.name_len = name, _VERSION_NAME_LEN - 1
        self._ioctl(lib.DRM_IOCTL_VERSION, v, "reading the driver name (DRM_IOCTL_VERSION)")
        driver: str = ffi.string(name).decode("ascii", "replace")
        return driver

    def get_cap(self, cap: int) -> int:
        c = ffi.new("struct drm_get_cap *")
        c.capability = cap
        self._ioctl(lib.DRM_IOCTL_GET_CAP, c, "reading a capability (DRM_IOCTL_GET_CAP)")
        return int(c.value)

    def set_client_cap(self, cap: int, value: int) -> bool:
        c = ffi.new("struct drm_set_client_cap *")
        c.capability, c.value = cap, value
        return bool(lib.fbgfx_drm_ioctl(self.fd, lib.DRM_IOCTL_SET_CLIENT_CAP, c) == 0)

    def set_master(self) -> None:
        self._ioctl(lib.DRM_IOCTL_SET_MASTER, ffi.NULL, "becoming DRM master (DRM_IOCTL_SET_MASTER)")

    def drop_master(self) -> None:
        self._ioctl(lib.DRM_IOCTL_DROP_MASTER, ffi.NULL, "dropping DRM master (DRM_IOCTL_DROP_MASTER)")

    # -- mode objects

    def resources(self) -> tuple[list[int], list[int], list[int]]:
        """(CRTC ids, connector ids, encoder ids), in the card's order."""
        doing = "reading the card's resources (DRM_IOCTL_MODE_GETRESOURCES)"
        for _ in range(5):  # the counts can change between the two calls (hotplug)
            res = ffi.new("struct drm_mode_card_res *")
            self._ioctl(lib.DRM_IOCTL_MODE_GETRESOURCES, res, doing)
            counts = (res.count_crtcs, res.count_connectors, res.count_encoders)
            crtcs, conns, encs = (ffi.new("uint32_t[]", max(n, 1)) for n in counts)
            res2 = ffi.new("struct drm_mode_card_res *")
            res2.count_crtcs, res2.count_connectors, res2.count_encoders = counts
            res2.crtc_id_ptr = _addr(crtcs)
            res2.connector_id_ptr = _addr(conns)
            res2.encoder_id_ptr = _addr(encs)
            self._ioctl(lib.DRM_IOCTL_MODE_GETRESOURCES, res2, doing)
            if (res2.count_crtcs, res2.count_connectors, res2.count_encoders) == counts:
                return (
                    [crtcs[i] for i in range(counts[0])],
                    [conns[i] for i in range(counts[1])],
                    [encs[i] for i in range(counts[2])],
                )
        raise FramebufferError(errno.EAGAIN, doing + ": the card kept changing", self.path)

    def connector(self, connector_id: int, probe: bool = True) -> Connector:
        """A connector, its status and modes.

        ``probe``: ask with no room for modes, which makes the DRM master probe the
        connector (its status is only known once someone has: with no console on the
        card, nobody has); else ask with room for one mode, which only reports.
        """
        doing = "reading a connector (DRM_IOCTL_MODE_GETCONNECTOR)"
        for _ in range(5):
            c = ffi.new("struct drm_mode_get_connector *")
            c.connector_id = connector_id
            one = ffi.new("struct drm_mode_modeinfo[1]")
            if not probe:
                c.count_modes, c.modes_ptr = 1, _addr(one)
            self._ioctl(lib.DRM_IOCTL_MODE_GETCONNECTOR, c, doing)
            n_modes, n_encs = max(c.count_modes, 1), c.count_encoders
            modes = ffi.new("struct drm_mode_modeinfo[]", n_modes)
            encs = ffi.new("uint32_t[]", max(n_encs, 1))
            c2 = ffi.new("struct drm_mode_get_connector *")
            c2.connector_id = connector_id
            c2.count_modes, c2.modes_ptr = n_modes, _addr(modes)
            c2.count_encoders, c2.encoders_ptr = n_encs, _addr(encs)
            self._ioctl(lib.DRM_IOCTL_MODE_GETCONNECTOR, c2, doing)
            if c2.count_modes <= n_modes and c2.count_encoders == n_encs:
                kind = CONNECTOR_TYPES[c2.connector_type] if c2.connector_type < len(CONNECTOR_TYPES) else "Unknown"
                return Connector(
                    id=connector_id,
                    name=f"{kind}-{c2.connector_type_id}",
                    connected=c2.connection == lib.DRM_MODE_CONNECTED,
                    modes=tuple(_mode_from_c(modes[i]) for i in range(c2.count_modes)),
                    encoder_id=c2.encoder_id,
                    encoders=tuple(encs[i] for i in range(n_encs)),
                    mm_width=c2.mm_width,
                    mm_height=c2.mm_height,
                )
        raise FramebufferError(errno.EAGAIN, doing + ": the connector kept changing", self.path)

    def encoder(self, encoder_id: int) -> Encoder:
        e = ffi.new("struct drm_mode_get_encoder *")
        e.encoder_id = encoder_id
        self._ioctl(lib.DRM_IOCTL_MODE_GETENCODER, e, "reading an encoder (DRM_IOCTL_MODE_GETENCODER)")
        return Encoder(encoder_id, e.crtc_id, e.possible_crtcs)

    def crtc(self, crtc_id: int) -> CrtcState:
        c = ffi.new("struct drm_mode_crtc *")
        c.crtc_id = crtc_id
        self._ioctl(lib.DRM_IOCTL_MODE_GETCRTC, c, "reading a CRTC (DRM_IOCTL_MODE_GETCRTC)")
        return CrtcState(crtc_id, c.fb_id, c.x, c.y, _mode_from_c(c.mode) if c.mode_valid else None)

    def set_crtc(
        self, crtc_id: int, fb_id: int, x: int, y: int, connectors: Sequence[int], mode: DrmMode | None
    ) -> None:
        c = ffi.new("struct drm_mode_crtc *")
        conns = ffi.new("uint32_t[]", list(connectors) or [0])
        c.crtc_id, c.fb_id, c.x, c.y = crtc_id, fb_id, x, y
        c.count_connectors = len(connectors)
        c.set_connectors_ptr = _addr(conns) if connectors else 0
        if mode is not None:
            c.mode_valid = 1
            _mode_to_c(mode, c.mode)
        self._ioctl(lib.DRM_IOCTL_MODE_SETCRTC, c, "setting the CRTC (DRM_IOCTL_MODE_SETCRTC)")

    def planes(self) -> list[Plane]:
        # Without this client cap the primary planes are hidden.
        self.set_client_cap(lib.DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1)
        doing = "reading the planes (DRM_IOCTL_MODE_GETPLANERESOURCES)"
        res = ffi.new("struct drm_mode_get_plane_res *")
        self._ioctl(lib.DRM_IOCTL_MODE_GETPLANERESOURCES, res, doing)
        n = res.count_planes
        ids = ffi.new("uint32_t[]", max(n, 1))
        res2 = ffi.new("struct drm_mode_get_plane_res *")
        res2.count_planes, res2.plane_id_ptr = n, _addr(ids)
        self._ioctl(lib.DRM_IOCTL_MODE_GETPLANERESOURCES, res2, doing)
        planes = []
        for i in range(min(n, res2.count_planes)):
            p = ffi.new("struct drm_mode_get_plane *")
            p.plane_id = ids[i]
            self._ioctl(lib.DRM_IOCTL_MODE_GETPLANE, p, "reading a plane (DRM_IOCTL_MODE_GETPLANE)")
            fmts = ffi.new("uint32_t[]", max(p.count_format_types, 1))
            p2 = ffi.new("struct drm_mode_get_plane *")
            p2.plane_id, p2.count_format_types, p2.format_type_ptr = ids[i], p.count_format_types, _addr(fmts)
            self._ioctl(lib.DRM_IOCTL_MODE_GETPLANE, p2, "reading a plane (DRM_IOCTL_MODE_GETPLANE)")
            formats = tuple(fourcc_name(fmts[k]) for k in range(min(p.count_format_types, p2.count_format_types)))
            planes.append(Plane(ids[i], p2.crtc_id, p2.fb_id, p2.possible_crtcs, formats))
        return planes

    # -- buffers

    def create_dumb(self, width: int, height: int, bpp: int) -> tuple[int, int, int]:
        """(handle, pitch, size) of a new dumb buffer."""
        d = ffi.new("struct drm_mode_create_dumb *")
        d.width, d.height, d.bpp = width, height, bpp
        self._ioctl(
            lib.DRM_IOCTL_MODE_CREATE_DUMB, d, f"creating a {width}x{height} buffer (DRM_IOCTL_MODE_CREATE_DUMB)"
        )
        return d.handle, d.pitch, int(d.size)

    def map_offset(self, handle: int) -> int:
        m = ffi.new("struct drm_mode_map_dumb *")
        m.handle = handle
        self._ioctl(lib.DRM_IOCTL_MODE_MAP_DUMB, m, "preparing a buffer for mapping (DRM_IOCTL_MODE_MAP_DUMB)")
        return int(m.offset)

    def destroy_dumb(self, handle: int) -> None:
        d = ffi.new("struct drm_mode_destroy_dumb *")
        d.handle = handle
        self._ioctl(lib.DRM_IOCTL_MODE_DESTROY_DUMB, d, "freeing a buffer (DRM_IOCTL_MODE_DESTROY_DUMB)")

    def gem_close(self, handle: int) -> None:
        g = ffi.new("struct drm_gem_close *")
        g.handle = handle
        self._ioctl(lib.DRM_IOCTL_GEM_CLOSE, g, "closing a buffer handle (DRM_IOCTL_GEM_CLOSE)")

    def add_fb2(self, width: int, height: int, code: str, handle: int, pitch: int, offset: int = 0) -> int:
        f = ffi.new("struct drm_mode_fb_cmd2 *")
        f.width, f.height, f.pixel_format = width, height, fourcc(code)
        f.handles[0], f.pitches[0], f.offsets[0] = handle, pitch, offset
        self._ioctl(
            lib.DRM_IOCTL_MODE_ADDFB2, f, f"adding a {width}x{height} {code} framebuffer (DRM_IOCTL_MODE_ADDFB2)"
        )
        return int(f.fb_id)

    def rm_fb(self, fb_id: int) -> None:
        i = ffi.new("unsigned int *", fb_id)
        self._ioctl(lib.DRM_IOCTL_MODE_RMFB, i, "removing a framebuffer (DRM_IOCTL_MODE_RMFB)")

    def get_fb(self, fb_id: int) -> FbInfo:
        """A framebuffer's geometry and (for root or the master) a handle to its buffer."""
        f = ffi.new("struct drm_mode_fb_cmd2 *")
        f.fb_id = fb_id
        rc = lib.fbgfx_drm_ioctl(self.fd, lib.DRM_IOCTL_MODE_GETFB2, f)
        if rc == 0:
            return FbInfo(
                fb_id, f.width, f.height, fourcc_name(f.pixel_format), f.handles[0], f.pitches[0], f.offsets[0]
            )
        if rc not in (-errno.EINVAL, -errno.ENOTTY):
            check(rc, "reading the framebuffer on screen (DRM_IOCTL_MODE_GETFB2)", self.path)
        # GETFB2 is from Linux 5.7; GETFB knows depth and bpp only.
        g = ffi.new("struct drm_mode_fb_cmd *")
        g.fb_id = fb_id
        self._ioctl(lib.DRM_IOCTL_MODE_GETFB, g, "reading the framebuffer on screen (DRM_IOCTL_MODE_GETFB)")
        code = {(24, 32): "XR24", (32, 32): "AR24", (16, 16): "RG16"}.get((g.depth, g.bpp), "????")
        return FbInfo(fb_id, g.width, g.height, code, g.handle, g.pitch, 0)

    def page_flip(self, crtc_id: int, fb_id: int, user_data: int) -> None:
        p = ffi.new("struct drm_mode_crtc_page_flip *")
        p.crtc_id, p.fb_id, p.flags, p.user_data = crtc_id, fb_id, lib.DRM_MODE_PAGE_FLIP_EVENT, user_data
        self._ioctl(lib.DRM_IOCTL_MODE_PAGE_FLIP, p, "flipping pages (DRM_IOCTL_MODE_PAGE_FLIP)")

    def dirty_fb(self, fb_id: int, rects: Sequence[tuple[int, int, int, int]]) -> None:
        """Tell the driver which rectangles (x0, y0, x1, y1; x1/y1 exclusive) changed."""
        clips = ffi.new("struct drm_clip_rect[]", max(len(rects), 1))
        for i, (x0, y0, x1, y1) in enumerate(rects):
            clips[i].x1, clips[i].y1, clips[i].x2, clips[i].y2 = x0, y0, x1, y1
        d = ffi.new("struct drm_mode_fb_dirty_cmd *")
        d.fb_id, d.num_clips, d.clips_ptr = fb_id, len(rects), _addr(clips) if rects else 0
        self._ioctl(lib.DRM_IOCTL_MODE_DIRTYFB, d, "sending changed rectangles (DRM_IOCTL_MODE_DIRTYFB)")

    def wait_vblank(self, crtc_index: int) -> None:
        check(lib.fbgfx_drm_wait_vblank(self.fd, crtc_index), "waiting for vblank (DRM_IOCTL_WAIT_VBLANK)", self.path)

    def read_events(self, timeout: float) -> list[tuple[int, int, int, int]]:
        """Wait up to ``timeout`` s for events: (type, user_data, sequence, crtc_id) each."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return []
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return []
        events, pos = [], 0
        while pos + 8 <= len(data):
            kind, length = struct.unpack_from("=II", data, pos)
            if length < 8:
                break
            if kind == lib.DRM_EVENT_FLIP_COMPLETE and length >= 32:
                user_data, _sec, _usec, seq, crtc = struct.unpack_from("=QIIII", data, pos + 8)
                events.append((kind, user_data, seq, crtc))
            else:
                events.append((kind, 0, 0, 0))
            pos += length
        return events

    def map_pages(self, offsets: Sequence[int], size: int) -> tuple[Any, int]:
        """Map buffers end to end: (an object with the buffer protocol, its address)."""
        out = ffi.new("void **")
        offs = ffi.new("uint64_t[]", list(offsets))
        total = size * len(offsets)
        check(
            lib.fbgfx_drm_map_pages(self.fd, offs, len(offsets), size, out),
            f"mapping {total} bytes of buffers",
            self.path,
        )
        addr = int(ffi.cast("uintptr_t", out[0]))
        # munmap only when the last NumPy view of it is gone (the buffer keeps the
        # pointer alive); detach() has replaced the buffers by then.
        ptr = ffi.gc(ffi.cast("char *", out[0]), lambda p: lib.fbgfx_drm_unmap(p, total))
        return ffi.buffer(ptr, total), addr

    def detach(self, addr: int, length: int) -> None:
        check(lib.fbgfx_drm_detach_pages(ffi.cast("void *", addr), length), "releasing the buffers' mapping", self.path)

    def read_buffer(self, handle: int, length: int) -> bytes:
        """A copy of a buffer's first ``length`` bytes (for reading what is on screen)."""
        import mmap

        offset = self.map_offset(handle)
        try:
            with mmap.mmap(self.fd, length, mmap.MAP_SHARED, mmap.PROT_READ, offset=offset) as m:
                return bytes(m)
        except OSError as e:
            raise FramebufferError.from_errno(e.errno or errno.EIO, "mapping the buffer on screen", self.path) from None


def _addr(cdata: Any) -> int:
    return int(ffi.cast("uintptr_t", cdata))


def _mode_from_c(c: Any) -> DrmMode:
    values = {name: int(getattr(c, name)) for name in _MODE_FIELDS}
    return DrmMode(name=ffi.string(c.name).decode("ascii", "replace"), **values)


def _mode_to_c(mode: DrmMode, c: Any) -> None:
    for name in _MODE_FIELDS:
        setattr(c, name, getattr(mode, name))
    c.name = mode.name.encode("ascii", "replace")[:31]


# -- finding a display -------------------------------------------------------------------------


def find_cards(dri_dir: str = DRI_DIR) -> list[str]:
    """The DRM card nodes (``/dev/dri/card0`` ...), in number order."""
    cards = glob.glob(os.path.join(dri_dir, "card[0-9]*"))
    return sorted(cards, key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))


def parse_spec(spec: str) -> tuple[str | None, dict[str, str]]:
    """Split a ``drm:`` spec into the card path (None: find one) and its options.

    ``"drm:"``, ``"drm:/dev/dri/card1"``, ``"drm:card0"``,
    ``"drm:card0:connector=HDMI-A-1:mode=1280x720@60:format=RGB565"``.

    Raises:
        ValueError: Not a drm: spec, an unknown option, or a bad value.
    """
    if spec != "drm" and not spec.startswith("drm:"):
        raise ValueError(f"not a drm: device {spec!r}")
    parts = spec[4:].split(":") if spec.startswith("drm:") else []
    card: str | None = None
    options: dict[str, str] = {}
    for i, part in enumerate(parts):
        if not part:
            continue
        if "=" in part:
            key, _, value = part.partition("=")
            if key not in ("connector", "mode", "format"):
                raise ValueError(f"unknown drm: option {key!r} in {spec!r}; options: connector=, mode=, format=")
            options[key] = value
        elif i == 0 and card is None:
            card = part if part.startswith("/") else os.path.join(DRI_DIR, part)
        else:
            raise ValueError(
                f"bad drm: spec {spec!r}: expected drm:[CARD][:connector=NAME][:mode=WxH[@HZ]][:format=NAME]"
            )
    if "mode" in options:
        _parse_mode_option(options["mode"])
    if "format" in options and options["format"].upper() not in FOURCC_FORMATS:
        raise ValueError(f"drm: format {options['format']!r} is not one of {', '.join(FOURCC_FORMATS)}")
    return card, options


def _parse_mode_option(text: str) -> tuple[int, int, int | None]:
    m = re.fullmatch(r"(\d+)x(\d+)(?:@(\d+))?", text.strip().lower())
    if not m or not int(m.group(1)) or not int(m.group(2)):
        raise ValueError(f"bad drm: mode {text!r}: expected WIDTHxHEIGHT[@HZ], e.g. 1280x720@60")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None


def probe(path: str) -> CardInfo:
    """Read a card's connectors (connected or not, with their modes), CRTCs and planes.

    Needs no DRM master: works while another program shows the display.
    """
    card = Card(path)
    try:
        crtcs, conns, _ = card.resources()
        try:
            planes = tuple(card.planes())
        except FramebufferError:
            planes = ()
        return CardInfo(
            path, card.driver(), tuple(card.connector(c) for c in conns), tuple(card.crtc(c) for c in crtcs), planes
        )
    finally:
        card.close()


def find_display(dri_dir: str = DRI_DIR) -> str | None:
    """The first card with a connected connector, or None."""
    for path in find_cards(dri_dir):
        try:
            card = Card(path)
        except FramebufferError:
            continue
        try:
            _, conns, _ = card.resources()
            if any(card.connector(c).connected for c in conns):
                return path
        except FramebufferError:
            continue  # a render-only or KMS-less card
        finally:
            card.close()
    return None


def read_scanout(path: str, connector: str | None = None) -> tuple[str, np.ndarray]:
    """What a card shows now: (fbgfx format name, native pixels (height, width) array).

    Reads the framebuffer on the connector's CRTC (or the first lit CRTC) through
    ``GETFB2``, which hands out a buffer handle only to root (``CAP_SYS_ADMIN``) or
    the DRM master: it works while another program shows the display.

    Raises:
        FramebufferError: Nothing is shown, the handle was withheld (EACCES), or the
            format is not one fbgfx reads.
    """
    card = Card(path)
    try:
        crtcs, conns, _ = card.resources()
        crtc_ids = list(crtcs)
        if connector is not None:
            found = [card.connector(c) for c in conns]
            match = [c for c in found if c.name == connector]
            if not match:
                raise FramebufferError(
                    errno.ENODEV, f"no connector {connector!r}; connectors: {', '.join(c.name for c in found)}", path
                )
            enc = match[0].encoder_id
            crtc_ids = [card.encoder(enc).crtc_id] if enc else []
        states = [card.crtc(c) for c in crtc_ids if c]
        lit = [s for s in states if s.fb_id and s.mode is not None]
        if not lit:
            raise FramebufferError(errno.ENODATA, "nothing is on screen (no CRTC shows a framebuffer)", path)
        state = lit[0]
        info = card.get_fb(state.fb_id)
        if not info.handle:
            raise FramebufferError(
                errno.EACCES,
                "the kernel gives the buffer on screen only to root or the DRM master: run as root (sudo)",
                path,
            )
        try:
            code = _ALPHA_ALIASES.get(info.fourcc, info.fourcc)
            name = _BY_FOURCC.get(code)
            if name is None:
                raise FramebufferError(
                    errno.ENOTSUP, f"the framebuffer on screen is {info.fourcc}, which fbgfx does not read", path
                )
            bpp = FOURCC_FORMATS[name][1]
            w, h = state.mode.hdisplay, state.mode.vdisplay  # type: ignore[union-attr]
            start = info.offset + state.y * info.pitch + state.x * bpp // 8
            data = card.read_buffer(info.handle, info.offset + info.pitch * info.height)
        finally:
            card.gem_close(info.handle)
        rows = np.frombuffer(data, np.uint8, count=h * info.pitch - (info.pitch - w * bpp // 8), offset=start)
        rows = np.lib.stride_tricks.as_strided(rows, (h, w * bpp // 8), (info.pitch, 1))
        pixels = np.ascontiguousarray(rows)
        if bpp == 24:
            return name, pixels.reshape(h, w, 3)
        return name, pixels.view("<u4" if bpp == 32 else "<u2")
    finally:
        card.close()


# -- the backend ---------------------------------------------------------------------------------


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
        card: An open :class:`Card` (tests pass a fake with the same methods). It is
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
        card: Any,
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
        w, h, hz = _parse_mode_option(text)
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
            readable = [_BY_FOURCC[c] for c in offered if c in _BY_FOURCC]
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
        name = _BY_FOURCC[code]
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
                if (mode.hdisplay, mode.vdisplay, name) == (bufs.width, bufs.height, _BY_FOURCC[bufs.fourcc])
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
        current = _BY_FOURCC[bufs.fourcc]
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
        raise _fbdev_only("a colour map (palette)", self.path)

    def put_cmap(self, start: int, entries: np.ndarray) -> None:
        raise _fbdev_only("a colour map (palette)", self.path)

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


def _fbdev_only(what: str, path: str) -> FramebufferError:
    return FramebufferError(errno.ENOTTY, f"{what} is fbdev-only: a drm: display has none", path)


def is_drm_spec(spec: str) -> bool:
    """True for ``drm`` and ``drm:...``."""
    return spec == "drm" or spec.startswith("drm:")


def describe(info: CardInfo) -> Iterable[str]:
    """Lines describing a card for ``fbgfx info``."""
    yield f"{info.path}: driver {info.driver}"
    crtc_modes = {c.id: c for c in info.crtcs}
    for c in info.connectors:
        state = "connected" if c.connected else "disconnected"
        yield f"  connector {c.name} ({state}){f', {c.mm_width}x{c.mm_height} mm' if c.mm_width else ''}"
        seen: list[str] = []
        for m in c.modes:
            label = f"{m}{' preferred' if m.preferred else ''}"
            if label not in seen:
                seen.append(label)
        if seen:
            yield "    modes: " + ", ".join(seen)
    for s in crtc_modes.values():
        yield f"  crtc {s.id}: " + (f"{s.mode} fb {s.fb_id} at {s.x},{s.y}" if s.mode else "off")
    for p in info.planes:
        yield f"  plane {p.id} (crtcs 0x{p.possible_crtcs:x}): {' '.join(p.formats)}"


CardFactory = Callable[[str], Any]
