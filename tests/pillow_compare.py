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
    must_draw: bool = False,
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
        must_draw: Also fail when Pillow's picture is only background, a test drawing nothing.

    Returns:
        The Surface's picture as an (h, w, 3) array, or None when Pillow refused.
    """
    surface = Surface(size[0], size[1], fmt)
    surface.clear(background)
    im = Image.new("RGB", size, background)
    try:
        (pillow or draw)(ImageDraw.Draw(im, mode))
    except ValueError:
        if not pillow_may_refuse:
            raise
        draw(surface)  # fbgfx normalises what Pillow refuses: it must still draw
        return None
    draw(surface)
    got = np.asarray(surface.to_image())
    assert_same_pixels(got, im, tolerance=tolerance)
    if must_draw:
        assert (np.asarray(im) != np.array(background)).any(), "the drawing drew nothing"
    return got
