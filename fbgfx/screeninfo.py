"""Kernel screen information as frozen dataclasses with the kernel's field names."""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ._ffi import lib

__all__ = ["Bitfield", "FixScreenInfo", "VarScreenInfo", "describe_mode"]

# <linux/fb.h> constants that the Python side needs by value, as the compiler read them.
FB_TYPE_PACKED_PIXELS: int = lib.FB_TYPE_PACKED_PIXELS
FB_VISUAL_MONO01: int = lib.FB_VISUAL_MONO01
FB_VISUAL_MONO10: int = lib.FB_VISUAL_MONO10
FB_VISUAL_TRUECOLOR: int = lib.FB_VISUAL_TRUECOLOR
FB_VISUAL_PSEUDOCOLOR: int = lib.FB_VISUAL_PSEUDOCOLOR
FB_VISUAL_DIRECTCOLOR: int = lib.FB_VISUAL_DIRECTCOLOR
FB_VISUAL_STATIC_PSEUDOCOLOR: int = lib.FB_VISUAL_STATIC_PSEUDOCOLOR
FB_ACTIVATE_NOW: int = lib.FB_ACTIVATE_NOW
FB_ACTIVATE_TEST: int = lib.FB_ACTIVATE_TEST
FB_ACTIVATE_FORCE: int = lib.FB_ACTIVATE_FORCE

VISUAL_NAMES = {
    FB_VISUAL_MONO01: "MONO01",
    FB_VISUAL_MONO10: "MONO10",
    FB_VISUAL_TRUECOLOR: "TRUECOLOR",
    FB_VISUAL_PSEUDOCOLOR: "PSEUDOCOLOR",
    FB_VISUAL_DIRECTCOLOR: "DIRECTCOLOR",
    FB_VISUAL_STATIC_PSEUDOCOLOR: "STATIC_PSEUDOCOLOR",
    6: "FOURCC",
}


@dataclass(frozen=True)
class Bitfield:
    """Where one colour channel sits inside a pixel value (``struct fb_bitfield``)."""

    offset: int = 0
    length: int = 0
    msb_right: int = 0

    def __str__(self) -> str:
        return f"{self.length}/{self.offset}"


_Info = TypeVar("_Info", bound="_ScreenInfo")


@dataclass(frozen=True)
class _ScreenInfo:
    """What the two screen-info structs offer beside their fields."""

    def replace(self: _Info, **changes: Any) -> _Info:
        """Return a copy with some fields changed."""
        cls = type(self)
        if cls not in _PLAIN or not changes.keys() <= _PLAIN[cls]:
            return dataclasses.replace(self, **changes)  # (its errors for unknown fields)
        # The plain structs have no __post_init__ and every field in __init__: a copy of
        # the instance dict is what dataclasses.replace builds, without 28 keyword
        # arguments through the generated __init__ (a pan takes one per frame).
        new = object.__new__(cls)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return new

    def asdict(self) -> dict[str, Any]:
        """All fields as a plain dict (a :class:`Bitfield` as a dict), e.g. for JSON."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class VarScreenInfo(_ScreenInfo):
    """``struct fb_var_screeninfo``: the variable part of a mode (geometry, depth, pan)."""

    xres: int = 0
    yres: int = 0
    xres_virtual: int = 0
    yres_virtual: int = 0
    xoffset: int = 0
    yoffset: int = 0
    bits_per_pixel: int = 0
    grayscale: int = 0
    red: Bitfield = Bitfield()
    green: Bitfield = Bitfield()
    blue: Bitfield = Bitfield()
    transp: Bitfield = Bitfield()
    nonstd: int = 0
    activate: int = 0
    height: int = 0
    width: int = 0
    accel_flags: int = 0
    pixclock: int = 0
    left_margin: int = 0
    right_margin: int = 0
    upper_margin: int = 0
    lower_margin: int = 0
    hsync_len: int = 0
    vsync_len: int = 0
    sync: int = 0
    vmode: int = 0
    rotate: int = 0
    colorspace: int = 0


@dataclass(frozen=True)
class FixScreenInfo(_ScreenInfo):
    """``struct fb_fix_screeninfo``: what the driver fixes (memory, stride, visual, pan steps)."""

    id: str = ""
    smem_start: int = 0
    smem_len: int = 0
    type: int = FB_TYPE_PACKED_PIXELS
    type_aux: int = 0
    visual: int = FB_VISUAL_TRUECOLOR
    xpanstep: int = 0
    ypanstep: int = 0
    ywrapstep: int = 0
    line_length: int = 0
    mmio_start: int = 0
    mmio_len: int = 0
    accel: int = 0
    capabilities: int = 0


BITFIELD_NAMES = ("red", "green", "blue", "transp")
VAR_FIELDS = tuple(f.name for f in dataclasses.fields(VarScreenInfo))
FIX_FIELDS = tuple(f.name for f in dataclasses.fields(FixScreenInfo))
#: The classes whose replace() copies the instance dict, with their field names.
_PLAIN: dict[type, frozenset[str]] = {VarScreenInfo: frozenset(VAR_FIELDS), FixScreenInfo: frozenset(FIX_FIELDS)}


#: What a mode change sets: every field of a var but the pan offset and the timings
#: (``grayscale`` included: on fbdev it switches a palette format between colour and gray).
GEOMETRY_FIELDS = ("xres", "yres", "xres_virtual", "yres_virtual", "bits_per_pixel", "grayscale", *BITFIELD_NAMES)
_geometry = operator.attrgetter(*GEOMETRY_FIELDS)


def geometry(var: VarScreenInfo) -> tuple[Any, ...]:
    """The :data:`GEOMETRY_FIELDS` of ``var``: two vars with the same geometry show the
    same picture layout, so comparing them tells a mode change from a pan."""
    fields: tuple[Any, ...] = _geometry(var)
    return fields


def describe_mode(mode: VarScreenInfo | Mapping[str, int]) -> str:
    """A mode as ``fbset`` users write it: ``800x600-16``, plus ``(virtual 800x1200)``.

    Args:
        mode: A var, or a mapping with its ``xres``, ``yres``, ``bits_per_pixel``,
            ``xres_virtual`` and ``yres_virtual`` (what a mode change asks for).
    """
    m: Mapping[str, int] = mode if isinstance(mode, Mapping) else dataclasses.asdict(mode)
    text = f"{m['xres']}x{m['yres']}-{m['bits_per_pixel']}"
    if (m["xres_virtual"], m["yres_virtual"]) != (m["xres"], m["yres"]):
        text += f" (virtual {m['xres_virtual']}x{m['yres_virtual']})"
    return text
