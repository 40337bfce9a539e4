"""Draw the same thing with fbgfx and with Pillow, and compare the pixels.

fbgfx's Surface follows Pillow's ImageDraw call for call, so most drawing tests run one
callable on both and compare. ``assert_like_pillow`` does that; ``assert_same_pixels``
is the comparison alone, for tests that make the two pictures another way (golden PNGs,
a clip rectangle applied to Pillow's picture afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import numpy as np
from PIL import Image, ImageDraw

from fbgfx import Surface

Picture = Union[Image.Image, np.ndarray]
Drawing = Callable[[Any], Any]  # takes a Surface or an ImageDraw.ImageDraw


def assert_same_pixels(got: Picture, want: Picture, *, against: str = "Pillow", tolerance: int = 0) -> None:
    """Fail unless two RGB pictures are equal, each channel within ``tolerance``.

    Args:
        got: What fbgfx drew (a PIL image or an array of shape (h, w, channels)).
        want: The reference picture, same shape.
        against: What ``want`` is, for the failure message (``"Pillow"``, a PNG's name).
        tolerance: The largest difference allowed in any channel of any pixel.
    """
    a = np.asarray(got).astype(int)
    b = np.asarray(want).astype(int)
    assert a.shape == b.shape, f"picture is {a.shape[:2]}, {against} is {b.shape[:2]} (h, w)"
    off = np.abs(a - b)
    if off.ndim == 3:
        off = off.max(-1)
    wrong = np.argwhere(off > tolerance)
    if len(wrong):
        raise AssertionError(
            f"{len(wrong)} pixels differ from {against} by more than {tolerance} "
            f"(at most {off.max()}), first at (y, x) {wrong[:5].tolist()}"
        )


def assert_like_pillow(
    draw: Drawing,
    *,
    pillow: Drawing | None = None,
    fmt: str = "XRGB8888",
    size: tuple[int, int] = (64, 48),
    background: Any = (0, 0, 0),
    mode: str = "RGB",
    tolerance: int = 0,
    pillow_may_refuse: bool = False,
    must_draw: bool = True,
) -> np.ndarray | None:
    """Run ``draw`` on a fresh Surface and on a Pillow RGB image of one colour; compare all pixels.

    Args:
        draw: Called with the Surface, then (unless ``pillow`` is given) with an ImageDraw.
        pillow: What to call on Pillow's ImageDraw instead, where Pillow spells it differently.
        fmt: The Surface's pixel format.
        size: (width, height) of both pictures.
        background: Both pictures start in this colour.
        mode: ImageDraw's blend mode (``"RGBA"`` blends RGBA inks as fbgfx does).
        tolerance: The largest channel difference allowed (antialiasing rounding).
        pillow_may_refuse: When Pillow raises ValueError (some inverted boxes), fbgfx
            must draw without raising and nothing is compared.
        must_draw: Also fail when either picture is only background (two blank pictures
            are equal whatever fbgfx does); pass False where drawing nothing is right.
            Random drawings, some of which miss the picture, use :class:`RandomDrawings`.

    Returns:
        The Surface's picture as an (h, w, 3) array, or None when Pillow refused.
    """
    got, drew = _compare(draw, pillow, fmt, size, background, mode, tolerance, pillow_may_refuse)
    if must_draw:
        assert drew, "nothing was drawn: two blank pictures show nothing"
    return got


class RandomDrawings:
    """Compare many random drawings with Pillow, where some may rightly draw nothing (a
    shape off the picture), and fail unless at least ``least`` of them drew something:
    the loop as a whole cannot pass on blank pictures.

    Example:
        with RandomDrawings() as check:
            for box in boxes:
                check(lambda d: d.ellipse(box, fill="red"))
    """

    def __init__(self, least: float = 0.5, **options: Any) -> None:
        self.least = least
        self.options = options
        self.calls = self.drawn = 0

    def __call__(self, draw: Drawing, **options: Any) -> np.ndarray | None:
        kwargs = {**self.options, **options}
        got, drew = _compare(
            draw,
            kwargs.get("pillow"),
            kwargs.get("fmt", "XRGB8888"),
            kwargs.get("size", (64, 48)),
            kwargs.get("background", (0, 0, 0)),
            kwargs.get("mode", "RGB"),
            kwargs.get("tolerance", 0),
            kwargs.get("pillow_may_refuse", False),
        )
        self.calls += 1
        self.drawn += drew
        return got

    def __enter__(self) -> RandomDrawings:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        if kind is None:
            assert self.calls, "no drawing was compared"
            share = self.drawn / self.calls
            assert share >= self.least, (
                f"only {self.drawn} of {self.calls} random drawings drew anything "
                f"(at least {self.least:.0%} must): the comparisons show little"
            )


def _compare(
    draw: Drawing,
    pillow: Drawing | None,
    fmt: str,
    size: tuple[int, int],
    background: Any,
    mode: str,
    tolerance: int,
    pillow_may_refuse: bool,
) -> tuple[np.ndarray | None, bool]:
    """What :func:`assert_like_pillow` does; also says whether anything was drawn (both
    pictures differ from the blank ones, or fbgfx's does where Pillow refused)."""
    surface = Surface(size[0], size[1], fmt)
    surface.clear(background)
    blank = np.asarray(surface.to_image()).copy()
    im = Image.new("RGB", size, background)
    im_blank = np.asarray(im).copy()
    try:
        (pillow or draw)(ImageDraw.Draw(im, mode))
    except ValueError:
        if not pillow_may_refuse:
            raise
        draw(surface)  # fbgfx normalises what Pillow refuses: it must still draw
        return None, _drew(np.asarray(surface.to_image()), blank)
    draw(surface)
    got = np.asarray(surface.to_image())
    assert_same_pixels(got, im, tolerance=tolerance)
    return got, _drew(np.asarray(im), im_blank) and _drew(got, blank)


def _drew(picture: np.ndarray, blank: np.ndarray) -> bool:
    """Whether ``picture`` differs from the ``blank`` one anywhere."""
    return bool((picture != blank).any())
