"""Screen: double-buffered drawing on a framebuffer, with a console and a device that
are always put back.

A :class:`Screen` hands out a back :class:`~fbgfx.Surface` to draw a frame on and
shows it with :meth:`Screen.flip`:

- ``"flip"``: page flipping. Two pages live in video memory (the virtual height is
  grown to hold them when the driver allows, and put back on close); a flip writes
  the new frame into the hidden page and pans to it (``FBIOPAN_DISPLAY``) after the
  vertical blank where the driver can wait for one. No tearing.
- ``"copy"``: a flip copies what changed since the last one from the RAM back buffer
  to the visible page, so its cost follows the changed area.
- ``"single"``: drawing goes straight to the visible page; flip does nothing.
- ``"auto"``: ``"flip"`` where the driver pans and has (or can get) room for two
  pages, else ``"copy"``. :attr:`Screen.buffering` tells which.

Frames are composed in RAM in the device's pixel format (the back Surface's array);
video memory is only ever written, never read, because reading it is very slow on
real hardware. Only the area drawing calls changed is copied (the Surface logs each
call's bounding box in C, per row, and a flip takes the log; direct writes to the array
are reported with :meth:`Screen.mark_dirty`). Between flips the back buffer keeps the
last frame, so a frame can change just a few pixels; ``clear=True`` starts each frame
blank.

:meth:`Screen.present` shows a whole image (the video path): an image of the screen's
size is converted straight into the page that is shown next.

Closing the Screen (also on an exception, fatal signals and interpreter exit, see
:mod:`fbgfx._restore`) puts back the virtual size, the pan offset, the palette and the
console's KD mode.

``rotate`` turns the picture on the panel (a panel mounted in portrait or upside
down): ``Screen(fb, rotate=90)`` shows everything drawn and presented turned 90
degrees **clockwise**, so a 800x480 panel gives a 480x800 screen. :attr:`Screen.width`
and :attr:`Screen.height` are that logical size; the turning happens as frames are
written into video memory, only where they changed. ``$FBGFX_ROTATE`` sets the default.

How it is built: each choice is an object made once when the Screen opens. The
buffering mode is a strategy from :mod:`fbgfx._screen.buffering` (which page a frame goes to
and how it is shown); what the Surface draws on is a back buffer here (:class:`_InPlace`
on the visible page, :class:`_KeepBack` keeping the last frame, :class:`_ClearBack`
starting blank); writing a frame into a page (packed pixels, rotation) is a
:class:`~fbgfx._screen.transfer.Transfer`; what changed is a :class:`~fbgfx._screen.region.Region`.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import numbers
import os
import threading
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import _restore, convert
from ._closing import ClosesOnExit
from ._draw.drawlog import DrawLog
from ._screen import compose as _compose
from ._screen import frames as _frames
from ._screen.buffering import Buffering, choose
from ._screen.fit import FITS, place
from ._screen.region import Region
from ._screen.transfer import ROTATIONS, Transfer, transfer_for
from .color import resolve
from .console import Console
from .errors import FramebufferError
from .pixelformat import PixelFormat, default_palette
from .surface import Surface

if TYPE_CHECKING:
    from .device import Framebuffer
    from .video import Played

__all__ = ["BUFFERING", "FITS", "Screen", "resolve_rotate"]

_UINT8 = np.dtype(np.uint8)

#: Buffering strategies :class:`Screen` takes.
BUFFERING = ("auto", "flip", "copy", "single")

Box = tuple[int, int, int, int]


class Screen(ClosesOnExit):
    """Double-buffered drawing on a :class:`~fbgfx.Framebuffer`.

    Get one with :meth:`fbgfx.Framebuffer.screen`; use it as a context manager.

    Args:
        fb: The framebuffer.
        buffering: ``"auto"``, ``"flip"``, ``"copy"`` or ``"single"`` (see the module).
        console: Switch the VT showing on this framebuffer to graphics mode while the
            Screen is open (True, the default), leave it alone (False), or a tty object
            with ``get_mode()``/``set_mode()`` to use instead of finding the VT.
        palette: On palette devices: ``"default"`` installs
            :func:`fbgfx.default_palette` (a 6x7x6 colour cube plus grays), None keeps
            the device's colour map, an (n, 3) array installs that. The original
            colour map comes back on close.
        clear: Start every frame blank instead of with the last frame's content: True
            (black) or a colour.
        vsync: Wait for the vertical blank before showing a frame, where the driver
            can wait (most cannot; then this costs nothing).
        rotate: Degrees the picture is turned clockwise on the panel: 0, 90, 180 or
            270. None (the default) takes ``$FBGFX_ROTATE``, else 0.

    Attributes:
        width: Logical width in pixels: what is drawn on (the panel's height when
            turned 90 or 270 degrees).
        height: Logical height in pixels.
        rotate: Degrees the picture is turned clockwise on the panel (logical pixel
            ``(x, y)`` is shown at panel pixel ``(fb.width - 1 - y, x)`` for 90).
        buffering: The buffering in use: ``"flip"``, ``"copy"`` or ``"single"``.

    Raises:
        ValueError: An unknown buffering, palette or rotate option (also from
            ``$FBGFX_ROTATE``).
        FramebufferError: ``buffering="flip"`` on a device that cannot pan or has no
            room for two pages; ``EPERM`` on a framebuffer opened ``readonly=True``.

    Formats of fewer than 8 bits cannot be drawn in place (a Surface holds one pixel
    per byte), nor can a turned picture, so with them ``"single"`` also draws in RAM
    and shows on :meth:`flip`.
    Change the mode before opening a Screen, not while it is open.
    """

    def __init__(
        self,
        fb: Framebuffer,
        buffering: str = "auto",
        *,
        console: Any = True,
        palette: Any = "default",
        clear: Any = False,
        vsync: bool = True,
        rotate: int | None = None,
    ) -> None:
        rotate = resolve_rotate(rotate)
        if buffering not in BUFFERING:
            raise ValueError(f"buffering must be one of {', '.join(BUFFERING)}, not {buffering!r}")
        if isinstance(palette, str) and palette != "default":
            raise ValueError(f"palette must be 'default', None or an (n, 3) array, not {palette!r}")
        if fb.readonly:
            raise FramebufferError(errno.EPERM, "a Screen draws: the framebuffer is open read-only", fb.path)
        self.fb = fb
        self.format: PixelFormat = fb.format
        self.rotate = rotate
        self.width, self.height = (fb.height, fb.width) if rotate in (90, 270) else (fb.width, fb.height)
        self.buffering = buffering
        self._closed = False
        self._back: _Back | None = None
        # What the Screen changes on the device lives apart from it, held by the
        # framebuffer until put back: a Screen dropped without close is collected
        # (its buffers with it) and the device still gets its pages, palette and
        # console back when the framebuffer closes, at exit or on a fatal signal.
        self._changes = _Changes(fb)
        fb.adopt(self._changes)
        _restore.register(self._changes, self._changes.close)
        # Frames shown are counted where a test may wait for them (fbgfx._screen.frames).
        self._frames = _frames.counter_for(fb)
        try:
            self._setup(buffering, console, palette, clear, vsync)
        except BaseException:
            self.close()
            raise
        _restore.register(self._changes, self._changes.close, newest=True)  # closed before fb is restored

    # -- set-up and tear-down ----------------------------------------------------------------

    def _setup(self, buffering: str, console: Any, palette: Any, clear: Any, vsync: bool) -> None:
        fb, changes = self.fb, self._changes
        if console is True:
            changes.console = Console.for_framebuffer(fb)
        elif console:
            changes.console = Console(console)
        if changes.console is not None:
            changes.console.graphics()
        if self.format.indexed and palette is not None:
            self._install_palette(palette)
        self._palette = fb.palette
        w, h = self.width, self.height
        transfer = transfer_for(self.format, self._palette, w, h, self.rotate)
        # frames go through the framebuffer's layer stack (fb.layer): straight on while
        # no layer is composed in software
        strategy = _compose.composed(fb, choose(fb, buffering, w, h, vsync, transfer.to_page), self.rotate)
        changes.strategy = strategy
        self.buffering = strategy.name
        if strategy.draws_in_place and transfer.in_place:
            self._back = _InPlace(strategy, transfer)
        elif clear is False or clear is None:
            self._back = _KeepBack(strategy, transfer, self._native_color("black"))
        else:
            self._back = _ClearBack(strategy, transfer, self._native_color("black" if clear is True else clear))
        changes.log = weakref.ref(self._back.log)
        changes.release = weakref.WeakMethod(self._release)  # the buffers go when the device closes

    def _install_palette(self, palette: Any) -> None:
        fb = self.fb
        colors = default_palette(fb.format.bpp) if isinstance(palette, str) else np.asarray(palette)
        if colors.ndim != 2 or colors.shape[1] not in (3, 4):
            raise ValueError(f"palette must be an (n, 3) array, got shape {colors.shape}")
        try:
            self._changes.original_palette = fb.get_palette()
        except OSError:
            return  # no colour map to set: draw with the one the device has
        fb.set_palette(colors[: len(self._changes.original_palette)])

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run (or the framebuffer's close, exit or a fatal
        signal closed it)."""
        return self._closed or self._changes.closed

    def close(self) -> None:
        """Put back the virtual size, pan offset, palette and console mode; safe twice.

        The framebuffer stays open (and keeps the last frame on screen where the pan
        offset allows). Afterwards the Screen and its Surface raise
        :class:`~fbgfx.errors.FramebufferError`. Closing the framebuffer closes its
        Screens; a close from a signal handler during a flip or present waits for its
        end. In a forked child only the child's descriptors are let go.
        """
        if self._closed or _restore.defer(self.close):
            return
        self._closed = True
        try:
            self._changes.close()
        finally:
            self._back = None
            if self._frames is not None:
                self._frames.close()

    def _release(self) -> None:
        """Let go of the back buffers (the device closed): a Screen kept after its device
        closes holds no frame-sized memory. A Surface kept from it keeps its own."""
        self._back = None

    def __repr__(self) -> str:
        if self._closed or self._changes.closed or self._back is None:
            state = "closed" if self._closed or self._changes.closed else "opening"
        else:
            turned = f" rotate={self.rotate}" if self.rotate else ""
            state = f"{self.width}x{self.height} {self.format.name} {self.buffering}{turned}"
        return f"<Screen {self.fb.path} {state}>"

    # -- drawing ----------------------------------------------------------------------------------

    @property
    def surface(self) -> Surface:
        """The back :class:`~fbgfx.Surface`: draw the next frame here, then :meth:`flip`.

        In ``"single"`` buffering it is the visible page itself.
        """
        back = self._open()
        self.fb.check()  # where a frame starts (frame() takes it)
        return back.surface()

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.width, self.height

    @contextlib.contextmanager
    def frame(self) -> Iterator[Surface]:
        """Draw one frame: yields the back Surface and flips when the block ends cleanly.

        On an exception nothing is shown: the visible page stays as it was and the
        back buffer goes back to the last shown frame (blank with ``clear``). In
        ``"single"`` buffering drawing is already visible, so nothing can be undone.

        Example:
            >>> with fbgfx.open("virtual:320x240") as fb, fb.screen() as screen:
            ...     with screen.frame() as s:
            ...         s.rectangle((10, 10, 50, 50), fill="red")
        """
        surface = self.surface
        try:
            yield surface
        except BaseException:
            if not self._closed:
                self.discard()
            raise
        self.flip()

    def mark_dirty(self, box: Sequence[int] | None = None) -> None:
        """Report pixels written into ``surface.array`` directly (drawing calls report
        themselves), so the next flip shows them.

        Args:
            box: (left, top, right, bottom), right and bottom exclusive as for
                ``PIL.Image.crop``; clipped to the screen. None: the whole screen.

        Raises:
            TypeError: ``box`` is not four integers.
            FramebufferError: The screen or its framebuffer is closed.
        """
        back = self._open()
        if box is None:
            x0, y0, x1, y1 = 0, 0, self.width, self.height
        else:
            try:
                x0, y0, x1, y1 = (int(v) for v in box)
            except (TypeError, ValueError, OverflowError):  # (OverflowError: infinity)
                raise TypeError(f"box must be (left, top, right, bottom) integers, not {box!r}") from None
            x0, x1 = max(x0, 0), min(x1, self.width)
            y0, y1 = max(y0, 0), min(y1, self.height)
        back.drawn(x0, y0, x1, y1)

    def discard(self) -> None:
        """Drop what was drawn since the last flip: the back buffer becomes the last
        shown frame again (blank with ``clear``)."""
        self._open().discard()

    # -- showing -----------------------------------------------------------------------------------

    def flip(self) -> None:
        """Show the back buffer.

        Writes only what changed into video memory: in ``"copy"`` into the visible page,
        in ``"flip"`` into the hidden page, which is then panned to. Afterwards the back
        buffer holds the frame just shown (or is blank with ``clear``).
        """
        back = self._open()
        self.fb.check()  # a truncated framebuffer file: an error, not SIGBUS
        with _restore.critical:
            back.flip()
            self.fb.check()  # truncated while the frame was written (fbgfx.virtual._guard): it went nowhere
        self._shown()

    def present(self, image: Any, fit: str = "fit", background: Any = "black") -> None:
        """Show a whole picture: draw it as the next frame and flip.

        The fast path for video: an RGB image of the screen's size is converted
        straight into the page shown next, without touching the back buffer (it
        catches up when it is next drawn on). A NumPy array is read again then, so
        keep it unchanged until the next frame or present().

        Args:
            image: A PIL image (any mode) or a (h, w, 3) RGB / (h, w, 4) RGBA uint8
                array, any size. Alpha is blended over ``background``.
            fit: For another size: ``"fit"`` (scale to fit inside, keep the aspect
                ratio), ``"fill"`` (scale to cover, crop the overflow), ``"stretch"``
                (scale to the screen size) or ``"center"`` (no scaling, crop).
            background: The colour around a picture that does not cover the screen.

        Raises:
            ValueError: Unknown ``fit``, an unusable image, or one of 0 pixels.
            TypeError: Not an image.
        """
        back = self._open()
        self.fb.check()
        if fit not in FITS:
            raise ValueError(f"fit must be one of {', '.join(FITS)}, not {fit!r}")
        # (an RGB uint8 array, what video gives, is what as_rgb returns as it is)
        rgb_array = type(image) is np.ndarray and image.dtype is _UINT8 and image.ndim == 3 and image.shape[2] in (3, 4)
        rgb = image if rgb_array else convert.as_rgb(image)
        h, w, channels = rgb.shape
        if h == 0 or w == 0:
            raise ValueError(f"present: the image is empty ({w}x{h} pixels)")
        if channels == 4:
            rgb = _flatten(rgb, resolve(background, self.format, self._palette).rgba)
        if h != self.height or w != self.width:
            rgb, x, y = place(rgb, self.width, self.height, fit)
            if rgb.shape[:2] != (self.height, self.width):
                with _restore.critical:
                    back.present_part(rgb, x, y, self._native_color(background))
                    self.fb.check()  # truncated while the picture was written (fbgfx.virtual._guard)
                self._shown()
                return
        with _restore.critical:
            back.present(rgb)
            self.fb.check()
        self._shown()

    def play(
        self,
        source: Any,
        *,
        box: Sequence[int] | None = None,
        fit: str = "fit",
        loop: bool = False,
        duration: float | None = None,
        audio: bool = True,
        on_frame: Any = None,
        fps: float | None = None,
        hwdec: str = "auto",
        audio_device: str = "default",
        threads: int | None = None,
        background: Any = "black",
    ) -> Played:
        """Play video files (any container and codec FFmpeg reads; needs ``fbgfx[video]``)
        and animations (GIF, APNG, WebP: through Pillow, each frame as long as the file says).

        Frames are converted straight into the display's format at their shown size,
        shown at their timestamps (late ones dropped), with the file's sound through
        ALSA; files of a playlist and rounds of a loop follow each other without a gap.

        Args:
            source: A path, an :class:`fbgfx.video.Video`, a frame source
                (:class:`fbgfx.video.AnimationSource`, ...), or a list of them (a playlist).
            box: (x0, y0, x1, y1) to play in, x1 and y1 exclusive (default: the screen);
                nothing outside it changes except what ``on_frame`` draws.
            fit: ``"fit"``, ``"fill"``, ``"stretch"`` or ``"center"``, as for :meth:`present`.
            loop: Play again and again (until ``duration``).
            duration: Stop after this many seconds.
            audio: Play the sound (one warning and none when there is no sound card).
            on_frame: ``on_frame(surface, t)`` draws on each frame before it is shown
                (``t``: seconds on the play's timeline).
            fps: Show frames at this rate instead of their timestamps (0: as fast as
                possible); no sound then.
            hwdec: ``"auto"`` (a hardware decoder where there is one) or ``"none"``.
            audio_device: The ALSA device.
            threads: Decoder threads (default: one per core and one more).
            background: The colour around a picture that does not fill the box.

        Returns:
            ``Played(shown, dropped, av_offset)``: frames shown, frames dropped to keep
            time, and with sound, how far the pictures were from it: (mean, largest
            absolute value) in seconds (see :class:`fbgfx.video.Played`).

        Raises:
            ImportError: PyAV is not installed (and a file is not an animation Pillow reads).
            FileNotFoundError: No such file.
            fbgfx.VideoError: A file FFmpeg cannot play.
        """
        # Imported here: programs that only draw never load the video layer or PyAV.
        from .video import PlayOptions, play  # noqa: PLC0415 (see the comment above)

        options = PlayOptions(box, fit, loop, duration, audio, on_frame, fps, hwdec, audio_device, threads, background)
        return play(self, source, options)

    # -- internals --------------------------------------------------------------------------------

    def _open(self) -> _Back:
        back = self._back
        if self._closed or back is None or self._changes.closed:
            what = "the framebuffer is closed" if self.fb.closed else "the screen is closed"
            raise FramebufferError(errno.EBADF, what, self.fb.path)
        if os.getpid() != self._changes.pid:
            # A forked child shares the parent's pages and pan offset: its frame would move
            # the parent's page (and write into the page the parent shows next).
            raise FramebufferError(
                errno.EPERM,
                f"this Screen belongs to process {self._changes.pid}; a forked child draws on a display it "
                "opens itself (fbgfx.open() after the fork)",
                self.fb.path,
            )
        return back

    def _native_color(self, color: Any) -> int:
        return resolve(color, self.format, self._palette).value

    def _shown(self) -> None:
        """A frame is on the screen: count it for whoever waits for frames."""
        if self._frames is not None:
            # a close from a signal handler waits: it takes the counter's lock too
            with _restore.critical:
                self._frames.bump()


def resolve_rotate(rotate: object = None) -> int:
    """The turn a Screen takes for ``rotate``: ``rotate`` checked, or for None
    ``$FBGFX_ROTATE`` (else 0).

    Raises:
        ValueError: Not 0, 90, 180 or 270 (the message names ``$FBGFX_ROTATE`` when it
            came from there).
    """
    if rotate is None:
        text = os.environ.get("FBGFX_ROTATE", "").strip()
        if not text:
            return 0
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value not in ROTATIONS:
            raise ValueError(f"$FBGFX_ROTATE must be 0, 90, 180 or 270 (degrees clockwise), not {text!r}")
        return value
    if isinstance(rotate, bool) or not isinstance(rotate, numbers.Integral) or int(rotate) not in ROTATIONS:
        raise ValueError(f"rotate must be 0, 90, 180 or 270 (degrees clockwise), not {rotate!r}")
    return int(rotate)


class _Changes:
    """What a Screen changed on its framebuffer (the buffering strategy's pages and
    pan offset, the palette, the console's KD mode), put back by :meth:`close`.

    The framebuffer holds it (:meth:`fbgfx.Framebuffer.adopt`) and the restore
    registry knows it, so that it is put back when the Screen closes, when the
    framebuffer closes, or at exit, whether or not the Screen is still alive.
    """

    def __init__(self, fb: Framebuffer) -> None:
        self.fb = fb
        self.strategy: Buffering | None = None
        self.console: Console | None = None
        self.original_palette: np.ndarray | None = None
        self.log: weakref.ref[DrawLog] | None = None
        self.release: weakref.WeakMethod[Callable[[], None]] | None = None
        self.closed = False
        self.pid = os.getpid()  # the process that opened the Screen: the only one that draws

    def close(self) -> None:
        if self.closed or _restore.defer(self.close):
            return
        self.closed = True
        fb = self.fb
        mine = os.getpid() == self.pid  # a forked child puts back nothing of its parent's
        try:
            if mine and not fb.closed and self._device_there():
                if self.strategy is not None:
                    self.strategy.close()
                if self.original_palette is not None and not fb.changed_elsewhere("palette"):
                    try:
                        fb.set_palette(self.original_palette)
                    except (OSError, ValueError) as e:
                        warnings.warn(
                            f"fbgfx: could not restore the palette on {fb.path}: {e}", RuntimeWarning, stacklevel=2
                        )
        finally:
            try:
                if self.console is not None:
                    self.console.restore()
            finally:
                _restore.unregister(self)
                fb.disown(self)
                self.strategy = None
                log = self.log() if self.log is not None else None
                if log is not None:
                    # a Surface kept from the Screen draws on (into its own memory) until
                    # the device closes; then it refuses
                    log.before_write = functools.partial(_refuse_when_closed, weakref.ref(fb), fb.path)
                release = self.release() if self.release is not None and fb.closed else None
                if release is not None:
                    release()

    def _device_there(self) -> bool:
        """False for a device that is gone (a truncated framebuffer file): putting pages
        back would touch memory that is no longer there."""
        try:
            self.fb.check()
        except FramebufferError as e:
            warnings.warn(f"fbgfx: not restoring the screen: {e}", RuntimeWarning, stacklevel=3)
            return False
        return True

    def __repr__(self) -> str:
        return f"<Screen changes on {self.fb.path}{' (put back)' if self.closed else ''}>"


def _refuse_when_closed(fb: weakref.ref[Framebuffer], path: str) -> None:
    device = fb()
    if device is None or device.closed:
        raise FramebufferError(errno.EBADF, "the framebuffer is closed", path)


# -- back buffers: what the Surface draws on, and how a frame leaves it ------------------------------


class _Back:
    """The Screen's drawing target and frame bookkeeping (one subclass per kind)."""

    _surface: Surface

    def __init__(self, strategy: Buffering, transfer: Transfer) -> None:
        self.strategy, self.transfer = strategy, transfer
        self.format, self.palette = transfer.format, transfer.palette
        self.width, self.height = transfer.width, transfer.height

    def surface(self) -> Surface:
        """The Surface to draw the next frame on, up to date."""
        raise NotImplementedError

    @property
    def surface_object(self) -> Surface:
        """The Surface itself, as it is (not brought up to date)."""
        return self._surface

    def drawn(self, x0: int, y0: int, x1: int, y1: int) -> None:
        """[x0, x1) x [y0, y1) of the frame was drawn on (clipped)."""

    def discard(self) -> None:
        """Go back to the last shown frame (blank with ``clear``)."""

    def flip(self) -> None:
        """Show the frame."""

    def present(self, rgb: np.ndarray) -> None:
        """Show a frame-sized RGB picture."""
        raise NotImplementedError

    def present_part(self, rgb: np.ndarray, x: int, y: int, background: int) -> None:
        """Show a smaller RGB picture at (x, y) with ``background`` (native) around it."""
        raise NotImplementedError

    def _compose(self, target: np.ndarray, rgb: np.ndarray, x: int, y: int, background: int) -> None:
        h, w = rgb.shape[:2]
        for bx0, by0, bx1, by1 in _around((x, y, x + w, y + h), self.width, self.height):
            convert.fill(target[by0:by1, bx0:bx1], background)
        convert.to_native(rgb, self.format, target[y : y + h, x : x + w], palette=self.palette)


class _InPlace(_Back):
    """``"single"`` where the page has the frame's layout: drawing is visible at once,
    so there is nothing to flip or undo."""

    def __init__(self, strategy: Buffering, transfer: Transfer) -> None:
        super().__init__(strategy, transfer)
        self.page = strategy.visible()
        # a log only for its write hook: a Surface kept past the device's close refuses
        self.log = DrawLog()
        self._surface = Surface.wrap(self.page, self.format, palette=self.palette, log=self.log)

    def surface(self) -> Surface:
        return self._surface

    def present(self, rgb: np.ndarray) -> None:
        self.transfer.convert(rgb, self.page)
        self.strategy.flush()

    def present_part(self, rgb: np.ndarray, x: int, y: int, background: int) -> None:
        self._compose(self.page, rgb, x, y, background)
        self.strategy.flush()

    def flip(self) -> None:
        self.strategy.flush()  # shown already, except where the driver shows a copy


class _InRam(_Back):
    """Frames composed in a RAM back buffer (the device's format, the frame's layout)
    and shown by the buffering strategy, copying only what changed.

    What the Surface draws is logged in C (a :class:`~fbgfx._draw.drawlog.DrawLog`) and taken into
    ``current`` when a frame is shown or dropped (:meth:`_sync`): drawing calls stay one
    C call each. After :meth:`present` the back buffer lags behind the picture on screen
    (``stale``) until it is next drawn on: the first drawing call brings it level
    (:meth:`_catch_up`) before it writes a pixel, under a lock, so that another thread's
    drawing is never overwritten by the catching up.
    """

    def __init__(self, strategy: Buffering, transfer: Transfer, background: int) -> None:
        super().__init__(strategy, transfer)
        self.background = background
        self.shadow = np.empty(self.format.array_shape(self.height, self.width), self.format.dtype)
        convert.fill(self.shadow, background)
        self.current = Region(self.width, self.height)  # drawn since the last flip
        self.log = DrawLog()
        self._surface = Surface.wrap(self.shadow, self.format, palette=self.palette, log=self.log)
        self._taken = Region(self.width, self.height)  # what _sync took from the log
        rows = np.zeros(6, np.int32)
        self._take = functools.partial(self._taken.absorb, self.log.taker(self._taken.x0, self._taken.x1, rows), rows)
        self._catching_up = threading.RLock()
        self._stale = False  # the back buffer lags behind a present()ed picture
        self.log.before_write = None  # (tells the Surface: its drawing calls take their fast paths)

    @property
    def stale(self) -> bool:
        return self._stale

    @stale.setter
    def stale(self, value: bool) -> None:
        self._stale = value
        # while stale, a drawing call first brings the back buffer level
        hook = self._level if value else None
        if self.log.before_write != hook:  # (setting it tells the Surface: once is enough)
            self.log.before_write = hook

    def _level(self) -> None:
        with self._catching_up:
            if self._stale:
                self._catch_up(None)

    def _sync(self) -> None:
        """Take what the Surface drew since the last look into this frame's regions."""
        if self.log.pending:
            self._taken.clear()
            self._take()
            self._add(self._taken)

    def _add(self, region: Region) -> None:
        """``region`` of the frame was drawn on."""
        self.current.merge(region)

    def surface(self) -> Surface:
        if self.stale:
            self._level()
        return self._surface

    def drawn(self, x0: int, y0: int, x1: int, y1: int) -> None:
        with self._catching_up:
            if self._stale:
                # written into the array directly (mark_dirty) while the back buffer
                # lagged: bring the rest of it up to the picture around what was written
                self._catch_up((x0, y0, x1, y1))
        self.current.add(x0, y0, x1, y1)

    def flip(self) -> None:
        self._sync()
        if self.current.empty:  # also right after present(): it is on screen already
            self.strategy.wait_for_vsync()
            return
        self.strategy.show(self.current, self._write)
        self._after_flip()

    def _write(self, page: np.ndarray, region: Region) -> None:
        self.transfer.copy(self.shadow, region, page)

    def present(self, rgb: np.ndarray) -> None:
        transfer = self.transfer
        self.strategy.show(None, lambda page, _: transfer.convert(rgb, page))
        if self.log.pending:
            self._sync()  # what was drawn is covered by the picture: forget it
        self.current.clear()
        self._presented(rgb)

    def present_part(self, rgb: np.ndarray, x: int, y: int, background: int) -> None:
        self._sync()
        self._caught_up()  # every pixel is drawn below
        self._compose(self.shadow, rgb, x, y, background)
        self.drawn(0, 0, self.width, self.height)
        self.flip()

    def _after_flip(self) -> None:
        """The frame in ``current`` is on screen: prepare the next one."""
        raise NotImplementedError

    def _presented(self, rgb: np.ndarray) -> None:
        """``rgb`` is on screen, the back buffer lags behind it."""
        raise NotImplementedError

    def _catch_up(self, exclude: Box | None) -> None:
        """Bring the back buffer to the last presented picture, except ``exclude``, and
        then (only then: the hook keeps other threads' calls waiting) end ``stale``."""
        raise NotImplementedError

    def _caught_up(self) -> None:
        """Forget the presented picture: the back buffer is about to be drawn whole."""
        self.stale = False


class _KeepBack(_InRam):
    """Each frame starts with the last one's content; a mirror of the shown frame is
    kept in RAM so :meth:`discard` can go back to it without reading video memory."""

    def __init__(self, strategy: Buffering, transfer: Transfer, background: int) -> None:
        super().__init__(strategy, transfer, background)
        self.mirror = self.shadow.copy()
        self._source: np.ndarray | None = None  # the presented picture, while stale

    def discard(self) -> None:
        self._sync()
        if self.stale:
            return
        for y0, y1, x0, x1 in self.current.runs():
            self.shadow[y0:y1, x0:x1] = self.mirror[y0:y1, x0:x1]
        self.current.clear()

    def _after_flip(self) -> None:
        for y0, y1, x0, x1 in self.current.runs():
            self.mirror[y0:y1, x0:x1] = self.shadow[y0:y1, x0:x1]
        self.current.clear()

    def _presented(self, rgb: np.ndarray) -> None:
        # the picture first: once stale, a drawing call (another thread's) catches up with it
        self._source = rgb
        self.stale = True

    def _caught_up(self) -> None:
        self.stale, self._source = False, None

    def _catch_up(self, exclude: Box | None) -> None:
        source = self._source
        assert source is not None  # kept while stale
        convert.to_native(source, self.format, self.mirror, palette=self.palette)
        for x0, y0, x1, y1 in _around(exclude or (0, 0, 0, 0), self.width, self.height):
            self.shadow[y0:y1, x0:x1] = self.mirror[y0:y1, x0:x1]
        self._caught_up()  # last: until then other threads' drawing calls wait in _level


class _ClearBack(_InRam):
    """Each frame starts blank (``clear``): after a flip what it drew is blanked, and
    those areas are what the next flip must write at least (the screen still shows
    them)."""

    def __init__(self, strategy: Buffering, transfer: Transfer, background: int) -> None:
        super().__init__(strategy, transfer, background)
        self.since_clear = Region(self.width, self.height)  # drawn since the back buffer was blank
        self.carry = Region(self.width, self.height)  # blanked at the last flip, not shown yet

    def drawn(self, x0: int, y0: int, x1: int, y1: int) -> None:
        super().drawn(x0, y0, x1, y1)
        self.since_clear.add(x0, y0, x1, y1)

    def _add(self, region: Region) -> None:
        super()._add(region)
        self.since_clear.merge(region)

    def discard(self) -> None:
        self._sync()
        if self.stale:
            return
        for y0, y1, x0, x1 in self.current.runs():
            convert.fill(self.shadow[y0:y1, x0:x1], self.background)
        self.current.copy_from(self.carry)
        self.since_clear.clear()

    def _after_flip(self) -> None:
        for y0, y1, x0, x1 in self.since_clear.runs():
            convert.fill(self.shadow[y0:y1, x0:x1], self.background)
        self.current.copy_from(self.since_clear)
        self.carry.copy_from(self.since_clear)
        self.since_clear.clear()

    def _presented(self, rgb: np.ndarray) -> None:
        del rgb  # the buffer starts blank: only that it lags behind matters
        self.stale = True
        self.since_clear.clear()

    def _catch_up(self, exclude: Box | None) -> None:
        for x0, y0, x1, y1 in _around(exclude or (0, 0, 0, 0), self.width, self.height):
            convert.fill(self.shadow[y0:y1, x0:x1], self.background)
        self.current.add_all()  # the screen shows the picture, the buffer is blank
        self.carry.add_all()
        self._caught_up()  # last: until then other threads' drawing calls wait in _level


# -- picture placement ----------------------------------------------------------------------------


def _flatten(rgba: np.ndarray, background: Sequence[int]) -> np.ndarray:
    """RGBA over a solid colour (its first three channels are r, g, b), as RGB."""
    a = rgba[..., 3:4].astype(np.uint16)
    bg = np.array(background[:3], np.uint16)
    out = (rgba[..., :3].astype(np.uint16) * a + bg * (255 - a) + 127) // 255
    return out.astype(np.uint8)


def _around(box: tuple[int, int, int, int], width: int, height: int) -> list[tuple[int, int, int, int]]:
    """The screen minus ``box`` as up to four (x0, y0, x1, y1) rectangles."""
    x0, y0, x1, y1 = box
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x0 >= x1 or y0 >= y1:
        return [(0, 0, width, height)]
    rects = [(0, 0, width, y0), (0, y1, width, height), (0, y0, x0, y1), (x1, y0, width, y1)]
    return [r for r in rects if r[0] < r[2] and r[1] < r[3]]
