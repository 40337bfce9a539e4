"""Put the screen back on every way out of the process.

Whatever fbgfx changes on a device (mode, virtual size, pan offset, colour map, the
console's KD mode) registers a restore callback here while the change is in force.
The callbacks run, newest first:

- at interpreter exit (``atexit``), for anything the program did not close;
- on ``SIGINT``, ``SIGTERM`` and ``SIGHUP`` when the process would die of them:
  the signal's default action then still happens afterwards, so the exit status is
  the one the signal gives (``-SIGTERM``) and Ctrl-C still raises
  :class:`KeyboardInterrupt`.

Handlers the application installed before fbgfx are chained, not replaced: such a
handler is called and decides. If it exits or raises, ``with`` blocks and ``atexit``
restore the screen; if it returns, the program carries on with its screen intact.
A signal the application ignores (``SIG_IGN``, e.g. under ``nohup``) stays ignored.
Signal handlers can only be set from the main thread; elsewhere only ``atexit``
applies. A forked child does not restore its parent's devices.

The registry holds its owners weakly: an object dropped without being closed is
collected as any other (a :class:`~fbgfx.Framebuffer` then puts the device back as it
goes, as a file closes: :mod:`fbgfx._closing`; :func:`restore_all` first closes what
the closer thread has yet to). A restore that a signal handler asks for while the same
thread is inside a device operation (:data:`critical`: a pan, a mode change, a
Screen's present) waits for the operation's end, so that the operation never carries
on with state the restore changed under it.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import weakref
from typing import Any, Callable

from . import _closing
from .errors import warn_on_error

__all__ = ["SIGNALS", "critical", "defer", "register", "registered", "restore_all", "unregister"]

#: The signals on which registered devices are restored before the process dies.
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

_lock = threading.RLock()
# id(owner) -> (weak reference to owner, callback or weak method), oldest first. Nothing
# here keeps an owner alive: a Screen or Framebuffer dropped without close is collected.
_entries: dict[int, tuple[weakref.ref[Any], Callable[[], Any]]] = {}
_previous: dict[int, Any] = {}
_pid = os.getpid()
_atexit_done = False


def register(owner: Any, restore: Callable[[], None], *, newest: bool = False) -> None:
    """Run ``restore()`` if the process ends while ``owner`` is registered.

    Registering an owner again keeps its place in the order unless ``newest`` moves
    it to the end (restored first): a Screen does so once set up, so that it is
    closed before the framebuffer whose changes it made is restored.
    """
    global _atexit_done
    with _lock:
        if id(owner) in _entries:
            if newest:
                _entries[id(owner)] = _entries.pop(id(owner))
            return
        key = id(owner)
        ref = weakref.ref(owner, lambda r: _forget(key, r))
        # a bound method of the owner itself must not keep the owner alive
        method = weakref.WeakMethod(restore) if getattr(restore, "__self__", None) is owner else None
        _entries[key] = (ref, method if method is not None else lambda: restore)
        if not _atexit_done:
            atexit.register(_at_exit)
            _atexit_done = True
        if len(_entries) == 1:
            _install()


def unregister(owner: Any) -> None:
    """Forget ``owner`` (it was closed and restored); a no-op when not registered."""
    with _lock:
        if _entries.pop(id(owner), None) is not None and not _entries:
            _uninstall()


def _forget(key: int, ref: weakref.ref[Any]) -> None:
    """An owner was collected without being closed: drop its entry (no lock: this runs
    inside the garbage collector, maybe while this thread holds the lock)."""
    entry = _entries.get(key)
    if entry is not None and entry[0] is ref:
        _entries.pop(key, None)


def registered() -> list[Any]:
    """The owners that would be restored now, oldest first."""
    with _lock:
        owners = [ref() for ref, _ in _entries.values()]
    return [owner for owner in owners if owner is not None]


def restore_all() -> None:
    """Run every registered restore callback, newest first, and forget them.

    A callback that fails is reported as a warning and the others still run. Objects
    dropped unclosed that wait for the closer thread are closed first.
    """
    if os.getpid() != _pid:
        return
    # Displays dropped unclosed that the closer thread has yet to close: close them here.
    _closing.close_waiting()
    # A callback may register again (restoring a palette is a change too): go round
    # until nothing is left, a few times at most.
    for _ in range(4):
        with _lock:
            if not _entries:
                break
            batch = list(_entries.values())[::-1]
            _entries.clear()
        for ref, get in batch:
            owner, callback = ref(), get()
            if owner is None or callback is None:
                continue  # collected meanwhile (a Framebuffer restores itself as it goes)
            # a failing device must not stop the others
            warn_on_error(callback, "restoring %r", owner)
    with _lock:
        if not _entries:
            _uninstall()


# -- critical sections --------------------------------------------------------------------


class _Critical(threading.local):
    """``with critical:`` marks a device operation in progress in this thread (a pan,
    a mode change, a Screen's present). A close or restore asked for meanwhile from
    the same thread, which only a signal handler can do, is put off by :func:`defer`
    until the outermost section ends. A class rather than a generator: it runs on
    every flip."""

    depth = 0
    deferred: list[Callable[[], Any]] | None = None

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: Any) -> None:
        self.depth -= 1
        if self.depth == 0 and self.deferred:
            self._run_deferred()

    def _run_deferred(self) -> None:
        todo, self.deferred = self.deferred or [], None
        error: BaseException | None = None
        for fn in todo:
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - raised below, after the rest ran (SIGINT too)
                error = error or e
        if error is not None:
            raise error


#: Enter around an operation that a close from a signal handler must not cut in two.
critical = _Critical()


def defer(fn: Callable[[], Any]) -> bool:
    """Put ``fn`` off to the end of this thread's :data:`critical` section, if it is in
    one; returns False (and does nothing) when it is not: then run ``fn`` now."""
    if critical.depth == 0:
        return False
    if critical.deferred is None:
        critical.deferred = []
    critical.deferred.append(fn)
    return True


# -- signals ------------------------------------------------------------------------------


def _handle(signum: int, frame: Any) -> None:
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous) and previous is not signal.default_int_handler:
        # The application's handler decides whether (and how) the process ends.
        previous(signum, frame)
        return
    if defer(lambda: _handle(signum, None)):
        return  # in the middle of a device operation: restore and die at its end
    restore_all()
    if previous is signal.default_int_handler:
        raise KeyboardInterrupt
    # The default action: die of the signal, so the parent sees the right status.
    try:
        signal.signal(signum, signal.SIG_DFL)
    except ValueError:  # pragma: no cover - handlers always run in the main thread
        pass
    signal.raise_signal(signum)


def _install() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        current = signal.getsignal(signum)
        if current is _handle:
            continue
        if current in (signal.SIG_IGN, None):
            continue  # ignored on purpose, or owned by C code we cannot chain
        # Known before _handle can run: a signal arriving just after signal() must find
        # the application's handler to chain, not take the default action.
        _previous[signum] = current
        try:
            signal.signal(signum, _handle)
        except (ValueError, OSError):
            del _previous[signum]
            continue


def _uninstall() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for signum, previous in list(_previous.items()):
        try:
            if signal.getsignal(signum) is _handle:
                signal.signal(signum, previous)
        except (ValueError, OSError):  # pragma: no cover
            continue
        del _previous[signum]


def _at_exit() -> None:
    restore_all()


def _forget_in_child() -> None:
    # Another thread (fbgfx's closer, closing a dropped display) may have held the lock
    # as the process forked: the child, which has only the forking thread, gets a new one.
    global _lock, _pid
    _lock = threading.RLock()
    _pid = os.getpid()
    _entries.clear()  # the parent's devices are the parent's to restore


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
