"""A DRM card: fourcc tables, the mode objects KMS lists, and :class:`Card`, the
ioctl wrapper of an open ``/dev/dri/cardN`` (one method per ioctl).

:class:`CardLike` names what the rest of fbgfx (discovery, the ``drm:`` backend) calls
on a card, so that a fake card (tests/support/fake_drm.py) can stand in for a real one. The
structs and ioctl numbers come from ``native/drm_uapi.h`` through :mod:`fbgfx._ffi`;
no cdata leaves this module.
"""

from __future__ import annotations

import dataclasses
import errno
import glob
import os
import re
import select
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._ffi import check, ffi, lib
from ..errors import FramebufferError
from ..modes import Mode

__all__ = [
    "ALPHA_ALIASES",
    "BY_FOURCC",
    "CONNECTOR_TYPES",
    "DRI_DIR",
    "DRM_MAJOR",
    "SYSFS_DRM",
    "FOURCC_FORMATS",
    "Card",
    "CardInfo",
    "CardLike",
    "Connector",
    "CrtcState",
    "DrmMode",
    "Encoder",
    "FbInfo",
    "Plane",
    "find_cards",
    "fourcc",
    "fourcc_name",
]

DRM_MAJOR = 226
DRI_DIR = "/dev/dri"
#: Where the kernel lists cards and connectors (``card0-HDMI-A-1``).
SYSFS_DRM = "/sys/class/drm"

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
_VERSION_NAME_LEN = 64


def fourcc(code: str) -> int:
    """The DRM fourcc number of a four-letter code (``"XR24"``).

    Raises:
        ValueError: ``code`` is not four characters long.

    Example:
        >>> hex(fbgfx.drm.fourcc("XR24"))
        '0x34325258'
    """
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
#: fourcc code -> fbgfx format name.
BY_FOURCC = {spec[0]: name for name, spec in FOURCC_FORMATS.items()}
# fourccs with an alpha channel read as their X variant: the scanout ignores alpha.
ALPHA_ALIASES = {"AR24": "XR24", "AB24": "XB24"}

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
class CardInfo:
    """Everything :func:`probe` finds on a card (for ``fbgfx info``)."""

    path: str
    driver: str
    connectors: tuple[Connector, ...]
    crtcs: tuple[CrtcState, ...]
    planes: tuple[Plane, ...]
    #: Each plane's type ("primary", "overlay", "cursor"; "" unknown), as ``planes``.
    plane_types: tuple[str, ...] = ()


class CardLike(Protocol):
    """What fbgfx calls on an open card: :class:`Card`, or a fake one in tests.

    Attributes:
        path: The card's device path, for messages.
        fd: Its file descriptor (-1 once closed).
    """

    path: str
    fd: int

    def driver(self) -> str:
        """The kernel driver's name (``DRM_IOCTL_VERSION``): ``"vc4"``, ``"bochs-drm"``..."""
        ...

    def get_cap(self, cap: int) -> int:
        """The value of a card capability (``DRM_CAP_*``, ``DRM_IOCTL_GET_CAP``)."""
        ...

    def set_client_cap(self, cap: int, value: int) -> bool:
        """Ask for a client capability (``DRM_CLIENT_CAP_*``); False when the card refuses it."""
        ...

    def set_master(self) -> None:
        """Become the card's DRM master, the one program that may set what it shows."""
        ...

    def drop_master(self) -> None:
        """Stop being DRM master, so that another program may become it."""
        ...

    def resources(self) -> tuple[list[int], list[int], list[int]]:
        """(CRTC ids, connector ids, encoder ids), in the card's order."""
        ...

    def connector(self, connector_id: int, probe: bool = True) -> Connector:
        """A connector, its status and modes (``probe``: make the master probe it first)."""
        ...

    def encoder(self, encoder_id: int) -> Encoder:
        """An encoder: the CRTC it feeds and the CRTCs it can."""
        ...

    def crtc(self, crtc_id: int) -> CrtcState:
        """What a CRTC shows now: its framebuffer id, position and mode (None when off)."""
        ...

    def set_crtc(
        self, crtc_id: int, fb_id: int, x: int, y: int, connectors: Sequence[int], mode: DrmMode | None
    ) -> None:
        """Show framebuffer ``fb_id`` from (x, y) on ``connectors`` at ``mode``
        (``DRM_IOCTL_MODE_SETCRTC``; ``fb_id`` 0 and ``mode`` None turn the CRTC off)."""
        ...

    def planes(self) -> list[Plane]:
        """Every plane of the card (primary and cursor planes included), with its formats."""
        ...

    def create_dumb(self, width: int, height: int, bpp: int) -> tuple[int, int, int]:
        """(handle, pitch, size) of a new dumb buffer."""
        ...

    def map_offset(self, handle: int) -> int:
        """The offset to ``mmap`` the card at to reach a dumb buffer (``MAP_DUMB``)."""
        ...

    def destroy_dumb(self, handle: int) -> None:
        """Free a dumb buffer made by :meth:`create_dumb`."""
        ...

    def gem_close(self, handle: int) -> None:
        """Let go of a buffer handle (one :meth:`get_fb` handed out)."""
        ...

    def add_fb2(self, width: int, height: int, code: str, handle: int, pitch: int, offset: int = 0) -> int:
        """Make a framebuffer of a buffer, in fourcc ``code`` (``"XR24"``); returns its id."""
        ...

    def add_fb2_planar(self, width: int, height: int, code: str, handle: int, planes: Sequence[tuple[int, int]]) -> int:
        """Make a framebuffer of a multi-plane format (``"NV12"``, ``"YU12"``) whose
        planes lie in one buffer: ``planes`` gives each plane's (pitch, offset); returns its id."""
        ...

    def rm_fb(self, fb_id: int) -> None:
        """Remove a framebuffer made by :meth:`add_fb2`."""
        ...

    def get_fb(self, fb_id: int) -> FbInfo:
        """A framebuffer's geometry and (for root or the master) a handle to its buffer."""
        ...

    def page_flip(self, crtc_id: int, fb_id: int, user_data: int) -> None:
        """Queue a flip of the CRTC to ``fb_id`` at the next vblank; its completion event
        carries ``user_data`` (:meth:`read_events`)."""
        ...

    def dirty_fb(self, fb_id: int, rects: Sequence[tuple[int, int, int, int]]) -> None:
        """Tell the driver which rectangles (x0, y0, x1, y1; x1/y1 exclusive) changed."""
        ...

    def wait_vblank(self, crtc_index: int) -> None:
        """Wait for the next vertical blank of the CRTC at ``crtc_index``."""
        ...

    def read_events(self, timeout: float) -> list[tuple[int, int, int, int]]:
        """Wait up to ``timeout`` s for events: (type, user_data, sequence, crtc_id) each."""
        ...

    def map_pages(self, offsets: Sequence[int], size: int) -> tuple[Any, int]:
        """Map buffers end to end: (an object with the buffer protocol, its address)."""
        ...

    def detach(self, addr: int, length: int) -> None:
        """Put private memory where :meth:`map_pages` mapped the buffers: views still held
        keep working but no longer reach the card."""
        ...

    def read_buffer(self, handle: int, length: int) -> bytes:
        """A copy of a buffer's first ``length`` bytes (for reading what is on screen)."""
        ...

    def close(self) -> None:
        """Close the card's file descriptor; safe to call twice."""
        ...


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

    def ioctl(self, request: int, arg: Any, doing: str) -> None:
        """The ioctl ``request`` on ``arg``; a failure raises, saying what it was ``doing``."""
        check(lib.fbgfx_drm_ioctl(self.fd, request, arg), doing, self.path)

    def call(self, request: int, struct_name: str, doing: str, **fields: Any) -> Any:
        """A new ``struct_name`` struct with ``fields`` set, passed to the ioctl
        ``request``: the struct as the kernel filled it in."""
        arg = ffi.new(f"struct {struct_name} *")
        for name, value in fields.items():
            setattr(arg, name, value)
        self.ioctl(request, arg, doing)
        return arg

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # -- identity and capabilities

    def driver(self) -> str:
        v = ffi.new("struct drm_version *")
        name = ffi.new("char[]", _VERSION_NAME_LEN)
        v.name, v.name_len = name, _VERSION_NAME_LEN - 1
        self.ioctl(lib.DRM_IOCTL_VERSION, v, "reading the driver name (DRM_IOCTL_VERSION)")
        driver: str = ffi.string(name).decode("ascii", "replace")
        return driver

    def get_cap(self, cap: int) -> int:
        c = self.call(lib.DRM_IOCTL_GET_CAP, "drm_get_cap", "reading a capability (DRM_IOCTL_GET_CAP)", capability=cap)
        return int(c.value)

    def set_client_cap(self, cap: int, value: int) -> bool:
        c = ffi.new("struct drm_set_client_cap *")
        c.capability, c.value = cap, value
        return bool(lib.fbgfx_drm_ioctl(self.fd, lib.DRM_IOCTL_SET_CLIENT_CAP, c) == 0)

    def set_master(self) -> None:
        self.ioctl(lib.DRM_IOCTL_SET_MASTER, ffi.NULL, "becoming DRM master (DRM_IOCTL_SET_MASTER)")

    def drop_master(self) -> None:
        self.ioctl(lib.DRM_IOCTL_DROP_MASTER, ffi.NULL, "dropping DRM master (DRM_IOCTL_DROP_MASTER)")

    # -- mode objects

    def resources(self) -> tuple[list[int], list[int], list[int]]:
        """(CRTC ids, connector ids, encoder ids), in the card's order."""
        doing = "reading the card's resources (DRM_IOCTL_MODE_GETRESOURCES)"
        for _ in range(5):  # the counts can change between the two calls (hotplug)
            res = self.call(lib.DRM_IOCTL_MODE_GETRESOURCES, "drm_mode_card_res", doing)
            counts = (res.count_crtcs, res.count_connectors, res.count_encoders)
            crtcs, conns, encs = (ffi.new("uint32_t[]", max(n, 1)) for n in counts)
            res2 = self.call(
                lib.DRM_IOCTL_MODE_GETRESOURCES,
                "drm_mode_card_res",
                doing,
                count_crtcs=counts[0],
                count_connectors=counts[1],
                count_encoders=counts[2],
                crtc_id_ptr=address(crtcs),
                connector_id_ptr=address(conns),
                encoder_id_ptr=address(encs),
            )
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
                c.count_modes, c.modes_ptr = 1, address(one)
            self.ioctl(lib.DRM_IOCTL_MODE_GETCONNECTOR, c, doing)
            n_modes, n_encs = max(c.count_modes, 1), c.count_encoders
            modes = ffi.new("struct drm_mode_modeinfo[]", n_modes)
            encs = ffi.new("uint32_t[]", max(n_encs, 1))
            c2 = ffi.new("struct drm_mode_get_connector *")
            c2.connector_id = connector_id
            c2.count_modes, c2.modes_ptr = n_modes, address(modes)
            c2.count_encoders, c2.encoders_ptr = n_encs, address(encs)
            self.ioctl(lib.DRM_IOCTL_MODE_GETCONNECTOR, c2, doing)
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
        doing = "reading an encoder (DRM_IOCTL_MODE_GETENCODER)"
        e = self.call(lib.DRM_IOCTL_MODE_GETENCODER, "drm_mode_get_encoder", doing, encoder_id=encoder_id)
        return Encoder(encoder_id, e.crtc_id, e.possible_crtcs)

    def crtc(self, crtc_id: int) -> CrtcState:
        c = self.call(
            lib.DRM_IOCTL_MODE_GETCRTC, "drm_mode_crtc", "reading a CRTC (DRM_IOCTL_MODE_GETCRTC)", crtc_id=crtc_id
        )
        return CrtcState(crtc_id, c.fb_id, c.x, c.y, _mode_from_c(c.mode) if c.mode_valid else None)

    def set_crtc(
        self, crtc_id: int, fb_id: int, x: int, y: int, connectors: Sequence[int], mode: DrmMode | None
    ) -> None:
        c = ffi.new("struct drm_mode_crtc *")
        conns = ffi.new("uint32_t[]", list(connectors) or [0])
        c.crtc_id, c.fb_id, c.x, c.y = crtc_id, fb_id, x, y
        c.count_connectors = len(connectors)
        c.set_connectors_ptr = address(conns) if connectors else 0
        if mode is not None:
            c.mode_valid = 1
            _mode_to_c(mode, c.mode)
        self.ioctl(lib.DRM_IOCTL_MODE_SETCRTC, c, "setting the CRTC (DRM_IOCTL_MODE_SETCRTC)")

    def planes(self) -> list[Plane]:
        # Without this client cap the primary planes are hidden.
        self.set_client_cap(lib.DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1)
        doing = "reading the planes (DRM_IOCTL_MODE_GETPLANERESOURCES)"
        n = self.call(lib.DRM_IOCTL_MODE_GETPLANERESOURCES, "drm_mode_get_plane_res", doing).count_planes
        ids = ffi.new("uint32_t[]", max(n, 1))
        res = self.call(
            lib.DRM_IOCTL_MODE_GETPLANERESOURCES,
            "drm_mode_get_plane_res",
            doing,
            count_planes=n,
            plane_id_ptr=address(ids),
        )
        planes = []
        for i in range(min(n, res.count_planes)):
            doing = "reading a plane (DRM_IOCTL_MODE_GETPLANE)"
            count = self.call(
                lib.DRM_IOCTL_MODE_GETPLANE, "drm_mode_get_plane", doing, plane_id=ids[i]
            ).count_format_types
            fmts = ffi.new("uint32_t[]", max(count, 1))
            p2 = self.call(
                lib.DRM_IOCTL_MODE_GETPLANE,
                "drm_mode_get_plane",
                doing,
                plane_id=ids[i],
                count_format_types=count,
                format_type_ptr=address(fmts),
            )
            formats = tuple(fourcc_name(fmts[k]) for k in range(min(count, p2.count_format_types)))
            planes.append(Plane(ids[i], p2.crtc_id, p2.fb_id, p2.possible_crtcs, formats))
        return planes

    # -- buffers

    def create_dumb(self, width: int, height: int, bpp: int) -> tuple[int, int, int]:
        """(handle, pitch, size) of a new dumb buffer."""
        doing = f"creating a {width}x{height} buffer (DRM_IOCTL_MODE_CREATE_DUMB)"
        d = self.call(
            lib.DRM_IOCTL_MODE_CREATE_DUMB, "drm_mode_create_dumb", doing, width=width, height=height, bpp=bpp
        )
        return d.handle, d.pitch, int(d.size)

    def map_offset(self, handle: int) -> int:
        doing = "preparing a buffer for mapping (DRM_IOCTL_MODE_MAP_DUMB)"
        return int(self.call(lib.DRM_IOCTL_MODE_MAP_DUMB, "drm_mode_map_dumb", doing, handle=handle).offset)

    def destroy_dumb(self, handle: int) -> None:
        doing = "freeing a buffer (DRM_IOCTL_MODE_DESTROY_DUMB)"
        self.call(lib.DRM_IOCTL_MODE_DESTROY_DUMB, "drm_mode_destroy_dumb", doing, handle=handle)

    def gem_close(self, handle: int) -> None:
        self.call(
            lib.DRM_IOCTL_GEM_CLOSE, "drm_gem_close", "closing a buffer handle (DRM_IOCTL_GEM_CLOSE)", handle=handle
        )

    def add_fb2(self, width: int, height: int, code: str, handle: int, pitch: int, offset: int = 0) -> int:
        f = ffi.new("struct drm_mode_fb_cmd2 *")
        f.width, f.height, f.pixel_format = width, height, fourcc(code)
        f.handles[0], f.pitches[0], f.offsets[0] = handle, pitch, offset
        self.ioctl(
            lib.DRM_IOCTL_MODE_ADDFB2, f, f"adding a {width}x{height} {code} framebuffer (DRM_IOCTL_MODE_ADDFB2)"
        )
        return int(f.fb_id)

    def add_fb2_planar(self, width: int, height: int, code: str, handle: int, planes: Sequence[tuple[int, int]]) -> int:
        if not 1 <= len(planes) <= 4:
            raise ValueError(f"a framebuffer has 1 to 4 planes, not {len(planes)}")
        f = ffi.new("struct drm_mode_fb_cmd2 *")
        f.width, f.height, f.pixel_format = width, height, fourcc(code)
        for i, (pitch, offset) in enumerate(planes):
            f.handles[i], f.pitches[i], f.offsets[i] = handle, pitch, offset
        self.ioctl(
            lib.DRM_IOCTL_MODE_ADDFB2, f, f"adding a {width}x{height} {code} framebuffer (DRM_IOCTL_MODE_ADDFB2)"
        )
        return int(f.fb_id)

    def rm_fb(self, fb_id: int) -> None:
        i = ffi.new("unsigned int *", fb_id)
        self.ioctl(lib.DRM_IOCTL_MODE_RMFB, i, "removing a framebuffer (DRM_IOCTL_MODE_RMFB)")

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
        doing = "reading the framebuffer on screen (DRM_IOCTL_MODE_GETFB)"
        g = self.call(lib.DRM_IOCTL_MODE_GETFB, "drm_mode_fb_cmd", doing, fb_id=fb_id)
        code = {(24, 32): "XR24", (32, 32): "AR24", (16, 16): "RG16"}.get((g.depth, g.bpp), "????")
        return FbInfo(fb_id, g.width, g.height, code, g.handle, g.pitch, 0)

    def page_flip(self, crtc_id: int, fb_id: int, user_data: int) -> None:
        self.call(
            lib.DRM_IOCTL_MODE_PAGE_FLIP,
            "drm_mode_crtc_page_flip",
            "flipping pages (DRM_IOCTL_MODE_PAGE_FLIP)",
            crtc_id=crtc_id,
            fb_id=fb_id,
            flags=lib.DRM_MODE_PAGE_FLIP_EVENT,
            user_data=user_data,
        )

    def dirty_fb(self, fb_id: int, rects: Sequence[tuple[int, int, int, int]]) -> None:
        """Tell the driver which rectangles (x0, y0, x1, y1; x1/y1 exclusive) changed."""
        clips = ffi.new("struct drm_clip_rect[]", max(len(rects), 1))
        for i, (x0, y0, x1, y1) in enumerate(rects):
            clips[i].x1, clips[i].y1, clips[i].x2, clips[i].y2 = x0, y0, x1, y1
        self.call(
            lib.DRM_IOCTL_MODE_DIRTYFB,
            "drm_mode_fb_dirty_cmd",
            "sending changed rectangles (DRM_IOCTL_MODE_DIRTYFB)",
            fb_id=fb_id,
            num_clips=len(rects),
            clips_ptr=address(clips) if rects else 0,
        )

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
        import mmap  # noqa: PLC0415 (mmap only when a buffer is read back)

        offset = self.map_offset(handle)
        try:
            with mmap.mmap(self.fd, length, mmap.MAP_SHARED, mmap.PROT_READ, offset=offset) as m:
                return bytes(m)
        except OSError as e:
            raise FramebufferError.from_errno(e.errno or errno.EIO, "mapping the buffer on screen", self.path) from None


def address(cdata: Any) -> int:
    """The address of ``cdata``, as the kernel's ``__u64`` pointer fields take it."""
    return int(ffi.cast("uintptr_t", cdata))


def _mode_from_c(c: Any) -> DrmMode:
    values = {name: int(getattr(c, name)) for name in _MODE_FIELDS}
    return DrmMode(name=ffi.string(c.name).decode("ascii", "replace"), **values)


def _mode_to_c(mode: DrmMode, c: Any) -> None:
    for name in _MODE_FIELDS:
        setattr(c, name, getattr(mode, name))
    c.name = mode.name.encode("ascii", "replace")[:31]


def find_cards(dri_dir: str = DRI_DIR) -> list[str]:
    """The DRM card nodes (``/dev/dri/card0`` ...), in number order."""
    cards = glob.glob(os.path.join(dri_dir, "card[0-9]*"))
    return sorted(cards, key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
