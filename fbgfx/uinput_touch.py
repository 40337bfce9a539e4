"""Deprecated alias of :mod:`fbgfx.touch.uinput`, kept for one release (0.2)."""

from __future__ import annotations

import warnings

from .touch.uinput import *  # noqa: F403
from .touch.uinput import __all__  # noqa: F401

# stacklevel 2 names the importing module: warnings skips importlib's frames.
warnings.warn(
    "fbgfx.uinput_touch moved to fbgfx.touch.uinput; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
