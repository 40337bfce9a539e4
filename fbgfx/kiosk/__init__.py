"""Kiosk tools: :func:`fbgfx.mirror` (show on one display what another shows) and
:class:`fbgfx.Idle` (dim and blank an idle display, wake it on a touch that no program sees).

:mod:`~fbgfx.kiosk.mirror` holds the mirror, :mod:`~fbgfx.kiosk._sources` what it reads,
:mod:`~fbgfx.kiosk._scale` the tile comparison and scaling (C kernels in
``native/mirror.c``), :mod:`~fbgfx.kiosk.idle` the idle watcher and
:mod:`~fbgfx.kiosk.backlight` the sysfs backlights.
"""

from __future__ import annotations

from .backlight import Backlight, find_backlight
from .mirror import Mirror, MirrorStats

# fbgfx.mirror() and fbgfx.Idle are the entry points (fbgfx.kiosk.mirror.mirror and
# fbgfx.kiosk.idle.Idle); the function is not re-exported here, where its name would
# hide the module.
__all__ = ["Backlight", "Mirror", "MirrorStats", "find_backlight"]
