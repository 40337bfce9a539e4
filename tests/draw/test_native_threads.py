"""Native calls from several threads: every buffer C reads stays alive for the whole call.

The C kernels run without the GIL, so another thread may evict the palette tables
they read from fbgfx's caches mid-call. These tests draw on palette surfaces from
several threads and check every pixel. ``.ci/asan.sh`` runs them under
AddressSanitizer with ``FBGFX_THREAD_ROUNDS`` raised, where a read of freed memory
fails the run even when the pixels happen to come out right.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any, Callable

import numpy as np

from fbgfx import Surface, convert
from fbgfx.pixelformat import PixelFormat

C8 = PixelFormat.from_name("C8")
ROUNDS = max(1, int(os.environ.get("FBGFX_THREAD_ROUNDS", "1")))


def _palette(rng: np.random.Generator) -> np.ndarray:
    """A new small palette: each one misses the palette caches (8 entries)."""
    return rng.integers(0, 256, (int(rng.integers(2, 7)), 3), np.uint8)


def _draw(image: np.ndarray, palette: np.ndarray, step: int) -> str:
    """Blit ``image`` onto a new C8 surface, maybe blend an ellipse, read it back: a digest."""
    s = Surface(image.shape[1], image.shape[0], "C8", palette=palette)
    s.blit(image)  # RGBA: convert_blend; RGB: convert_pack
    if step % 5 == 1:
        s.ellipse((1, 1, image.shape[1] - 2, image.shape[0] - 2), fill=(250, 40, 90, 140))  # convert_blend_mask
    rgb = convert.from_native(s.array, C8, palette=palette)  # convert_unpack
    return hashlib.sha256(s.array.tobytes() + rgb.tobytes()).hexdigest()


def _run_threads(jobs: list[Callable[[], None]]) -> None:
    errors: list[BaseException] = []

    def guarded(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_threads_blitting_into_c8_with_changing_palettes() -> None:
    """Two threads blit into C8 surfaces, each blit with a new palette: every pixel right."""
    rng = np.random.default_rng(9)
    # One thread's kernels run long (a 2400x2400 blend) while the other thread's
    # blits, each with a new palette, evict the palette caches (8 entries) many times.
    big = rng.integers(0, 256, (2400, 2400, 4), np.uint8)
    big[..., 3] = rng.integers(1, 255, big.shape[:2])
    small = rng.integers(0, 256, (12, 14, 3), np.uint8)
    done = threading.Event()
    runs: list[tuple[np.ndarray, np.ndarray, int, str]] = []

    def big_thread() -> None:
        r = np.random.default_rng(1)
        try:
            for i in range(6 * ROUNDS):
                pal = _palette(r)
                runs.append((big, pal, i, _draw(big, pal, i)))
        finally:
            done.set()

    def small_thread() -> None:
        r = np.random.default_rng(2)
        i = 0
        while not done.is_set() or i < 120 * ROUNDS:
            pal = _palette(r)
            runs.append((small, pal, i, _draw(small, pal, i)))
            i += 1

    _run_threads([big_thread, small_thread])
    assert len(runs) >= 120
    # the same drawing with nothing else running is the reference
    wrong = [i for image, pal, i, digest in runs if _draw(image, pal, i) != digest]
    assert wrong == [], f"{len(wrong)} of {len(runs)} drawings had wrong pixels"


class _EvictingLib:
    """The native lib, except that before each conversion kernel another thread evicts
    every palette table from fbgfx's caches and allocates new ones: what a cache miss
    in a second thread does while the first one's kernel runs without the GIL."""

    def __init__(self, real: Any, churn: Callable[[], None]) -> None:
        self._real = real
        self._churn = churn
        self._churning = False  # the churn's own kernel calls go straight through

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._real, name)
        if not name.startswith("convert_") or self._churning:
            return fn

        def call(*args: Any) -> Any:
            self._churning = True
            try:
                t = threading.Thread(target=self._churn)
                t.start()
                t.join()
            finally:
                self._churning = False
            return fn(*args)

        return call


def test_palette_tables_evicted_mid_call_stay_alive(monkeypatch: Any) -> None:
    """A kernel whose palette tables another thread evicts mid-call still reads them."""
    rng = np.random.default_rng(5)
    src = rng.integers(0, 256, (16, 20, 3), np.uint8)
    rgba = np.dstack([src, rng.integers(1, 255, src.shape[:2], dtype=np.uint8)])
    palettes = [_palette(rng) for _ in range(4)]
    other = [_palette(rng) for _ in range(12)]
    expected = []
    for pal in palettes:
        out = np.zeros((16, 20), np.uint8)
        convert.to_native(src, C8, out, palette=pal)
        blended = out.copy()
        convert.to_native(rgba, C8, blended, palette=pal)
        expected.append((out, blended, convert.from_native(blended, C8, palette=pal)))

    def churn() -> None:
        for pal in other:  # more new palettes than the caches hold
            convert.to_native(src, C8, np.zeros((16, 20), np.uint8), palette=pal)

    monkeypatch.setattr(convert, "lib", _EvictingLib(convert.lib, churn))
    for pal, (want, want_blended, want_rgb) in zip(palettes, expected):
        out = np.zeros((16, 20), np.uint8)
        convert.to_native(src, C8, out, palette=pal)
        np.testing.assert_array_equal(out, want)
        convert.to_native(rgba, C8, out, palette=pal)
        np.testing.assert_array_equal(out, want_blended)
        np.testing.assert_array_equal(convert.from_native(out, C8, palette=pal), want_rgb)
