"""Finding DRM displays: the card nodes, ``drm:`` specs, what a card has
(:func:`probe`, :func:`describe`), which card has a connected display, and
:func:`read_scanout` (what a card shows, read without taking it over).

Nothing here becomes DRM master or changes what a display shows.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Collection, Iterable

import numpy as np

from .._ffi import lib
from ..errors import FramebufferError
from .atomic import PLANE_TYPES, Atomic
from .card import ALPHA_ALIASES, BY_FOURCC, DRI_DIR, FOURCC_FORMATS, SYSFS_DRM, Card, CardInfo, find_cards
from .compose import compose_planes

__all__ = [
    "describe",
    "edid_monitor_name",
    "find_cards",
    "find_display",
    "is_drm_spec",
    "monitor_name",
    "parse_mode_option",
    "parse_spec",
    "probe",
    "read_scanout",
    "sysfs_connector",
]


def parse_spec(spec: str) -> tuple[str | None, dict[str, str]]:
    """Split a ``drm:`` spec into the card path (None: find one) and its options.

    ``"drm:"``, ``"drm:/dev/dri/card1"``, ``"drm:card0"``,
    ``"drm:card0:connector=HDMI-A-1:mode=1280x720@60:format=RGB565"``.

    Raises:
        ValueError: Not a drm: spec, an unknown option, or a bad value.
    """
    if spec != "drm" and not spec.startswith("drm:"):
        raise ValueError(f"not a drm: device {spec!r}")
    if not spec.isprintable():  # (shown escaped: a raw one would reach the user's terminal)
        raise ValueError(f"device {spec!r}: a device name cannot hold NUL or control characters")
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
            if key in options:  # as virtual: refuses, rather than the last one winning
                raise ValueError(f"option {key!r} given twice in {spec!r}")
            options[key] = value
        elif i == 0 and card is None:
            card = part if part.startswith("/") else os.path.join(DRI_DIR, part)
        else:
            raise ValueError(
                f"bad drm: spec {spec!r}: expected drm:[CARD][:connector=NAME][:mode=WxH[@HZ]][:format=NAME]"
            )
    if "mode" in options:
        parse_mode_option(options["mode"])
    if "format" in options and options["format"].upper() not in FOURCC_FORMATS:
        raise ValueError(f"drm: format {options['format']!r} is not one of {', '.join(FOURCC_FORMATS)}")
    return card, options


def parse_mode_option(text: str) -> tuple[int, int, int | None]:
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
            path,
            card.driver(),
            tuple(card.connector(c) for c in conns),
            tuple(card.crtc(c) for c in crtcs),
            planes,
            tuple(_plane_type(card, p.id) for p in planes),
        )
    finally:
        card.close()


def _plane_type(card: Card, plane_id: int) -> str:
    """A plane's ``type`` ("primary", "overlay", "cursor"; "" when unreadable)."""
    try:
        value = Atomic(card).values(plane_id, lib.DRM_MODE_OBJECT_PLANE).get("type")
    except OSError:
        return ""
    return PLANE_TYPES.get(value, "") if value is not None else ""


def find_display(
    dri_dir: str = DRI_DIR, connector: str | None = None, skip: Collection[tuple[str, str]] = ()
) -> str | None:
    """The first card with a connected connector, or None.

    Args:
        dri_dir: Where the card nodes are.
        connector: Instead, the first card that has a connector of this name
            (``DSI-1``), connected or not: a Pi 5's DSI panel is on a card whose
            number is not fixed.
        skip: (card's real path, connector name) pairs not to count: the displays
            this program shows already.
    """
    for path in find_cards(dri_dir):
        try:
            card = Card(path)
        except FramebufferError:
            continue
        try:
            _, conns, _ = card.resources()
            real = os.path.realpath(path)
            found = [card.connector(c) for c in conns]
            if connector:
                if any(c.name == connector for c in found):
                    return path
            elif any(c.connected and (real, c.name) not in skip for c in found):
                return path
        except FramebufferError:
            continue  # a render-only or KMS-less card
        finally:
            card.close()
    return None


def sysfs_connector(card: str, connector: str, root: str = SYSFS_DRM) -> str:
    """The sysfs directory of a connector: ``/sys/class/drm/card0-HDMI-A-1``."""
    return os.path.join(root, f"{os.path.basename(card)}-{connector}")


def monitor_name(card: str, connector: str, root: str = SYSFS_DRM) -> str | None:
    """The monitor's name from its EDID (``/sys/class/drm/card0-HDMI-A-1/edid``), or
    None when the connector has no EDID (a panel, nothing connected) or it names none."""
    try:
        with open(os.path.join(sysfs_connector(card, connector, root), "edid"), "rb") as f:
            edid = f.read(256)
    except OSError:
        return None
    return edid_monitor_name(edid)


def edid_monitor_name(edid: bytes) -> str | None:
    """The display product name descriptor (tag 0xFC) of an EDID base block, or None."""
    if len(edid) < 128 or edid[:8] != b"\x00\xff\xff\xff\xff\xff\xff\x00":
        return None
    for start in (54, 72, 90, 108):
        d = edid[start : start + 18]
        if d[:3] == b"\x00\x00\x00" and d[3] == 0xFC:
            name = d[5:18].split(b"\n", 1)[0].decode("cp437", "replace").strip()
            return name or None
    return None


def read_scanout(path: str, connector: str | None = None) -> tuple[str, np.ndarray]:
    """What a card shows now: (fbgfx format name, native pixels (height, width) array).

    Reads the framebuffer on the connector's CRTC (or the first lit CRTC) through
    ``GETFB2``, which hands out a buffer handle only to root (``CAP_SYS_ADMIN``) or
    the DRM master: it works while another program shows the display. The CRTC's
    other active planes (layers, a cursor) are read alike and composed over it as the
    display engine does (:func:`fbgfx.drm.compose.compose_planes`).

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
            code = ALPHA_ALIASES.get(info.fourcc, info.fourcc)
            name = BY_FOURCC.get(code)
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
        # the overlay and cursor planes on the CRTC too: what the monitor shows
        return name, compose_planes(card, state.id, name, pixels.view("<u4" if bpp == 32 else "<u2"), state.fb_id)
    finally:
        card.close()


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
    types = info.plane_types or ("",) * len(info.planes)
    for p, kind in zip(info.planes, types):
        what = f"{kind + ' ' if kind else ''}(crtcs 0x{p.possible_crtcs:x}{', in use' if p.fb_id else ''})"
        yield f"  plane {p.id} {what}: {' '.join(p.formats)}"
