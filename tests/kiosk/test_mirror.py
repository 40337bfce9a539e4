"""fbgfx.mirror / fbgfx mirror on virtual displays: scaling filters, changed tiles only, following the source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from PIL import Image

import fbgfx
from fbgfx.cli import main
from fbgfx.kiosk import _scale
from fbgfx.kiosk._scale import Scaler, changed_tiles, tile_rects
from fbgfx.kiosk.mirror import Mirror, MirrorStats, mirror


def _reference_matrix(n: int, m: int, start: float = 0.0, span: float | None = None) -> np.ndarray:
    """(m, n) weights in floating point: area-averaging when shrinking, bilinear when growing."""
    span = float(n) if span is None else span
    s = span / m
    out = np.zeros((m, n))
    for d in range(m):
        if s > 1:
            a, b = start + d * s, start + (d + 1) * s
            for i in range(int(a), min(n, int(np.ceil(b)))):
                out[d, i] = max(0.0, min(b, i + 1) - max(a, i))
        else:
            c = start + (d + 0.5) * s - 0.5
            i0 = int(np.floor(c))
            for i, w in ((i0, 1 - (c - i0)), (i0 + 1, c - i0)):
                out[d, min(max(i, 0), n - 1)] += w
        out[d] /= out[d].sum()
    return out


def _reference(rgb: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``rgb`` scaled to ``size`` by the float reference weights."""
    h, w = rgb.shape[:2]
    left, top, right, bottom = (0.0, 0.0, float(w), float(h))
    my = _reference_matrix(h, size[1], top, bottom - top)
    mx = _reference_matrix(w, size[0], left, right - left)
    return np.stack([my @ rgb[..., c].astype(np.float64) @ mx.T for c in range(3)], axis=-1)


@pytest.mark.parametrize("size", [(32, 24), (64, 36), (400, 300), (50, 200), (7, 300), (192, 108)])
def test_scaler_matches_area_average_and_bilinear(size):
    """Box (area-average) shrinking, bilinear growing, per axis: within one level of a float reference."""
    rgb = np.random.default_rng(1).integers(0, 256, (108, 192, 3), np.uint8)
    scaler = Scaler((192, 108), size)
    out = scaler.scale(rgb, (3, 0, 1, 2), (0, 0, *size))
    assert np.abs(out - _reference(rgb, size)).max() <= 1.0
    want = {True: "box", False: "bilinear"}
    assert scaler.filters == (
        "exact" if size[0] == 192 else want[size[0] < 192],
        "exact" if size[1] == 108 else want[size[1] < 108],
    )


def test_scaler_exact_at_one_to_one_and_whole_factor_like_pillow_reduce():
    """1:1 is a copy; a whole shrink factor is Pillow's reduce() (area average) within rounding."""
    rgb = np.random.default_rng(2).integers(0, 256, (60, 90, 3), np.uint8)
    assert np.array_equal(Scaler((90, 60), (90, 60)).scale(rgb, (3, 0, 1, 2), (0, 0, 90, 60)), rgb)
    small = Scaler((90, 60), (30, 20)).scale(rgb, (3, 0, 1, 2), (0, 0, 30, 20))
    assert np.abs(small.astype(int) - np.asarray(Image.fromarray(rgb).reduce(3))).max() <= 1


def test_scaler_reads_native_words_like_rgb():
    """XRGB8888 words, RGB565 words and RGB bytes of one picture scale to the same pixels."""
    rgb = np.random.default_rng(3).integers(0, 256, (48, 64, 3), np.uint8)
    rgb565 = rgb & np.array([0xF8, 0xFC, 0xF8], np.uint8)
    rgb565 |= rgb565 >> np.array([5, 6, 5], np.uint8)
    xrgb = (rgb[..., 0].astype(np.uint32) << 16) | (rgb[..., 1].astype(np.uint32) << 8) | rgb[..., 2]
    words = fbgfx.PixelFormat.from_name("RGB565").pack(rgb565)
    scaler = Scaler((64, 48), (20, 15))
    full = (0, 0, 20, 15)
    assert np.array_equal(scaler.scale(xrgb, (4, 16, 8, 0), full), scaler.scale(rgb, (3, 0, 1, 2), full))
    assert np.array_equal(scaler.scale(words, (2, 11, 5, 0), full), scaler.scale(rgb565, (3, 0, 1, 2), full))


def test_scaler_pieces_equal_the_whole():
    """Any rectangle of the output equals that part of the whole output (tiles join seamlessly)."""
    rgb = np.random.default_rng(4).integers(0, 256, (100, 130, 3), np.uint8)
    for out in ((40, 30), (300, 250)):
        scaler = Scaler((130, 100), out)
        whole = scaler.scale(rgb, (3, 0, 1, 2), (0, 0, *out))
        assert np.array_equal(scaler.scale(rgb, (3, 0, 1, 2), (3, 5, 21, 17)), whole[5:17, 3:21])


def test_changed_tiles_marks_and_copies_only_changed_tiles():
    """The comparison finds the tiles that differ, copies them into the kept copy, and nothing else."""
    cur = np.zeros((100, 640), np.uint8)
    kept = cur.copy()
    assert changed_tiles(cur, kept)[1] == 0
    cur[40, 200] = 7
    mask, n = changed_tiles(cur, kept)
    assert n == 1 and mask[40 // _scale.TILE_ROWS, 200 // _scale.TILE_BYTES]
    assert kept[40, 200] == 7
    assert tile_rects(mask, 640, 100) == [(192, 32, 256, 48)]


def _draw(fb: fbgfx.Framebuffer, fill: str, box: tuple[int, int, int, int] | None = None, color: str = "white") -> None:
    with fb.screen(buffering="single", console=False).frame() as s:
        if box is None:
            s.clear(fill)
        else:
            s.rectangle(box, fill=color)


def test_mirror_scales_within_filter_tolerance(tmp_path, open_virtual):
    """A 640x480 XRGB8888 source shows on a 320x240 RGB565 display as its area average."""
    spec = f"virtual:640x480:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    picture = np.random.default_rng(5).integers(0, 256, (480, 640, 3), np.uint8)
    with src.screen(buffering="single", console=False).frame() as s:
        s.blit(picture, (0, 0))
    dest = open_virtual("320x240:RGB565")
    with Mirror(spec, dest) as m:
        assert m.step()
        assert m.stats.filters == ("box", "box")
    shown = np.asarray(dest.snapshot()).astype(int)
    ref = _reference(np.asarray(src.snapshot()), (320, 240))
    assert np.abs(shown - ref).max() <= 9  # RGB565 keeps 5 or 6 bits a channel
    assert shown.std() > 10  # not blank


def test_mirror_one_to_one_is_exact(tmp_path, open_virtual):
    """Same size and format: the destination holds the source's pixels exactly."""
    spec = f"virtual:200x100:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    with src.screen(buffering="single", console=False).frame() as s:
        s.blit(np.random.default_rng(6).integers(0, 256, (100, 200, 3), np.uint8), (0, 0))
    dest = open_virtual("200x100:XRGB8888")
    with Mirror(spec, dest) as m:
        m.step()
        assert m.stats.filters == ("exact", "exact")
    assert np.array_equal(np.asarray(dest.snapshot()), np.asarray(src.snapshot()))


def test_still_source_is_skipped_and_small_change_writes_little(tmp_path, open_virtual):
    """A still source costs skipped looks only; a 64x64 change writes only where it lands."""
    spec = f"virtual:640x480:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    _draw(src, "navy")
    dest = open_virtual("320x240:RGB565")
    with Mirror(spec, dest) as m:
        # eight looks of run()'s loop, however long a busy machine makes them take
        stop, step = threading.Event(), m.step

        def counted_step() -> bool:
            shown = step()
            if m.stats.mirrored + m.stats.skipped == 8:
                stop.set()
            return shown

        m.step = counted_step
        m.run(fps=100, stop=stop)
        del m.step
        assert m.stats.mirrored == 1 and m.stats.skipped == 7
        marker = dest.format.pack_color((0, 255, 0))
        dest.pixels[5, 5] = marker  # far from the change: a full rewrite would paint it over
        _draw(src, "", (400, 300, 463, 363), "yellow")
        assert m.step()
        assert m.stats.mirrored == 2
        assert dest.pixels[5, 5] == marker
        assert dest.snapshot().getpixel((215, 165)) == (255, 255, 0)
        # the changed tiles: 64 px of 4 bytes = 4 tiles wide (5 when unaligned), 4-5 bands of 16 rows
        assert (m.stats.changed - 1.0) < 6 * 5 * 64 * 16 / (640 * 4 * 480)


def test_mirror_follows_mode_change_exit_and_return(tmp_path, open_virtual):
    """A new source mode is laid out again; a source gone keeps the last picture until it is back."""
    path = tmp_path / "src.raw"
    spec = f"virtual:640x480:XRGB8888:file={path}"
    src = fbgfx.open(spec)
    _draw(src, "navy")
    dest = open_virtual("320x240:RGB565")
    with Mirror(spec, dest) as m:
        m.step()
        src.set_mode(width=800, height=400)
        _draw(src, "red")
        assert m.step()
        assert m._scaler is not None and m._scaler.out == (320, 160)  # letterboxed 2:1
        assert dest.snapshot().getpixel((160, 10)) == (0, 0, 0)
        assert dest.snapshot().getpixel((160, 120)) == (255, 0, 0)
        src.close()
        for p in tmp_path.iterdir():
            shutil.rmtree(p) if p.is_dir() else p.unlink()
        assert not m.step() and not m.step()
        assert dest.snapshot().getpixel((160, 120)) == (255, 0, 0)  # the last picture stays
        with fbgfx.open(spec) as back:
            _draw(back, "lime")
            # the source is looked for again every 0.5 s: 60 s is for a hung mirror only
            deadline = time.monotonic() + 60
            while not m.step() and time.monotonic() < deadline:
                time.sleep(0.1)
        assert dest.snapshot().getpixel((160, 120)) == (0, 255, 0)


def test_dest_monitor_back_gets_the_whole_picture_again(tmp_path, open_virtual, monkeypatch):
    """A ``"connected"`` event (a drm: monitor back at the same size) redraws everything:
    the mode set that lit it may have lost the buffer's pixels (qemu's bochs clears them)."""
    from fbgfx.display_events import DisplayEvent

    spec = f"virtual:64x48:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    _draw(src, "navy")
    dest = open_virtual("64x48:XRGB8888")
    events: list[DisplayEvent] = []
    monkeypatch.setattr(dest, "display_events", lambda timeout=0: [events.pop() for _ in list(events)])
    with Mirror(spec, dest) as m:
        assert m.step() and not m.step()
        dest.pixels[...] = 0  # lost while the monitor was away
        assert not m.step()  # nothing changed in the source, nothing said: nothing written
        events.append(DisplayEvent("connected", "Virtual-1", True, (64, 48), "64x48@60"))
        assert m.step()
        assert not m.step()
    assert np.array_equal(np.asarray(dest.snapshot()), np.asarray(src.snapshot()))


@pytest.mark.parametrize(
    ("fit", "rotate", "probe", "want"),
    [
        ("fit", 0, (160, 5), (0, 0, 0)),  # letterbox above a 2:1 picture
        ("fit", 0, (5, 120), (255, 0, 0)),  # the whole width shows, the red band too
        ("fill", 0, (0, 120), (0, 0, 255)),  # covers 4:3 by cropping the sides: the red band is cut off
        ("stretch", 0, (160, 5), (0, 0, 255)),
        ("stretch", 0, (5, 5), (255, 0, 0)),
        ("stretch", 90, (5, 120), (255, 0, 0)),  # on a 240x320 screen turned a quarter
        ("stretch", 90, (200, 120), (0, 0, 255)),
    ],
)
def test_fit_fill_stretch_and_rotate(tmp_path, open_virtual, fit, rotate, probe, want):
    """fit letterboxes, fill crops to cover, stretch covers; rotate turns the picture on the panel."""
    spec = f"virtual:400x200:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    _draw(src, "blue")
    _draw(src, "", (0, 0, 49, 199), "red")  # a red band on the left eighth
    dest = open_virtual("320x240:XRGB8888")
    with Mirror(spec, dest, fit=fit, rotate=rotate) as m:
        m.step()
    image = dest.snapshot()
    if rotate == 90:
        image = image.rotate(90, expand=True)  # back to the picture as drawn
        assert image.size == (240, 320)
    assert image.getpixel(probe) == want


def test_region_mirrors_part_of_the_source(tmp_path, open_virtual):
    """--region X0,Y0,X1,Y1 shows only that rectangle, scaled to the destination."""
    spec = f"virtual:400x300:XRGB8888:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    _draw(src, "blue")
    _draw(src, "", (100, 100, 179, 159), "yellow")
    dest = open_virtual("160x120:XRGB8888")
    with Mirror(spec, dest, region=(100, 100, 180, 160)) as m:
        m.step()
    colors = {c for _, c in dest.snapshot().getcolors()}
    assert colors == {(255, 255, 0)}


def test_palette_source_is_unpacked(tmp_path, open_virtual):
    """An 8-bit palette source (vfb's start mode) is read through its colour map."""
    spec = f"virtual:320x240:C8:file={tmp_path / 'src.raw'}"
    src = open_virtual(spec)
    with src.screen(buffering="single", console=False).frame() as s:
        s.clear("red")
    dest = open_virtual("160x120:RGB565")
    with Mirror(spec, dest) as m:
        m.step()
    assert dest.snapshot().getpixel((80, 60)) == (255, 0, 0)


_ANIMATE = textwrap.dedent(
    """
    import sys, time, fbgfx
    spec, frames = sys.argv[1], int(sys.argv[2])
    with fbgfx.open(spec) as fb:
        screen = fb.screen(buffering="single", console=False)
        for i in range(frames):
            with screen.frame() as s:
                s.clear("navy")
                s.rectangle((10 + 7 * i, 40, 110 + 7 * i, 140), fill="orange")
            if i == frames // 2:  # halfway: on once the mirror has shown this frame
                print("half", flush=True)
                sys.stdin.readline()
            time.sleep(0.02)
    print("done", flush=True)
    """
)


def _wait_for(condition, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_mirror_follows_another_process(tmp_path, open_virtual):
    """A second process animates the source; the mirror ends showing its last frame, scaled."""
    spec = f"virtual:480x320:XRGB8888:file={tmp_path / 'src.raw'}"
    _draw(open_virtual(spec), "black")
    dest = open_virtual("240x160:RGB565")
    stop = threading.Event()
    result: list[MirrorStats] = []
    thread = threading.Thread(target=lambda: result.append(mirror(spec, dest, fps=50, stop=stop)))
    thread.start()

    def shown_soon() -> bool:
        """Whether the mirror shows the source's picture now, or does within 60 s (not a
        fixed time: a busy machine makes its looks late)."""
        with fbgfx.open(spec, readonly=True) as src:
            ref = _reference(np.asarray(src.snapshot()), (240, 160))
        return _wait_for(lambda: np.abs(np.asarray(dest.snapshot()).astype(int) - ref).max() <= 9, 60)

    animator = subprocess.Popen(
        [sys.executable, "-c", _ANIMATE, spec, "30"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert animator.stdout is not None and animator.stdin is not None
        assert animator.stdout.readline() == "half\n"
        # the mirror follows the animation: it shows the halfway frame while the animator waits
        assert shown_soon()
        out, _ = animator.communicate("on\n", timeout=120)
        assert animator.returncode == 0 and out == "done\n"
        assert shown_soon()  # and then the last frame
    finally:
        if animator.poll() is None:
            animator.kill()
            animator.wait()
        stop.set()
        thread.join(30)
    stats = result[0]
    assert stats.mirrored >= 3  # the first (black), the halfway and the last frame at least
    assert dest.snapshot().getpixel((int((60 + 7 * 29) / 2), 45)) == (255, 166, 0)  # orange in RGB565


def test_cli_mirror_reports_on_exit(tmp_path, open_virtual, capsys):
    """fbgfx mirror --duration runs, shows the picture and reports frames, skips, area and CPU."""
    src_spec = f"virtual:320x240:XRGB8888:file={tmp_path / 'src.raw'}"
    _draw(open_virtual(src_spec), "red")
    dest_spec = f"virtual:160x120:RGB565:file={tmp_path / 'dest.raw'}"
    assert main(["mirror", src_spec, dest_spec, "--duration", "0.3", "--fps", "20", "--stats"]) == 0
    err = capsys.readouterr().err
    assert "fbgfx: mirror: 1 frames mirrored" in err and "skipped" in err and "ms CPU per mirrored frame" in err
    with fbgfx.open(dest_spec, readonly=True) as dest:
        assert dest.snapshot().getpixel((80, 60)) == (255, 0, 0)


def test_cli_mirror_rejects_bad_region(tmp_path, capsys):
    """A malformed --region is one error line, exit status 2."""
    assert main(["mirror", "virtual:32x32", "virtual:16x16", "--region", "1,2,3"]) == 2
    assert "--region must be X0,Y0,X1,Y1" in capsys.readouterr().err


def test_cli_mirror_sigterm_reports(tmp_path, open_virtual):
    """SIGTERM ends fbgfx mirror cleanly, with its report."""
    src_spec = f"virtual:320x240:XRGB8888:file={tmp_path / 'src.raw'}"
    _draw(open_virtual(src_spec), "red")
    dest_spec = f"virtual:160x120:RGB565:file={tmp_path / 'dest.raw'}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", "mirror", src_spec, dest_spec, "--fps", "20"],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not os.path.exists(tmp_path / "dest.raw"):
        time.sleep(0.1)
    time.sleep(1.0)
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "frames mirrored" in err
