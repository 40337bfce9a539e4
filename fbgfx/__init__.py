"""fbgfx: graphics for the Linux framebuffer.

Open a display with :func:`open` (``/dev/fbN`` or ``virtual:WxH[:FORMAT]``), draw on
NumPy memory in its native pixel format, and restore everything on close.
"""

from . import touch  # fbgfx.touch.open(): input mapped to the screen
from .device import Framebuffer, open
from .errors import FramebufferError, ModeError, TouchError, UnsupportedFormatError
from .modes import Mode, parse_mode
from .pixelformat import FORMATS, PixelFormat, default_palette
from .screen import Screen
from .screeninfo import Bitfield, FixScreenInfo, VarScreenInfo
from .surface import Surface
from .text import font
from .virtual import VirtualDevice, VirtualFramebuffer

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "Bitfield",
    "FixScreenInfo",
    "Framebuffer",
    "FramebufferError",
    "Mode",
    "ModeError",
    "PixelFormat",
    "Screen",
    "Surface",
    "TouchError",
    "UnsupportedFormatError",
    "VarScreenInfo",
    "VirtualDevice",
    "VirtualFramebuffer",
    "default_palette",
    "font",
    "open",
    "parse_mode",
    "touch",
]
