"""Screen: buffering modes, dirty-area copies watched on the front buffer, frames, present."""

import errno

import numpy as np
import pytest
from PIL import Image

import fbgfx
from fbgfx.errors import FramebufferError

FORMATS = ["XRGB8888", "RGB565", "RGB888", "C8", "R8", "R4", "R1"]
SENTINEL = {"XRGB8888": 0x12345678, "RGB565": 0x1234, "RGB888": 0x123456, "C8": 0x77, "R8": 0x77}


def visible_rgb(fb):
    """What the display shows, as an RGB array (read back independently of the Screen)."""
    return np.asarray(fb.snapshot())


def expected(fb, rgb):
    """RGB as it looks after a round trip through the device's format."""
    fmt, pal = fb.format, fb.palette
    return fmt.unpack(fmt.pack(np.asarray(rgb, np.uint8), pal), pal)


def fill_sentinel(view, fmt):
    """Write a value no drawing here produces into a page, behind the Screen's back."""
    if fmt.bpp == 24:
        view[...] = (0x56, 0x34, 0x12)
    else:
        view[...] = SENTINEL[fmt.name]


def changed_rows_cols(view, fmt):
    """(rows, cols) of a page that no longer hold the sentinel."""
    if fmt.bpp == 24:
        diff = (view != np.array([0x56, 0x34, 0x12], np.uint8)).any(axis=-1)
    else:
        diff = view != SENTINEL[fmt.name]
    return np.flatnonzero(diff.any(axis=1)), np.flatnonzero(diff.any(axis=0))


# -- choosing the buffering -----------------------------------------------------------------


def test_auto_flips_and_grows_virtual_height_then_restores(open_virtual):
    """auto on a panning device grows the virtual height to two pages, flips, and puts it back on close."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen() as screen:
        assert screen.buffering == "flip"
        assert fb.var.yres_virtual == 96
        with screen.frame() as s:
            s.clear("red")
        assert fb.var.yoffset == 48
    assert (fb.var.yres_virtual, fb.var.yoffset) == (48, 0)


def test_auto_without_pan_copies(open_virtual):
    """auto on a device that cannot pan uses a RAM back buffer and changes no mode."""
    fb = open_virtual("64x48:RGB565:pan=0")
    before = fb.var
    with fb.screen() as screen:
        assert screen.buffering == "copy"
        assert fb.var == before
        with screen.frame() as s:
            s.rectangle((1, 1, 5, 5), fill="white")
        assert visible_rgb(fb)[3, 3].tolist() == [255, 255, 255]


def test_auto_when_mode_changes_are_refused_copies(open_virtual):
    """auto on a device that refuses the larger virtual height falls back to copy without error."""
    fb = open_virtual("64x48:XRGB8888:modes=refuse")
    with fb.screen() as screen:
        assert screen.buffering == "copy"
    assert fb.var.yres_virtual == 48


def test_auto_uses_existing_room_without_mode_change(open_virtual):
    """A device that refuses modes but already has two pages still page-flips."""
    fb = open_virtual("64x48:XRGB8888:modes=refuse:vh=96")
    with fb.screen() as screen:
        assert screen.buffering == "flip"
        with screen.frame() as s:
            s.clear("blue")
        assert fb.var.yoffset == 48
        assert visible_rgb(fb)[0, 0].tolist() == [0, 0, 255]
    assert fb.var.yoffset == 0


@pytest.mark.parametrize("spec", ["virtual:64x48:pan=0", "virtual:64x48:modes=refuse"])
def test_explicit_flip_impossible_is_an_error(spec, open_virtual):
    """buffering='flip' where pages cannot flip raises FramebufferError saying so, nothing changed."""
    fb = open_virtual(spec)
    before = fb.var
    with pytest.raises(FramebufferError, match="page-flip"):
        fb.screen("flip")
    assert fb.var == before


@pytest.mark.parametrize("rotate", [0, 90])
def test_a_read_only_framebuffer_has_no_screen(rotate, tmp_path, open_virtual):
    """fb.screen() on a framebuffer opened readonly=True is EPERM saying so, before the
    console, palette or pages are touched: the memory it would draw into is read-only
    (a turned screen's kernels wrote there before, and crashed)."""
    path = tmp_path / "fb"
    open_virtual(f"61x44:RGB565:file={path}").close()
    before = path.read_bytes()
    fb = open_virtual(f"61x44:RGB565:file={path}", readonly=True)
    with pytest.raises(FramebufferError, match="read-only") as raised:
        fb.screen("copy", rotate=rotate)
    assert raised.value.errno == errno.EPERM
    assert fb.var.yoffset == 0 and path.read_bytes() == before


def test_bad_options_are_value_errors(open_virtual):
    """Unknown buffering or palette names raise ValueError."""
    fb = open_virtual("16x8")
    with pytest.raises(ValueError, match="buffering"):
        fb.screen("triple")
    with pytest.raises(ValueError, match="palette"):
        fb.screen(palette="websafe")


# -- every mode, every format -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
@pytest.mark.parametrize("width", [64, 61])
def test_frames_show_back_buffer_incrementally(fmt, buffering, width, open_virtual):
    """Each frame shows exactly the back buffer, and the next frame starts from the last one."""
    fb = open_virtual(f"{width}x40:{fmt}")
    with fb.screen(buffering) as screen:
        assert screen.buffering == buffering
        with screen.frame() as s:
            s.clear("black")
            s.rectangle((2, 3, 20, 10), fill="white")
        with screen.frame() as s:
            s.rectangle((30, 20, 50, 35), fill="white")
        shown = visible_rgb(fb)
        assert (shown == np.asarray(screen.surface.to_image().convert("RGB"))).all()
        white = expected(fb, [255, 255, 255]).tolist()
        assert shown[5, 10].tolist() == white  # from the frame before: incremental
        assert shown[25, 40].tolist() == white
        assert shown[15, 25].tolist() == expected(fb, [0, 0, 0]).tolist()


@pytest.mark.parametrize("buffering", ["flip", "copy"])
def test_clear_starts_each_frame_blank(buffering, open_virtual):
    """clear=True: the back buffer is blank after each flip, so old drawings disappear next frame."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen(buffering, clear=True) as screen:
        with screen.frame() as s:
            s.rectangle((2, 2, 10, 10), fill="white")
        assert visible_rgb(fb)[5, 5].tolist() == [255, 255, 255]
        with screen.frame() as s:
            assert s.to_image().getpixel((5, 5)) == (0, 0, 0)
            s.rectangle((30, 30, 40, 40), fill="red")
        shown = visible_rgb(fb)
        assert shown[5, 5].tolist() == [0, 0, 0]
        assert shown[35, 35].tolist() == [255, 0, 0]
        with screen.frame():
            pass
        assert visible_rgb(fb).max() == 0


def test_single_draws_on_the_visible_page(open_virtual):
    """single: drawing shows at once, without a flip."""
    fb = open_virtual("32x16:XRGB8888")
    with fb.screen("single") as screen:
        screen.surface.rectangle((0, 0, 3, 3), fill="lime")
        assert visible_rgb(fb)[1, 1].tolist() == [0, 255, 0]


# -- only what changed is written ------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "RGB888", "C8"])
def test_copy_writes_only_dirty_rectangle(fmt, open_virtual):
    """copy: after a small drawing, only its rows and columns of the front buffer are rewritten."""
    fb = open_virtual(f"64x48:{fmt}")
    with fb.screen("copy") as screen:
        with screen.frame() as s:
            s.clear("navy")
        fill_sentinel(fb.pixels, fb.format)
        with screen.frame() as s:
            s.rectangle((10, 20, 14, 22), fill="white")  # inclusive: 5x3 pixels
        rows, cols = changed_rows_cols(fb.pixels, fb.format)
        assert rows.tolist() == [20, 21, 22]
        assert cols.tolist() == [10, 11, 12, 13, 14]
        fill_sentinel(fb.pixels, fb.format)
        screen.flip()  # nothing drawn: nothing written
        assert changed_rows_cols(fb.pixels, fb.format)[0].size == 0


def test_copy_writes_each_rectangle_not_their_bounding_box(open_virtual):
    """Two small drawings far apart rewrite two small areas, not the box around both."""
    fb = open_virtual("64x48:RGB565:pan=0")
    with fb.screen() as screen:
        with screen.frame() as s:
            s.clear("black")
        fill_sentinel(fb.pixels, fb.format)
        with screen.frame() as s:
            s.rectangle((1, 1, 2, 2), fill="white")
            s.point((60, 40), fill="white")
        diff = fb.pixels != SENTINEL["RGB565"]
        assert diff.sum() == 4 + 1
        assert diff[1:3, 1:3].all() and diff[40, 60]


def test_flip_writes_only_what_each_page_lacks(open_virtual):
    """flip: a page gets this frame's and the last frame's changes, read from RAM, nothing else."""
    fb = open_virtual("64x48:XRGB8888")
    with fb.screen("flip") as screen:
        for _ in range(2):  # both pages get a full frame
            with screen.frame() as s:
                s.clear("black")
        with screen.frame() as s:
            s.point((60, 40), fill="white")
        page = {y: fb.view(0, y, 64, 48) for y in (0, 48)}
        for view in page.values():
            fill_sentinel(view, fb.format)
        with screen.frame() as s:
            s.rectangle((5, 5, 9, 6), fill="white")
        shown = fb.var.yoffset
        hidden = 48 - shown
        rows, cols = changed_rows_cols(page[shown], fb.format)
        # the point this page missed last frame, and the new rectangle
        assert rows.tolist() == [5, 6, 40] and cols.tolist() == [5, 6, 7, 8, 9, 60]
        assert changed_rows_cols(page[hidden], fb.format)[0].size == 0
        with screen.frame() as s:
            s.rectangle((40, 30, 41, 31), fill="red")
        assert fb.var.yoffset == hidden
        rows, _ = changed_rows_cols(page[hidden], fb.format)
        assert rows.tolist() == [5, 6, 30, 31]  # brought up to date, then the new drawing
        shown_rgb = visible_rgb(fb)
        assert shown_rgb[5, 5].tolist() == [255, 255, 255] and shown_rgb[30, 40].tolist() == [255, 0, 0]


def test_packed_format_writes_whole_bytes_of_dirty_area(open_virtual):
    """1 bpp: a flip rewrites only the bytes holding the drawn pixels, packed MSB first."""
    fb = open_virtual("64x16:R1:pan=0")
    with fb.screen() as screen:
        with screen.frame() as s:
            s.clear("black")
        fb.pixels[...] = 0x5A
        with screen.frame() as s:
            s.rectangle((9, 3, 10, 3), fill="white")  # pixels 9 and 10 of row 3: byte 1
        changed = np.argwhere(fb.pixels != 0x5A).tolist()
        assert changed == [[3, 1]]
        assert fb.pixels[3, 1] == 0b01100000


def test_mark_dirty_shows_direct_array_writes(open_virtual):
    """Writes into surface.array show after mark_dirty(box), and only then."""
    fb = open_virtual("32x16:RGB565:pan=0")
    with fb.screen() as screen:
        with screen.frame() as s:
            s.clear("black")
        s = screen.surface
        s.array[2:4, 5:7] = 0xFFFF
        screen.flip()
        assert visible_rgb(fb)[2, 5].tolist() == [0, 0, 0]
        screen.mark_dirty((5, 2, 7, 4))
        screen.flip()
        shown = visible_rgb(fb)
        assert shown[2:4, 5:7].min() == 255 and shown[4, 5].tolist() == [0, 0, 0]
        with pytest.raises(TypeError):
            screen.mark_dirty("all")


# -- frame() on exceptions --------------------------------------------------------------------------


@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("clear", [False, True])
def test_frame_discards_on_exception(buffering, clear, open_virtual):
    """An exception in frame(): nothing shown, and the next frame starts from the last shown one."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen(buffering, clear=clear) as screen:
        with screen.frame() as s:
            s.rectangle((0, 0, 9, 9), fill="white")
        before = visible_rgb(fb).copy()
        offset = fb.var.yoffset
        with pytest.raises(RuntimeError):
            with screen.frame() as s:
                s.clear("red")
                raise RuntimeError("half a frame")
        assert (visible_rgb(fb) == before).all() and fb.var.yoffset == offset
        back = np.asarray(screen.surface.to_image().convert("RGB"))
        assert back[20, 20].tolist() == [0, 0, 0]
        assert back[5, 5].tolist() == ([0, 0, 0] if clear else [255, 255, 255])
        with screen.frame() as s:
            s.point((30, 30), fill="blue")
        shown = visible_rgb(fb)
        assert shown[20, 20].tolist() == [0, 0, 0]
        assert shown[5, 5].tolist() == ([0, 0, 0] if clear else [255, 255, 255])
        assert shown[30, 30].tolist() == [0, 0, 255]


# -- present ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
def test_present_full_size_image(fmt, buffering, open_virtual):
    """present() of a screen-sized RGB array shows exactly its conversion to the device format."""
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (40, 61, 3), dtype=np.uint8)
    fb = open_virtual(f"61x40:{fmt}")
    with fb.screen(buffering) as screen:
        screen.present(image)
        assert (visible_rgb(fb) == expected(fb, image)).all()
        screen.present(image[::-1].copy())
        assert (visible_rgb(fb) == expected(fb, image[::-1])).all()


@pytest.mark.parametrize("fmt", ["RGB565", "BGR565", "XRGB8888", "RGB888", "C8"])
@pytest.mark.parametrize("buffering", ["flip", "single"])
def test_present_into_padded_video_memory_rows(fmt, buffering, open_virtual):
    """present() into video memory whose rows are padded (line_length past the row, an
    odd number of pixels) shows exactly the conversion of a contiguous, a row-strided and
    a Pillow picture, and leaves the padding as it was."""
    stride = 260 if fmt == "XRGB8888" else 250
    fb = open_virtual(f"61x40:{fmt}:stride={stride}")
    rng = np.random.default_rng(4)
    wide = rng.integers(0, 256, (40, 64, 3), dtype=np.uint8)
    pictures = [np.ascontiguousarray(wide[:, :61]), wide[:, :61], Image.fromarray(np.ascontiguousarray(wide[:, 3:]))]
    rows = fb.memory.reshape(-1, stride)
    row_bytes = fb.format.row_bytes(61)
    rows[:, row_bytes:] = 0x5A
    with fb.screen(buffering) as screen:
        for picture in pictures:
            screen.present(picture)
            assert (visible_rgb(fb) == expected(fb, np.asarray(picture))).all()
        assert (rows[:, row_bytes:] == 0x5A).all()


@pytest.mark.parametrize("buffering", ["flip", "copy"])
def test_drawing_after_present_starts_from_the_image(buffering, open_virtual):
    """A frame drawn after present() builds on the presented image, on both pages."""
    image = np.zeros((48, 64, 3), np.uint8)
    image[:, 32:] = (0, 255, 0)
    fb = open_virtual("64x48:XRGB8888")
    with fb.screen(buffering) as screen:
        with screen.frame() as s:
            s.clear("white")
        screen.present(image)
        for x in (2, 50):
            with screen.frame() as s:
                s.point((x, 2), fill="red")
            shown = visible_rgb(fb)
            assert (shown[10:] == image[10:]).all()
            assert shown[2, 2].tolist() == [255, 0, 0]
        assert shown[2, 50].tolist() == [255, 0, 0]


def test_surface_kept_across_present_catches_up(open_virtual):
    """Drawing through a Surface obtained before present() still lands on the presented image."""
    image = np.full((16, 32, 3), 200, np.uint8)
    fb = open_virtual("32x16:XRGB8888")
    with fb.screen("copy") as screen:
        s = screen.surface
        screen.present(image)
        s.rectangle((0, 0, 3, 3), fill="red")
        screen.flip()
        shown = visible_rgb(fb)
        assert shown[1, 1].tolist() == [255, 0, 0]
        assert shown[10, 10].tolist() == [200, 200, 200]


@pytest.mark.parametrize(
    "fit, size, inside, outside",
    [
        ("fit", (32, 24), [(24, 0), (24, 47), (0, 24), (63, 24)], []),  # 32x24 -> 64x48: fills exactly
        ("fit", (32, 32), [(24, 0), (24, 47), (9, 24), (54, 24)], [(2, 24), (61, 24)]),  # -> 48x48, bars
        ("center", (32, 24), [(16, 12), (47, 35)], [(15, 11), (48, 36)]),
        ("stretch", (32, 24), [(0, 0), (63, 47)], []),
        ("fill", (32, 24), [(0, 0), (63, 47)], []),
    ],
)
def test_present_fit_modes(fit, size, inside, outside, open_virtual):
    """present() places other sizes as asked: fit scales to cover one side and leaves bars,
    stretch and fill cover, center leaves a border."""
    image = np.full((size[1], size[0], 3), 255, np.uint8)
    fb = open_virtual("64x48:XRGB8888")
    with fb.screen() as screen:
        screen.present(image, fit=fit, background="black")
        shown = visible_rgb(fb)
        for x, y in inside:
            assert shown[y, x].tolist() == [255, 255, 255], (x, y)
        for x, y in outside:
            assert shown[y, x].tolist() == [0, 0, 0], (x, y)


def test_present_fit_letterboxes_with_background(open_virtual):
    """A wide image fits with bars of the background colour above and below."""
    image = np.full((10, 64, 3), 255, np.uint8)
    fb = open_virtual("64x48:XRGB8888:pan=0")
    with fb.screen() as screen:
        screen.present(image, background=(0, 0, 255))
        shown = visible_rgb(fb)
        assert shown[0, 0].tolist() == [0, 0, 255] and shown[47, 63].tolist() == [0, 0, 255]
        assert shown[24, 32].tolist() == [255, 255, 255]
        assert (shown[19:29] == 255).all() and (shown[:19, :, 2] == 255).all()


def test_present_larger_image_fill_crops_center(open_virtual):
    """fill scales a larger picture to cover and crops the overflow evenly."""
    image = np.zeros((48, 128, 3), np.uint8)
    image[:, 32:96] = 255  # the middle half is white
    fb = open_virtual("64x48")
    with fb.screen() as screen:
        screen.present(Image.fromarray(image), fit="fill")
        assert (visible_rgb(fb)[:, 2:62] == 255).all()


def test_present_rgba_blends_over_background(open_virtual):
    """RGBA images are blended over the background colour."""
    image = np.zeros((48, 64, 4), np.uint8)
    image[..., 0] = 255
    image[..., 3] = 128
    fb = open_virtual("64x48")
    with fb.screen() as screen:
        screen.present(image, background="white")
        r, g, b = visible_rgb(fb)[10, 10].tolist()
        assert r == 255 and 125 <= g <= 128 and g == b


def test_present_rejects_bad_input(open_virtual):
    """Unknown fit modes and non-images are errors that leave the screen as it was."""
    fb = open_virtual("16x8")
    with fb.screen() as screen:
        with pytest.raises(ValueError, match="fit"):
            screen.present(np.zeros((8, 16, 3), np.uint8), fit="zoom")
        with pytest.raises(TypeError):
            screen.present("cat.png")


# -- palette, vsync, restore ---------------------------------------------------------------------------


def test_palette_device_gets_default_palette_and_it_is_restored(open_virtual):
    """On 8 bpp palette devices the Screen installs default_palette() and puts the original back."""
    fb = open_virtual("32x16:C8")
    original = fb.get_palette()
    with fb.screen():
        assert (fb.get_palette() == fbgfx.default_palette(8)).all()
    assert (fb.get_palette() == original).all()
    with fb.screen(palette=None):
        assert (fb.get_palette() == original).all()


def test_vsync_waits_before_each_pan(open_virtual):
    """With vsync, each page flip waits for the vertical blank first; vsync=False never waits."""
    fb = open_virtual("32x16:vsync=1")
    events = []
    device = fb.device
    real_wait, real_pan = device.wait_for_vsync, device.pan
    device.wait_for_vsync = lambda: events.append("vsync")
    device.pan = lambda var: (events.append("pan"), real_pan(var))
    with fb.screen("flip") as screen:
        with screen.frame() as s:
            s.clear("white")
    assert events[:2] == ["vsync", "pan"]
    events.clear()
    with fb.screen("flip", vsync=False) as screen:
        with screen.frame() as s:
            s.clear("red")
    assert "vsync" not in events
    device.wait_for_vsync = real_wait


def test_restored_after_exception_in_with(open_virtual):
    """An exception inside `with fb.screen()` restores virtual size, pan and palette."""
    fb = open_virtual("32x16:C8:memory=4096")
    original = (fb.var, fb.get_palette().copy())
    with pytest.raises(KeyError):
        with fb.screen() as screen:
            with screen.frame() as s:
                s.clear("white")
            assert fb.var.yoffset == 16
            raise KeyError("oops")
    assert fb.var == original[0]
    assert (fb.get_palette() == original[1]).all()
    assert screen.closed


def test_closed_screen_refuses_work(open_virtual):
    """After close(), drawing calls on the Screen raise FramebufferError; close() again is fine."""
    fb = open_virtual("16x8")
    screen = fb.screen()
    screen.close()
    screen.close()
    for call in (screen.flip, lambda: screen.surface, lambda: screen.present(np.zeros((8, 16, 3), np.uint8))):
        with pytest.raises(FramebufferError, match="closed"):
            call()


def test_screen_after_framebuffer_closed_closes_quietly():
    """Closing the framebuffer first (which restores it) leaves the Screen's close with nothing to do."""
    fb = fbgfx.open("virtual:16x8")
    screen = fb.screen()
    fb.close()
    screen.close()
    assert screen.closed


def test_many_scattered_drawings_all_reach_the_screen(open_virtual):
    """Hundreds of scattered drawings in one frame all show, and rows far from any stay untouched."""
    rng = np.random.default_rng(7)
    fb = open_virtual("200x160:RGB565:pan=0")
    with fb.screen() as screen:
        with screen.frame() as s:
            s.clear("black")
        fill_sentinel(fb.pixels, fb.format)
        with screen.frame() as s:
            for _ in range(300):
                x, y = int(rng.integers(0, 196)), int(rng.choice([rng.integers(0, 56), rng.integers(104, 156)]))
                s.rectangle((x, y, x + int(rng.integers(0, 4)), y + int(rng.integers(0, 4))), fill="white")
        back = screen.surface.array
        shown = fb.pixels
        white = back == 0xFFFF
        assert white.sum() > 300
        assert (shown[white] == 0xFFFF).all()
        assert (shown[60:100] == SENTINEL["RGB565"]).all()
        rewritten = shown != SENTINEL["RGB565"]
        assert (shown[rewritten] == back[rewritten]).all()


def test_flip_close_keeps_the_last_frame_on_screen(open_virtual):
    """Closing a page-flipping Screen pans back without losing the picture it showed."""
    fb = open_virtual("40x30:RGB565")
    screen = fb.screen(buffering="flip")
    for color in ("red", "lime", "blue"):
        with screen.frame() as s:
            s.clear(color)
    assert fb.var.yoffset != 0
    screen.close()
    assert fb.var.yoffset == 0 and fb.var.yres_virtual == 30
    assert (fb.pixels == fb.format.pack_color((0, 0, 255))).all()


@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
@pytest.mark.parametrize("shape", [(0, 16, 3), (8, 0, 3), (0, 0, 4)])
def test_present_empty_image_is_a_value_error(buffering, shape, open_virtual):
    """present() of an image of 0 pixels raises ValueError and leaves the screen as it was."""
    fb = open_virtual("16x8:RGB565")
    with fb.screen(buffering) as screen:
        screen.present(np.full((8, 16, 3), 255, np.uint8))
        before, offset = visible_rgb(fb).copy(), fb.var.yoffset
        with pytest.raises(ValueError, match="empty"):
            screen.present(np.zeros(shape, np.uint8))
        with pytest.raises(ValueError, match="empty"):
            screen.present(Image.new("RGB", (shape[1], shape[0])))
        assert (visible_rgb(fb) == before).all() and fb.var.yoffset == offset


def test_present_background_colours_as_drawing_takes_them(open_virtual):
    """present()'s background takes drawing's colours (names, CSS, tuples, native ints); bad ones: ValueError."""
    image = np.full((4, 4, 3), 255, np.uint8)
    fb = open_virtual("16x8:RGB565:pan=0")
    with fb.screen() as screen:
        for background, rgb in [("rgb(0,0,255)", [0, 0, 255]), ((0, 255, 0), [0, 255, 0]), (0xF800, [255, 0, 0])]:
            screen.present(image, fit="center", background=background)
            assert visible_rgb(fb)[0, 0].tolist() == rgb
        with pytest.raises(ValueError):
            screen.present(image, fit="center", background="not-a-colour")
        with pytest.raises(ValueError):
            screen.present(np.zeros((4, 4, 4), np.uint8), background=(0, 0, 999))


@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("clear", [False, True])
def test_presents_in_a_row_then_drawing_catches_up_with_the_last(buffering, clear, open_virtual):
    """The catch-up hook is set once for presents in a row (it stays set): drawing
    afterwards, through a Surface taken before, starts from the last picture (blank
    with clear), goes through the hook once and leaves it unset, so that later
    drawing calls take their fast paths again."""
    pictures = [np.full((16, 32, 3), v, np.uint8) for v in (50, 100, 150)]
    fb = open_virtual("32x16:XRGB8888")
    with fb.screen(buffering, clear=clear) as screen:
        s = screen.surface
        log = screen._back.log
        for picture in pictures:
            screen.present(picture)
            assert screen._back.stale and log.before_write is not None
        with screen.frame() as f:
            f.rectangle((0, 0, 3, 3), fill="red")
        assert not screen._back.stale and log.before_write is None
        shown = visible_rgb(fb)
        assert shown[1, 1].tolist() == [255, 0, 0]
        assert shown[10, 10].tolist() == ([0, 0, 0] if clear else [150, 150, 150])
        s.rectangle((10, 10, 12, 12), fill="blue")  # the fast path, with the hook unset
        screen.flip()
        shown = visible_rgb(fb)
        assert shown[11, 11].tolist() == [0, 0, 255]
        assert shown[1, 1].tolist() == ([0, 0, 0] if clear else [255, 0, 0])
        assert shown[14, 20].tolist() == ([0, 0, 0] if clear else [150, 150, 150])
