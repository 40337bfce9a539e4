"""``fbgfx.displays()``: every display fbgfx can open, and the spec that opens it.

One :class:`Display` per connector of every DRM card (connected or not) and per
``/dev/fbN``. Listing changes nothing: no card is taken over, no mode is set. It sits
above the backends, beside :func:`fbgfx.open`, because it knows them all.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from dataclasses import dataclass
from typing import Any

from ._fbdev import KernelDevice
from .drm import find_cards, probe
from .drm.discovery import edid_monitor_name, monitor_name
from .modes import Mode, parse_sysfs_modes, read_sysfs_modes

__all__ = ["Display", "displays"]


@dataclass(frozen=True)
class Display:
    """One display output: a DRM connector, or a ``/dev/fbN``.

    Attributes:
        card: The device node: ``/dev/dri/card0``, or ``/dev/fb0``.
        connector: The connector's name as in ``/sys/class/drm`` (``HDMI-A-1``,
            ``DSI-1``, ``Virtual-1``); None for a ``/dev/fbN``.
        connected: A monitor is connected (as last probed). A ``/dev/fbN`` always is.
        preferred: The monitor's preferred mode (a ``/dev/fbN``: its current mode),
            None when unknown (nothing connected).
        modes: The modes it offers, preferred first where the kernel says so.
        size_mm: The picture's size in millimetres (width, height), None when unknown.
        monitor: The monitor's name from its EDID (``"DELL U2415"``), None without one.
        spec: What :func:`fbgfx.open` takes to open it:
            ``"drm:card0:connector=HDMI-A-1"``, or ``"/dev/fb0"``.
    """

    card: str
    connector: str | None
    connected: bool
    preferred: Mode | None
    modes: tuple[Mode, ...]
    size_mm: tuple[int, int] | None
    monitor: str | None
    spec: str

    def asdict(self) -> dict[str, Any]:
        """Plain JSON-ready data (modes as ``"1280x720@60"``-style strings)."""
        data = dataclasses.asdict(self)
        data["preferred"] = _mode_text(self.preferred) if self.preferred else None
        data["modes"] = [_mode_text(m) for m in self.modes]
        return data

    @property
    def label(self) -> str:
        """One line for listings (``fbgfx info --all``)."""
        state = "connected" if self.connected else "disconnected"
        extra = [state]
        if self.preferred is not None:
            extra.append(_mode_text(self.preferred))
        if self.monitor:
            extra.append(repr(self.monitor))
        if self.size_mm:
            extra.append(f"{self.size_mm[0]}x{self.size_mm[1]} mm")
        return f"{self.spec}  ({', '.join(extra)})"


def displays(dri_dir: str = "/dev/dri", fb_glob: str = "/dev/fb[0-9]*", sysfs: str = "/sys/class") -> list[Display]:
    """Every connector of every DRM card (in card, then connector order), then every
    ``/dev/fbN``.

    A card or ``/dev/fbN`` this user may not open (not in group ``video``) is described
    from sysfs (``/sys/class/drm``, ``/sys/class/graphics``): without refresh rates, the
    size from the EDID. A render-only card has no connectors; nothing is raised.

    Args:
        dri_dir: Where the DRM card nodes are.
        fb_glob: Which framebuffer nodes to list.
        sysfs: Where sysfs' device classes are.

    Returns:
        A :class:`Display` for each; an empty list on a machine without displays.
    """
    found: list[Display] = []
    for path in find_cards(dri_dir):
        found += _card_displays(path, os.path.join(sysfs, "drm"))
    for path in sorted(glob.glob(fb_glob), key=_node_number):
        found.append(_fb_display(path, os.path.join(sysfs, "graphics")))
    return found


def _card_displays(path: str, sysfs_root: str) -> list[Display]:
    try:
        info = probe(path)
    except OSError:
        # Not allowed to open the card (not in group video): sysfs tells most of it.
        return _sysfs_card_displays(path, sysfs_root)
    out = []
    for c in info.connectors:
        modes = _unique(m.to_mode() for m in c.modes)
        preferred = next((m.to_mode() for m in c.modes if m.preferred), modes[0] if modes else None)
        out.append(
            Display(
                card=path,
                connector=c.name,
                connected=c.connected,
                preferred=preferred,
                modes=modes,
                size_mm=(c.mm_width, c.mm_height) if c.mm_width and c.mm_height else None,
                monitor=monitor_name(path, c.name, sysfs_root) if c.connected else None,
                spec=_spec(path, c.name),
            )
        )
    return out


def _sysfs_card_displays(path: str, root: str) -> list[Display]:
    """A card's connectors as sysfs lists them (``card0-HDMI-A-1/status``, ``modes``,
    ``edid``): readable by every user; no refresh rates, the size from the EDID."""
    name = os.path.basename(path)
    out = []
    for folder in sorted(glob.glob(os.path.join(root, f"{name}-*"))):
        connector = os.path.basename(folder)[len(name) + 1 :]
        status = _read(os.path.join(folder, "status")).strip()
        listed = (re.fullmatch(r"(\d+)x(\d+)(i?)", line) for line in _read(os.path.join(folder, "modes")).split())
        modes = _unique(
            Mode(int(m.group(1)), int(m.group(2)), interlaced=bool(m.group(3)), source="sysfs") for m in listed if m
        )
        edid = _read_bytes(os.path.join(folder, "edid"))
        cm = (edid[21], edid[22]) if len(edid) >= 128 else (0, 0)
        out.append(
            Display(
                card=path,
                connector=connector,
                connected=status == "connected",
                preferred=modes[0] if modes else None,  # the kernel lists the preferred mode first
                modes=modes,
                size_mm=(cm[0] * 10, cm[1] * 10) if all(cm) else None,
                monitor=edid_monitor_name(edid),
                spec=_spec(path, connector),
            )
        )
    return out


def _spec(path: str, connector: str) -> str:
    name = os.path.basename(path)
    return f"drm:{name if os.path.dirname(path) == '/dev/dri' else path}:connector={connector}"


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(256)
    except OSError:
        return b""


def _fb_display(path: str, root: str) -> Display:
    current = _sysfs_mode(path, root)
    listed = read_sysfs_modes(os.path.basename(path), root)
    size_mm = None
    try:
        dev = KernelDevice(path)
        try:
            var = dev.get_var()
        finally:
            dev.close()
    except OSError:
        pass  # not allowed to open it: what sysfs says
    else:
        if current is None or (current.width, current.height) != (var.xres, var.yres):
            current = Mode(var.xres, var.yres, source="device")
        current = dataclasses.replace(current, bpp=var.bits_per_pixel)
        if 0 < var.width < 0xFFFFFFFF and 0 < var.height < 0xFFFFFFFF:
            size_mm = (var.width, var.height)
    return Display(
        card=path,
        connector=None,
        connected=True,
        preferred=current,
        modes=_unique([*([current] if current else []), *listed]),
        size_mm=size_mm,
        monitor=None,
        spec=path,
    )


def _sysfs_mode(path: str, root: str) -> Mode | None:
    found = parse_sysfs_modes(_read(os.path.join(root, os.path.basename(path), "mode")))
    return found[0] if found else None


def _unique(modes: Any) -> tuple[Mode, ...]:
    out: list[Mode] = []
    for m in modes:
        if not any(
            (o.width, o.height, o.refresh, o.interlaced) == (m.width, m.height, m.refresh, m.interlaced) for o in out
        ):
            out.append(m)
    return tuple(out)


def _mode_text(m: Mode) -> str:
    text = f"{m.width}x{m.height}"
    if m.refresh:
        text += f"@{m.refresh}"
    if m.interlaced:
        text += "i"
    return text


def _node_number(path: str) -> int:
    digits = re.sub(r"\D", "", os.path.basename(path))
    return int(digits) if digits else 0
