"""fbgfx: graphics for the Linux framebuffer.

Open a display with :func:`open` (``/dev/fbN`` or ``virtual:WxH[:FORMAT]``), draw on
NumPy memory in its native pixel format, and restore everything on close.
"""

from typing import TYPE_CHECKING

from ._displays import Display, displays
from ._open import VirtualFramebuffer, open
from .device import Framebuffer
from .display_events import DisplayEvent
from .errors import FramebufferError, ModeError, TouchError, UnsupportedFormatError, VideoError
from .layer import Layer
from .modes import Mode, parse_mode
from .pixelformat import FORMATS, PixelFormat, default_palette
from .screen import Screen
from .screeninfo import Bitfield, FixScreenInfo, VarScreenInfo
from .surface import Surface
from .text import font
from .virtual import VirtualDevice, VirtualOptions

if TYPE_CHECKING:  # loaded on first use (see __getattr__); named here for type checkers
    from .kiosk.idle import Idle
    from .kiosk.mirror import mirror

__version__ = "0.1.0"


__all__ = [
    "FORMATS",
    "Bitfield",
    "Display",
    "DisplayEvent",
    "FixScreenInfo",
    "Framebuffer",
    "FramebufferError",
    "Idle",
    "Layer",
    "Mode",
    "ModeError",
    "PixelFormat",
    "Screen",
    "Surface",
    "TouchError",
    "UnsupportedFormatError",
    "VarScreenInfo",
    "VideoError",
    "VirtualDevice",
    "VirtualFramebuffer",
    "VirtualOptions",
    "default_palette",
    "displays",
    "font",
    "mirror",
    "open",
    "parse_mode",
    "touch",
    "video",
]


def __getattr__(name: str) -> object:
    # fbgfx.touch and fbgfx.video are imported on first use: programs that only draw do
    # not load the input layer (and do not need a native module built with it) or PyAV.
    if name in ("Idle", "mirror"):  # the kiosk tools, loaded on first use like touch
        import importlib  # noqa: PLC0415 (importlib only on first use of a lazy name)

        return getattr(importlib.import_module(f".kiosk.{name.lower()}", __name__), name)
    if name in ("touch", "video"):
        import importlib  # noqa: PLC0415 (importlib only on first use of a lazy name)

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
