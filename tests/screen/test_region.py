"""Dirty regions (fbgfx._screen.region.Region): what a flip copies after drawing."""

from __future__ import annotations

import numpy as np
import pytest

from fbgfx._screen.region import Region


def covered(region: Region) -> np.ndarray:
    """The pixels the region's runs cover, as a boolean mask (asserting runs never overlap)."""
    mask = np.zeros((region.height, region.width), np.int32)
    for y0, y1, x0, x1 in region.runs():
        assert 0 <= y0 < y1 <= region.height and 0 <= x0 < x1 <= region.width
        mask[y0:y1, x0:x1] += 1
    assert mask.max(initial=0) <= 1, "runs overlap: a pixel would be copied twice"
    return mask.astype(bool)


def rects_mask(width: int, height: int, rects: list[tuple[int, int, int, int]]) -> np.ndarray:
    """The union of (x0, y0, x1, y1) rectangles as a boolean mask."""
    mask = np.zeros((height, width), bool)
    for x0, y0, x1, y1 in rects:
        mask[y0:y1, x0:x1] = True
    return mask


def test_new_region_is_empty():
    """A new region holds nothing and has no runs."""
    r = Region(10, 5)
    assert r.empty and r.runs() == []


def test_single_rectangle_is_one_run():
    """One rectangle comes back as exactly that rectangle."""
    r = Region(64, 48)
    r.add(3, 4, 10, 9)
    assert not r.empty
    assert r.runs() == [(4, 9, 3, 10)]


def test_empty_rectangles_are_ignored():
    """Rectangles of zero width or height add nothing."""
    r = Region(64, 48)
    r.add(5, 5, 5, 10)
    r.add(5, 5, 10, 5)
    assert r.empty


def test_rectangle_inside_or_around_stays_one_rectangle():
    """A rectangle inside the region changes nothing; one around it replaces it."""
    r = Region(64, 48)
    r.add(10, 10, 20, 20)
    r.add(12, 12, 15, 15)
    assert r.runs() == [(10, 20, 10, 20)]
    r.add(5, 5, 30, 30)
    assert r.runs() == [(5, 30, 5, 30)]


def test_far_apart_rectangles_are_separate_runs():
    """Two distant rectangles give two runs, not their bounding box."""
    r = Region(64, 48)
    r.add(1, 1, 3, 3)
    r.add(60, 40, 61, 41)
    assert r.runs() == [(1, 3, 1, 3), (40, 41, 60, 61)]


def test_overlapping_rectangles_cover_their_union_once():
    """Overlapping rectangles: every pixel of the union is covered, none twice, each row spans its changes."""
    r = Region(40, 30)
    rects = [(2, 2, 12, 10), (8, 6, 20, 14), (30, 0, 35, 3)]
    for rect in rects:
        r.add(*rect)
    mask = covered(r)
    want = rects_mask(40, 30, rects)
    assert (mask >= want).all()
    # a row's span covers only what lies between its leftmost and rightmost changes
    for y in range(30):
        cols = np.flatnonzero(want[y])
        if cols.size:
            assert mask[y].sum() == cols[-1] - cols[0] + 1
        else:
            assert not mask[y].any()


def test_add_all_clear_and_copy_from():
    """add_all covers the frame, clear empties it, copy_from duplicates another region."""
    r = Region(16, 8)
    r.add_all()
    assert r.runs() == [(0, 8, 0, 16)]
    r.clear()
    assert r.empty
    other = Region(16, 8)
    other.add(1, 1, 2, 2)
    other.add(10, 5, 12, 7)
    r.add(0, 0, 16, 1)
    r.copy_from(other)
    assert r.runs() == other.runs()


def test_merge_adds_the_other_regions_spans():
    """merge() gives the union of both regions (boxes and span arrays alike)."""
    a, b = Region(32, 32), Region(32, 32)
    a.add(0, 0, 4, 4)
    b.add(20, 20, 24, 24)
    b.add(1, 10, 3, 12)
    a.merge(b)
    assert (covered(a) >= rects_mask(32, 32, [(0, 0, 4, 4), (20, 20, 24, 24), (1, 10, 3, 12)])).all()
    empty = Region(32, 32)
    before = a.runs()
    a.merge(empty)
    assert a.runs() == before


def test_many_scattered_rectangles_become_few_bands():
    """Hundreds of scattered rectangles come back as at most 16 bands that still cover them all."""
    rng = np.random.default_rng(3)
    r = Region(200, 400)
    rects = []
    for _ in range(300):
        x, y = int(rng.integers(0, 190)), int(rng.integers(0, 390))
        rects.append((x, y, x + 3, y + 2))
        r.add(*rects[-1])
    runs = r.runs()
    assert len(runs) <= 16
    assert (covered(r) >= rects_mask(200, 400, rects)).all()


def test_bands_skip_the_widest_untouched_stretches():
    """With many runs, the largest gaps of untouched rows are never copied."""
    r = Region(50, 1000)
    for y in list(range(0, 100, 2)) + list(range(900, 1000, 2)):
        r.add(y % 7, y, y % 7 + 3, y + 1)
    mask = covered(r)
    assert not mask[200:800].any()


@pytest.mark.parametrize("seed", range(5))
def test_random_adds_match_a_reference_mask(seed):
    """Random rectangles: the runs cover every added pixel and, until they merge into
    bands (16 runs), only rows that were touched."""
    rng = np.random.default_rng(seed)
    r = Region(37, 29)
    rects = []
    unmerged = 0
    for _ in range(int(rng.integers(1, 30))):
        x0, y0 = int(rng.integers(0, 37)), int(rng.integers(0, 29))
        rects.append((x0, y0, x0 + int(rng.integers(0, 8)), y0 + int(rng.integers(0, 8))))
        rects[-1] = (rects[-1][0], rects[-1][1], min(rects[-1][2], 37), min(rects[-1][3], 29))
        r.add(*rects[-1])
        want = rects_mask(37, 29, rects)
        mask = covered(r)
        assert (mask >= want).all()
        if len(r.runs()) < 16:  # not merged into bands: untouched rows stay untouched
            assert not mask[~want.any(axis=1)].any()
            unmerged += 1
    assert unmerged, "the runs merged into bands at once: the untouched-rows check never ran"
