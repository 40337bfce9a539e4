"""Screen(rotate=...): the picture turned on the panel, in every format and buffering mode,
checked against Pillow's transpose of the same picture drawn unturned."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import fbgfx
from fbgfx._ffi import ffi, lib
from fbgfx._screen import transfer as _transfer

FORMATS = ["XRGB8888", "ARGB8888", "XBGR8888", "RGB888", "RGB565", "BGR565", "XRGB1555", "C8", "R8", "C4", "R4", "R1"]
BUFFERINGS = ["flip", "copy", "single"]
ROTATIONS = [90, 180, 270]
# Pillow's transposes turn counter-clockwise; rotate=90 turns the picture clockwise.
TRANSPOSE = {
    90: Image.Transpose.ROTATE_270,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}


def turned(picture: Image.Image, rotate: int) -> np.ndarray:
    """What the panel shows when ``picture`` (the logical frame) is turned ``rotate`` degrees clockwise."""
    return np.asarray(picture.transpose(TRANSPOSE[rotate]) if rotate else picture)


def draw_scene(s: fbgfx.Surface, step: int) -> None:
    """A frame with shapes of every kind near the edges (asymmetric, so a wrong turn shows)."""
    if step == 0:
        s.clear("navy")
        s.rectangle((1, 2, 20, 9), fill="white", outline="red")
        s.line((0, 0, s.width - 1, s.height // 2), fill="yellow", width=2)
        s.ellipse((s.width - 15, s.height - 12, s.width - 1, s.height - 1), fill="lime")
        s.point((0, s.height - 1), fill="magenta")
    else:
        s.rectangle((s.width // 2, 3, s.width // 2 + 5, 30), fill=(200, 100, 50))
        s.polygon([(3, s.height - 3), (12, s.height - 20), (18, s.height - 4)], fill="cyan")


def reference(fmt: str, width: int, height: int, steps: int) -> Image.Image:
    """The scene drawn on an unturned screen of the logical size, as the panel shows it."""
    with fbgfx.open(f"virtual:{width}x{height}:{fmt}:pan=0") as fb:
        with fb.screen("copy") as screen:
            for step in range(steps):
                with screen.frame() as s:
                    draw_scene(s, step)
            return fb.snapshot()  # while the Screen's palette is installed


# -- every format, every buffering mode, every turn ----------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("buffering", BUFFERINGS)
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_frames_appear_turned(fmt, buffering, rotate, open_virtual):
    """Frames drawn (and a second, incremental one) show on the panel as Pillow's transpose of the unturned picture."""
    panel_w, panel_h = 61, 44  # odd sizes: packed bytes and partial tiles at the edges
    fb = open_virtual(f"{panel_w}x{panel_h}:{fmt}")
    with fb.screen(buffering, rotate=rotate) as screen:
        assert screen.buffering == buffering and screen.rotate == rotate
        w, h = screen.width, screen.height
        assert (w, h) == ((panel_h, panel_w) if rotate in (90, 270) else (panel_w, panel_h))
        for step in range(2):
            with screen.frame() as s:
                assert s.size == (w, h)
                draw_scene(s, step)
            want = turned(reference(fmt, w, h, step + 1), rotate)
            assert (np.asarray(fb.snapshot()) == want).all(), f"frame {step}"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("buffering", BUFFERINGS)
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_present_appears_turned(fmt, buffering, rotate, open_virtual):
    """present() of a logical-size picture (array and Pillow image) shows it turned, converted exactly as unturned."""
    rng = np.random.default_rng(rotate)
    fb = open_virtual(f"61x44:{fmt}")
    with fb.screen(buffering, rotate=rotate) as screen:
        image = rng.integers(0, 256, (screen.height, screen.width, 3), dtype=np.uint8)
        for picture in (image, Image.fromarray(image[::-1].copy())):
            screen.present(picture)
            fmt_, pal = fb.format, fb.palette
            logical = fmt_.unpack(fmt_.pack(np.asarray(picture), pal), pal)
            assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()
        # drawing after present() builds on the presented picture, still turned
        with screen.frame() as s:
            s.rectangle((2, 2, 6, 6), fill="white")
        logical[2:7, 2:7] = fmt_.unpack(fmt_.pack(np.array([255, 255, 255], np.uint8), pal), pal)
        assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()


@pytest.mark.parametrize("fmt", ["RGB565", "BGR565", "XRGB8888", "ARGB1555", "RGB888"])
@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_present_turned_into_padded_video_memory_rows(fmt, buffering, rotate, open_virtual, monkeypatch):
    """present() on a turned screen into video memory whose rows are padded (an odd number
    of pixels apart) shows exactly the turned conversion of a contiguous picture, one with
    strided rows, one with 4-byte pixels, one upside down (rows going up), a Fortran-order
    one and a Pillow one, and leaves the padding as it was; the formats rotate_pack takes
    go straight to it (never through to_native)."""
    converted = []
    to_native = _transfer.convert.to_native
    monkeypatch.setattr(_transfer.convert, "to_native", lambda *a, **k: converted.append(1) or to_native(*a, **k))
    size = fbgfx.PixelFormat.from_name(fmt).bpp // 8
    stride = 67 * size  # 61 pixels a row, 67 apart
    fb = open_virtual(f"61x44:{fmt}:stride={stride}")
    rows = fb.memory.reshape(-1, stride)
    row_bytes = fb.format.row_bytes(61)
    rows[:, row_bytes:] = 0x5A
    rng = np.random.default_rng(rotate)
    with fb.screen(buffering, rotate=rotate) as screen:
        h, w = screen.height, screen.width
        wide = rng.integers(0, 256, (h, w + 3, 4), dtype=np.uint8)
        image = np.ascontiguousarray(wide[:, :w, :3])
        pictures = [
            image,
            np.ascontiguousarray(wide[:, :, :3])[:, 3:],
            wide[:, 2 : w + 2, :3],
            image[::-1],
            np.asfortranarray(image),
            Image.fromarray(np.ascontiguousarray(wide[:, 1 : w + 1, :3])),
        ]
        for picture in pictures:
            screen.present(picture)
            fmt_, pal = fb.format, fb.palette
            logical = fmt_.unpack(fmt_.pack(np.ascontiguousarray(picture), pal), pal)
            assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()
        assert (rows[:, row_bytes:] == 0x5A).all()
    assert len(converted) == (0 if fmt != "RGB888" else len(pictures))


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "RGB888"])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_turned_flips_of_separate_changes(fmt, padded, buffering, rotate, open_virtual):
    """Flips of two changes far apart (two runs) on a turned screen, into contiguous video
    memory and into rows padded an odd number of pixels apart: the panel shows the turned
    drawing, and the padding stays as it was."""
    size = fbgfx.PixelFormat.from_name(fmt).bpp // 8
    stride = 67 * size if padded else 61 * size
    fb = open_virtual(f"61x44:{fmt}:stride={stride}")
    rows = fb.memory.reshape(-1, stride)
    row_bytes = fb.format.row_bytes(61)
    rows[:, row_bytes:] = 0x5A
    with fb.screen(buffering, rotate=rotate) as screen:
        w, h = screen.width, screen.height
        with screen.frame() as s:
            draw_scene(s, 0)
        for step, color in enumerate(["white", "red", "lime"]):
            with screen.frame() as s:
                s.rectangle((1, 1 + step, 6, 5 + step), fill=color)
                s.rectangle((w - 8, h - 9 + step, w - 2, h - 4 + step), fill=color)
        with fbgfx.open(f"virtual:{w}x{h}:{fmt}:pan=0") as ref, ref.screen("copy") as unturned:
            with unturned.frame() as s:
                draw_scene(s, 0)
                for step, color in enumerate(["white", "red", "lime"]):
                    s.rectangle((1, 1 + step, 6, 5 + step), fill=color)
                    s.rectangle((w - 8, h - 9 + step, w - 2, h - 4 + step), fill=color)
            want = turned(ref.snapshot(), rotate)
        assert (np.asarray(fb.snapshot()) == want).all()
    assert (rows[:, row_bytes:] == 0x5A).all()


def test_turned_copy_refuses_a_run_outside_the_frame(open_virtual):
    """The turned copy computes places in the two arrays itself: a run outside the frame
    is a ValueError before anything is written, not a write past the page."""
    fb = open_virtual("61x44:RGB565:pan=0")
    with fb.screen("copy", rotate=90) as screen:
        transfer, back = screen._back.transfer, screen._back
        page = fb.pixels
        page[...] = 0x77

        class Outside:
            def runs(self):
                return [(0, 62, 0, 4)]  # rows 0..61 of a 61-row frame

        with pytest.raises(ValueError, match="outside"):
            transfer.copy(back.shadow, Outside(), page)
        assert (page == 0x77).all()


@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_turned_flip_of_a_reshaped_back_buffer_writes_nothing(buffering, rotate, open_virtual):
    """The back buffer's array reshaped in place (``a.shape = ...``) and marked dirty: the
    flip is a ValueError and nothing is read or written outside the two arrays (the
    kernels once kept the old shape and read far past the array)."""
    fb = open_virtual("61x44:RGB565:stride=134")  # rows padded by 6 pixels
    rows = fb.memory.reshape(-1, 134)
    with fb.screen(buffering, rotate=rotate) as screen:
        with screen.frame() as s:
            s.clear("navy")
        shown = np.asarray(fb.snapshot()).copy()
        rows[:, 122:] = 0x5A
        a = screen.surface.array
        a.shape = (1, a.size)
        screen.mark_dirty()
        with pytest.raises(ValueError):
            screen.flip()
        assert (np.asarray(fb.snapshot()) == shown).all()
        assert (rows[:, 122:] == 0x5A).all()


@pytest.mark.parametrize("fmt", ["RGB565", "XRGB8888", "RGB888"])
@pytest.mark.parametrize("buffering", ["flip", "copy"])
def test_turned_screen_after_a_smaller_mode_writes_nothing_past_it(fmt, buffering, open_virtual):
    """A mode set under an open turned Screen (which the Screen's documentation says not
    to do): its next flips and present() are ValueErrors, and no byte past the new mode's
    rows is written (the turned copy once wrote the old frame's size there)."""
    fb = open_virtual(f"61x44:{fmt}")
    with fb.screen(buffering, rotate=90) as screen:
        with screen.frame() as s:
            s.clear("navy")
        fb.set_mode(width=30, height=20)
        used = fb.stride * fb.var.yres_virtual
        fb.memory[used:] = 0x5A
        with pytest.raises(ValueError):
            with screen.frame() as s:
                s.rectangle((0, 0, 5, 50), fill="white")
        with pytest.raises(ValueError):
            screen.present(np.zeros((screen.height, screen.width, 3), np.uint8))
        assert (fb.memory[used:] == 0x5A).all()


@pytest.mark.parametrize("rotate", ROTATIONS)
def test_present_smaller_picture_is_placed_in_logical_coordinates(rotate, open_virtual):
    """A picture smaller than the screen is centred on the logical screen, with the background around it."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen(rotate=rotate) as screen:
        w, h = screen.width, screen.height
        picture = np.full((10, 20, 3), 255, np.uint8)
        screen.present(picture, fit="center", background="blue")
        logical = np.zeros((h, w, 3), np.uint8)
        logical[..., 2] = 255
        x, y = (w - 20) // 2, (h - 10) // 2
        logical[y : y + 10, x : x + 20] = 255
        assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()


@pytest.mark.parametrize("buffering", ["flip", "copy"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_clear_and_discard_turned(buffering, rotate, open_virtual):
    """clear=True and a discarded frame behave as unturned: the panel shows the logical picture turned."""
    fb = open_virtual("40x30:XRGB8888")
    with fb.screen(buffering, clear=True, rotate=rotate) as screen:
        with screen.frame() as s:
            s.rectangle((0, 0, 4, 2), fill="red")
        with pytest.raises(RuntimeError):
            with screen.frame() as s:
                s.clear("white")
                raise RuntimeError
        logical = np.zeros((screen.height, screen.width, 3), np.uint8)
        logical[0:3, 0:5] = (255, 0, 0)
        assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()
        with screen.frame() as s:
            s.point((1, 1), fill="lime")
        logical[...] = 0
        logical[1, 1] = (0, 255, 0)
        assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()


@pytest.mark.parametrize("rotate", ROTATIONS)
def test_mark_dirty_turned(rotate, open_virtual):
    """Writes into surface.array (logical) reach the panel turned after mark_dirty()."""
    fb = open_virtual("32x16:RGB565:pan=0")
    with fb.screen(rotate=rotate) as screen:
        screen.surface.array[1:3, 4:6] = 0xFFFF
        screen.mark_dirty((4, 1, 6, 3))
        screen.flip()
        logical = np.zeros((screen.height, screen.width, 3), np.uint8)
        logical[1:3, 4:6] = 255
        assert (np.asarray(fb.snapshot()) == turned(Image.fromarray(logical), rotate)).all()


# -- only what changed is written ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "RGB888", "C8"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_small_change_writes_only_its_turned_rectangle(fmt, rotate, open_virtual):
    """A 32x32 drawing rewrites exactly its turned 32x32 place on the panel, nothing else."""
    fb = open_virtual(f"200x120:{fmt}:pan=0")
    with fb.screen("copy", rotate=rotate) as screen:
        with screen.frame() as s:
            s.clear("black")
        page = fb.pixels
        sentinel = np.array([0x56, 0x34, 0x12], np.uint8) if fmt == "RGB888" else 0x77
        page[...] = sentinel
        with screen.frame() as s:
            s.rectangle((10, 20, 41, 51), fill="white")
        changed = (page != sentinel).any(axis=-1) if fmt == "RGB888" else page != sentinel
        rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
        x0, y0, x1, y1 = screen._back.transfer.to_page(10, 20, 42, 52)
        assert rows.tolist() == list(range(y0, y1)) and cols.tolist() == list(range(x0, x1))
        assert changed.sum() == 32 * 32


def test_packed_turned_change_rewrites_whole_bytes_only(open_virtual):
    """1 bpp turned: a small change rewrites only the bytes holding its turned pixels."""
    fb = open_virtual("64x40:R1:pan=0")
    with fb.screen(rotate=90) as screen:
        with screen.frame() as s:
            s.clear("black")
        fb.pixels[...] = 0x5A
        with screen.frame() as s:
            s.point((3, 20), fill="white")  # panel pixel (64 - 1 - 20, 3) = (43, 3): byte 5 of row 3
        changed = np.argwhere(fb.pixels != 0x5A).tolist()
        assert changed == [[3, 5]]
        assert fb.pixels[3, 5] == 0b00010000


# -- choosing the rotation -------------------------------------------------------------------------


def test_rotate_from_environment(monkeypatch, open_virtual):
    """$FBGFX_ROTATE sets the default rotation; an explicit rotate= wins."""
    monkeypatch.setenv("FBGFX_ROTATE", "270")
    fb = open_virtual("64x48")
    with fb.screen() as screen:
        assert screen.rotate == 270 and screen.size == (48, 64)
    with fb.screen(rotate=0) as screen:
        assert screen.rotate == 0 and screen.size == (64, 48)


@pytest.mark.parametrize("bad", [45, -90, 360, "90", 90.0, True])
def test_bad_rotate_is_a_value_error_and_changes_nothing(bad, open_virtual):
    """rotate other than 0/90/180/270 raises ValueError before anything on the device changes."""
    fb = open_virtual("64x48")
    before = fb.var
    with pytest.raises(ValueError, match="rotate"):
        fb.screen(rotate=bad)
    assert fb.var == before


def test_bad_rotate_in_environment_names_the_variable(monkeypatch, open_virtual):
    """A bad $FBGFX_ROTATE is a ValueError naming the variable."""
    monkeypatch.setenv("FBGFX_ROTATE", "sideways")
    fb = open_virtual("64x48")
    with pytest.raises(ValueError, match="FBGFX_ROTATE"):
        fb.screen()


def test_flip_close_keeps_turned_frame_on_screen(open_virtual):
    """Closing a turned page-flipping Screen pans back and keeps the last (turned) frame shown."""
    fb = open_virtual("40x30:RGB565")
    screen = fb.screen("flip", rotate=90)
    for color in ("red", "lime"):
        with screen.frame() as s:
            s.clear(color)
            s.point((0, 0), fill="blue")
    shown = np.asarray(fb.snapshot()).copy()
    screen.close()
    assert fb.var.yoffset == 0
    assert (np.asarray(fb.snapshot()) == shown).all()
    assert shown[0, 39].tolist() == [0, 0, 255]  # logical top-left: the panel's top-right


# -- the C kernels -----------------------------------------------------------------------------


def _ptr(a: np.ndarray):
    return ffi.cast("uint8_t *", a.__array_interface__["data"][0])


@pytest.mark.parametrize("size", [1, 2, 3, 4])
@pytest.mark.parametrize("turn", [1, 2, 3])
@pytest.mark.parametrize(
    "shape", [(1, 1), (1, 40), (40, 1), (8, 8), (16, 9), (9, 16), (5, 70), (33, 31), (64, 96), (72, 24)]
)
def test_rotate_copy_matches_numpy_rot90(size, turn, shape):
    """rotate_copy turns blocks of 1 to 4 byte pixels exactly as np.rot90 clockwise, touching nothing around them."""
    rng = np.random.default_rng(turn * 10 + size)
    h, w = shape
    src = rng.integers(0, 256, (h, w, size), dtype=np.uint8)
    want = np.rot90(src, -turn)
    out = np.full((want.shape[0] + 2, want.shape[1] + 2, size), 0xEE, np.uint8)  # a border to check
    inner = out[1:-1, 1:-1]
    rc = lib.rotate_copy(_ptr(src), src.strides[0], _ptr(inner), inner.strides[0], w, h, size, turn)
    assert rc == 0
    assert (inner == want).all()
    border = np.ones(out.shape[:2], bool)
    border[1:-1, 1:-1] = False
    assert (out[border] == 0xEE).all()


@pytest.mark.parametrize(
    "fmt", ["XRGB8888", "XBGR8888", "ARGB8888", "RGBA8888", "RGB565", "BGR565", "ARGB1555", "XRGB4444"]
)
@pytest.mark.parametrize("turn", [1, 2, 3])
@pytest.mark.parametrize("step", [3, 4])
def test_rotate_pack_matches_pack_then_rot90(fmt, turn, step):
    """rotate_pack converts as PixelFormat.pack does (alpha opaque) and turns as np.rot90 clockwise."""
    pf = fbgfx.PixelFormat.from_name(fmt)
    rng = np.random.default_rng(turn)
    padded = rng.integers(0, 256, (45, 77, 4), dtype=np.uint8)
    rgb = padded[..., :3] if step == 4 else np.ascontiguousarray(padded[..., :3])
    want = np.rot90(pf.pack(np.ascontiguousarray(rgb)), -turn)
    out = np.zeros(want.shape, pf.dtype)
    spec = _transfer._pack_spec(pf)
    rc = lib.rotate_pack(_ptr(rgb), rgb.strides[0], step, _ptr(out), out.strides[0], 77, 45, turn, spec)
    assert rc == 0
    assert (out == want).all()


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565"])
@pytest.mark.parametrize("width", [1024, 1021])
@pytest.mark.parametrize("turn", [1, 2, 3])
def test_rotate_pack_of_a_large_frame_into_a_bordered_panel(fmt, width, turn):
    """A frame larger than the caches (half turns: non-temporal stores, aligned or not) turns
    exactly as np.rot90 clockwise and writes nothing around its place."""
    pf = fbgfx.PixelFormat.from_name(fmt)
    rng = np.random.default_rng(width + turn)
    rgb = rng.integers(0, 256, (1040, width, 3), dtype=np.uint8)
    want = np.rot90(pf.pack(rgb), -turn)
    out = np.full((want.shape[0] + 2, want.shape[1] + 3), 0x5A, pf.dtype)  # a border to check
    inner = out[1:-1, 1:-2]
    spec = _transfer._pack_spec(pf)
    rc = lib.rotate_pack(_ptr(rgb), rgb.strides[0], 3, _ptr(inner), inner.strides[0], width, 1040, turn, spec)
    assert rc == 0
    assert (inner == want).all()
    border = np.ones(out.shape, bool)
    border[1:-1, 1:-2] = False
    assert (out[border] == 0x5A).all()


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565"])
@pytest.mark.parametrize("width", [1024, 1021, 5])
def test_half_turn_of_a_large_frame_at_every_start_alignment(fmt, width):
    """A half turn larger than the caches into panel rows 32-byte multiples apart, its place
    starting at every pixel offset from a 32-byte boundary (the rows' right ends before
    their last boundary take the plain loops, the rest is streamed), turns exactly as
    np.rot90 and writes nothing around its place."""
    pf = fbgfx.PixelFormat.from_name(fmt)
    size = pf.bpp // 8
    height = (2 << 20) // (width * size) + 3  # at least the streaming threshold
    rng = np.random.default_rng(width)
    rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    want = np.rot90(pf.pack(rgb), -2)
    pitch = -(-(width + 32 // size) // (32 // size)) * (32 // size)  # pixels; rows 32-byte multiples apart
    spec = _transfer._pack_spec(pf)
    for lead in range(32 // size):
        store = np.full(((height + 2) * pitch + 64 // size,), 0x5A, pf.dtype)
        start = (-(store.__array_interface__["data"][0]) % 32) // size  # first 32-byte boundary
        out = store[start : start + (height + 2) * pitch].reshape(height + 2, pitch)
        inner = out[1:-1, lead : lead + width]
        rc = lib.rotate_pack(_ptr(rgb), rgb.strides[0], 3, _ptr(inner), inner.strides[0], width, height, 2, spec)
        assert rc == 0
        assert (inner == want).all(), lead
        border = np.ones(store.shape, bool)
        border[start:][: (height + 2) * pitch].reshape(height + 2, pitch)[1:-1, lead : lead + width] = False
        assert (store[border] == 0x5A).all(), lead


# Every layout the half turn's vector steps take: whole-byte channels (with alpha),
# RGB565 and BGR565 (from 3-byte pixels through convert_pack's shuffles, from 4-byte ones
# through 32-bit words), and channels shifted into place, in 16 and 32 bits.
HALF_TURN_FORMATS = {
    **{
        name: fbgfx.PixelFormat.from_name(name)
        for name in ("XRGB8888", "XBGR8888", "RGBA8888", "RGB565", "BGR565", "ARGB1555", "XRGB4444")
    },
    "R6G7B5A3": fbgfx.PixelFormat(
        32, fbgfx.Bitfield(21, 6), fbgfx.Bitfield(10, 7), fbgfx.Bitfield(1, 5), fbgfx.Bitfield(28, 3)
    ),
}


@pytest.mark.parametrize("name", list(HALF_TURN_FORMATS))
@pytest.mark.parametrize("step", [3, 4])
@pytest.mark.parametrize("width", [1021, 48])
def test_half_turn_in_every_vector_layout(name, step, width):
    """A half turn of 3 and 4 byte RGB pixels, of a frame larger than the caches (streamed,
    an odd width: plain loops at the row ends) and of a small one (three whole vector
    steps a row), in every layout the vector steps take, is the packed frame reversed
    (np.rot90 twice), and writes nothing around its place."""
    pf = HALF_TURN_FORMATS[name]
    size = pf.bpp // 8
    height = (2 << 20) // (width * size) + 3 if width > 48 else 9
    rng = np.random.default_rng(width + step)
    padded = rng.integers(0, 256, (height, width, 4), dtype=np.uint8)
    rgb = padded[..., :3] if step == 4 else np.ascontiguousarray(padded[..., :3])
    want = np.rot90(pf.pack(np.ascontiguousarray(rgb)), 2)
    out = np.full((height + 2, width + 3), 0x5A, pf.dtype)  # a border to check
    inner = out[1:-1, 1:-2]
    spec = _transfer._pack_spec(pf)
    rc = lib.rotate_pack(_ptr(rgb), rgb.strides[0], step, _ptr(inner), inner.strides[0], width, height, 2, spec)
    assert rc == 0
    assert (inner == want).all()
    border = np.ones(out.shape, bool)
    border[1:-1, 1:-2] = False
    assert (out[border] == 0x5A).all()


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "BGR565", "ARGB1555"])
@pytest.mark.parametrize("turn", [1, 2, 3])
@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (8, 8), (8, 24), (24, 8), (16, 17), (23, 9), (41, 66)])
def test_rotate_pack_of_small_and_ragged_blocks(fmt, turn, shape):
    """Blocks of one pixel, one 8x8 block, one band of blocks, and sides that are not
    multiples of 8 or 16 (vector blocks plus plain loops around them) turn exactly as
    np.rot90 clockwise, writing nothing around their place."""
    pf = fbgfx.PixelFormat.from_name(fmt)
    h, w = shape
    rng = np.random.default_rng(h * 100 + w + turn)
    for step in (3, 4):
        padded = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
        rgb = padded[..., :3] if step == 4 else np.ascontiguousarray(padded[..., :3])
        want = np.rot90(pf.pack(np.ascontiguousarray(rgb)), -turn)
        out = np.full((want.shape[0] + 2, want.shape[1] + 3), 0x5A, pf.dtype)  # a border to check
        inner = out[1:-1, 1:-2]
        spec = _transfer._pack_spec(pf)
        rc = lib.rotate_pack(_ptr(rgb), rgb.strides[0], step, _ptr(inner), inner.strides[0], w, h, turn, spec)
        assert rc == 0
        assert (inner == want).all(), step
        border = np.ones(out.shape, bool)
        border[1:-1, 1:-2] = False
        assert (out[border] == 0x5A).all(), step


def test_kernels_refuse_bad_arguments():
    """The kernels return -EINVAL for a turn, pixel size or step they do not take."""
    buf = np.zeros((4, 4, 4), np.uint8)
    spec = _transfer._pack_spec(fbgfx.PixelFormat.from_name("XRGB8888"))
    assert lib.rotate_copy(_ptr(buf), 16, _ptr(buf), 16, 2, 2, 4, 4) < 0
    assert lib.rotate_copy(_ptr(buf), 16, _ptr(buf), 16, 2, 2, 5, 1) < 0
    assert lib.rotate_pack(_ptr(buf), 16, 2, _ptr(buf), 16, 2, 2, 1, spec) < 0


# -- drm: displays -----------------------------------------------------------------------------


@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
@pytest.mark.parametrize("rotate", ROTATIONS)
def test_drm_display_shows_turned_frames_and_dirty_panel_rectangles(buffering, rotate):
    """On a drm: display frames appear turned, and copy tells the driver the turned (panel) rectangles."""
    from support.fake_drm import FakeCard

    from fbgfx.device import Framebuffer
    from fbgfx.drm import DrmDevice

    card = FakeCard()
    with Framebuffer(DrmDevice(card, "drm:card0", console=False), "drm:card0") as fb:
        with fb.screen(buffering, console=False, rotate=rotate) as screen:
            for step in range(2):
                with screen.frame() as s:
                    draw_scene(s, step)
                fb.wait_flip()
                want = turned(reference("XRGB8888", screen.width, screen.height, step + 1), rotate)
                assert (np.asarray(fb.snapshot()) == want).all()
            if buffering == "copy":
                with screen.frame() as s:
                    s.rectangle((5, 6, 14, 9), fill="red")
                assert card.dirty_rects[-1] == [screen._back.transfer.to_page(5, 6, 15, 10)]


_PLAIN_LOOPS_CHECK = """
import numpy as np
import fbgfx
from fbgfx._ffi import ffi, lib
from fbgfx._screen import transfer as _transfer

def ptr(a):
    return ffi.cast("uint8_t *", a.__array_interface__["data"][0])

rng = np.random.default_rng(5)
for size in (1, 2, 3, 4):
    for turn in (1, 2, 3):
        src = rng.integers(0, 256, (40, 72, size), dtype=np.uint8)
        want = np.rot90(src, -turn)
        out = np.zeros(want.shape, np.uint8)
        lib.rotate_copy(ptr(src), src.strides[0], ptr(out), out.strides[0], 72, 40, size, turn)
        assert (out == want).all(), ("copy", size, turn)
for name in ("XRGB8888", "ARGB8888", "RGB565", "BGR565", "XRGB1555"):
    pf = fbgfx.PixelFormat.from_name(name)
    for turn in (1, 2, 3):
        for h, w in ((40, 72), (37, 45), (1, 9)):
            rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
            want = np.rot90(pf.pack(rgb), -turn)
            out = np.zeros(want.shape, pf.dtype)
            spec = _transfer._pack_spec(pf)
            lib.rotate_pack(ptr(rgb), rgb.strides[0], 3, ptr(out), out.strides[0], w, h, turn, spec)
            assert (out == want).all(), ("pack", name, turn, h, w)
print("plain loops ok")
"""


def test_plain_loops_without_vector_kernels():
    """With FBGFX_NO_AVX2=1 (as on ARM boards) the plain C loops turn and convert exactly too."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, FBGFX_NO_AVX2="1")
    res = subprocess.run([sys.executable, "-c", _PLAIN_LOOPS_CHECK], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "plain loops ok" in res.stdout
