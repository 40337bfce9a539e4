"""Layers composed in software (virtual:, no planes): the picture, changed rectangles
only, placing, closing, rotation and bad input, checked on the device's pixels."""

import numpy as np
import pytest

import fbgfx
from fbgfx._screen.compose import blend_premultiplied
from fbgfx.errors import FramebufferError, UnsupportedFormatError

BLUE, RED, GREEN_HALF = (0, 0, 255), (255, 0, 0), (0, 255, 0, 128)


def shown(fb):
    """What the device shows, as an RGB array (read from video memory, not from fbgfx's layers)."""
    return np.asarray(fb.snapshot()).astype(int)


def over(dst, rgba):
    """Reference: the straight-alpha colour ``rgba`` as a plane with premultiplied
    blending shows it over ``dst`` (computed in floating point)."""
    r, g, b, a = rgba
    premult = np.round(np.array([r, g, b]) * a / 255)
    return np.round(premult + np.asarray(dst, float) * (255 - a) / 255)


def scene(fb, buffering="auto"):
    """A Screen (blue), an opaque layer (red) and an alpha layer (half green) over both."""
    screen = fb.screen(buffering)
    with screen.frame() as s:
        s.clear(BLUE)
    opaque = fb.layer((10, 10, 30, 20))
    with opaque.frame() as s:
        s.clear(RED)
    alpha = fb.layer((20, 5, 40, 25), alpha=True)
    with alpha.frame() as s:
        s.rectangle((0, 0, 19, 19), fill=GREEN_HALF)
    return screen, opaque, alpha


def expected_scene(w=64, h=48):
    """The scene's picture, computed here."""
    img = np.zeros((h, w, 3), float)
    img[...] = BLUE
    img[10:20, 10:30] = RED
    img[5:25, 20:40] = over(img[5:25, 20:40], GREEN_HALF)
    return img


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB888"])
def test_scene_matches_the_display_engines_arithmetic(fmt):
    """Screen + opaque layer + alpha layer show premultiplied "over" within 1 level."""
    with fbgfx.open(f"virtual:64x48:{fmt}") as fb:
        screen, opaque, alpha = scene(fb)
        got, want = shown(fb), expected_scene()
        assert not opaque.hardware and not alpha.hardware and alpha.reason
        assert np.abs(got - want).max() <= 1
        assert (got[15, 25] != got[0, 0]).any()  # not a blank picture


def test_rgb565_scene_within_the_formats_levels():
    """On RGB565 the blend is computed in 8 bits and stored in the display's format."""
    with fbgfx.open("virtual:64x48:RGB565") as fb:
        scene(fb)
        got = shown(fb)
        fmt = fb.format
        want = fmt.unpack(fmt.pack(np.clip(expected_scene(), 0, 255).astype(np.uint8))).astype(int)
        assert np.abs(got - want).max() <= 8  # one RGB565 step


def test_blend_premultiplied_rounds_like_a_plane():
    """blend_premultiplied is within 1 level of the floating-point premultiplied over, for all alphas."""
    a = np.arange(256, dtype=np.uint32)
    for colour in (0, 77, 255):
        for dst in (0, 128, 255):
            premult = np.round(colour * a / 255).astype(np.uint32)
            src = (a << 24) | (premult << 16) | (premult << 8) | premult
            out = np.full((256, 3), dst, np.uint8)
            blend_premultiplied(out, src)
            want = premult + dst * (255 - a) / 255
            assert np.abs(out[:, 0].astype(float) - want).max() <= 1


def test_screen_frames_stay_under_the_layers():
    """A Screen frame drawn over the whole screen shows under the layers, not over them."""
    with fbgfx.open("virtual:64x48") as fb:
        screen, _, _ = scene(fb)
        with screen.frame() as s:
            s.clear("white")
        got = shown(fb)
        assert tuple(got[15, 15]) == RED
        assert np.abs(got[7, 25] - over((255, 255, 255), GREEN_HALF)).max() <= 1
        assert tuple(got[40, 50]) == (255, 255, 255)


def test_a_layer_update_writes_only_its_changed_rectangle():
    """A layer's frame writes video memory in its changed rectangle only."""
    with fbgfx.open("virtual:64x48") as fb:
        scene(fb, "copy")
        layer = fb.layer((0, 30, 20, 40))
        sentinel = 0x00123456
        fb.pixels[...] = sentinel  # behind fbgfx's back: only what fbgfx writes changes
        with layer.frame() as s:
            s.rectangle((2, 3, 4, 5), fill="yellow")
        changed = np.argwhere(fb.pixels != sentinel)
        assert len(changed) == 9
        assert changed.min(axis=0).tolist() == [33, 2] and changed.max(axis=0).tolist() == [35, 4]


def test_other_layers_and_the_screen_are_not_recomposed_outside_the_change():
    """Updating the alpha layer 100 times leaves the rest of video memory untouched."""
    with fbgfx.open("virtual:64x48") as fb:
        _, _, alpha = scene(fb, "copy")
        before = fb.pixels.copy()
        outside = np.ones(before.shape, bool)
        outside[5:25, 20:40] = False
        for i in range(100):
            with alpha.frame() as s:
                s.point((i % 20, 0), fill=(255, 255, 255, 255))
        assert (fb.pixels[outside] == before[outside]).all()
        assert (fb.pixels[5, 20:40] != before[5, 20:40]).all()


@pytest.mark.parametrize("buffering", ["flip", "copy"])
def test_layers_show_on_every_page(buffering):
    """With page flipping each page gets the layers: frames after a layer update keep it."""
    with fbgfx.open("virtual:64x48") as fb:
        screen = fb.screen(buffering)
        assert screen.buffering == buffering
        layer = fb.layer((0, 0, 8, 8))
        with layer.frame() as s:
            s.clear(RED)
        for i in range(3):
            with screen.frame() as s:
                s.point((40 + i, 40), fill="white")
            assert tuple(shown(fb)[4, 4]) == RED
        assert tuple(shown(fb)[40, 42]) == (255, 255, 255)


def test_move_hide_show_close_put_the_screen_back():
    """move/hide/show/close show what the layer covered, exactly."""
    with fbgfx.open("virtual:64x48") as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear(BLUE)
            s.line((0, 0, 63, 47), fill="white")
        plain = shown(fb)
        layer = fb.layer((5, 5, 15, 15), alpha=True)
        with layer.frame() as s:
            s.clear((255, 0, 0, 200))
        assert (shown(fb) != plain).any()
        layer.move(40, 30)
        assert layer.box == (40, 30, 50, 40)
        got = shown(fb)
        assert (got[5:15, 5:15] == plain[5:15, 5:15]).all() and (got[30:40, 40:50] != plain[30:40, 40:50]).any()
        layer.hide()
        assert (shown(fb) == plain).all() and not layer.shown
        layer.show()
        assert (shown(fb)[30:40, 40:50] != plain[30:40, 40:50]).any()
        layer.close()
        layer.close()  # safe twice
        assert (shown(fb) == plain).all()
        with pytest.raises(FramebufferError, match="layer is closed"):
            layer.frame().__enter__()


def test_frame_clear_makes_an_alpha_layer_transparent():
    """frame(clear=True) starts a transparent frame: the Screen shows through again."""
    with fbgfx.open("virtual:32x32") as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear(BLUE)
        layer = fb.layer((0, 0, 32, 32), alpha=True)
        assert tuple(shown(fb)[3, 3]) == BLUE  # a new alpha layer is transparent
        with layer.frame() as s:
            s.clear(RED)
        assert tuple(shown(fb)[3, 3]) == RED
        with layer.frame(clear=True) as s:
            s.point((1, 1), fill="white")
        got = shown(fb)
        assert tuple(got[3, 3]) == BLUE and tuple(got[1, 1]) == (255, 255, 255)


def test_layers_stack_in_creation_order():
    """A later layer is above an earlier one."""
    with fbgfx.open("virtual:32x32") as fb:
        fb.screen()
        first, second = fb.layer((0, 0, 20, 20)), fb.layer((10, 10, 30, 30))
        with first.frame() as s:
            s.clear(RED)
        with second.frame() as s:
            s.clear(BLUE)
        with first.frame() as s:
            s.clear((0, 255, 0))
        got = shown(fb)
        assert tuple(got[15, 15]) == BLUE and tuple(got[5, 5]) == (0, 255, 0)


def test_present_and_surface_like_a_screen():
    """present() fits a picture into the layer; surface is the layer's size."""
    with fbgfx.open("virtual:64x48") as fb:
        fb.screen()
        layer = fb.layer((8, 8, 40, 24))
        assert layer.surface.width == 32 and layer.surface.height == 16 and layer.size == (32, 16)
        picture = np.zeros((16, 32, 3), np.uint8)
        picture[:, :16] = RED
        picture[:, 16:] = (0, 255, 0)
        layer.present(picture)
        got = shown(fb)
        assert tuple(got[10, 10]) == RED and tuple(got[10, 30]) == (0, 255, 0) and tuple(got[4, 4]) == (0, 0, 0)


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_boxes_are_in_the_turned_screens_coordinates(rotate):
    """On a turned Screen the scene is the unturned scene, turned."""
    with fbgfx.open("virtual:64x48") as plain_fb:
        scene(plain_fb)
        want = shown(plain_fb)
    size = "48x64" if rotate in (90, 270) else "64x48"
    with fbgfx.open(f"virtual:{size}") as fb:
        screen = fbgfx.Screen(fb, rotate=rotate)
        with screen.frame() as s:
            s.clear(BLUE)
        opaque = fb.layer((10, 10, 30, 20))
        with opaque.frame() as s:
            s.clear(RED)
        alpha = fb.layer((20, 5, 40, 25), alpha=True)
        with alpha.frame() as s:
            s.rectangle((0, 0, 19, 19), fill=GREEN_HALF)
        got = np.rot90(shown(fb), k=rotate // 90)  # the panel turned back
        assert (got == want).all()


def test_layers_without_a_screen_draw_over_the_device():
    """With no Screen open, a layer is composed over what the device shows."""
    with fbgfx.open("virtual:32x32") as fb:
        fb.pixels[...] = 0x000000FF  # blue, written by another program
        layer = fb.layer((0, 0, 16, 16), alpha=True)
        with layer.frame() as s:
            s.clear(GREEN_HALF)
        got = shown(fb)
        assert np.abs(got[3, 3] - over(BLUE, GREEN_HALF)).max() <= 1 and tuple(got[20, 20]) == BLUE
        layer.close()
        assert tuple(shown(fb)[3, 3]) == BLUE


@pytest.mark.parametrize(
    "box, error, match",
    [
        ((0, 0, 0, 10), ValueError, "empty"),
        ((5, 5, 4, 10), ValueError, "empty"),
        ((-1, 0, 10, 10), ValueError, "not inside"),
        ((0, 0, 33, 10), ValueError, "not inside"),
        ((0, 0, 10), TypeError, "box must be"),
        ((0, 0, 1.5, 10), TypeError, "box must be"),
        ("abcd", TypeError, "box must be"),
        (None, TypeError, "box must be"),
    ],
)
def test_bad_boxes_are_refused(box, error, match):
    """Empty, outside and malformed boxes raise clear errors."""
    with fbgfx.open("virtual:32x32") as fb:
        with pytest.raises(error, match=match):
            fb.layer(box)


def test_moving_off_the_screen_is_refused_and_changes_nothing():
    """move() outside the screen raises and leaves the layer where it was."""
    with fbgfx.open("virtual:32x32") as fb:
        layer = fb.layer((0, 0, 10, 10))
        with pytest.raises(ValueError, match="not inside"):
            layer.move(25, 0)
        assert layer.box == (0, 0, 10, 10)


def test_closed_devices_and_palette_displays():
    """A closed framebuffer refuses a layer; fb.close() closes its layers; palettes are refused."""
    fb = fbgfx.open("virtual:32x32")
    layer = fb.layer((0, 0, 8, 8))
    fb.close()
    assert layer.closed
    with pytest.raises(FramebufferError, match="framebuffer is closed"):
        fb.layer((0, 0, 8, 8))
    with pytest.raises(FramebufferError, match="framebuffer is closed"):
        layer.surface
    layer.close()
    with fbgfx.open("virtual:32x32:C8") as c8, pytest.raises(UnsupportedFormatError, match="true-colour"):
        c8.layer((0, 0, 8, 8))


def test_closing_the_screen_keeps_layers_working():
    """Closing the Screen leaves the layers composed over the device's last picture."""
    with fbgfx.open("virtual:32x32") as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear(BLUE)
        layer = fb.layer((0, 0, 8, 8))
        screen.close()
        with layer.frame() as s:
            s.clear(RED)
        got = shown(fb)
        assert tuple(got[2, 2]) == RED and tuple(got[20, 20]) == BLUE


def test_play_in_a_layer_keeps_the_screen_around_it(tmp_path):
    """layer.play() shows the video's frames in the layer; the Screen around it stays."""
    pytest.importorskip("av")
    from support.video_media import make_video, quadrant_colors

    clip = make_video(tmp_path / "q.mp4", seconds=1.0, fps=10, size=(32, 24), codec="mpeg4")
    with fbgfx.open("virtual:64x48") as fb:
        screen = fb.screen()
        with screen.frame() as s:
            s.clear(BLUE)
        layer = fb.layer((16, 12, 48, 36))
        played = layer.play(clip, audio=False, fps=0)
        assert played.shown >= 1
        got = shown(fb)
        tl = quadrant_colors(0)[0]
        assert np.abs(got[14, 18] - np.array(tl)).max() <= 40  # a decoded (lossy) frame
        assert tuple(got[2, 2]) == BLUE and tuple(got[40, 60]) == BLUE
