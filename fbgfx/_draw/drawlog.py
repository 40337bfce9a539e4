"""DrawLog: what a Surface's drawing calls changed, kept in C for the Screen that shows it.

A Screen copies only what changed between flips. A Python callback per drawing call
would cost more than the drawing, so the C kernels record each call's box themselves,
as per-row spans (the shape of :class:`fbgfx._screen.region.Region`) in arrays this object
owns, and the one-call fast paths stay one C call. The Screen makes a :class:`DrawLog`,
gives it to the Surface it draws on (``Surface.wrap(..., log=log)``), and takes the log
at each flip. The log also holds the Screen's write hook: a function run before any
drawing call writes a pixel (a back buffer that lags behind a ``present()``ed picture
is brought level first).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from .._ffi import ffi, lib

__all__ = ["DrawLog"]

_INT32_MAX = 2**31 - 1


class DrawLog:
    """The spans one Surface's drawing calls changed since the log was last taken, and
    the hook run before they write.

    Attach it to a surface with ``Surface.wrap(array, format, log=DrawLog())``; one
    surface per log, for the surface's whole life.
    """

    def __init__(self) -> None:
        self._target: Any = None  # the surface's draw_target, once attached
        self._spans: tuple[np.ndarray, np.ndarray] | None = None
        self._height = 0
        self._before_write: Callable[[], None] | None = None
        self._changed: Callable[[], Callable[[], None] | None] = lambda: _nothing

    def attach(self, target: Any, height: int, changed: Callable[[], None]) -> None:
        """Start logging what is drawn through ``target`` (a Surface's ``draw_target``
        of ``height`` rows); ``changed()`` is called when the write hook is set or
        removed. Called by the Surface the log is given to."""
        if self._target is not None:
            raise ValueError("this DrawLog already belongs to a surface")
        n = max(height, 1)
        # C writes these: they live as long as this log, which the surface keeps
        self._spans = (np.full(n, _INT32_MAX, np.int32), np.zeros(n, np.int32))
        target.log_top, target.log_bottom = _INT32_MAX, 0
        target.log_x1 = ffi.cast("int32_t *", self._spans[1].ctypes.data)
        target.log_x0 = ffi.cast("int32_t *", self._spans[0].ctypes.data)
        self._target, self._height = target, height
        # Weakly: the surface keeps this log, and a cycle back to it would keep the
        # surface's pixels (a Screen's back buffer) until the garbage collector runs.
        self._changed = weakref.WeakMethod(changed) if hasattr(changed, "__self__") else (lambda: changed)

    @property
    def pending(self) -> bool:
        """Whether anything was logged since the log was last taken."""
        t = self._target
        return t is not None and bool(t.log_top < t.log_bottom)

    def taker(self, x0: np.ndarray, x1: np.ndarray, rows: np.ndarray) -> Callable[[], int]:
        """``take()``: take everything logged and empty the log, in one step (a thread
        drawing meanwhile loses nothing), into these arrays, checked once here and kept
        alive by ``take``. As ``native/draw.c`` ``draw_log_take``: 2 with the one
        rectangle in ``rows[2:6]``, 1 with the spans added to ``x0``/``x1`` (int32, a span
        per row; ``rows[0:2]`` their [top, bottom), widened), 0 when nothing was logged.

        Raises:
            ValueError: The log is not attached, or arrays of the wrong kind or size.
        """
        t = self._target
        if t is None or self._spans is None:
            raise ValueError("this DrawLog is not attached to a surface")
        for a in (x0, x1, rows):
            if a.dtype != np.int32 or not a.flags.c_contiguous or not a.flags.writeable:
                raise ValueError("a log taker needs writable contiguous int32 arrays")
        if len(x0) < self._height or len(x1) < self._height or len(rows) != 6:
            raise ValueError("a log taker needs a span per row and six ints of rows")
        fn, i32 = lib.draw_log_take, "int32_t[]"
        x0p, x1p, rp = ffi.from_buffer(i32, x0), ffi.from_buffer(i32, x1), ffi.from_buffer(i32, rows)

        def take() -> int:
            return int(fn(t, x0p, x1p, rp))

        return take

    @property
    def before_write(self) -> Callable[[], None] | None:
        """Run before any drawing call writes a pixel, through the surface or its
        subsurfaces; while it is set, calls take the surface's general paths."""
        return self._before_write

    @before_write.setter
    def before_write(self, fn: Callable[[], None] | None) -> None:
        self._before_write = fn
        changed = self._changed()
        if changed is not None:
            changed()


def _nothing() -> None:
    pass
