"""Mode switching and panning on drivers that really do it (vfb, cirrusfb)."""

import numpy as np
import pytest

import fbgfx

pytestmark = pytest.mark.kernel


def assert_roundtrip(kernel, fb, rng, x: int = 3, y: int = 2) -> None:
    """Random pixels packed by fbgfx at (x, y)..bottom-right equal the device's bytes."""
    w, h = fb.width - x, fb.height - y
    if fb.format.indexed:
        palette = kernel.cmap(0, 1 << fb.format.bpp)
        rgb = palette[rng.integers(0, len(palette), (h, w))]
        fb.pixels[y:, x:] = fb.format.pack(rgb, palette=fb.palette)
        got = kernel.visible_rect_bytes(fb.width, fb.height)[y:, x:]
        assert np.array_equal(palette[got], rgb)
    else:
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        fb.pixels[y:, x:] = fb.format.pack(rgb)
        Bpp = fb.format.bpp // 8
        got = kernel.visible_rect_bytes(fb.width, fb.height)[y:, x * Bpp :]
        assert np.array_equal(got, kernel.encode(rgb))


@pytest.mark.setups("vfb")
@pytest.mark.parametrize("bpp, name", [(8, "C8"), (16, "BGR565"), (24, "BGR888"), (32, "ABGR8888")])
def test_vfb_depths(kernel, rng, bpp, name):
    """vfb at each depth: fbgfx names its R-at-offset-0 layout and packs pixels to match."""
    with fbgfx.open(kernel.device) as fb:
        fb.set_mode(width=320, height=200, bpp=bpp)
        assert fb.format.name == name
        assert kernel.sysfs("bits_per_pixel") == str(bpp)
        assert kernel.sysfs_pair("virtual_size") == (320, 200)
        assert fb.stride == int(kernel.sysfs("stride"))
        assert_roundtrip(kernel, fb, rng)


@pytest.mark.setups("vfb")
@pytest.mark.parametrize("width, height, bpp", [(333, 201, 24), (641, 479, 16), (17, 9, 8), (101, 9, 32)])
def test_vfb_odd_widths(kernel, rng, width, height, bpp):
    """Odd widths: rows are line_length apart (padded), and every pixel lands right.

    (The kernel refuses modes under 8x8 whatever the driver says.)"""
    with fbgfx.open(kernel.device) as fb:
        fb.set_mode(width=width, height=height, bpp=bpp)
        assert (fb.width, fb.height) == (width, height)
        assert fb.stride == kernel.fix()["line_length"] == int(kernel.sysfs("stride"))
        assert fb.pixels.shape[:2] == (height, width)
        assert_roundtrip(kernel, fb, rng, x=0, y=0)


@pytest.mark.setups("vfb", "cirrusfb")
def test_pan_moves_visible_page(kernel, rng):
    """fb.pan(0, h) shows the second page: sysfs pan, var and fb.pixels all follow."""
    with fbgfx.open(kernel.device) as fb:
        fb.set_mode(width=640, height=480, bpp=8, virtual_height=960)
        assert kernel.sysfs_pair("virtual_size") == (640, 960)
        fb.pan(0, 480)
        assert kernel.sysfs_pair("pan") == (0, 480)
        assert (fb.var.xoffset, fb.var.yoffset) == (0, 480)
        fb.pixels[:] = 7  # the visible page is the second one
        stride = kernel.fix()["line_length"]
        assert kernel.read(480 * stride, 640) == bytes([7]) * 640
        assert kernel.read(959 * stride, 640) == bytes([7]) * 640
        fb.pan(0, 0)
        assert kernel.sysfs_pair("pan") == (0, 0)


@pytest.mark.setups("vfb", "cirrusfb")
def test_refused_mode_changes_nothing(kernel):
    """A mode beyond video memory raises ModeError and leaves var exactly as it was."""
    before = kernel.var_bytes()
    with fbgfx.open(kernel.device) as fb:
        size = kernel.fix()["smem_len"]
        with pytest.raises(fbgfx.ModeError):
            fb.set_mode(width=2048, height=size // 2048 + 64, bpp=8)
        assert kernel.var_bytes() == before
        assert fb.var.xres == kernel.var()["xres"]


@pytest.mark.setups("cirrusfb")
def test_cirrusfb_boot_palette(kernel):
    """cirrusfb starts at 640x480 C8; fb.get_palette() equals the kernel's colour map."""
    with fbgfx.open(kernel.device) as fb:
        assert (fb.width, fb.height, fb.format.name) == (640, 480, "C8")
        assert fb.fix.visual == 3  # FB_VISUAL_PSEUDOCOLOR
        palette = fb.get_palette()
        assert palette.shape == (256, 3) and palette.dtype == np.uint8
        assert np.array_equal(palette, kernel.cmap())


@pytest.mark.setups("cirrusfb")
def test_cirrusfb_palette_reaches_monitor(kernel):
    """fb.set_palette changes the kernel colour map and the colour the monitor shows."""
    with fbgfx.open(kernel.device) as fb:
        fb.pixels[:] = 200
        fb.set_palette(np.array([[200, 100, 48]], np.uint8), start=200)
        assert kernel.cmap(200, 1).tolist() == [[200, 100, 48]]
        shot = kernel.settled_screendump()
        assert ((shot >> 2) == np.array([200, 100, 48]) >> 2).all()
    # close() puts the boot colour map back
    assert kernel.cmap(200, 1).tolist() != [[200, 100, 48]]


@pytest.mark.setups("cirrusfb")
def test_cirrusfb_800x600_16_pans_on_monitor(kernel):
    """800x600-16 with 1200 lines: two pages, fb.pan shows each on the monitor."""
    with fbgfx.open(kernel.device) as fb:
        fb.set_mode(width=800, height=600, bpp=16, virtual_height=1200)
        assert fb.format.name == "RGB565"
        assert kernel.sysfs_pair("virtual_size") == (800, 1200)
        assert kernel.fbset()["geometry"] == (800, 600, 800, 1200, 16)
        red = fb.format.pack(np.array([255, 0, 0], np.uint8))
        blue = fb.format.pack(np.array([0, 0, 255], np.uint8))
        fb.view(0, 0, 800, 600)[:] = red
        fb.view(0, 600, 800, 600)[:] = blue
        shot = kernel.settled_screendump()
        assert shot.shape == (600, 800, 3)
        assert (shot == [255, 0, 0]).all() or ((shot >> 3) == [31, 0, 0]).all()
        fb.pan(0, 600)
        assert kernel.sysfs_pair("pan") == (0, 600)
        shot = kernel.settled_screendump()
        assert ((shot >> 3) == [0, 0, 31]).all()


@pytest.mark.setups("cirrusfb", "vfb")
def test_screen_flip_pans_between_pages(kernel):
    """Screen(buffering="flip") alternates pages by panning, and each frame is shown."""
    with fbgfx.open(kernel.device) as fb:
        fb.set_mode(width=640, height=480, bpp=16)
        pans = []
        with fb.screen(buffering="flip") as screen:
            assert screen.buffering == "flip"
            for color in ((255, 0, 0), (0, 0, 255), (0, 255, 0)):
                with screen.frame() as s:
                    s.clear(color)
                pans.append(kernel.sysfs_pair("pan"))
                assert pans[-1] == (fb.var.xoffset, fb.var.yoffset)
                if kernel.setup == "cirrusfb":
                    shot = kernel.settled_screendump()
                    assert ((shot >> 3) == np.array(color) >> 3).all(), color
                else:
                    raw = kernel.visible_rect_bytes(640, 480)
                    assert np.array_equal(raw, kernel.encode(np.full((480, 640, 3), color, np.uint8)))
        assert pans[0] != pans[1] and pans[0] == pans[2], pans


# qemu's Cirrus VGA keeps showing the picture whatever cirrusfb does to blank it, so
# blanking is checked against what the driver answers, not against the monitor.
@pytest.mark.setups("cirrusfb")
def test_cirrusfb_raw_blank_normal_is_left_to_fbcon(kernel):
    """The kernel fact behind the next test: cirrusfb answers FBIOBLANK normal with 1
    ("not done, let fbcon blank in software"; fbcon does not while in KD_GRAPHICS)."""
    import fcntl

    with open(kernel.device, "rb", buffering=0) as f:
        try:
            assert fcntl.ioctl(f, 0x4611, 1) == 1  # FBIOBLANK, FB_BLANK_NORMAL
        finally:
            fcntl.ioctl(f, 0x4611, 0)


@pytest.mark.setups("cirrusfb")
def test_cirrusfb_blank_normal_is_not_claimed_when_not_done(kernel):
    """fb.blank("normal") does not report a blank the driver left undone."""
    with fbgfx.open(kernel.device) as fb:
        assert fb.blank("normal") is False
        assert fb.blank("powerdown"), "cirrusfb does blank at powerdown"
