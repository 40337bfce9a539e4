"""The picture-comparing helpers fail on comparisons that show nothing."""

import pytest
from support.pillow_compare import RandomDrawings, assert_like_pillow


def test_blank_pictures_fail_by_default():
    """A drawing that misses the picture fails assert_like_pillow unless must_draw=False."""

    def off(d):
        d.rectangle((100, 100, 120, 120), fill="red")

    with pytest.raises(AssertionError, match="nothing was drawn"):
        assert_like_pillow(off)
    assert assert_like_pillow(off, must_draw=False) is not None


def test_random_drawings_fail_when_most_draw_nothing():
    """RandomDrawings fails when fewer than half of its drawings drew, and passes otherwise."""
    with pytest.raises(AssertionError, match="only 1 of 3 random drawings drew"):
        with RandomDrawings() as check:
            check(lambda d: d.rectangle((2, 2, 9, 9), fill="red"))
            for _ in range(2):
                check(lambda d: d.rectangle((100, 100, 120, 120), fill="red"))
    with RandomDrawings() as check:
        check(lambda d: d.rectangle((2, 2, 9, 9), fill="red"))
        check(lambda d: d.rectangle((100, 100, 120, 120), fill="red"))
    assert (check.calls, check.drawn) == (2, 1)
