"""Framebuffer: one open display, as NumPy memory plus the device's operations.

A :class:`Framebuffer` drives a backend — the kernel's ``/dev/fbN``
(:class:`fbgfx._fbdev.KernelDevice`) or the in-process model of one
(:class:`fbgfx.virtual.VirtualDevice`) — through the same few operations, so mode
validation, capability reporting and restore-on-close live here once.
"""

from __future__ import annotations

import errno
import functools
import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, TypeVar, cast

import numpy as np
from PIL import Image

from . import _restore
from ._closing import ClosesOnExit, close_dropped
from .backend import Backend, fbdev_only
from .display_events import DisplayEvent
from .errors import FramebufferError, ModeError, warn_on_error
from .modes import Mode, list_modes, resolve_mode_args
from .pixelformat import PixelFormat, default_palette
from .screeninfo import (
    FB_ACTIVATE_NOW,
    FB_ACTIVATE_TEST,
    FB_TYPE_PACKED_PIXELS,
    FB_VISUAL_DIRECTCOLOR,
    Bitfield,
    FixScreenInfo,
    VarScreenInfo,
    describe_mode,
    geometry,
)

if TYPE_CHECKING:
    from .drm import DrmInfo
    from .drm.atomic import PlaneInfo
    from .layer import Layer
    from .screen import Screen

__all__ = ["BLANK_LEVELS", "Framebuffer"]

#: ``FBIOBLANK`` levels by name (``FB_BLANK_*``).
BLANK_LEVELS = {"unblank": 0, "normal": 1, "vsync_suspend": 2, "hsync_suspend": 3, "powerdown": 4}

_F = TypeVar("_F", bound=Callable[..., Any])


def _critical(method: _F) -> _F:
    """Run ``method`` as a critical section (:data:`fbgfx._restore.critical`): a close
    from a signal handler waits for its end instead of cutting it in two."""

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        with _restore.critical:
            return method(*args, **kwargs)

    return cast(_F, run)


# Errors by which a driver says "I do not do that" rather than "that failed".
_UNSUPPORTED = (errno.ENOTTY, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


class Framebuffer(ClosesOnExit):
    """An open framebuffer device.

    Use :func:`fbgfx.open` to get one. Everything fbgfx changes on the device (mode,
    pan offset, colour map, blanking) is put back by :meth:`close`.
    """

    def __init__(self, device: Backend, path: str, *, readonly: bool = False) -> None:
        self._device = device
        self.path = path
        self.readonly = bool(readonly)
        self._memory_owner: Any = None
        self._memory: np.ndarray | None = None
        self._saved: dict[str, Any] = {}
        # What this Framebuffer last set ("var" geometry, "pan", "cmap"), to tell on a
        # shared device whether another opener has changed it since. None while a change
        # is under way (a restore run from a signal handler or after an exception then
        # cannot tell its own change from another's, and takes it as its own).
        self._mine: dict[str, Any] = {}
        self._vsync: bool | None = None
        self._palette: np.ndarray | None = None
        self._closed = False
        # A forked child shares the device with its parent: what this process set up is
        # the opener's to put back, so in another process close() only lets go.
        self._pid = os.getpid()
        # What was opened on this device and changed it (a Screen's pages, palette and
        # console): closed before the device is restored (see adopt()).
        self._parts: list[Any] = []
        self._var: VarScreenInfo
        self._fix: FixScreenInfo
        self._mapped: tuple[int, int] | None = None  # (smem_start, smem_len) of the mapping
        self._format: PixelFormat
        try:
            self._load()
        except BaseException:
            self._release()
            raise

    # -- context management -------------------------------------------------------------

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.width}x{self.height} {self.format.name}"
        return f"<{type(self).__name__} {self.path} {state}>"

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._closed

    def close(self) -> None:
        """Restore everything fbgfx changed (mode, pan, palette, blanking) and release the device.

        Closes the Screens opened on it first: afterwards they and their Surfaces
        raise :class:`FramebufferError`. Safe to call more than once, also from a
        signal handler (during a pan or a present the close waits for its end).
        Views of :attr:`pixels` taken earlier stay valid NumPy arrays until they are
        dropped, but no longer show the screen: writing to them changes nothing on the
        device. In a forked child (another process than the one that opened the
        device) close() only lets go of the descriptors: the parent's display,
        mode and state stay as they are.
        """
        if self._closed or _restore.defer(self.close):
            return
        self._closed = True
        try:
            if os.getpid() == self._pid:
                self._close_parts()
                self.restore()
            else:
                self._saved, self._parts = {}, []
        finally:
            self._release()

    def __del__(self) -> None:
        # A safety net, as for files: a device dropped without close() is put back as
        # it is collected (the restore registry holds it weakly). Programs close.
        close_dropped(self)  # now, or on the closer thread if the garbage collector found it

    def adopt(self, part: Any) -> None:
        """Close ``part`` (call ``part.close()``) when this framebuffer closes, before
        the device is restored, unless it was closed before (then it calls
        :meth:`disown`). For what was opened on the device and changes it: a
        :class:`fbgfx.Screen` hands over its pages, palette and console this way, so a
        Screen dropped without close is collected and still has them put back."""
        self._check_open()
        self._parts.append(part)

    def disown(self, part: Any) -> None:
        """Forget ``part`` (it closed itself); a no-op when it is not held."""
        self._parts = [p for p in self._parts if p is not part]

    def _close_parts(self) -> None:
        while self._parts:
            part = self._parts.pop()  # newest first
            # one failing part must not keep the others open
            warn_on_error(part.close, "closing %r on %s", part, self.path, stacklevel=3)

    def restore(self) -> None:
        """Put the device back as it was before fbgfx touched it, keeping it open.

        On a shared device (``/dev/fbN``, a framebuffer file) what another opener has
        changed since this one set it is left as it is (see :meth:`changed_elsewhere`):
        a palette; and the mode and pan offset together, since another program flipping
        pages would lose its pages if the mode went back under it.
        """
        if _restore.defer(self.restore):
            return
        with _restore.critical:
            self._restore()

    def _restore(self) -> None:
        if os.getpid() != self._pid:
            self._saved = {}  # the opening process's to put back
            return
        saved, self._saved = self._saved, {}
        _restore.unregister(self)
        if "var" in saved:
            saved.pop("pan", None)  # the original var carries the original pan offsets
        if self._changed_elsewhere("var") or self._changed_elsewhere("pan"):
            saved.pop("var", None)
            saved.pop("pan", None)
        if "cmap" in saved and self._changed_elsewhere("cmap"):
            del saved["cmap"]
        self._mine = {}
        self._keep_shown_page(saved)
        steps: list[tuple[str, Callable[[Any], object]]] = [
            ("blank", lambda _: self._device.blank(0)),
            ("var", self._restore_var),
            ("pan", lambda v: self._device.pan(self._device.get_var().replace(xoffset=v[0], yoffset=v[1]))),
            ("cmap", lambda v: self._device.put_cmap(0, v)),
        ]
        for key, step in steps:
            if key in saved:
                try:
                    step(saved[key])
                except OSError as e:
                    warnings.warn(f"fbgfx: could not restore {key} on {self.path}: {e}", RuntimeWarning, stacklevel=2)
        if saved:
            self._load()

    def _keep_shown_page(self, saved: dict[str, Any]) -> None:
        """Before the pan offset goes back: copy the page on screen to where that offset
        shows, so that closing leaves the last picture on the display (a page flipped to
        the second page would otherwise give way to an older one). One read of video
        memory, at close; only where the mode keeps its size and layout."""
        if not self._device.fbdev or self.readonly:
            return
        original = saved.get("var")
        pan = (original.xoffset, original.yoffset) if original is not None else saved.get("pan")
        if pan is None:
            return
        now = self._var
        if (now.xoffset, now.yoffset) == tuple(pan):
            return
        if original is not None and _layout(original) != _layout(now):
            return  # another size or pixel layout: the picture would not fit the page
        x, y = pan
        if x + now.xres > now.xres_virtual or y + now.yres > now.yres_virtual:
            return
        try:
            self._device.check()  # a framebuffer file truncated meanwhile: nothing to keep
            self._view(x, y, now.xres, now.yres)[...] = self._view(now.xoffset, now.yoffset, now.xres, now.yres)
        except (OSError, ValueError) as e:
            warnings.warn(f"fbgfx: could not keep the last frame on {self.path}: {e}", RuntimeWarning, stacklevel=3)

    # -- what the device is ---------------------------------------------------------------

    @property
    def var(self) -> VarScreenInfo:
        """The current ``fb_var_screeninfo``.

        Raises:
            FramebufferError: ``ENOTTY`` on a ``drm:`` display, which has none (use
                :attr:`width`, :attr:`height`, :attr:`stride`, :attr:`format`, :attr:`drm`).
        """
        if not self._device.fbdev:
            raise fbdev_only("fb.var (fb_var_screeninfo)", self.path, "width, height, stride, format and fb.drm")
        return self._var

    @property
    def fix(self) -> FixScreenInfo:
        """The current ``fb_fix_screeninfo``.

        Raises:
            FramebufferError: ``ENOTTY`` on a ``drm:`` display, which has none.
        """
        if not self._device.fbdev:
            raise fbdev_only("fb.fix (fb_fix_screeninfo)", self.path, "width, height, stride, format and fb.drm")
        return self._fix

    @property
    def drm(self) -> DrmInfo | None:
        """On a ``drm:`` display its card, driver, connector, CRTC, plane, mode, format
        and page-flip counts (:class:`fbgfx.drm.DrmInfo`); None on fbdev."""
        self._check_open()
        info: DrmInfo | None = self._device.drm_info()
        return info

    @property
    def planes(self) -> tuple[PlaneInfo, ...]:
        """The display planes the screen's CRTC can use (:class:`fbgfx.drm.PlaneInfo`:
        ``id``, ``type``, ``formats``, ``in_use``) on a ``drm:`` display; empty
        elsewhere (fbdev and virtual devices have no planes)."""
        self._check_open()
        pool = self._device.plane_pool()
        return () if pool is None else tuple(pool.infos())

    def plane_pool(self) -> Any | None:
        """The planes layers may take (:class:`fbgfx.drm.planes.PlanePool`), None
        where the display has none: what :class:`fbgfx.layer.Layer` asks for."""
        self._check_open()
        return self._device.plane_pool()

    def flush(self, boxes: Any | None = None) -> None:
        """Show pixels written straight into :attr:`pixels`.

        fbdev shows them by itself. A ``drm:`` display whose driver scans out a copy
        (virtio-gpu, cirrus, SPI panels) shows them once told which rectangles changed
        (``DIRTYFB``); :class:`fbgfx.Screen` does this on every flip.

        Args:
            boxes: (left, top, right, bottom) rectangles, right and bottom exclusive;
                None: the whole screen.
        """
        self._check_open()
        rects = None if boxes is None else [_rect(box) for box in boxes]
        self._device.dirty(rects)

    def wait_flip(self) -> bool:
        """Wait until the last page flip is on screen.

        Returns:
            True when a flip was in flight (``drm:``), False when none was (and always
            on fbdev, whose pan takes effect at once or at the next vblank by itself).
        """
        self._check_open()
        return self._device.wait_flip()

    @property
    def format(self) -> PixelFormat:
        """The pixel format, from the kernel's bitfields."""
        return self._format

    @property
    def width(self) -> int:
        """Visible width in pixels."""
        return self._var.xres

    @property
    def height(self) -> int:
        """Visible height in pixels."""
        return self._var.yres

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the visible page."""
        return self._var.xres, self._var.yres

    @property
    def stride(self) -> int:
        """Bytes from one row to the next (``fix.line_length``)."""
        return self._fix.line_length

    @property
    def memory(self) -> np.ndarray:
        """All ``smem_len`` bytes of video memory, as a uint8 array."""
        self._check_open()
        assert self._memory is not None
        return self._memory

    @property
    def pixels(self) -> np.ndarray:
        """A zero-copy view of the visible page (honours pan offset and stride).

        Shape (height, width) of :attr:`PixelFormat.dtype` at 8, 16 and 32 bpp,
        (height, width, 3) uint8 at 24 bpp, and (height, row_bytes) packed bytes for
        formats of fewer than 8 bits.
        """
        return self.view(self._var.xoffset, self._var.yoffset, self.width, self.height)

    def view(self, x: int = 0, y: int = 0, width: int | None = None, height: int | None = None) -> np.ndarray:
        """A view of any rectangle of the virtual screen, shaped like :attr:`pixels`.

        Raises:
            ValueError: The rectangle is not inside the virtual screen.
        """
        self._check_open()
        return self._view(x, y, width, height)

    def _view(self, x: int, y: int, width: int | None, height: int | None) -> np.ndarray:
        var, fmt = self._var, self._format
        width = var.xres_virtual - x if width is None else width
        height = var.yres_virtual - y if height is None else height
        if x < 0 or y < 0 or width < 0 or height < 0 or x + width > var.xres_virtual or y + height > var.yres_virtual:
            raise ValueError(
                f"rectangle {width}x{height}+{x}+{y} is outside the virtual screen "
                f"{var.xres_virtual}x{var.yres_virtual}"
            )
        if fmt.is_packed and (x * fmt.bpp) % 8:
            raise ValueError(f"x={x} does not start on a byte at {fmt.bpp} bpp")
        offset = y * self.stride + (x * fmt.bpp) // 8
        bpp_bytes = max(fmt.bytes_per_pixel, 1)
        shape: tuple[int, ...]
        strides: tuple[int, ...]
        if fmt.bpp == 24:
            shape, strides = (height, width, 3), (self.stride, 3, 1)
        elif fmt.is_packed:
            shape, strides = (height, fmt.row_bytes(width)), (self.stride, 1)
        else:
            shape, strides = (height, width), (self.stride, bpp_bytes)
        assert self._memory is not None
        return np.ndarray(shape, fmt.dtype, buffer=self._memory, offset=offset, strides=strides)

    @property
    def palette(self) -> np.ndarray | None:
        """The (n, 3) uint8 colour map of a palette format, else None."""
        return self._palette

    @property
    def can_pan(self) -> bool:
        """True when the driver pans (non-zero ``ypanstep``) and there is room to."""
        return self._fix.ypanstep > 0 and self._var.yres_virtual > self._var.yres

    @property
    def pages(self) -> int:
        """How many whole visible pages fit in the virtual height."""
        return self._var.yres_virtual // max(self._var.yres, 1)

    def refresh(self) -> bool:
        """Re-read var and fix from the device; remap memory if it moved. On a ``drm:``
        display whose monitor came back at another size, take that size on: from now
        on :attr:`size`, :attr:`pixels` and new Screens are the new size.

        Returns:
            True when anything changed.
        """
        self._check_open()
        before = (self._var, self._fix)
        self._device.follow()
        self._load()
        return before != (self._var, self._fix)

    def display_events(self, timeout: float = 0.0) -> list[DisplayEvent]:
        """What happened to the monitor since the last call: unplugged, back, back at
        another size (:class:`fbgfx.DisplayEvent`), oldest first.

        Call it from the thread that draws, e.g. once a frame. When an event says
        ``"resized"``, this Framebuffer has taken the new size on before returning
        (:meth:`refresh`): make a new :meth:`screen` and draw at :attr:`size`. Until
        then the monitor shows the latest frame, top-left. Drawing and flipping never
        raise because a monitor is gone; a display that cannot be unplugged
        (``/dev/fbN``, ``virtual:``) has no events.

        Args:
            timeout: Seconds to wait for the first event (0: do not wait).

        Returns:
            The events, [] when nothing happened.
        """
        self._check_open()
        queue = self._device.display_events
        if queue is None:
            return []
        events = queue.take(timeout)
        if any(e.kind == "resized" for e in events):
            self.refresh()
        return events

    def on_display_change(self, callback: Callable[[DisplayEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for each :class:`fbgfx.DisplayEvent` as it happens.

        The callback runs on fbgfx's hotplug thread, not the program's: keep it short
        and hand work to the drawing thread (a flag, a queue). The events are also
        kept for :meth:`display_events`.

        Returns:
            A function that removes the callback again.
        """
        self._check_open()
        queue = self._device.display_events
        if queue is None:
            return lambda: None
        return queue.subscribe(callback)

    def snapshot(self) -> Image.Image:
        """The visible page as a PIL RGB image (reads video memory: slow on some hardware)."""
        self.check()
        rgb = self.to_rgb(self.pixels, self.width)
        self.check()  # truncated while it was read (fbgfx.virtual._guard): zeros, not the picture
        return Image.fromarray(rgb)

    def check(self) -> None:
        """Raise :class:`FramebufferError` when the device is closed or gone.

        A framebuffer file that another program truncated is gone, as an unplugged
        device is (``ENODEV``): its missing pages would kill the process with SIGBUS.
        :class:`fbgfx.Screen` checks where each frame starts (one ``fstat``).
        """
        if self._closed:
            self._check_open()
        self._device.check()

    def to_rgb(self, native: np.ndarray, width: int | None = None) -> np.ndarray:
        """Convert native pixels of this device (as :meth:`view` returns them) to RGB uint8.

        Args:
            native: Pixels in this device's format.
            width: Pixels per row, needed for formats of fewer than 8 bits.
        """
        fmt = self._format
        if fmt.is_packed:
            native = fmt.unpack_bits(native, native.shape[1] * 8 // fmt.bpp if width is None else width)
        return fmt.unpack(native, self._palette)

    # -- device operations -----------------------------------------------------------------

    @_critical
    def pan(self, x: int = 0, y: int = 0) -> None:
        """Show the part of the virtual screen whose top-left corner is (x, y).

        Raises:
            FramebufferError: The driver cannot pan (EINVAL), or the kernel refused.
            ValueError: (x, y) is outside the virtual screen or not on a pan step.
        """
        if self._closed or self.readonly:
            self._check_open()
            self._check_writable("panning")
        var, fix = self._var, self._fix
        if x < 0 or y < 0 or x + var.xres > var.xres_virtual or y + var.yres > var.yres_virtual:
            raise ValueError(
                f"pan offset ({x}, {y}) puts the {var.xres}x{var.yres} page outside the virtual screen "
                f"{var.xres_virtual}x{var.yres_virtual}"
            )
        if (x and not fix.xpanstep) or (y and not fix.ypanstep):
            raise FramebufferError(errno.EINVAL, "the driver cannot pan (pan step 0)", self.path)
        if (fix.xpanstep and x % fix.xpanstep) or (fix.ypanstep and y % fix.ypanstep):
            raise ValueError(
                f"pan offset ({x}, {y}) is not a multiple of the pan steps ({fix.xpanstep}, {fix.ypanstep})"
            )
        shared = self._device.shared
        if (x, y) == (var.xoffset, var.yoffset) and not shared:
            return  # (on a shared device another opener may have panned since)
        if "pan" not in self._saved and self._device.fbdev:
            # (a drm: display gives its CRTC back on close: panning back first would
            # only flash the other buffer's older frame)
            found = self._device.get_var() if shared else var
            self._remember("pan", (found.xoffset, found.yoffset))
        # the var of each pan offset is built once per mode (a Screen's pages take turns)
        new = self._pans.get((x, y))
        if new is None:
            if len(self._pans) >= 4:
                self._pans.clear()
            new = self._pans[x, y] = var.replace(xoffset=x, yoffset=y)
        self._mine["pan"] = None
        self._device.pan(new)
        self._var = new
        self._mine["pan"] = (x, y)

    def wait_for_vsync(self) -> bool:
        """Wait for the next vertical blank.

        Returns:
            False at once when the driver cannot (vfb, most DRM fbdev emulation).

        Raises:
            FramebufferError: The framebuffer is closed, or the driver failed otherwise.
        """
        self._check_open()
        if self._vsync is False:
            return False
        try:
            self._device.wait_for_vsync()
        except OSError as e:
            if e.errno not in _UNSUPPORTED:
                raise
            self._vsync = False
            return False
        self._vsync = True
        return True

    @_critical
    def blank(self, level: int | str | bool = "normal") -> bool:
        """Blank (or unblank) the display; :meth:`close` unblanks.

        Args:
            level: 0/``"unblank"``/False to unblank, or ``"normal"``/True (1),
                ``"vsync_suspend"``, ``"hsync_suspend"``, ``"powerdown"`` (4).

        Returns:
            False when the driver cannot blank, or answers that it left this level
            undone (cirrusfb at ``"normal"``).

        Raises:
            ValueError: An unknown level name or a level outside 0..4.
            FramebufferError: The framebuffer is closed or opened read-only (``EPERM``).
        """
        self._check_open()
        self._check_writable("blanking")
        if isinstance(level, str):
            if level not in BLANK_LEVELS:
                raise ValueError(f"unknown blank level {level!r}; use one of {', '.join(BLANK_LEVELS)}")
            level = BLANK_LEVELS[level]
        level = int(level)
        if not 0 <= level <= 4:
            raise ValueError(f"blank level must be 0..4, not {level}")
        try:
            done = self._device.blank(level)
        except OSError as e:
            if e.errno not in _UNSUPPORTED:
                raise
            return False
        if not done:
            return False
        if level:
            self._remember("blank", True)
        else:
            self._saved.pop("blank", None)
        return True

    def unblank(self) -> bool:
        """Turn the display back on. Returns False when the driver cannot blank."""
        return self.blank(0)

    def get_palette(self, start: int = 0, count: int | None = None) -> np.ndarray:
        """Read the colour map as (count, 3) uint8 (the kernel's 16-bit values >> 8).

        Raises:
            FramebufferError: The driver has no colour map.
        """
        self._check_open()
        count = self._cmap_len() - start if count is None else count
        return (self._device.get_cmap(start, count)[:, :3] >> 8).astype(np.uint8)

    @_critical
    def set_palette(self, colors: Any, start: int = 0) -> None:
        """Write colour map entries from ``start``; :meth:`close` restores the original.

        Args:
            colors: (n, 3) or (n, 4) array-like of uint8 (RGB[A]) values.

        Raises:
            ValueError: Wrong shape, or entries past the end of the colour map.
            FramebufferError: The driver has no colour map.
        """
        self._check_open()
        self._check_writable("setting the palette")
        colors = np.asarray(colors)
        if colors.ndim != 2 or colors.shape[1] not in (3, 4):
            raise ValueError(f"palette must have shape (n, 3) or (n, 4), got {colors.shape}")
        if np.any(colors < 0) or np.any(colors > 255):
            raise ValueError("palette values must be 0..255")
        size = self._cmap_len()
        if start < 0 or start + len(colors) > size:
            raise ValueError(f"entries {start}..{start + len(colors) - 1} are outside the {size}-entry colour map")
        if "cmap" not in self._saved:
            self._remember("cmap", self._device.get_cmap(0, size))
        entries = np.zeros((len(colors), 4), np.uint16)
        entries[:, : colors.shape[1]] = colors.astype(np.uint16) * 257
        self._mine["cmap"] = None
        self._device.put_cmap(start, entries)
        if self._device.shared:
            self._mine["cmap"] = self._device.get_cmap(0, size)
        self._palette = self._read_palette()

    @_critical
    def set_mode(
        self,
        width: int | None = None,
        height: int | None = None,
        bpp: int | None = None,
        virtual_width: int | None = None,
        virtual_height: int | None = None,
    ) -> None:
        """Change the video mode; :meth:`close` restores the original one.

        The mode is first tried with ``FB_ACTIVATE_TEST``; after it is set, what the
        kernel reports is compared with what was asked, and a silent mismatch (DRM
        fbdev emulation accepts some modes it does not show) counts as a refusal.

        Args:
            width, height: Visible resolution; default: unchanged. ``width`` may also be
                a mode string such as ``"800x600-16"`` or ``"800x600-32@1200"`` (see
                :func:`fbgfx.modes.parse_mode`) or a :class:`fbgfx.modes.Mode`.
            bpp: Bits per pixel; default: unchanged. The driver picks the layout.
            virtual_width, virtual_height: Virtual resolution; default: the current one
                when the resolution is unchanged, else the visible size.

        Raises:
            ModeError: The driver refused; the previous mode is in place and nothing
                changed. ``errno`` is the kernel's (EINVAL, ENOMEM, ...).
            ValueError: A size or depth that is not a positive integer.
        """
        self._check_open()
        self._check_writable("setting the mode")
        want, asked = self._mode_request(width, height, bpp, virtual_width, virtual_height)
        if want is None:
            return
        describe = describe_mode(asked)
        self._put_test(want, asked)
        original = self._device.get_var()
        _restore.register(self, self.restore)
        self._mine["var"] = self._mine["pan"] = None
        try:
            self._device.put_var(want.replace(activate=FB_ACTIVATE_NOW))
            got = self._device.get_var()
            mismatch = _mode_mismatch(asked, got)
            if mismatch:
                raise ModeError(
                    errno.EINVAL, f"the driver did not apply {describe}: it shows {mismatch}", self.path, asked
                )
            self._load()
            self._mine["var"], self._mine["pan"] = geometry(got), (got.xoffset, got.yoffset)
        except BaseException as e:
            self._restore_var(original)
            self._load()
            if isinstance(e, OSError) and not isinstance(e, ModeError):
                raise _refused(e, describe, self.path, asked) from None
            raise
        pan = self._saved.pop("pan", (original.xoffset, original.yoffset))
        if "var" not in self._saved:
            # what fbgfx found: the mode before this change, at the offset before any pan
            self._saved["var"] = original.replace(xoffset=pan[0], yoffset=pan[1])

    def test_mode(
        self,
        width: int | None = None,
        height: int | None = None,
        bpp: int | None = None,
        virtual_width: int | None = None,
        virtual_height: int | None = None,
    ) -> VarScreenInfo:
        """Ask the driver whether it takes a mode (``FB_ACTIVATE_TEST``), changing nothing.

        Arguments as for :meth:`set_mode`.

        Returns:
            The ``fb_var_screeninfo`` the driver would set.

        Raises:
            ModeError: The driver would refuse (or silently change) the mode.
            ValueError: A size or depth that is not a positive integer.
        """
        want, asked = self._mode_request(width, height, bpp, virtual_width, virtual_height)
        return self._var if want is None else self._put_test(want, asked)

    def changed_elsewhere(self, what: str) -> bool:
        """Whether another opener changed ``what`` since this Framebuffer last set it.

        Only a shared device (``/dev/fbN``, a framebuffer file) can be changed by other
        processes; :meth:`restore` and :meth:`fbgfx.Screen.close` leave such a change
        in place instead of undoing it.

        Args:
            what: ``"mode"``, ``"pan"`` or ``"palette"``.

        Returns:
            False when this Framebuffer never set it, or the device still shows what it set.

        Raises:
            ValueError: ``what`` is not one of the three.
            FramebufferError: The framebuffer is closed.
        """
        self._check_open()
        keys = {"mode": "var", "pan": "pan", "palette": "cmap"}
        if what not in keys:
            raise ValueError(f"what must be one of {', '.join(keys)}, not {what!r}")
        return self._changed_elsewhere(keys[what])

    def _changed_elsewhere(self, key: str) -> bool:
        if not self._device.shared or self._mine.get(key) is None:
            return False
        try:
            if key == "cmap":
                mine = self._mine["cmap"]
                return not np.array_equal(self._device.get_cmap(0, len(mine)), mine)
            var = self._device.get_var()
        except OSError:
            return False  # cannot tell: restore as before
        if key == "var":
            return bool(geometry(var) != self._mine["var"])
        return bool((var.xoffset, var.yoffset) != self._mine["pan"])

    def keep_mode(self) -> None:
        """Keep the current mode after :meth:`close` instead of restoring the original one.

        Raises:
            FramebufferError: ``EINVAL`` on a ``drm:`` display, whose mode lasts only
                while it is open (closing gives the display back as it was).
        """
        if not self._device.fbdev:
            raise FramebufferError(
                errno.EINVAL,
                "a drm: display's mode lasts only while fbgfx has it open: closing gives the display back as it was",
                self.path,
            )
        self._saved.pop("var", None)
        self._saved.pop("pan", None)

    def modes(self) -> list[Mode]:
        """The modes the system lists for this device (:class:`fbgfx.modes.Mode`).

        From ``/sys/class/graphics/fbN/modes`` and ``/etc/fb.modes`` for a kernel
        device, from its own list for a virtual one. A driver may take modes that are
        not listed (and refuse listed ones): :meth:`test_mode` asks it.
        """
        return list_modes(self.path, self._device.mode_list)

    def screen(self, buffering: str = "auto", **options: Any) -> Screen:
        """A :class:`fbgfx.Screen` for double-buffered drawing on this device."""
        # Screen is the layer above this one; it is reached only when asked for, so that
        # the device layer never depends on it (and opening a device loads no drawing).
        from .screen import Screen  # noqa: PLC0415 (see the comment above)

        return Screen(self, buffering=buffering, **options)

    def sibling(self, device: Backend, path: str) -> Framebuffer:
        """A new plain :class:`Framebuffer` over ``device`` (another backend): what a
        :class:`fbgfx.Layer` draws its own buffers through, with a Screen of its own."""
        return Framebuffer(device, path)

    def layer(self, box: Sequence[int], *, alpha: bool = False) -> Layer:
        """A :class:`fbgfx.layer.Layer`: a rectangle of the screen with its own buffers,
        above the Screen, on a display plane where the driver has one free, else
        composed by fbgfx with the same pixels.

        Args:
            box: (x0, y0, x1, y1), exclusive corner, in the Screen's logical (turned)
                coordinates.
            alpha: Give the layer an alpha channel (premultiplied ARGB8888).

        Raises:
            ValueError: ``box`` is empty or not inside the screen.
            FramebufferError: The framebuffer is closed.
            UnsupportedFormatError: A palette or gray display (layers need true colour).
        """
        # The layer sits above Screen: reached only when asked for (see screen()).
        from .layer import Layer  # noqa: PLC0415 (layer sits above device: imported on first use)

        return Layer(self, box, alpha=alpha)

    # -- internals ---------------------------------------------------------------------------

    def _remember(self, key: str, original: Any) -> None:
        """Keep what fbgfx found before its first change of ``key``, for :meth:`restore`
        (which also runs on fatal signals and at exit)."""
        self._saved.setdefault(key, original)
        _restore.register(self, self.restore)

    def _check_open(self) -> None:
        if self._closed:
            raise FramebufferError(errno.EBADF, "the framebuffer is closed", self.path)

    def _check_writable(self, doing: str) -> None:
        if self.readonly:
            raise FramebufferError(errno.EPERM, f"{doing}: the framebuffer is open read-only", self.path)

    def _cmap_len(self) -> int:
        fmt = self._format
        if fmt.indexed or fmt.gray:
            return 1 << fmt.bpp
        if self._fix.visual == FB_VISUAL_DIRECTCOLOR:
            return 1 << max(fmt.red.length, fmt.green.length, fmt.blue.length)
        return 256

    def _read_palette(self) -> np.ndarray | None:
        if not self._format.indexed:
            return None
        try:
            return self.get_palette()
        except OSError:
            return default_palette(self._format.bpp)

    def _mode_request(
        self, width: Any, height: Any, bpp: Any, virtual_width: Any, virtual_height: Any
    ) -> tuple[VarScreenInfo | None, dict[str, int]]:
        """(var to ask for, dict of what is asked); the var is None when nothing would change."""
        self._check_open()
        width, height, bpp, virtual_width, virtual_height = resolve_mode_args(
            width, height, bpp, virtual_width, virtual_height
        )
        cur = self._var
        asked = _mode_request(cur, width, height, bpp, virtual_width, virtual_height)
        if all(getattr(cur, k) == v for k, v in asked.items()):
            return None, asked
        want = cur.replace(xoffset=0, yoffset=0, **asked)
        if want.bits_per_pixel != cur.bits_per_pixel:
            # a new depth: the driver chooses the channel layout
            want = want.replace(red=Bitfield(), green=Bitfield(), blue=Bitfield(), transp=Bitfield())
        return want, asked

    def _put_test(self, want: VarScreenInfo, asked: dict[str, int]) -> VarScreenInfo:
        describe = describe_mode(asked)
        try:
            tested = self._device.put_var(want.replace(activate=FB_ACTIVATE_TEST))
        except ModeError:
            raise  # the backend said why (a drm: display lists its connector's modes)
        except OSError as e:
            raise _refused(e, describe, self.path, asked) from None
        mismatch = _mode_mismatch(asked, tested)
        if mismatch:
            raise ModeError(errno.EINVAL, f"the driver refused {describe}: it offers {mismatch}", self.path, asked)
        return tested

    def _restore_var(self, original: VarScreenInfo) -> None:
        self._device.put_var(original.replace(activate=FB_ACTIVATE_NOW))

    def _load(self) -> None:
        var, fix = self._device.get_var(), self._device.get_fix()
        if fix.type != FB_TYPE_PACKED_PIXELS:
            raise FramebufferError(errno.ENOTSUP, f"framebuffer type {fix.type} is not packed pixels", self.path)
        fmt = PixelFormat.from_var(var, fix.visual)
        line = fix.line_length or fmt.row_bytes(var.xres_virtual)
        fix = fix.replace(line_length=line)
        needed = line * (var.yres_virtual - 1) + fmt.row_bytes(var.xres_virtual)
        if var.xres == 0 or var.yres == 0 or needed > fix.smem_len:
            raise FramebufferError(
                errno.EINVAL,
                f"inconsistent geometry: {var.xres_virtual}x{var.yres_virtual} lines of {line} bytes "
                f"do not fit in {fix.smem_len} bytes of video memory",
                self.path,
            )
        if self._memory is None or self._mapped != (fix.smem_start, fix.smem_len):
            self._unmap()
            self._memory_owner = self._device.map(fix.smem_len)
            self._memory = np.frombuffer(self._memory_owner, np.uint8, count=fix.smem_len)
            if self.readonly:
                self._memory.flags.writeable = False
            self._mapped = (fix.smem_start, fix.smem_len)
        self._var, self._fix, self._format = var, fix, fmt
        # vars of pan offsets reached from this one (pan()): each differs from it in the offset only
        self._pans: dict[tuple[int, int], VarScreenInfo] = {}
        self._palette = self._read_palette()

    def _unmap(self) -> None:
        self._memory = None
        owner, self._memory_owner = self._memory_owner, None
        if owner is not None and hasattr(owner, "close"):
            try:
                owner.close()
            except BufferError:
                pass  # views handed out still use it; it is unmapped when they go

    def _release(self) -> None:
        self._memory = None
        owner, self._memory_owner = self._memory_owner, None
        try:
            if owner is not None:
                self._device.unmap(owner)
        finally:
            self._device.close()


def _mode_request(
    cur: VarScreenInfo, width: Any, height: Any, bpp: Any, virtual_width: Any, virtual_height: Any
) -> dict[str, int]:
    for name, value in (
        ("width", width),
        ("height", height),
        ("bpp", bpp),
        ("virtual_width", virtual_width),
        ("virtual_height", virtual_height),
    ):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0):
            raise ValueError(f"{name} must be a positive integer, not {value!r}")
    xres = int(width or cur.xres)
    yres = int(height or cur.yres)
    same_size = (xres, yres) == (cur.xres, cur.yres)
    vx = int(virtual_width or (cur.xres_virtual if same_size else xres))
    vy = int(virtual_height or (cur.yres_virtual if same_size else yres))
    if vx < xres or vy < yres:
        raise ValueError(f"virtual size {vx}x{vy} is smaller than the visible size {xres}x{yres}")
    return {
        "xres": xres,
        "yres": yres,
        "xres_virtual": vx,
        "yres_virtual": vy,
        "bits_per_pixel": int(bpp or cur.bits_per_pixel),
    }


def _mode_mismatch(asked: dict[str, int], got: VarScreenInfo) -> str:
    """'' when the kernel's answer gives what was asked, else a description of it."""
    ok = (
        got.xres == asked["xres"]
        and got.yres == asked["yres"]
        and got.bits_per_pixel == asked["bits_per_pixel"]
        and got.xres_virtual == asked["xres_virtual"]
        and got.yres_virtual >= asked["yres_virtual"]
    )
    if ok:
        return ""
    return describe_mode(got)


def _rect(box: Sequence[Any]) -> tuple[int, int, int, int]:
    left, top, right, bottom = (int(v) for v in box)
    return left, top, right, bottom


def _refused(e: OSError, describe: str, path: str, asked: dict[str, int]) -> ModeError:
    err = e.errno or errno.EINVAL
    return ModeError(err, f"the driver refused {describe} ({os.strerror(err)})", path, asked)


def _layout(var: VarScreenInfo) -> tuple[Any, ...]:
    """A mode's picture layout: its geometry but for the virtual height (which a
    Screen grows for page flipping and puts back)."""
    fields = geometry(var)
    return fields[:3] + fields[4:]
