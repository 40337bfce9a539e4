"""Dirty regions: which pixels of a frame changed, kept cheap to add to and to copy.

A :class:`Region` is what :class:`~fbgfx.Screen` uses to copy only what drawing
changed: each drawing call adds its bounding box, and a flip copies the region's
rectangles (:meth:`Region.runs`) from the back buffer to video memory.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["Region", "mask_runs"]

# More separate row runs than this in one region are merged into horizontal bands:
# a copy per run costs a little Python time, a band copies some unchanged pixels.
_MAX_RUNS = 48
_BANDS = 16

#: (y0, y1, x0, x1): rows y0..y1-1, columns x0..x1-1.
Run = tuple[int, int, int, int]


def mask_runs(mask: np.ndarray) -> list[Run]:
    """Rectangles (y0, y1, x0, x1) covering the set cells of a 2-D bool mask (tiles, for
    the mirror and the web view): runs along each row, merged down while a run stays."""
    open_: dict[tuple[int, int], int] = {}
    out: list[Run] = []
    for y in range(mask.shape[0]):
        row = mask[y]
        spans: set[tuple[int, int]] = set()
        if row.any():
            edges = np.flatnonzero(np.diff(np.concatenate(([0], row.view(np.int8), [0]))))
            spans = {(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])}
        for span in list(open_):
            if span not in spans:
                out.append((open_.pop(span), y, *span))
        for span in spans:
            open_.setdefault(span, y)
    out.extend((y0, mask.shape[0], *span) for span, y0 in open_.items())
    return out


class Region:
    """A set of pixels of a width x height frame, as one column span per row:
    row ``y`` holds ``[x0[y], x1[y])``.

    While the region is a single rectangle (the common case: one drawing, or drawings
    inside one another) it is kept as that rectangle and costs next to nothing.
    Beyond that, adding a rectangle is two vectorised min/max operations whatever its
    size, and :meth:`runs` gives runs of rows that share a span, so small drawings
    cost small copies and overlapping ones never copy a pixel twice. A row's span
    covers everything between its leftmost and rightmost changes (a superset of
    what was added, never less).
    """

    __slots__ = ("x0", "x1", "top", "bottom", "width", "height", "box")

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.x0 = np.full(height, width, np.int32)
        self.x1 = np.zeros(height, np.int32)
        self.top, self.bottom = height, 0  # rows the arrays hold spans in
        # (x0, y0, x1, y1) while the region is exactly this rectangle (arrays unused),
        # None while it is empty or held in the arrays.
        self.box: tuple[int, int, int, int] | None = None

    @property
    def empty(self) -> bool:
        """True when the region holds no pixel."""
        return self.box is None and self.top >= self.bottom

    def add(self, x0: int, y0: int, x1: int, y1: int) -> None:
        """Add the rectangle [x0, x1) x [y0, y1), already clipped to the frame."""
        if x0 >= x1 or y0 >= y1:
            return
        box = self.box
        if box is None:
            if self.top >= self.bottom:
                self.box = (x0, y0, x1, y1)
                return
        elif box[0] <= x0 and box[1] <= y0 and x1 <= box[2] and y1 <= box[3]:
            return  # inside: nothing new
        elif x0 <= box[0] and y0 <= box[1] and box[2] <= x1 and box[3] <= y1:
            self.box = (x0, y0, x1, y1)  # around: the region becomes the new one
            return
        else:
            self.box = None
            self._spans(*box)
        self._spans(x0, y0, x1, y1)

    def _spans(self, x0: int, y0: int, x1: int, y1: int) -> None:
        a = self.x0[y0:y1]
        np.minimum(a, x0, out=a)
        b = self.x1[y0:y1]
        np.maximum(b, x1, out=b)
        if y0 < self.top:
            self.top = y0
        if y1 > self.bottom:
            self.bottom = y1

    def add_all(self) -> None:
        """Make the region the whole frame."""
        if self.top < self.bottom:  # (clear() but for the box, set here: a present marks every page so)
            self.clear()
        self.box = (0, 0, self.width, self.height)

    def merge(self, other: Region) -> None:
        """Add every span of ``other`` (a region of the same size)."""
        if other.box is not None:
            self.add(*other.box)
            return
        if other.top >= other.bottom:
            return
        if self.box is not None:
            box, self.box = self.box, None
            self._spans(*box)
        t, b = other.top, other.bottom
        np.minimum(self.x0[t:b], other.x0[t:b], out=self.x0[t:b])
        np.maximum(self.x1[t:b], other.x1[t:b], out=self.x1[t:b])
        self.top, self.bottom = min(self.top, t), max(self.bottom, b)

    def absorb(self, take: Callable[[], int], rows: np.ndarray) -> None:
        """Add what ``take()`` gives: a Surface's log of what was drawn
        (``DrawLog.taker``, made for this region's arrays and ``rows``), either one
        rectangle, kept as one, or spans added to the arrays."""
        if self.box is not None:  # the arrays must hold the whole region
            box, self.box = self.box, None
            self._spans(*box)
        rows[0], rows[1] = self.top, self.bottom
        got = take()
        if got == 2:
            x0, y0, x1, y1 = rows[2:].tolist()
            self.add(x0, y0, x1, y1)
        elif got == 1:
            self.top, self.bottom = int(rows[0]), int(rows[1])

    def clear(self) -> None:
        """Make the region empty."""
        self.box = None
        if self.top < self.bottom:
            self.x0[self.top : self.bottom] = self.width
            self.x1[self.top : self.bottom] = 0
            self.top, self.bottom = self.height, 0

    def copy_from(self, other: Region) -> None:
        """Make the region hold exactly what ``other`` holds."""
        self.clear()
        self.merge(other)

    def runs(self) -> list[Run]:
        """The region as (y0, y1, x0, x1) rectangles, top to bottom, not overlapping.

        More than a few dozen separate runs come back as at most 16 bands, cut at the
        widest stretches of untouched rows (a little more than the region, fewer copies).
        """
        box = self.box
        if box is not None:
            return [(box[1], box[3], box[0], box[2])]
        if self.top >= self.bottom:
            return []
        t, b = self.top, self.bottom
        x0, x1 = self.x0[t:b], self.x1[t:b]
        edges = np.flatnonzero((x0[1:] != x0[:-1]) | (x1[1:] != x1[:-1])) + 1
        starts = np.concatenate(([0], edges))
        ends = np.concatenate((edges, [b - t]))
        s0, s1 = x0[starts], x1[starts]
        keep = s1 > s0
        if np.count_nonzero(keep) > _MAX_RUNS:
            return self._bands()
        return [
            (t + int(a), t + int(z), int(c0), int(c1))
            for a, z, c0, c1 in zip(starts[keep], ends[keep], s0[keep], s1[keep])
        ]

    def _bands(self) -> list[Run]:
        """Many separate runs: at most _BANDS rectangles, split where rows are unchanged."""
        t, b = self.top, self.bottom
        x0, x1 = self.x0[t:b], self.x1[t:b]
        rows = np.flatnonzero(x1 > x0)
        gaps = np.diff(rows)
        # Cut at the widest stretches of unchanged rows, so they are never copied.
        cuts = min(_BANDS - 1, int(np.count_nonzero(gaps > 1)))
        split: list[int] = (np.sort(np.argpartition(gaps, -cuts)[-cuts:]) + 1).tolist() if cuts else []
        out = []
        for chunk in np.split(rows, split):
            lo, hi = int(chunk[0]), int(chunk[-1]) + 1
            out.append((t + lo, t + hi, int(x0[lo:hi].min()), int(x1[lo:hi].max())))
        return out
