"""What every fbgfx object that holds a device or a file does in a ``with`` block, and
when it is dropped without ``close()``.

An object dropped unclosed is closed as it goes (its ``__del__`` calls
:func:`close_dropped`), as a file is. Dropped by its last reference, it is closed right
there. Collected by the garbage collector (a display that a callback of its own refers
to is a reference cycle), the collection may have started inside any lock of any thread,
so the close goes to the closer thread instead (:func:`start_closer`: ``drm:`` displays,
whose close takes the card's locks, start it), which closes it in a moment; at exit and
on fatal signals :mod:`fbgfx._restore` closes what still waits (:func:`close_waiting`).
"""

from __future__ import annotations

import gc
import os
import queue
import threading
import time
from typing import Any, TypeVar

__all__ = [
    "ClosesOnExit",
    "close_dropped",
    "close_unreferenced",
    "close_waiting",
    "on_closer_thread",
    "settle",
    "start_closer",
]

_Self = TypeVar("_Self", bound="ClosesOnExit")


class ClosesOnExit:
    """``with obj:`` gives ``obj`` and calls ``obj.close()`` at the end of the block,
    also when it ends by an exception (which goes on)."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds; the classes that mix this in say what."""
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# What the closer thread closes, oldest first; a threading.Event is a marker it sets
# (settle). SimpleQueue.put may be called from __del__ and weakref callbacks.
_queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
_closer: threading.Thread | None = None
_closer_lock = threading.Lock()
_collecting = False  # a garbage collection is under way (gc.callbacks)
_here = threading.local()  # .full: a full collection started on this thread (close_unreferenced)
# close_unreferenced waiting for the end of another thread's collection: one queue each
# (SimpleQueue.put takes no lock another thread could hold as the collection starts)
_gc_waiters: list[queue.SimpleQueue[None]] = []


def _on_gc(phase: str, info: dict[str, int]) -> None:
    global _collecting
    _collecting = phase == "start"
    if _collecting:
        if info.get("generation") == 2:
            _here.full = True
    else:
        for waiter in tuple(_gc_waiters):
            waiter.put(None)


def _watch_gc() -> None:
    if _on_gc not in gc.callbacks:
        gc.callbacks.append(_on_gc)


def start_closer() -> None:
    """Have the closer thread run in this process (call it in ordinary code, never from
    ``__del__``: starting a thread takes locks)."""
    global _closer
    with _closer_lock:
        if _closer is not None and _closer.is_alive():
            return
        _watch_gc()
        _closer = threading.Thread(target=_run, name="fbgfx-closer", daemon=True)
        _closer.start()


def on_closer_thread() -> bool:
    """Whether this is the closer thread (closing something dropped)."""
    return _closer is not None and threading.current_thread() is _closer


def _running() -> bool:
    closer = _closer
    return closer is not None and closer.is_alive()


def close_dropped(obj: Any) -> None:
    """Close ``obj`` if it is being collected unclosed (call it from its ``__del__``):
    now, or on the closer thread when a garbage collection found it.

    Left alone: an object already closed (or never fully opened: no ``_closed`` yet),
    and one a forked child inherited (``_pid`` is the opener's: the parent's to close).
    """
    try:
        if getattr(obj, "_closed", True) or getattr(obj, "_pid", None) != os.getpid():
            return
        if _collecting and _running():
            _queue.put(obj)  # keeps obj alive until it is closed
            return
    except Exception:  # noqa: BLE001 - nothing to report to during collection (or shutdown)
        return
    _close(obj)


def _close(obj: Any) -> None:
    try:
        obj.close()
    except Exception:  # noqa: BLE001 - nobody to tell: the program dropped it (as a file's close at collection)
        pass


def _run() -> None:
    while True:
        item = _queue.get()
        if isinstance(item, threading.Event):
            item.set()
        else:
            _close(item)
        del item  # the closed object goes now, not with the next one


def settle(timeout: float = 5.0) -> bool:
    """Wait until what the closer thread was given so far is closed.

    Returns:
        True when it is (also when no closer runs), False when ``timeout`` passed.
    """
    if not _running() or threading.current_thread() is _closer:
        return True
    done = threading.Event()
    _queue.put(done)
    return done.wait(timeout)


def close_unreferenced(timeout: float = 5.0) -> None:
    """Have the garbage collector look for objects nobody refers to now, and wait until
    those it hands to the closer thread are closed: what a program opening a device that
    one of its own dropped displays still holds does. Call it holding no lock."""
    deadline = time.monotonic() + timeout
    _watch_gc()
    while True:
        _here.full = False
        gc.collect()
        left = deadline - time.monotonic()
        if _here.full or left <= 0:
            break
        # Another thread's collection was under way (gc.collect() then returns at once),
        # which may have looked before the object was dropped: wait for its end, then
        # collect again.
        waiter: queue.SimpleQueue[None] = queue.SimpleQueue()
        _gc_waiters.append(waiter)
        try:
            waiter.get(timeout=left if _collecting else 0.001)  # else it is ending: a moment
        except queue.Empty:
            pass
        finally:
            _gc_waiters.remove(waiter)
    settle(max(0.0, deadline - time.monotonic()))


def close_waiting(timeout: float = 1.0) -> None:
    """Close now, on this thread, what waits for the closer thread (at exit, on fatal
    signals), after the close it is doing (up to ``timeout`` seconds)."""
    settle(timeout)
    while True:
        try:
            item = _queue.get_nowait()
        except queue.Empty:
            return
        if isinstance(item, threading.Event):
            item.set()
        else:
            _close(item)


def _after_fork_in_child() -> None:
    # The closer thread does not exist in a child; what it had queued is the parent's.
    global _closer, _closer_lock, _queue
    _closer, _closer_lock, _queue = None, threading.Lock(), queue.SimpleQueue()


os.register_at_fork(after_in_child=_after_fork_in_child)
