"""What fbgfx draws is what the emulated monitor shows (qemu screendump)."""

import numpy as np
import pytest
from PIL import Image, ImageDraw

import fbgfx

pytestmark = [pytest.mark.kernel, pytest.mark.setups("bochs", "cirrus", "cirrusfb")]


def top_bits(rgb: np.ndarray, kernel) -> np.ndarray:
    """Each channel cut to the bits the device keeps (exact for 8-bit channels)."""
    lengths = [n for _, n in kernel.channels()]
    return np.stack([rgb[..., i] >> (8 - n) for i, n in enumerate(lengths)], -1)


def assert_shows(kernel, shot: np.ndarray, rgb: np.ndarray) -> None:
    """The monitor shows ``rgb``: exactly at 8 bits a channel, else to the device's bits."""
    assert shot.shape == rgb.shape
    if kernel.var()["bits_per_pixel"] == 8:  # palette through a 6-bit VGA DAC
        bad = (shot >> 2) != (rgb >> 2)
    else:
        bad = top_bits(shot, kernel) != top_bits(rgb, kernel)
    if bad.any():
        ys, xs = np.nonzero(bad.any(-1))
        raise AssertionError(
            f"{len(ys)} of {bad.shape[0] * bad.shape[1]} pixels differ, first at (x={xs[0]}, "
            f"y={ys[0]}): shown {shot[ys[0], xs[0]].tolist()}, drawn {rgb[ys[0], xs[0]].tolist()}"
        )


def test_screendump_shows_packed_pixels(kernel, rng):
    """A full frame of random colours written with fb.format.pack appears on the monitor."""
    with fbgfx.open(kernel.device) as fb:
        if fb.format.indexed:
            palette = fb.get_palette()
            rgb = palette[rng.integers(0, len(palette), (fb.height, fb.width))]
            fb.pixels[:] = fb.format.pack(rgb, palette=fb.palette)
        else:
            rgb = rng.integers(0, 256, (fb.height, fb.width, 3), dtype=np.uint8)
            fb.pixels[:] = fb.format.pack(rgb)
        assert_shows(kernel, kernel.settled_screendump(), rgb)


def test_screen_frame_shows_drawing(kernel):
    """Shapes drawn in a Screen frame appear on the monitor as Pillow draws them."""
    with fbgfx.open(kernel.device) as fb:
        w, h = fb.width, fb.height
        expected = Image.new("RGB", (w, h), "black")
        draw = ImageDraw.Draw(expected)
        with fb.screen() as screen:
            with screen.frame() as s:
                s.clear("black")
                for d in (s, draw):
                    d.rectangle((10, 10, w // 2, h // 3), fill="red", outline="white", width=3)
                    d.rectangle((w // 2 + 1, h // 2, w - 1, h - 1), fill=(0, 255, 0))
                    d.line((0, h - 1, w - 1, h // 2), fill=(0, 0, 255), width=1)
                    d.line((20, h // 2, 20, h - 20), fill="white", width=5)
            assert_shows(kernel, kernel.settled_screendump(), np.asarray(expected))


@pytest.mark.setups("bochs", "cirrus")
def test_refused_larger_mode_leaves_picture(kernel, rng):
    """A mode larger than the DRM fbdev buffer raises ModeError; mode and picture stay."""
    before = kernel.fbset()
    var_before = kernel.var_bytes()
    with fbgfx.open(kernel.device) as fb:
        rgb = rng.integers(0, 256, (fb.height, fb.width, 3), dtype=np.uint8)
        fb.pixels[:] = fb.format.pack(rgb)
        with pytest.raises(fbgfx.ModeError) as info:
            fb.set_mode(width=fb.width + 320, height=fb.height + 224)
        assert info.value.errno is not None
        assert (fb.width, fb.height) == before["geometry"][:2]
        assert kernel.var_bytes() == var_before
        assert kernel.fbset()["geometry"] == before["geometry"]
        assert_shows(kernel, kernel.settled_screendump(), rgb)


@pytest.mark.setups("bochs", "cirrus")
def test_silently_ignored_smaller_mode_is_refused(kernel, rng):
    """DRM takes a smaller mode into var without showing it: fbgfx raises ModeError and undoes it."""
    before = kernel.fbset()
    var_before = kernel.var_bytes()
    with fbgfx.open(kernel.device) as fb:
        rgb = rng.integers(0, 256, (fb.height, fb.width, 3), dtype=np.uint8)
        fb.pixels[:] = fb.format.pack(rgb)
        with pytest.raises(fbgfx.ModeError):
            fb.set_mode(width=800, height=600)
        assert kernel.var_bytes() == var_before, "the half-applied mode was not undone"
        assert kernel.fbset()["geometry"] == before["geometry"]
        assert (fb.width, fb.height) == before["geometry"][:2]
        assert fb.pixels.shape[:2] == (fb.height, fb.width)
        assert_shows(kernel, kernel.settled_screendump(), rgb)


# Only bochs: qemu's Cirrus VGA keeps showing the picture while cirrus/cirrusfb have
# blanked it (it ignores the sequencer's screen-off bit), so there is no truth to
# compare with there.
@pytest.mark.setups("bochs")
@pytest.mark.parametrize("level", ["normal", "powerdown"])
def test_blank_darkens_monitor(kernel, level):
    """fb.blank(level) turns the monitor black; after unblank it shows the picture again."""
    with fbgfx.open(kernel.device) as fb:
        white = fb.format.pack(np.full((fb.height, fb.width, 3), 255, np.uint8), palette=fb.palette)
        fb.pixels[:] = white
        shown = kernel.settled_screendump()
        assert shown.min() > 0
        assert fb.blank(level), "bochs (DRM) can blank"
        try:
            assert kernel.settled_screendump().max() == 0, f"fb.blank({level!r}) left the monitor on"
        finally:
            assert fb.unblank()
        # The DRM driver re-enables the display and qemu clears VRAM then: draw again.
        fb.pixels[:] = white
        assert np.array_equal(kernel.settled_screendump(), shown)


def test_screen_present_shows_image(kernel, rng):
    """Screen.present(image) of the screen's size shows that image on the monitor."""
    with fbgfx.open(kernel.device) as fb:
        if fb.format.indexed:  # colours the device's own colour map can show exactly
            palette = fb.get_palette()
            rgb = palette[rng.integers(0, len(palette), (fb.height, fb.width))]
        else:
            rgb = rng.integers(0, 256, (fb.height, fb.width, 3), dtype=np.uint8)
        with fb.screen(palette=None) as screen:
            screen.present(Image.fromarray(rgb))
            assert_shows(kernel, kernel.settled_screendump(), rgb)
