"""Watching for monitors that come and go: the kernel's uevents, one thread a process.

The kernel announces a connector change on a DRM card with a ``change`` uevent for the
card (``HOTPLUG=1``). fbgfx reads them from a raw ``NETLINK_KOBJECT_UEVENT`` socket (the
kernel's own broadcast, group 1): no dependency, no udev daemon needed (a kiosk's
initramfs or a container often has none), readable without privileges. pyudev would
add libudev and see the events only after udevd has handled them.

On any DRM ``change`` or ``add`` uevent every open ``drm:`` display re-probes its
connectors (:meth:`Watched.reprobe`). Where no netlink socket can be opened (a
sandbox), connector states are polled every :data:`POLL_INTERVAL` seconds instead,
cheaply (the kernel's cached state, no EDID read).

The thread starts with the first display watched and ends with the last; it holds no
lock while it waits, and takes a display's card lock only to re-probe it. It holds the
displays weakly: watching a display does not keep it alive. A fatal signal's restore
waits while this thread holds the module's lock (:data:`fbgfx._restore.critical`): it
may close a dropped display, which takes the lock.
"""

from __future__ import annotations

import functools
import os
import select
import threading
import weakref
from typing import TYPE_CHECKING, Protocol

from .. import _closing, _restore
from ..errors import warn_on_error

if TYPE_CHECKING:
    import socket

__all__ = ["POLL_INTERVAL", "Watched", "is_drm_change", "parse_uevent", "rescan", "unwatch", "watch", "watching"]

#: Seconds between polls where uevents cannot be read.
POLL_INTERVAL = 2.0
_NETLINK_KOBJECT_UEVENT = 15
_KERNEL_GROUP = 1
# How long the closer thread waits for the watcher to end (see unwatch)
_CLOSER_JOIN = 1.0

_lock = threading.Lock()
# id(display) -> weak reference. Nothing here dereferences a display under the lock: a
# display whose last reference went there would be closed in place, and its close takes
# the lock.
_watched: dict[int, weakref.ref[Watched]] = {}
_collected: list[tuple[int, weakref.ref[Watched]]] = []  # entries of displays collected
_thread: _Watcher | None = None


class Watched(Protocol):
    """What the watcher calls on a display."""

    def reprobe(self, probe: bool = True) -> None:
        """Read the connectors again (``probe``: have the kernel detect them and read
        their EDID; else its last known state) and act on what changed."""
        ...


def watch(display: Watched) -> None:
    """Re-probe ``display`` on every DRM uevent until :func:`unwatch` (or until it is
    collected: it is held weakly)."""
    global _thread
    key = id(display)
    with _restore.critical, _lock:
        _prune()
        _watched[key] = weakref.ref(display, lambda ref: _forget(key, ref))
        if _thread is None or not _thread.is_alive():
            _thread = _Watcher()
            _thread.start()


def unwatch(display: Watched) -> None:
    """Stop watching ``display``; the thread ends with the last one (not waited for
    when called from the thread itself, a callback that closes its display, and
    waited for a moment only by the closer thread, which such a callback may wait for)."""
    global _thread
    with _restore.critical, _lock:
        _prune()
        _watched.pop(id(display), None)
        if _watched or _thread is None:
            return
        thread, _thread = _thread, None
    if thread is threading.current_thread():
        thread.stop(close_at_exit=True)  # a callback closing its display: not waited for
        return
    if _closing.on_closer_thread():
        # A display dropped unclosed: the watcher may be in a callback that waits for
        # the closer (opening the connector this display holds): wait a moment only.
        thread.stop(close_at_exit=True)
        thread.join(_CLOSER_JOIN)
        return
    thread.stop()
    thread.join()
    thread.close_pipe()


def _forget(key: int, ref: weakref.ref[Watched]) -> None:
    """A watched display was collected: note it (no lock and no change to the dict: this
    runs inside the garbage collector, maybe while this thread holds the lock or copies
    the dict); :func:`_prune` drops its entry."""
    _collected.append((key, ref))


def _prune() -> None:
    """Drop the entries of displays collected (hold the lock)."""
    while _collected:
        key, ref = _collected.pop()
        if _watched.get(key) is ref:
            del _watched[key]


def watching() -> bool:
    """True while the watcher thread runs."""
    with _restore.critical, _lock:
        return _thread is not None and _thread.is_alive()


def rescan(probe: bool = True) -> None:
    """Re-probe every watched display now (what a DRM uevent does)."""
    with _restore.critical, _lock:
        refs = list(_watched.values())
    for ref in refs:
        # One at a time: a callback that opens the connector of a display the program
        # dropped must not find it kept alive here.
        display = ref()
        if display is not None:
            # one display's trouble must not stop the others' watching
            warn_on_error(functools.partial(display.reprobe, probe), "re-probing a display")
        del display


def _after_fork_in_child() -> None:
    # The watcher thread does not exist in a forked child: forget it (closing the
    # child's copies of its descriptors; the parent's thread keeps its own), and the
    # lock it may have held. The child's displays close without it.
    global _lock, _thread
    _lock = threading.Lock()
    thread, _thread = _thread, None
    _watched.clear()
    _collected.clear()
    if thread is not None:
        thread.forget()


os.register_at_fork(after_in_child=_after_fork_in_child)


def parse_uevent(data: bytes) -> dict[str, str]:
    """A kernel uevent (``"change@/devices/...\\0ACTION=change\\0SUBSYSTEM=drm\\0..."``)
    as its KEY=VALUE fields; {} for anything else (udev's own ``libudev`` messages)."""
    parts = data.split(b"\0")
    if not parts or b"@" not in parts[0]:
        return {}
    fields = {}
    for part in parts[1:]:
        key, sep, value = part.partition(b"=")
        if sep:
            fields[key.decode("ascii", "replace")] = value.decode("utf-8", "replace")
    return fields


def is_drm_change(fields: dict[str, str]) -> bool:
    """A uevent after which DRM connectors may have changed."""
    return fields.get("SUBSYSTEM") == "drm" and fields.get("ACTION") in ("change", "add")


def _uevent_socket() -> socket.socket | None:
    # socket is imported here, when a drm: display opens: a program that only draws on
    # /dev/fbN does not pay for it at startup.
    import socket  # noqa: PLC0415 (see the comment above)

    try:
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, _NETLINK_KOBJECT_UEVENT)
    except (OSError, AttributeError):
        return None
    try:
        sock.bind((0, _KERNEL_GROUP))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    except OSError:
        sock.close()
        return None
    return sock


class _Watcher(threading.Thread):
    """Waits for uevents (or the poll interval) and for a wake-up to stop."""

    def __init__(self) -> None:
        super().__init__(name="fbgfx-hotplug", daemon=True)
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._stopping = False
        self._close_at_exit = False
        self.sock = _uevent_socket()

    def stop(self, close_at_exit: bool = False) -> None:
        """Ask the thread to end. The wake-up pipe stays open until :meth:`close_pipe`
        (after ``join``), or until the thread ends with ``close_at_exit``, so that this
        write never meets a closed (or reused) descriptor."""
        self._close_at_exit = close_at_exit
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def close_pipe(self) -> None:
        """Close the wake-up pipe once the thread has ended."""
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def forget(self) -> None:
        """In a forked child: close this process's copies of the thread's descriptors."""
        self.close_pipe()
        if self.sock is not None:
            self.sock.close()

    def run(self) -> None:
        try:
            while not self._stopping:
                fds = [self._wake_r] + ([self.sock] if self.sock is not None else [])
                ready, _, _ = select.select(fds, [], [], None if self.sock is not None else POLL_INTERVAL)
                if self._stopping:
                    break
                if self._wake_r in ready:
                    try:
                        os.read(self._wake_r, 64)  # a stale wake-up: keep waiting
                    except OSError:
                        pass
                if self.sock is None:
                    rescan(probe=False)
                    continue
                if self.sock in ready and _drm_changed(self.sock):
                    rescan()
        finally:
            if self.sock is not None:
                self.sock.close()
            if self._close_at_exit:
                self.close_pipe()


def _drm_changed(sock: socket.socket) -> bool:
    import socket  # noqa: PLC0415 (as in _uevent_socket)

    changed = False
    while True:
        try:
            data = sock.recv(16384, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return changed
        except OSError:  # ENOBUFS: events were lost; look anyway
            return True
        changed |= is_drm_change(parse_uevent(data))
