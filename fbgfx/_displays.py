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

from ._kernel import KernelDevice
from .drm import find_cards, probe
from .drm.discovery import monitor_name
from .errors import FramebufferError
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


def displays(dri_dir: str = "/dev/dri", fb_glob: str = "/dev/fb[0-9]*") -> list[Display]:
    """Every connector of every DRM card (in card, then connector order), then every
    ``/dev/fbN``.

    A card that cannot be read (permission, a render-only card) is left out, as is a
    ``/dev/fbN`` that cannot be opened; nothing is raised.

    Args:
        dri_dir: Where the DRM card nodes are.
        fb_glob: Which framebuffer nodes to list.
    """
    found: list[Display] = []
    for path in find_cards(dri_dir):
        found += _card_displays(path)
    for path in sorted(glob.glob(fb_glob), key=_node_number):
        shown = _fb_display(path)
        if shown is not None:
            found.append(shown)
    return found


def _card_displays(path: str) -> list[Display]:
    try:
        info = probe(path)
    except OSError:
        return []
    name = os.path.basename(path)
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
                monitor=monitor_name(path, c.name) if c.connected else None,
                spec=f"drm:{name if os.path.dirname(path) == '/dev/dri' else path}:connector={c.name}",
            )
        )
    return out


def _fb_display(path: str) -> Display | None:
    try:
        dev = KernelDevice(path)
    except FramebufferError:
        return None
    try:
        var = dev.get_var()
    except OSError:
        return None
    finally:
        dev.close()
    current = Mode(var.xres, var.yres, var.bits_per_pixel, source="device")
    listed = read_sysfs_modes(path)
    current_listed = _sysfs_mode(path)
    if current_listed is not None and (current_listed.width, current_listed.height) == (var.xres, var.yres):
        current = dataclasses.replace(current_listed, bpp=var.bits_per_pixel)
    return Display(
        card=path,
        connector=None,
        connected=True,
        preferred=current,
        modes=_unique([current, *listed]),
        size_mm=(var.width, var.height) if 0 < var.width < 0xFFFFFFFF and 0 < var.height < 0xFFFFFFFF else None,
        monitor=None,
        spec=path,
    )


def _sysfs_mode(path: str) -> Mode | None:
    try:
        with open(f"/sys/class/graphics/{os.path.basename(path)}/mode", encoding="ascii", errors="replace") as f:
            found = parse_sysfs_modes(f.read())
    except OSError:
        return None
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
