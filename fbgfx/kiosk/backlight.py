"""Display backlights: ``/sys/class/backlight/NAME/{brightness,max_brightness,bl_power}``.

:func:`find_backlight` picks the backlight of a display: the one sysfs places under the
display's own device (an SPI panel's ``fb_ili9341`` under its SPI device, a laptop's
``intel_backlight`` under its connector), else the only one there is, else the one
named. ``$FBGFX_SYSFS`` names a folder that stands in for ``/sys`` (tests build a
sysfs-shaped folder there); real use reads ``/sys``.
"""

from __future__ import annotations

import errno
import os
import re

from ..errors import FramebufferError

__all__ = ["BL_POWER_OFF", "BL_POWER_ON", "Backlight", "backlights", "find_backlight", "sysfs_root"]

#: ``bl_power`` values: the kernel's ``FB_BLANK_UNBLANK`` and ``FB_BLANK_POWERDOWN``.
BL_POWER_ON = 0
BL_POWER_OFF = 4


def sysfs_root() -> str:
    """Where sysfs is: ``$FBGFX_SYSFS``, else ``/sys``."""
    return os.environ.get("FBGFX_SYSFS") or "/sys"


class Backlight:
    """One backlight's sysfs folder.

    Args:
        path: The folder (``/sys/class/backlight/NAME``).

    Raises:
        FramebufferError: ``max_brightness`` cannot be read.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = os.path.basename(path.rstrip("/"))
        self.max_brightness = self._read("max_brightness")
        if self.max_brightness <= 0:
            raise FramebufferError(errno.EINVAL, f"max_brightness is {self.max_brightness}", path)

    def __repr__(self) -> str:
        return f"<Backlight {self.name} max {self.max_brightness}>"

    def _read(self, name: str) -> int:
        try:
            with open(os.path.join(self.path, name)) as f:
                return int(f.read().strip())
        except (OSError, ValueError) as e:
            raise FramebufferError(getattr(e, "errno", None) or errno.EIO, f"reading {name}: {e}", self.path) from None

    def _write(self, name: str, value: int) -> None:
        path = os.path.join(self.path, name)
        try:
            with open(path, "w") as f:
                f.write(f"{value}\n")
        except PermissionError as e:
            raise FramebufferError(
                e.errno or errno.EACCES,
                f"permission denied writing {name}: run as root, or add a udev rule giving group video write "
                f"access to /sys/class/backlight/{self.name}/{name}",
                self.path,
            ) from None
        except OSError as e:
            raise FramebufferError(e.errno or errno.EIO, f"writing {name}: {e.strerror}", self.path) from None

    @property
    def brightness(self) -> int:
        """The brightness set (0..max_brightness)."""
        return self._read("brightness")

    @brightness.setter
    def brightness(self, value: int) -> None:
        self._write("brightness", max(0, min(int(value), self.max_brightness)))

    @property
    def power(self) -> int:
        """``bl_power``: 0 on, 4 off (None-like -1 where the driver has no ``bl_power``)."""
        try:
            return self._read("bl_power")
        except FramebufferError:
            return -1

    @power.setter
    def power(self, value: int) -> None:
        if os.path.exists(os.path.join(self.path, "bl_power")):
            self._write("bl_power", value)


def backlights() -> list[str]:
    """The backlights' names, sorted."""
    folder = os.path.join(sysfs_root(), "class", "backlight")
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _display_dirs(display: str | None) -> list[str]:
    """The sysfs folders of a display (``/dev/fbN`` or ``drm:...``) and its device."""
    if not display:
        return []
    root = sysfs_root()
    dirs: list[str] = []
    m = re.fullmatch(r"(?:/dev/fb|/dev/graphics/fb)?(\d+)", display)
    if m:
        dirs.append(os.path.join(root, "class", "graphics", f"fb{m.group(1)}"))
    elif display.startswith("drm"):
        card = re.search(r"card(\d+)", display)
        conn = re.search(r"connector=([\w-]+)", display)
        prefix = f"card{card.group(1) if card else ''}"
        drm = os.path.join(root, "class", "drm")
        try:
            names = sorted(os.listdir(drm))
        except OSError:
            names = []
        for name in names:
            if name.startswith(prefix) and "-" in name and (conn is None or name.endswith("-" + conn.group(1))):
                dirs.append(os.path.join(drm, name))
    return [d for base in dirs for d in (base, os.path.join(base, "device"))]


def find_backlight(display: str | None = None, name: str | None = None) -> Backlight | None:
    """The backlight of ``display``: its own where sysfs says so, else the only one.

    Args:
        display: ``/dev/fbN`` or a ``drm:`` spec (None: any display).
        name: A backlight's name (``--backlight NAME``): that one.

    Returns:
        The backlight, or None when there is none.

    Raises:
        FramebufferError: ``name`` does not exist (the message lists those that
            do), or there are several and none belongs to ``display``.
    """
    folder = os.path.join(sysfs_root(), "class", "backlight")
    found = backlights()
    if name is not None:
        if name not in found:
            have = ", ".join(found) or "none"
            raise FramebufferError(errno.ENOENT, f"no backlight {name!r}; backlights: {have}", folder)
        return Backlight(os.path.join(folder, name))
    if not found:
        return None
    for d in _display_dirs(display):
        own = os.path.join(d, "backlight")
        candidates = sorted(os.listdir(own)) if os.path.isdir(own) else []
        try:
            candidates += sorted(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n, "max_brightness")))
        except OSError:
            pass
        for n in candidates:
            if n in found:
                return Backlight(os.path.join(folder, n))
    if len(found) == 1:
        return Backlight(os.path.join(folder, found[0]))
    raise FramebufferError(
        errno.EINVAL,
        f"several backlights ({', '.join(found)}) and none belongs to the display: choose one with --backlight NAME",
        folder,
    )
