"""The live status line of ``fbgfx play`` (:class:`Status`); the play itself, its
read-ahead and its pacing are :class:`fbgfx.video.Player`'s.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ._clock import now

if TYPE_CHECKING:
    from ._command import Context

__all__ = ["Status"]


class Status:
    """frames/fps/drops on one self-rewriting stderr line, when stderr is a terminal."""

    def __init__(self, context: Context, always_summary: bool, verb: str = "played") -> None:
        self.live = sys.stderr.isatty()
        self.summary = always_summary or self.live
        self.start = now()
        self.shown = self.dropped = 0
        self._last = 0.0
        self._verb = verb
        self._context = context
        context.live = self if self.live else None

    def frame(self, dropped: bool) -> None:
        """Count a frame shown or dropped; refresh the live line twice a second."""
        if dropped:
            self.dropped += 1
        else:
            self.shown += 1
        if self.live:
            current = now()
            if current - self._last >= 0.5:
                self._last = current
                sys.stderr.write(f"\rplay: {self.text(current)}  ")
                sys.stderr.flush()

    def text(self, current: float) -> str:
        """``N frames, F fps, D dropped, S s``."""
        elapsed = max(current - self.start, 1e-9)
        return f"{self.shown} frames, {self.shown / elapsed:.1f} fps, {self.dropped} dropped, {elapsed:.1f} s"

    def finish(self) -> None:
        """End the live line with the summary (always on a terminal, else when asked)."""
        self._context.live = None
        if self.summary:
            end = "\r" if self.live else ""
            sys.stderr.write(f"{end}fbgfx: {self._verb} {self.text(now())}\n")
            sys.stderr.flush()
