"""Deprecated alias of :mod:`fbgfx.touch.virtual`, kept for one release (0.2)."""

from __future__ import annotations

import warnings

from .touch.virtual import *  # noqa: F403
from .touch.virtual import __all__  # noqa: F401

# stacklevel 2 names the importing module: warnings skips importlib's frames.
warnings.warn(
    "fbgfx.virtual_touch moved to fbgfx.touch.virtual; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
