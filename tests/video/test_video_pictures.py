"""What a video shows (issue 29): RGB and palette sources packed into 16-bit displays as
present() packs them, and anamorphic files at their display aspect."""

from __future__ import annotations

import os
import platform
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import PEAK_KB

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

import fbgfx.video as video  # noqa: E402


def write(path: Path, pictures: list[np.ndarray], codec: str, pix_fmt: str, sar: Fraction | None = None) -> Path:
    """Encode RGB ``pictures`` with ``codec`` in ``pix_fmt`` (lossless codecs: the decoded frames are the pictures)."""
    height, width = pictures[0].shape[:2]
    with av.open(str(path), "w") as out:
        stream = out.add_stream(codec, rate=10)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        if sar is not None:
            stream.codec_context.sample_aspect_ratio = sar
        for i, picture in enumerate(pictures):
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            if pix_fmt != "rgb24":
                frame = frame.reformat(format=pix_fmt)
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def first_frame_rgb(path: Path) -> np.ndarray:
    with av.open(str(path)) as c:
        return next(c.decode(video=0)).to_ndarray(format="rgb24")


@pytest.mark.parametrize(
    "codec, pix_fmt, ext",
    [("png", "rgb24", "nut"), ("ffv1", "bgr0", "nut"), ("gif", "pal8", "gif")],
    ids=["png-rgb24", "ffv1-bgr0", "gif-pal8"],
)
@pytest.mark.parametrize("spec", ["RGB565", "XRGB4444", "BGR565"])
def test_rgb_sources_pack_as_present_does(tmp_path: Path, open_virtual, codec: str, pix_fmt: str, ext: str, spec: str):
    """An RGB or palette video on a 16-bit display shows exactly what present() shows of the same frame (no fringes)."""
    rng = np.random.default_rng(7)
    picture = rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)
    if pix_fmt == "pal8":
        picture = (picture // 64 * 85).astype(np.uint8)  # 64 colours: a palette holds them all
    if codec == "gif":  # written by Pillow, read by FFmpeg's GIF decoder as pal8
        from PIL import Image

        path = tmp_path / "v.gif"
        Image.fromarray(picture).quantize(64).save(path)
    else:
        path = write(tmp_path / f"v.{ext}", [picture], codec, pix_fmt)
    reference = first_frame_rgb(path)
    fb = open_virtual(f"32x24:{spec}")
    with fb.screen() as screen, video.open(str(path)) as clip:
        assert screen.play(clip, fps=0, audio=False).shown == 1  # a Video: FFmpeg reads even a GIF
        played = fb.pixels.copy()
        screen.present(reference)
        presented = fb.pixels.copy()
    assert presented.any()
    assert np.array_equal(played, presented), int((played != presented).sum())


def test_anamorphic_video_is_shown_at_its_display_aspect(tmp_path: Path, open_virtual) -> None:
    """A 32x48 file of 2:1 pixels is 64x48 on screen: Video.width says so, and it fills a 64x48 display."""
    picture = np.zeros((48, 32, 3), np.uint8)
    picture[:, :16] = (255, 0, 0)
    picture[:, 16:] = (0, 0, 255)
    path = write(tmp_path / "sar.mkv", [picture] * 3, "libx264rgb", "rgb24", sar=Fraction(2, 1))
    with video.open(str(path)) as v:
        assert (v.width, v.height) == (64, 48)
        _, rgb = next(iter(v))
        assert rgb.shape == (48, 64, 3)
    fb = open_virtual("64x48:XRGB8888")
    with fb.screen() as screen:
        screen.play(str(path), fps=0, audio=False)
    shown = np.asarray(fb.snapshot().convert("RGB")).astype(int)
    # squeezed, the picture would be 32 wide with black bars; at its aspect, red then blue
    assert (np.abs(shown[:, 2:28] - (255, 0, 0)).max()) <= 8
    assert (np.abs(shown[:, 36:62] - (0, 0, 255)).max()) <= 8


def _declaring(path: Path, size: tuple[int, int], colors: tuple[str, ...] = ("red", "blue")) -> Path:
    """A GIF of 100x100 frames, one of each of ``colors`` (one colour: a still), whose
    logical screen is ``size``."""
    import struct

    from PIL import Image

    first, *rest = (Image.new("RGB", (100, 100), color) for color in colors)
    first.save(path, save_all=True, append_images=rest)
    data = bytearray(path.read_bytes())
    data[6:10] = struct.pack("<HH", *size)
    path.write_bytes(bytes(data))
    return path


def _play_in_a_child(path: Path, *options: str) -> tuple[str, int, str]:
    """``fbgfx play PATH OPTIONS`` on virtual:320x240 in a process of its own: its exit
    status, its peak memory in KB and its stderr."""
    import subprocess
    import sys

    code = (
        "from fbgfx.cli import main\n"
        f"code = main(['play', {str(path)!r}, *{list(options)!r}, '-d', 'virtual:320x240'])\n"
        f"print(code, {PEAK_KB})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    status, peak_kb = done.stdout.split()
    return status, int(peak_kb), done.stderr


@pytest.mark.parametrize("fit", ["fit", "center"])
def test_a_huge_declared_gif_costs_what_is_shown(tmp_path: Path, fit: str) -> None:
    """A still GIF of a few bytes declaring 12000x12000 plays in bounded memory (it took
    about 1 GB): frames as small as shown. (An animation that large is refused, below.)"""
    big = _declaring(tmp_path / "big.gif", (12000, 12000), ("red",))  # the screen: 144 M pixels
    status, peak_kb, stderr = _play_in_a_child(big, f"--{fit}", "--duration", "0.5")
    assert status == "0", stderr
    assert peak_kb < 300_000, peak_kb  # it was 870-890 MB; about 75 MB now


def test_an_animation_larger_than_pillows_limit_is_refused_before_decoding(tmp_path: Path) -> None:
    """An animated GIF declaring 12000x12000 (Pillow composes its frames on a 1.2 GB
    canvas; it took 1.3 GB) is refused in one line, in little memory, the screen untouched."""
    big = _declaring(tmp_path / "big.gif", (12000, 12000))
    status, peak_kb, stderr = _play_in_a_child(big, "--duration", "5")
    assert status == "2", stderr
    errors = [line for line in stderr.splitlines() if line.startswith("fbgfx: error:")]
    assert len(errors) == 1 and "12000x12000" in errors[0] and "MAX_IMAGE_PIXELS" in errors[0], stderr
    assert peak_kb < 200_000, peak_kb


def test_an_animation_within_pillows_limit_plays(tmp_path: Path, open_virtual: Any) -> None:
    """The same animation declaring 3000x2000 plays: both frames, made as small as shown
    (one tenth), at the corner where the canvas has them."""
    from PIL import Image

    path = _declaring(tmp_path / "mid.gif", (3000, 2000))
    fb = open_virtual("300x200:XRGB8888")
    with fb.screen() as screen:
        played = screen.play(video.AnimationSource(str(path)), fps=0, audio=False)  # as `fbgfx play` reads a GIF
    assert played.shown == 2
    shown = np.asarray(fb.snapshot().convert("RGB")).astype(int)
    assert np.abs(shown[1:9, 1:9] - (0, 0, 255)).max() <= 8  # the last frame, a tenth of 100x100
    assert tuple(shown[100, 150]) != (0, 0, 255)  # the canvas outside the frames
    limit = Image.MAX_IMAGE_PIXELS
    assert limit is not None and 3000 * 2000 < limit


@pytest.mark.parametrize("pix_fmt", ["yuv420p", "yuv422p", "nv12", "yuyv422", "yuv420p10le", "rgb24", "gbrp"])
@pytest.mark.parametrize("at", [(30, 22), (31, 23), (61, 47)])
def test_center_converts_only_the_part_shown(pix_fmt: str, at: tuple[int, int]) -> None:
    """fit="center" of a larger frame converts the part shown: the same pixels as converting all, then cutting."""
    from fbgfx.pixelformat import FORMATS
    from fbgfx.video import _scale

    picture = np.random.default_rng(3).integers(0, 256, (78, 102, 3), dtype=np.uint8)
    frame = av.VideoFrame.from_ndarray(picture, format="rgb24").reformat(format=pix_fmt)
    fmt = FORMATS["XRGB8888"]
    results = []
    for cut in (True, False):
        screen = np.zeros((40, 48), fmt.dtype)  # the back buffer; the picture goes in its corner
        converter = _scale.Converter(screen[:30, :40], fmt, None, (102, 78), at, 0, 1)
        if not cut:
            converter._cut = None  # the whole frame, then the part (what fbgfx did before)
        converter(frame)
        assert (converter._windows != {}) is cut
        converter.close()
        results.append(screen.copy())
    assert results[0].any()
    if platform.machine() != "x86_64":
        # On ARM, libswscale converts some formats with NEON where the width is a multiple
        # of 16 and in C elsewhere (the part read at (30, 22) is 48 wide, the frame 102), and
        # FFmpeg 5.1 (Debian bookworm) converts a whole yuv422p frame with 4:2:0's chroma
        # rows: the cut and the whole differ (by up to 220), so each is held to the picture.
        shown = picture[at[1] : at[1] + 30, at[0] : at[0] + 40].astype(int)
        cut, whole = (np.abs(r.view(np.uint8).reshape(40, 48, 4)[:30, :40, 2::-1] - shown).mean() for r in results)
        assert cut <= whole + 1, (cut, whole)
    else:
        assert np.abs(results[0].view(np.uint8).astype(int) - results[1].view(np.uint8).astype(int)).max() <= 2


def test_center_of_a_huge_frame_allocates_what_is_shown() -> None:
    """A 4000x3000 frame shown 1:1 in 64x48 costs a scratch of about the shown size, not 48 MB."""
    import tracemalloc

    from fbgfx.pixelformat import FORMATS
    from fbgfx.video import _scale

    frame = av.VideoFrame(4000, 3000, "yuv420p")
    fmt = FORMATS["RGB565"]
    screen = np.zeros((64, 80), fmt.dtype)
    tracemalloc.start()
    try:
        converter = _scale.Converter(screen[:48, :64], fmt, None, (4000, 3000), (1968, 1476), 0, 1)
        converter(frame)
        converter(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    converter.close()
    assert peak < 4 << 20, peak


@pytest.mark.parametrize("ext", ["gif", "png", "webp"])
def test_a_picture_path_plays_through_pillow_with_the_files_timing(tmp_path: Path, open_virtual: Any, ext: str) -> None:
    """screen.play(path) of an animation plays it as `fbgfx play` does: through Pillow, each
    frame for the time the file gives it (120 ms, 40 ms) and in its colours."""
    from PIL import Image

    path = tmp_path / f"two.{ext}"
    first, second = Image.new("RGB", (64, 48), (255, 0, 0)), Image.new("RGB", (64, 48), (0, 0, 255))
    first.save(path, save_all=True, append_images=[second], duration=[120, 40], loop=0, lossless=True)
    assert video.is_picture(str(path))
    fb = open_virtual("64x48:XRGB8888")
    times, colours = [], []

    def seen(surface: Any, t: float) -> None:
        times.append(round(t, 3))
        colours.append(surface.to_image().convert("RGB").getpixel((10, 10)))

    with fb.screen() as screen:
        played = screen.play(path, audio=False, on_frame=seen)
    assert played.shown == 2 and times == [0.0, 0.12]
    assert colours == [(255, 0, 0), (0, 0, 255)]


def test_is_picture_tells_what_ffmpeg_plays_and_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    """A video file, a FIFO and a URL are not pictures (a FIFO is not even opened); a missing
    path and a folder raise."""
    clip = write(tmp_path / "v.nut", [np.zeros((24, 32, 3), np.uint8)], "ffv1", "bgr0")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not video.is_picture(str(clip))
    assert not video.is_picture(str(fifo))  # would block if it were opened: no writer
    assert not video.is_picture("http://example.com/a.gif")
    with pytest.raises(FileNotFoundError):
        video.is_picture(str(tmp_path / "missing.gif"))
    with pytest.raises(IsADirectoryError):
        video.is_picture(str(tmp_path))
