"""Comparing a screen with a baseline picture, and the report of the ones that differ.

:func:`compare` finds the pixels whose channels differ by more than a tolerance,
outside boxes to ignore; :func:`diff_image` shows them (the actual picture dimmed to
grey, differing pixels red, ignored boxes tinted blue); :class:`Report` keeps
expected, actual and diff PNGs per failure in one folder with an ``index.html``
listing every failure with its three pictures.
"""

from __future__ import annotations

import contextlib
import fcntl
import html
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

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

#: The report folder's record of one run: a JSON line per mismatch and per baseline
#: written or confirmed by ``--fbgfx-update``, from every pytest-xdist worker.
RECORDS = ".fbgfx-records.jsonl"


@dataclass
class _Entry:
    test: str
    name: str
    message: str
    files: dict[str, str]  # kind -> path relative to the report folder


class Report:
    """The pictures of screens that did not match their baselines, and a page of them.

    Every process of a run (pytest-xdist's workers) adds to the same folder: each change
    is a line in the folder's record, written under a lock, and the page is rebuilt from
    all of them, so it lists every worker's mismatches; so does the terminal summary.

    Args:
        folder: Where the report goes (made when the first record is added).
        session: The run's id: records of other runs in the same folder are not this one's.
    """

    def __init__(self, folder: str, session: str) -> None:
        self.folder = folder
        self.session = session

    @property
    def index(self) -> str:
        """The report's page: ``FOLDER/index.html``."""
        return os.path.join(self.folder, "index.html")

    @property
    def entries(self) -> list[_Entry]:
        """The mismatches of this run, every process's (a test's newest per picture)."""
        found: dict[tuple[str, str], _Entry] = {}
        for r in self._records():
            if r.get("kind") == "mismatch":
                found.pop((r["test"], r["name"]), None)
                found[(r["test"], r["name"])] = _Entry(r["test"], r["name"], r["message"], r["files"])
        return list(found.values())

    @property
    def updated(self) -> list[str]:
        """The baselines ``--fbgfx-update`` wrote in this run, every process's."""
        return [r["path"] for r in self._records() if r.get("kind") == "baseline" and r.get("written")]

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
        relative = {k: os.path.relpath(p, self.folder) for k, p in written.items()}
        with self._locked():
            self._append({"kind": "mismatch", "test": test, "name": name, "message": message, "files": relative})
            self._write_index()
        return written

    def baseline(self, test: str, path: str, digest: str, write: Callable[[], object] | None) -> str | None:
        """Record that ``--fbgfx-update`` found the baseline ``path`` to be the picture
        ``digest``, calling ``write()`` to write it first if given; under the report's
        lock, so that no two processes write one baseline at once.

        Returns:
            None, or why not: this run already wrote or confirmed ``path`` with other
            pixels (nothing is written then).
        """
        with self._locked():
            for r in self._records():
                if r.get("kind") == "baseline" and r["path"] == path and r["digest"] != digest:
                    return f"{r['test']} already made it a different picture in this run"
            if write is not None:
                write()
            self._append(
                {"kind": "baseline", "test": test, "path": path, "digest": digest, "written": write is not None}
            )
        return None

    def _records(self) -> list[dict[str, Any]]:
        try:
            with open(os.path.join(self.folder, RECORDS), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short by a killed worker
            if isinstance(record, dict) and record.get("session") == self.session:
                out.append(record)
        return out

    def _append(self, record: dict[str, Any]) -> None:
        record = {"session": self.session, **record}
        with open(os.path.join(self.folder, RECORDS), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        os.makedirs(self.folder, exist_ok=True)
        fd = os.open(os.path.join(self.folder, ".fbgfx-lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write_index(self) -> None:
        entries = self.entries
        rows = []
        for e in entries:
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
            f"</style></head><body><h1>{len(entries)} screen mismatch{'es' if len(entries) != 1 else ''}</h1>"
            + "".join(rows)
            + "</body></html>\n"
        )
        tmp = f"{self.index}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(page)
        os.replace(tmp, self.index)


def _safe(text: str) -> str:
    """A file name for a test id or picture name: word characters, dots and dashes."""
    return re.sub(r"[^\w.-]+", "_", text).strip("._") or "_"


def describe_boxes(boxes: Sequence[Box]) -> str:
    """Boxes as the message shows them."""
    return ", ".join(f"({x0}, {y0}, {x1}, {y1})" for x0, y0, x1, y1 in boxes)
