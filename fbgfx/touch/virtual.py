"""The touchscreen of a virtual display: read like a kernel one, touched by any process.

Every file-backed virtual display (``virtual:WxH:file=PATH``) has a touchscreen.
:func:`fbgfx.touch.open` with no path, in a process whose ``$FRAMEBUFFER`` names the
display (or given its Screen, or the ``virtual:`` spec as its path), reads it as it
reads ``/dev/input/eventN``: the same :class:`~fbgfx.touch.TouchEvent` objects, the
Screen's rotation and ``$FBGFX_TOUCH_CALIBRATION`` applied as for a real panel.

Another process (a test, a browser bridge) touches it without any kernel support::

    from fbgfx.touch.virtual import VirtualTouch

    with VirtualTouch("virtual:320x240:file=/tmp/fb.raw") as finger:
        finger.wait_for_reader(5)      # until the app has opened its touchscreen
        finger.tap(100, 50)            # panel pixels, as a finger on the glass
        finger.press(10, 10); finger.move(60, 10); finger.release()

How: the touchscreen is the folder ``PATH.touch`` beside the display's files. Its
``device.json`` describes the device (a single-touch screen, ``INPUT_PROP_DIRECT``,
``ABS_X``/``ABS_Y`` spanning the panel's pixels when the folder was made, and
``BTN_TOUCH``). Each open reader owns a FIFO in the folder, made under a hidden name
and renamed into place once it holds both of its ends, so it never sees an end of
file. An injector writes every reader's FIFO the ``struct input_event`` bytes a kernel
single-touch driver hands out (``ABS_X``, ``ABS_Y``, ``BTN_TOUCH``, ``SYN_REPORT``,
stamped with ``CLOCK_MONOTONIC``), one write per touch, so the bytes of one touch are
never interleaved with another's (a write of at most ``PIPE_BUF`` bytes is atomic).
As with the kernel, a reader gets the events sent while it is open; a reader that does
not read loses touches once its FIFO is full, and FIFOs of readers that died are
removed by the next injector.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Sequence
from typing import Any

from .._closing import ClosesOnExit
from .._open import resolve
from ..errors import TouchError
from ..virtual import STATE_SUFFIX, VirtualDevice, parse_spec
from ._evdev import InputDevice
from ._finger import Finger, touchscreen_device
from ._touchscreen import Touchscreen

__all__ = ["NAME", "SUFFIX", "VirtualTouch", "display_file", "open_reader"]

#: The virtual touchscreen's device name (``ts.device.name``).
NAME = "fbgfx virtual touchscreen"
#: Appended to a framebuffer file's path to name its touchscreen folder.
SUFFIX = ".touch"
_DEVICE_FILE = "device.json"
_VERSION = 1
_MAX_DEVICE_BYTES = 4096


# -- which display ---------------------------------------------------------------------------


def display_file(path: str | None = None, screen: Any = None) -> str | None:
    """The framebuffer file of the virtual display a touch device is asked for, or None.

    Args:
        path: A ``virtual:`` spec (its ``file=``), or None: the display ``screen``
            shows on, else ``$FRAMEBUFFER``.
        screen: A :class:`~fbgfx.Screen` or :class:`~fbgfx.Framebuffer`, or None.

    Returns:
        The absolute path of the display's framebuffer file; None when the display is
        not a virtual one, or is one without ``file=`` (no other process can reach it).

    Raises:
        ValueError: ``path`` (or ``$FRAMEBUFFER``) is a bad ``virtual:`` spec.
    """
    if path is None and screen is not None:
        fb = getattr(screen, "fb", screen)
        device = getattr(fb, "device", None)
        if isinstance(device, VirtualDevice) and device.shared:
            return os.path.abspath(device.path)
        return None
    spec = resolve(path) if path is None else path
    if not spec.startswith("virtual:"):
        return None
    file = parse_spec(spec)[3].file
    return None if file is None else os.path.abspath(os.fspath(file))


def _display_size(file: str) -> tuple[int, int]:
    """The display's panel size now, read from its state without changing anything."""
    device = VirtualDevice(1, 1, file=file, readonly=True)
    try:
        var = device.get_var()
        return var.xres, var.yres
    finally:
        device.close()


# -- the touchscreen folder ----------------------------------------------------------------------


def _touch_folder(file: str, size: tuple[int, int] | None) -> tuple[str, InputDevice]:
    """The display's touchscreen folder and what its device is, made when missing.

    Made complete under a unique hidden name and renamed into place, so a process
    never sees a folder without its ``device.json``; when two make it at once, the
    first rename wins and the other takes its folder.
    """
    folder = file + SUFFIX
    info = _read_folder(folder)
    if info is not None:
        return folder, info
    if size is None:
        size = _display_size(file)
    parent, base = os.path.split(folder)
    try:
        mode = stat.S_IMODE(os.stat(file).st_mode) & 0o666
        tmp = tempfile.mkdtemp(dir=parent, prefix=f".{base}.", suffix=".new")
    except OSError as e:
        raise TouchError(e.errno or errno.EIO, f"cannot make the virtual touchscreen: {e.strerror}", folder) from None
    try:
        os.chmod(tmp, mode | (mode & 0o444) >> 2)  # a folder readable where the display is: searchable too
        doc = {"version": _VERSION, "name": NAME, "width": size[0], "height": size[1]}
        with open(os.path.join(tmp, _DEVICE_FILE), "w", encoding="utf-8") as f:
            json.dump(doc, f)
        try:
            os.rename(tmp, folder)
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise TouchError(
                    e.errno or errno.EIO, f"cannot make the virtual touchscreen: {e.strerror}", folder
                ) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info = _read_folder(folder)
    if info is None:  # pragma: no cover - removed again between the rename and here
        raise TouchError(errno.ENOENT, "the virtual touchscreen was removed while it was being opened", folder)
    return folder, info


def _read_folder(folder: str) -> InputDevice | None:
    """The device a touchscreen folder describes; None when there is no folder."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise TouchError(e.errno or errno.EIO, f"cannot read the virtual touchscreen: {e.strerror}", folder) from None
    if not stat.S_ISDIR(st.st_mode):
        raise TouchError(
            errno.ENOTDIR, "is not a virtual touchscreen folder (fbgfx made no such file; move it away)", folder
        )
    try:
        fd = os.open(os.path.join(folder, _DEVICE_FILE), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            doc = json.loads(f.read(_MAX_DEVICE_BYTES))
        w, h = doc["width"], doc["height"]
        if doc.get("version") != _VERSION or not all(isinstance(v, int) and 0 < v <= 1 << 16 for v in (w, h)):
            raise ValueError("unknown version or size")
    except (OSError, ValueError, KeyError, TypeError):
        raise TouchError(
            errno.EINVAL,
            f"is not a usable virtual touchscreen (its {_DEVICE_FILE} is missing or unreadable); delete the folder",
            folder,
        ) from None
    return touchscreen_device(folder, NAME, (w, h))


# -- reading -------------------------------------------------------------------------------


class _VirtualTouchscreen(Touchscreen):
    """A :class:`~fbgfx.touch.Touchscreen` on a reader's FIFO; closing removes the FIFO."""

    def __init__(self, fd: int, writer: int, fifo: str, device: InputDevice, screen: Any, calibration: Any) -> None:
        self._writer, self._fifo = writer, fifo
        try:
            super().__init__(fd, device, screen, calibration)
        except BaseException:
            self._release()
            raise

    def close(self) -> None:
        """Close the touchscreen and remove its FIFO; safe to call twice."""
        if not self.closed:
            self._release()  # gone from the folder before its ends close: no injector sees it dead
        super().close()

    def _release(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._fifo)
        if self._writer >= 0:
            writer, self._writer = self._writer, -1
            os.close(writer)


def open_reader(file: str, screen: Any = None, calibration: str | Sequence[float] | None = None) -> Touchscreen:
    """Open the touchscreen of the virtual display in framebuffer file ``file``.

    :func:`fbgfx.touch.open` calls this for a virtual display; arguments as there.

    Raises:
        TouchError: The touchscreen folder cannot be made or read.
        FramebufferError: ``file`` is not a framebuffer file.
    """
    size = None
    if screen is not None:
        fb = getattr(screen, "fb", screen)
        size = (int(fb.width), int(fb.height))
    folder, info = _touch_folder(file, size)
    hidden = os.path.join(folder, f".{os.getpid()}.{secrets.token_hex(6)}")
    fifo = os.path.join(folder, hidden[len(folder) + 2 :])
    try:
        os.mkfifo(hidden, 0o666)
    except OSError as e:
        raise TouchError(e.errno or errno.EIO, f"cannot open the virtual touchscreen: {e.strerror}", folder) from None
    fd = writer = -1
    try:
        fd = os.open(hidden, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # Its own write end: without one, a FIFO reads as ended whenever no injector has it open.
        writer = os.open(hidden, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        os.rename(hidden, fifo)
    except OSError as e:
        for end in (fd, writer):
            if end >= 0:
                os.close(end)
        with contextlib.suppress(OSError):
            os.unlink(hidden)
        raise TouchError(e.errno or errno.EIO, f"cannot open the virtual touchscreen: {e.strerror}", folder) from None
    return _VirtualTouchscreen(fd, writer, fifo, info, screen, calibration)


# -- touching ---------------------------------------------------------------------------------


class VirtualTouch(Finger, ClosesOnExit):
    """A finger on a virtual display's touchscreen: what a test or a bridge injects.

    Coordinates are panel pixels (the framebuffer's, unrotated): where the finger
    touches the glass. Every reader open at that moment gets the touch, turned into
    its own Screen's logical pixels by its own mapping.

    Args:
        display: The display: a file-backed :class:`~fbgfx.VirtualFramebuffer` (or a
            Screen on one), its ``virtual:...:file=PATH`` spec, or the framebuffer
            file's path.

    Raises:
        TouchError: The display is not a file-backed virtual one (``EINVAL``), or its
            touchscreen folder cannot be made or read.
        FramebufferError: The display file is not a framebuffer file.
    """

    def __init__(self, display: Any) -> None:
        fb = getattr(display, "fb", display)
        self._own = isinstance(display, (str, os.PathLike))
        if self._own:
            text = os.fspath(display)
            file = display_file(text) if text.startswith("virtual:") else os.path.abspath(text)
        else:
            file = display_file(None, fb)
        if file is None:
            raise TouchError(
                errno.EINVAL,
                "only a virtual display with a file (virtual:WxH:file=PATH) has a virtual touchscreen",
                str(getattr(fb, "path", display)),
            )
        self.file = file
        # A spec or path is opened read-only: looked at (the panel's size at each touch), never changed.
        self._fb: Any = None if self._own else fb
        self._device: VirtualDevice | None = VirtualDevice(1, 1, file=file, readonly=True) if self._own else None
        self._size_key: tuple[int, int] | None = None
        self._size = (0, 0)
        try:
            self.folder, self.device = _touch_folder(file, self.panel_size)
        except BaseException:
            self.close()
            raise
        self.down = False

    @property
    def panel_size(self) -> tuple[int, int]:
        """The panel's ``(width, height)`` in pixels now (it follows mode changes)."""
        if self._fb is not None:
            return int(self._fb.width), int(self._fb.height)
        if self._device is None:
            raise TouchError(errno.EBADF, "the virtual touch is closed", self.file)
        # The state file is replaced (a new inode) on every change: read it again only then.
        try:
            st = os.stat(self.file + STATE_SUFFIX)
            key: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
        except OSError:
            key = None
        if key is None or key != self._size_key:
            var = self._device.get_var()
            self._size, self._size_key = (var.xres, var.yres), key
        return self._size

    @property
    def readers(self) -> int:
        """How many touchscreens are open on the display now."""
        return len(self._open_readers(close=True))

    def close(self) -> None:
        """Let go of the display (a spec or path given was opened read-only); safe twice."""
        device, self._device, self._fb = self._device, None, None
        if device is not None:
            device.close()

    def __repr__(self) -> str:
        return f"<VirtualTouch {self.folder}>"

    # -- internals ---------------------------------------------------------------------------

    def _open_readers(self, close: bool = False) -> list[int]:
        """Write ends of every live reader's FIFO; dead readers' FIFOs are removed."""
        fds = []
        try:
            names = os.listdir(self.folder)
        except OSError as e:
            raise TouchError(
                e.errno or errno.EIO, f"cannot read the virtual touchscreen: {e.strerror}", self.folder
            ) from None
        for name in sorted(names):
            if name.startswith(".") or name == _DEVICE_FILE:
                continue
            path = os.path.join(self.folder, name)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no read end: its reader died without closing
                    with contextlib.suppress(OSError):
                        os.unlink(path)
                continue
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.close(fd)
                continue
            fds.append(fd)
        if close:
            for fd in fds:
                os.close(fd)
        return fds

    def _write(self, data: bytes) -> int:
        reached = 0
        for fd in self._open_readers():
            try:
                os.write(fd, data)
                reached += 1
            except BlockingIOError:
                pass  # a reader that does not read: it loses this touch, as from a full evdev queue
            except BrokenPipeError:
                pass  # closed just now
            finally:
                os.close(fd)
        return reached
