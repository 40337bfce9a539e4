"""Video modes: mode strings, the kernel's mode list in sysfs, and ``/etc/fb.modes``.

A mode string is ``WIDTHxHEIGHT[-BPP][@VIRTUAL_HEIGHT]``, as ``fbset`` users write it:
``800x600``, ``800x600-16``, ``800x600-32@1200`` (1200 virtual lines, room for two
pages). :meth:`fbgfx.Framebuffer.set_mode` takes one in place of the width.

:func:`list_modes` gathers what the system knows for a device: the kernel's list in
``/sys/class/graphics/fbN/modes`` (lines like ``U:1024x768p-60``) and the ``fbset``
database ``/etc/fb.modes`` when present.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .screeninfo import VarScreenInfo

__all__ = ["Mode", "Rates", "Timings", "list_modes", "parse_mode", "read_fb_modes", "read_sysfs_modes"]

SYSFS_GRAPHICS = "/sys/class/graphics"
FB_MODES = "/etc/fb.modes"

_MODE_RE = re.compile(r"(\d+)\s*x\s*(\d+)(?:-(\d+))?(?:@(\d+))?")
# The kernel writes "%c:%dx%d%c-%d": a type letter, the size, p/i/d, the refresh rate.
_SYSFS_RE = re.compile(r"([A-Za-z]):(\d+)x(\d+)([pid])-(\d+)")


@dataclass(frozen=True)
class Timings:
    """Video timings as ``fbset`` writes them (``timings`` line of ``/etc/fb.modes``).

    Attributes:
        pixclock: Pixel clock period in picoseconds.
        left_margin, right_margin, upper_margin, lower_margin: Borders in pixels/lines.
        hsync_len, vsync_len: Sync pulse lengths.
    """

    pixclock: int
    left_margin: int
    right_margin: int
    upper_margin: int
    lower_margin: int
    hsync_len: int
    vsync_len: int

    @classmethod
    def from_var(cls, var: VarScreenInfo) -> Timings:
        """The timings in a kernel ``var`` (its ``timings`` line in ``fbset -i``)."""
        return cls(
            var.pixclock,
            var.left_margin,
            var.right_margin,
            var.upper_margin,
            var.lower_margin,
            var.hsync_len,
            var.vsync_len,
        )

    def rates(self, width: int, height: int) -> Rates | None:
        """The pixel clock, line rate and refresh rate of a ``width`` x ``height`` mode.

        Returns:
            The :class:`Rates` in Hz, or None when there are no timings (a pixclock
            of 0, as virtual and many DRM devices report).
        """
        htotal = width + self.left_margin + self.right_margin + self.hsync_len
        vtotal = height + self.upper_margin + self.lower_margin + self.vsync_len
        if self.pixclock <= 0 or htotal <= 0 or vtotal <= 0:
            return None
        pixel = 1e12 / self.pixclock  # pixclock is a period in picoseconds
        return Rates(pixel, pixel / htotal, pixel / htotal / vtotal)


class Rates(NamedTuple):
    """What video timings come to, in Hz."""

    pixel_clock: float
    line_rate: float
    refresh: float


@dataclass(frozen=True)
class Mode:
    """One video mode.

    Attributes:
        width, height: Visible resolution.
        bpp: Bits per pixel, or None where the source does not say (sysfs lists
            resolutions only; the depth stays what it is).
        virtual_width, virtual_height: Virtual resolution, or None for "as the driver
            picks" (the visible size when the resolution changes).
        refresh: Refresh rate in Hz, when known.
        interlaced: An interlaced mode (sysfs ``i``, fb.modes ``laced true``).
        name: The name the source gives (``/etc/fb.modes``), else ''.
        source: Where the mode came from: ``"string"``, ``"sysfs"``, the fb.modes
            path, or ``"device"``.
        timings: The timings from ``/etc/fb.modes``, else None.
    """

    width: int
    height: int
    bpp: int | None = None
    virtual_width: int | None = None
    virtual_height: int | None = None
    refresh: int | None = None
    interlaced: bool = False
    name: str = ""
    source: str = "string"
    timings: Timings | None = None

    def __str__(self) -> str:
        """The mode string, ``WxH[-BPP][@VIRTUAL_HEIGHT]``, that :func:`parse_mode` reads back."""
        text = f"{self.width}x{self.height}"
        if self.bpp:
            text += f"-{self.bpp}"
        if self.virtual_height and self.virtual_height != self.height:
            text += f"@{self.virtual_height}"
        return text

    @property
    def label(self) -> str:
        """A line for listings: the mode string plus refresh rate, name and source."""
        extra = []
        if self.refresh:
            extra.append(f"{self.refresh} Hz{' interlaced' if self.interlaced else ''}")
        if self.name and self.name != str(self):
            extra.append(f'"{self.name}"')
        if self.source and self.source != "string":
            extra.append(self.source)
        return f"{self}" + (f" ({', '.join(extra)})" if extra else "")

    def set_mode_args(self) -> dict[str, int | None]:
        """Keyword arguments for :meth:`fbgfx.Framebuffer.set_mode`."""
        return {
            "width": self.width,
            "height": self.height,
            "bpp": self.bpp,
            "virtual_width": self.virtual_width,
            "virtual_height": self.virtual_height,
        }


def parse_mode(text: str | Mode) -> Mode:
    """Parse a mode string: ``800x600``, ``800x600-16`` or ``800x600-32@1200``.

    Args:
        text: The string (or a :class:`Mode`, returned as it is).

    Returns:
        The :class:`Mode`; ``bpp`` and ``virtual_height`` are None when not given.

    Raises:
        ValueError: Not a mode string, a zero size or depth, or fewer virtual lines
            than visible ones.
        TypeError: ``text`` is not a string.

    Example:
        >>> mode = fbgfx.parse_mode("800x600-32@1200")
        >>> mode.width, mode.height, mode.bpp, mode.virtual_height
        (800, 600, 32, 1200)
    """
    if isinstance(text, Mode):
        return text
    if not isinstance(text, str):
        raise TypeError(f"a mode must be a string like '800x600-16', not {type(text).__name__}")
    m = _MODE_RE.fullmatch(text.strip().lower())
    if not m:
        raise ValueError(
            f"bad mode {text!r}: expected WIDTHxHEIGHT[-BPP][@VIRTUAL_HEIGHT], e.g. 800x600-16 or 800x600-32@1200"
        )
    width, height, bpp, vh = (int(g) if g else None for g in m.groups())
    if not width or not height or bpp == 0 or vh == 0:
        raise ValueError(f"bad mode {text!r}: sizes and depth must be positive")
    if bpp is not None and bpp not in (1, 2, 4, 8, 15, 16, 24, 32):
        raise ValueError(f"bad mode {text!r}: {bpp} bits per pixel is not a framebuffer depth (1, 2, 4, 8, 16, 24, 32)")
    if vh is not None and vh < height:
        raise ValueError(f"bad mode {text!r}: {vh} virtual lines is fewer than the {height} visible ones")
    return Mode(width, height, bpp, None, vh)


def resolve_mode_args(
    width: Any, height: Any, bpp: Any, virtual_width: Any, virtual_height: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """Turn :meth:`~fbgfx.Framebuffer.set_mode` arguments whose ``width`` is a mode
    string (or :class:`Mode`) into plain ones; others pass through.

    Explicit ``bpp`` / ``virtual_*`` arguments win over the string's.

    Raises:
        ValueError: A mode string together with ``height``, or a bad string.
    """
    if not isinstance(width, (str, Mode)):
        return width, height, bpp, virtual_width, virtual_height
    if height is not None:
        raise ValueError("give either a mode string or width and height, not both")
    mode = parse_mode(width)
    return (
        mode.width,
        mode.height,
        bpp if bpp is not None else mode.bpp,
        virtual_width if virtual_width is not None else mode.virtual_width,
        virtual_height if virtual_height is not None else mode.virtual_height,
    )


# -- what the system lists ------------------------------------------------------------------


def read_sysfs_modes(device: str | int, root: str = SYSFS_GRAPHICS) -> list[Mode]:
    """Read the kernel's mode list of a framebuffer (``/sys/class/graphics/fbN/modes``).

    Args:
        device: ``/dev/fbN``, ``fbN`` or ``N``.
        root: The sysfs class directory (a test can point it elsewhere).

    Returns:
        The modes in the kernel's order, without repeats; [] when the file is
        missing or unreadable (a virtual device, no sysfs).
    """
    name = _fb_name(device)
    if name is None:
        return []
    try:
        with open(os.path.join(root, name, "modes"), encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return _unique(parse_sysfs_modes(text))


def parse_sysfs_modes(text: str) -> list[Mode]:
    """Parse the lines of a sysfs ``modes`` file (``U:1024x768p-60``); others are skipped."""
    modes = []
    for line in text.splitlines():
        m = _SYSFS_RE.fullmatch(line.strip())
        if m:
            _, w, h, scan, refresh = m.groups()
            modes.append(Mode(int(w), int(h), refresh=int(refresh) or None, interlaced=scan == "i", source="sysfs"))
    return modes


def read_fb_modes(path: str = FB_MODES) -> list[Mode]:
    """Read an ``fbset`` mode database (``/etc/fb.modes``); [] when it is missing.

    Blocks look like::

        mode "800x600-60"
            geometry 800 600 800 600 16
            timings 25000 88 40 23 1 128 4
            laced false
        endmode
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return parse_fb_modes(text, source=path)


def parse_fb_modes(text: str, source: str = FB_MODES) -> list[Mode]:
    """Parse the text of an ``fb.modes`` file; incomplete blocks are skipped."""
    modes: list[Mode] = []
    name: str | None = None
    fields: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        key = words[0].lower()
        if key == "mode":
            name, fields = line[4:].strip().strip('"'), {}
        elif key == "endmode":
            if name is not None and "geometry" in fields:
                modes.append(_fb_mode(name, fields, source))
            name, fields = None, {}
        elif name is not None:
            fields[key] = words[1:]
    return modes


def list_modes(
    device: str,
    device_modes: Iterable[str | Mode] | None = None,
    *,
    sysfs_root: str = SYSFS_GRAPHICS,
    fb_modes: str | None = FB_MODES,
) -> list[Mode]:
    """Every mode the system knows for a device, without repeats.

    Args:
        device: The device path (``/dev/fbN``); sysfs and ``fb_modes`` are read only
            for kernel devices.
        device_modes: Modes a device model lists itself (the virtual framebuffer).
        sysfs_root: Where ``fbN/modes`` lives.
        fb_modes: The ``fbset`` database to read too, or None.
    """
    modes: list[Mode] = [
        m if isinstance(m, Mode) else dataclasses.replace(parse_mode(m), source="device") for m in (device_modes or ())
    ]
    if _fb_name(device) is not None:
        modes += read_sysfs_modes(device, sysfs_root)
        if fb_modes:
            modes += read_fb_modes(fb_modes)
    return _unique(modes)


# -- helpers ----------------------------------------------------------------------------------


def _fb_name(device: str | int) -> str | None:
    text = str(device)
    m = re.fullmatch(r"(?:/dev/)?(?:fb)?(\d+)", text) or re.fullmatch(r"/dev/fb/(\d+)", text)
    return f"fb{m.group(1)}" if m else None


def _ints(words: Sequence[str], count: int) -> list[int] | None:
    try:
        values = [int(w) for w in words[:count]]
    except ValueError:
        return None
    return values if len(values) == count else None


def _fb_mode(name: str, fields: dict[str, list[str]], source: str) -> Mode:
    geometry = _ints(fields["geometry"], 5)
    if geometry is None:
        # A broken geometry line: keep what the name says if it is a mode string.
        mode = parse_mode(name.split("-")[0]) if _MODE_RE.fullmatch(name.split("-")[0]) else Mode(0, 0)
        return Mode(mode.width, mode.height, name=name, source=source)
    xres, yres, vxres, vyres, depth = geometry
    timings = None
    refresh = None
    t = _ints(fields.get("timings", []), 7)
    if t is not None:
        timings = Timings(*t)
        rates = timings.rates(xres, yres)
        refresh = None if rates is None else round(rates.refresh)
    laced = fields.get("laced", ["false"])[0].lower() == "true"
    return Mode(xres, yres, depth or None, vxres or None, vyres or None, refresh, laced, name, source, timings)


def _unique(modes: Iterable[Mode]) -> list[Mode]:
    seen = set()
    out = []
    for m in modes:
        if m.width <= 0 or m.height <= 0:
            continue
        key = (m.width, m.height, m.bpp, m.virtual_width, m.virtual_height, m.refresh, m.interlaced)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
