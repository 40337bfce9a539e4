"""Comparing a screen with a baseline picture, and the report of the ones that differ.

:func:`compare` finds the pixels whose channels differ by more than a tolerance,
outside boxes to ignore; :func:`diff_image` shows them (the actual picture dimmed to
grey, differing pixels red, ignored boxes tinted blue); :class:`Report` keeps
expected, actual and diff PNGs per failure in one folder with an ``index.html``
listing every failure with its three pictures.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

__all__ = ["Box", "Difference", "Report", "compare", "diff_image", "ignore_mask", "is_blank", "parse_boxes"]

#: (left, top, right, bottom), right and bottom exclusive, as for ``PIL.Image.crop``.
Box = tuple[int, int, int, int]


def parse_boxes(ignore: Any) -> list[Box]:
    """``ignore=`` as a list of boxes: one box or a sequence of them.

    Raises:
        TypeError: Not boxes of four integers.
        ValueError: A box whose right or bottom is not beyond its left or top.
    """
    if ignore is None:
        return []
    items = list(ignore)
    if len(items) == 4 and all(isinstance(v, (int, np.integer)) for v in items):
        items = [items]  # one box given alone
    boxes = []
    for box in items:
        try:
            values = [v for v in box]
            if len(values) != 4 or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values
            ):
                raise TypeError
        except TypeError:
            raise TypeError(
                f"ignore= takes boxes (left, top, right, bottom) of integers, right and bottom exclusive, not {box!r}"
            ) from None
        x0, y0, x1, y1 = (int(v) for v in values)
        if x1 <= x0 or y1 <= y0:
            raise ValueError(f"ignore box {box!r} is empty: (left, top, right, bottom) with right > left, bottom > top")
        boxes.append((x0, y0, x1, y1))
    return boxes


def ignore_mask(size: tuple[int, int], boxes: Iterable[Box]) -> np.ndarray:
    """A (height, width) bool array, True inside any of the boxes (clipped to the picture)."""
    w, h = size
    mask = np.zeros((h, w), bool)
    for x0, y0, x1, y1 in boxes:
        mask[max(y0, 0) : max(min(y1, h), 0), max(x0, 0) : max(min(x1, w), 0)] = True
    return mask


@dataclass(frozen=True)
class Difference:
    """How two pictures of one size differ.

    Attributes:
        pixels: How many pixels differ by more than the tolerance in some channel.
        worst: The largest difference of one channel (0..255), over all compared pixels.
        box: The box (left, top, right, bottom; exclusive) around the differing pixels.
        mask: (height, width) bool array, True where a pixel differs.
    """

    pixels: int
    worst: int
    box: Box | None
    mask: np.ndarray = field(repr=False, compare=False)


def compare(
    actual: np.ndarray, expected: np.ndarray, tolerance: int = 0, ignored: np.ndarray | None = None
) -> Difference:
    """The pixels of two (h, w, 3) uint8 pictures that differ by more than ``tolerance``."""
    delta = np.abs(actual.astype(np.int16) - expected.astype(np.int16)).max(axis=2)
    if ignored is not None:
        delta[ignored] = 0
    mask = delta > tolerance
    count = int(mask.sum())
    box = None
    if count:
        rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
        box = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
    return Difference(count, int(delta.max()) if delta.size else 0, box, mask)


def is_blank(picture: np.ndarray, ignored: np.ndarray | None = None) -> bool:
    """True when every pixel (outside ``ignored``) has one colour."""
    flat = picture.reshape(-1, picture.shape[2])
    if ignored is not None:
        flat = flat[~ignored.reshape(-1)]
    return bool(len(flat) == 0 or (flat == flat[0]).all())


def diff_image(actual: np.ndarray, mask: np.ndarray, ignored: np.ndarray | None = None) -> Image.Image:
    """The actual picture dimmed to grey, differing pixels red, ignored boxes tinted blue."""
    grey = actual.astype(np.uint16).sum(axis=2) // 3 // 3 + 40
    out = np.repeat(grey[:, :, None], 3, axis=2).astype(np.uint8)
    if ignored is not None:
        out[ignored] = (out[ignored] // 2 + np.array([0, 0, 110], np.uint8)).astype(np.uint8)
    out[mask] = (255, 0, 0)
    return Image.fromarray(out)


# -- the report ---------------------------------------------------------------------------


@dataclass
class _Entry:
    test: str
    name: str
    message: str
    files: dict[str, str]  # kind -> path relative to the report folder


class Report:
    """The pictures of screens that did not match their baselines, and a page of them.

    Args:
        folder: Where the report goes (made when the first failure is added).
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.entries: list[_Entry] = []
        self.updated: list[str] = []

    @property
    def index(self) -> str:
        """The report's page: ``FOLDER/index.html``."""
        return os.path.join(self.folder, "index.html")

    def place(self, test: str, name: str) -> str:
        """The folder for one test's pictures (made), named after the test's id."""
        path = os.path.join(self.folder, _safe(test))
        os.makedirs(path, exist_ok=True)
        return os.path.join(path, _safe(name))

    def add(self, test: str, name: str, message: str, pictures: dict[str, Image.Image]) -> dict[str, str]:
        """Save ``pictures`` (kind -> image: expected, actual, diff) for a failure and
        rewrite the page; returns kind -> absolute path of each file written."""
        stem = self.place(test, name)
        written = {}
        for kind, image in pictures.items():
            path = f"{stem}-{kind}.png"
            image.save(path)
            written[kind] = path
        self.entries = [e for e in self.entries if (e.test, e.name) != (test, name)]
        relative = {k: os.path.relpath(p, self.folder) for k, p in written.items()}
        self.entries.append(_Entry(test, name, message, relative))
        self._write_index()
        return written

    def _write_index(self) -> None:
        rows = []
        for e in self.entries:
            cells = []
            for kind in ("expected", "actual", "diff"):
                if kind in e.files:
                    src = html.escape(e.files[kind].replace(os.sep, "/"))
                    image = f'<a href="{src}"><img src="{src}" alt="{kind}"></a>'
                    cells.append(f"<figure>{image}<figcaption>{kind}</figcaption></figure>")
                else:
                    cells.append(f"<figure><div class=none>no {kind}</div><figcaption>{kind}</figcaption></figure>")
            rows.append(
                f"<section><h2>{html.escape(e.test)} &mdash; {html.escape(e.name)}</h2>"
                f"<pre>{html.escape(e.message)}</pre><div class=row>{''.join(cells)}</div></section>"
            )
        page = (
            "<!doctype html><html><head><meta charset=utf-8><title>fbgfx screen mismatches</title><style>"
            "body{font-family:sans-serif;margin:1em;background:#fafafa}section{margin-bottom:2em}"
            "pre{white-space:pre-wrap;background:#eee;padding:.5em}.row{display:flex;gap:1em;flex-wrap:wrap}"
            "figure{margin:0}img{image-rendering:pixelated;border:1px solid #888;min-width:192px;max-width:480px}"
            ".none{width:160px;height:120px;border:1px dashed #888;display:flex;align-items:center;"
            "justify-content:center}"
            f"</style></head><body><h1>{len(self.entries)} screen mismatch{'es' if len(self.entries) != 1 else ''}</h1>"
            + "".join(rows)
            + "</body></html>\n"
        )
        tmp = self.index + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, self.index)


def _safe(text: str) -> str:
    """A file name for a test id or picture name: word characters, dots and dashes."""
    return re.sub(r"[^\w.-]+", "_", text).strip("._") or "_"


def describe_boxes(boxes: Sequence[Box]) -> str:
    """Boxes as the message shows them."""
    return ", ".join(f"({x0}, {y0}, {x1}, {y1})" for x0, y0, x1, y1 in boxes)
