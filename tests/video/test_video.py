"""Video files on virtual displays: fbgfx.video, Screen.play and `fbgfx play FILE...`.

The videos are made by the tests (tests/support/video_media.py): solid-colour quadrants that
change every second, a 440 Hz tone, a display matrix. Most plays run with ``fps=0``
(as fast as possible) so the suite stays quick; one test plays a 4 s file in real time.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import support
from PIL import Image

import fbgfx
from fbgfx import convert
from fbgfx.cli import main

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from support.video_media import make_video, quadrant_colors  # noqa: E402

import fbgfx.video as video  # noqa: E402
from fbgfx.video import _player, _scale, _source  # noqa: E402

ROOT = Path(support.ROOT)


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The test videos, made once for the module."""
    d = tmp_path_factory.mktemp("media")
    return {
        "two": make_video(d / "two.mp4", seconds=2, fps=10),
        "one": make_video(d / "one.mkv", seconds=1, fps=10),
        "tone": make_video(d / "tone.mp4", seconds=1, fps=10, tone=True),
        "turned": make_video(d / "turned.mp4", seconds=1, fps=10, rotate=90),
    }


def decoded(path: Path) -> list[np.ndarray]:
    """Every frame of ``path`` as RGB, decoded by PyAV on its own (the reference)."""
    with av.open(str(path)) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]


def shown(fb: fbgfx.Framebuffer) -> np.ndarray:
    """What the display shows, as RGB."""
    return np.asarray(fb.snapshot().convert("RGB")).astype(int)


def close_to(a: np.ndarray, b: np.ndarray, tolerance: int) -> bool:
    """Every channel of two non-blank pictures within ``tolerance``."""
    assert a.shape == b.shape and a.any() and b.any()
    return int(np.abs(a.astype(int) - b.astype(int)).max()) <= tolerance


# -- opening -------------------------------------------------------------------------------------


def test_open_reports_the_file(media):
    """open() gives the size, frame rate, duration and whether there is sound."""
    with video.open(str(media["tone"])) as v:
        assert (v.width, v.height, v.fps, v.rotation) == (64, 48, 10.0, 0)
        assert v.duration == pytest.approx(1.0, abs=0.1)
        assert v.has_audio and v.audio_rate == 48000
    with video.open(str(media["two"])) as v:
        assert not v.has_audio and v.duration == pytest.approx(2.0, abs=0.1)
    assert v.closed


def test_open_turns_a_display_matrix_upright(media):
    """A phone-style file (display matrix: 90 degrees) reports its upright size."""
    with video.open(str(media["turned"])) as v:
        assert (v.width, v.height, v.rotation) == (48, 64, 90)


def test_iterating_gives_upright_rgb_frames(media):
    """Iterating a Video gives every frame's time and upright RGB picture."""
    with video.open(str(media["turned"])) as v:
        frames = list(v)
    assert [round(t, 3) for t, _ in frames] == [round(i / 10, 3) for i in range(10)]
    assert close_to(frames[0][1], np.rot90(decoded(media["turned"])[0], -1), 0)
    assert close_to(frames[0][1][8, 8], np.array(quadrant_colors(0)[2]), 4)  # bottom-left turns to top-left


def test_open_without_pyav_says_how_to_install(media, monkeypatch):
    """Without PyAV, opening a video says in one line how to install it."""
    monkeypatch.setitem(sys.modules, "av", None)
    with pytest.raises(ImportError, match=r"pip install 'fbgfx\[video\]'"):
        video.open(str(media["two"]))


def test_importing_fbgfx_does_not_import_pyav():
    """A program that draws (and even imports fbgfx.video) does not load PyAV."""
    code = (
        "import sys, fbgfx, fbgfx.video\n"
        "with fbgfx.open('virtual:32x24') as fb, fb.screen() as s:\n"
        "    s.surface.rectangle((0, 0, 5, 5), fill='red'); s.flip()\n"
        "print('av' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


# -- pixels --------------------------------------------------------------------------------------


def reference_native(frame, fb: fbgfx.Framebuffer) -> np.ndarray:
    """A PyAV-decoded frame converted the way play converts it: by libswscale into the
    display's layout (PyAV's own reformat), or to RGB and then by fbgfx's kernels."""
    fmt = fb.format
    name = _scale.native_pix_fmt(fmt)
    h, w = frame.height, frame.width
    if name is None:
        native = np.empty(fmt.array_shape(h, w), fmt.dtype)
        convert.to_native(frame.to_ndarray(format="rgb24"), fmt, native, palette=fb.palette)
        return native
    plane = frame.reformat(format=name).planes[0]
    rows = np.frombuffer(bytes(plane), np.uint8).reshape(h, plane.line_size)
    return rows[:, : w * fmt.bytes_per_pixel].copy().view(fmt.dtype).reshape(fmt.array_shape(h, w))


def last_frame(path: Path):
    with av.open(str(path)) as c:
        return list(c.decode(video=0))[-1]


@pytest.mark.parametrize("spec", ["XRGB8888", "RGB565", "RGB888", "C8"])
def test_play_shows_the_reference_picture(media, open_virtual, spec):
    """The last frame on screen is exactly the reference decode converted the same way."""
    fb = open_virtual(f"64x48:{spec}")
    with fb.screen() as screen:
        played = screen.play(str(media["two"]), fps=0, audio=False)
        assert played == (20, 0, None)  # no sound: no A/V offset
        expected = reference_native(last_frame(media["two"]), fb)
        assert expected.any() and np.array_equal(fb.pixels, expected)
        top_left = shown(fb)[10, 10]
    assert close_to(top_left, np.array(quadrant_colors(1)[0]), 8)


def test_play_on_a_turned_screen(media, open_virtual):
    """On a Screen turned 90 degrees the panel shows the picture turned clockwise."""
    fb = open_virtual("48x64:RGB565")
    with fb.screen(rotate=90) as screen:
        assert screen.size == (64, 48)
        screen.play(str(media["one"]), fps=0, audio=False)
        expected = np.rot90(reference_native(last_frame(media["one"]), fb), -1)
        assert expected.any() and np.array_equal(fb.pixels, expected)


def test_play_turns_a_display_matrix_upright(media, open_virtual):
    """A phone-style file shows upright: its quadrants turned 90 degrees clockwise."""
    fb = open_virtual("48x64:XRGB8888")
    with fb.screen() as screen:
        screen.play(str(media["turned"]), fps=0, audio=False)
    assert close_to(shown(fb), np.rot90(decoded(media["turned"])[-1], -1), 3)


def test_play_into_a_box_with_an_overlay(media, open_virtual):
    """Only the box changes, the picture is scaled into it, and on_frame draws on every frame."""
    fb = open_virtual("200x100:XRGB8888")
    times = []

    def overlay(surface, t):
        times.append(t)
        surface.rectangle((100, 20, 109, 29), fill="yellow")

    with fb.screen() as screen:
        screen.surface.clear("navy")
        screen.flip()
        played = screen.play(str(media["two"]), box=(20, 10, 148, 106), fit="fit", fps=0, audio=False, on_frame=overlay)
    assert played.shown == 20 and len(times) == 20
    assert times == sorted(times) and times[-1] == pytest.approx(1.9)
    picture = shown(fb)
    navy = np.array([0, 0, 128])
    outside = np.ones((100, 200), bool)
    outside[10:100, 20:148] = False  # the box, clipped to the screen
    assert (picture[outside] == navy).all()
    assert (picture[20:30, 100:110] == (255, 255, 0)).all()
    # 64x48 fitted into 128x90 -> 120x90 at (24, 10); the rest of the box is the background
    assert (picture[10:100, 20:24] == 0).all() and (picture[10:100, 144:148] == 0).all()
    colors = quadrant_colors(1)
    assert close_to(picture[30, 50], np.array(colors[0]), 8) and close_to(picture[80, 130], np.array(colors[3]), 8)


def test_layouts():
    """fit keeps the aspect ratio inside, fill covers and crops, stretch fills, center crops."""
    box = (0, 0, 100, 50)
    assert _player._layout(200, 200, box, "fit") == ((50, 50), (25, 0, 75, 50), (0, 0))
    assert _player._layout(200, 200, box, "fill") == ((100, 100), (0, 0, 100, 50), (0, 25))
    assert _player._layout(200, 200, box, "stretch") == ((100, 50), (0, 0, 100, 50), (0, 0))
    assert _player._layout(20, 10, box, "center") == ((20, 10), (40, 20, 60, 30), (0, 0))
    assert _player._layout(200, 100, box, "center") == ((200, 100), (0, 0, 100, 50), (50, 25))


def test_native_pix_fmts():
    """The display layouts libswscale writes directly; palettes and alpha bits go through fbgfx."""
    expect = {"XRGB8888": "bgr0", "XBGR8888": "rgb0", "RGB565": "rgb565le", "RGB888": "bgr24", "R8": "gray"}
    for name, pix_fmt in expect.items():
        assert _scale.native_pix_fmt(fbgfx.FORMATS[name]) == pix_fmt
    for name in ("C8", "ARGB1555", "C4", "R1"):
        assert _scale.native_pix_fmt(fbgfx.FORMATS[name]) is None


def test_conversion_reuses_its_memory(media, open_virtual):
    """Converting frames allocates nothing per frame: the same destination, no growth."""
    fb = open_virtual("64x48:RGB565")
    target = np.zeros((48, 64), np.uint16)
    converter = _scale.Converter(target, fb.format, None, (64, 48), (0, 0), 0, 1)
    with av.open(str(media["two"])) as c:
        frames = list(c.decode(video=0))
    converter(frames[0])
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for frame in frames * 5:
        converter(frame)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    converter.close()
    assert grown < 4096, grown  # a frame is 6 KiB; 100 frames converted
    assert target.any()


# -- time, loops, playlists ------------------------------------------------------------------------


@pytest.mark.timing("real-time pacing is the behaviour: only the clock can say a 4 s file took 4 s")
def test_a_four_second_file_takes_four_seconds(tmp_path, open_virtual, monkeypatch):
    """Played in real time, a 4 s file takes 4 s from its first picture (at least 3.6 s, at
    most 6 s on a busy machine), every frame shown or dropped."""
    path = make_video(tmp_path / "four.mp4", seconds=4, fps=10, size=(32, 24))
    fb = open_virtual("32x24:RGB565")
    with fb.screen() as screen:
        flips: list[float] = []
        flip = screen.flip

        def flip_and_stamp(*args, **kwargs):
            flip(*args, **kwargs)
            flips.append(time.monotonic())

        monkeypatch.setattr(screen, "flip", flip_and_stamp)
        played = screen.play(str(path), audio=False)
        elapsed = time.monotonic() - flips[0]
    assert played.shown + played.dropped == 40 and played.shown > 0
    # Timed from the first picture, as the player times it: opening the file (the first open
    # in a process took 1.2-2.1 s with every core busy) is not pacing. Load can only make it
    # late, and late frames are dropped: 3.6 s is the pacing's floor; the ceiling leaves a
    # busy machine 2 s for a late last frame and catches a player that adds its own work to
    # every frame's wait (40 frames).
    assert 3.6 <= elapsed <= 6.0, elapsed


def test_loop_seams_are_seamless(media, open_virtual):
    """A loop plays round after round on one timeline, each round's frames in order."""
    fb = open_virtual("64x48:XRGB8888")
    times, tops = [], []

    def look(surface, t):
        times.append(t)
        tops.append(tuple(int(c) for c in surface.array[5:6, 5:6].view(np.uint8).reshape(4)[2::-1]))

    with fb.screen() as screen:
        played = screen.play(str(media["one"]), loop=True, duration=1.0, fps=0, audio=False, on_frame=look)
    assert played.shown == len(times) > 10  # past a seam at least
    assert np.allclose(np.diff(times), 0.1)  # no jump at the seams
    assert [round(t % 1.0, 3) for t in times] == [round(i % 10 / 10, 3) for i in range(len(times))]
    assert all(close_to(np.array(top), np.array(quadrant_colors(0)[0]), 8) for top in tops)


def test_playlist_plays_files_in_order(media, open_virtual):
    """A playlist plays each file whole, one after the other, on one timeline."""
    fb = open_virtual("64x48:XRGB8888")
    times = []
    with fb.screen() as screen:
        played = screen.play(
            [str(media["one"]), str(media["two"])], fps=0, audio=False, on_frame=lambda s, t: times.append(t)
        )
    assert played == (30, 0, None)
    assert times[10] == pytest.approx(1.0)  # the second file starts where the first ended
    assert close_to(shown(fb), decoded(media["two"])[-1], 3)


def test_play_with_duration_and_video_object(media, open_virtual):
    """duration bounds a real-time loop; a Video handed in plays and stays open."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen() as screen, video.open(str(media["one"])) as v:
        played = screen.play(v, loop=True, duration=0.5, audio=False)
        assert not v.closed
    assert 1 <= played.shown + played.dropped <= 7


# -- sound, hardware decoding --------------------------------------------------------------------------


def test_no_sound_card_is_one_warning(media, open_virtual):
    """Sound on a machine without that ALSA device: one warning, the picture plays."""
    fb = open_virtual("64x48:RGB565")
    with fb.screen() as screen, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # 2 s: under emulation (the ARM suites) the first frame can take longer than 0.3 s
        played = screen.play(str(media["tone"]), audio_device="fbgfx-no-such-device", duration=2.0)
    sound = [w for w in caught if "no sound" in str(w.message)]
    assert len(sound) == 1 and played.shown >= 1


def test_hwdec_falls_back_to_software(media, monkeypatch):
    """A hardware decoder that fails to open: one warning, software decoding, same frames."""
    name = "h264_v4l2m2m" if "h264_v4l2m2m" in av.codecs_available else "mjpeg"  # mjpeg: opens, decodes no H.264
    monkeypatch.setattr(
        _source, "choose_decoder", lambda codec, hwdec, available: (name if hwdec == "auto" else None, "test")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with video.open(str(media["two"]), hwdec="auto") as v:
            assert v.decoder == "h264"
            frames = list(v)
    assert len(frames) == 20
    assert [str(w.message) for w in caught if "hardware decoder" in str(w.message)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        video.open(str(media["two"]), hwdec="none").close()
    assert not caught


# -- the command line -------------------------------------------------------------------------------


def open_fds(path):
    """How many of this process's descriptors name ``path`` (other threads open their own meanwhile)."""
    path = os.path.realpath(path)
    names = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
    return names.count(path)


def run(capsys, *argv):
    """Run main() in-process; return (exit status, stderr)."""
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_cli_plays_a_playlist(media, tmp_path, capsys):
    """`fbgfx play A B --fps 0 --out` plays both; the picture is B's last frame."""
    out = tmp_path / "out.png"
    code, err = run(
        capsys, "play", media["one"], media["two"], "--fps", "0", "--out", out, "-d", "virtual:64x48:XRGB8888"
    )
    assert code == 0, err
    with Image.open(out) as im:
        assert close_to(np.asarray(im.convert("RGB")), decoded(media["two"])[-1], 3)


def test_cli_bad_input_is_one_error_line(media, tmp_path, capsys):
    """Random bytes, no video stream, an unknown codec: exit 2, one line naming the file."""
    noise = tmp_path / "noise.mp4"
    noise.write_bytes(np.random.default_rng(1).integers(0, 256, 20000, np.uint8).tobytes())
    sound_only = tmp_path / "sound.wav"
    with av.open(str(sound_only), "w") as o:
        s = o.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
        frame.sample_rate, frame.pts = 8000, 0
        for p in [*s.encode(frame), *s.encode(None)]:
            o.mux(p)
    unknown = tmp_path / "unknown.mkv"
    data = bytearray(media["one"].read_bytes())
    at = data.index(b"V_MPEG4/ISO/AVC")
    data[at : at + 15] = b"V_MPEG4/ISO/XYZ"
    unknown.write_bytes(bytes(data))
    cases = [
        ([noise], "noise.mp4: not a video FFmpeg can read"),
        ([sound_only], "sound.wav: has no video stream"),
        ([unknown], "unknown.mkv: has a video codec FFmpeg cannot decode"),
        ([media["one"], noise], "noise.mp4"),
        ([tmp_path / "missing.mp4"], "missing.mp4"),
    ]
    for argv, words in cases:
        code, err = run(capsys, "play", *argv, "-d", "virtual:64x48")
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("fbgfx: error: "), err
        assert words in lines[0], err


def test_cli_truncated_file_plays_what_is_there(tmp_path, capsys):
    """A file cut short plays its frames and ends normally, with a warning line at most."""
    data = make_video(tmp_path / "whole.mkv", seconds=3, fps=10).read_bytes()
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(data[: len(data) * 8 // 10])
    code, err = run(capsys, "play", cut, "--fps", "0", "--stats", "-d", "virtual:64x48")
    assert code == 0, err
    lines = [line for line in err.splitlines() if not line.startswith(("fbgfx: played", "fbgfx: note"))]
    assert len(lines) <= 1 and "Traceback" not in err, err
    assert "fbgfx: played" in err


def test_cli_playlist_refused_closes_the_files_before_it(media, tmp_path, capsys):
    """`fbgfx play GOOD.mp4 ANIM.gif BAD.mp4`: the files checked before the bad one are closed
    when the error is given, not at a garbage collection (Debian's PyAV 10 leaves a dropped
    container's file open until one)."""
    noise = tmp_path / "noise.mp4"
    noise.write_bytes(os.urandom(4096))
    anim = tmp_path / "anim.gif"
    frames = [Image.new("RGB", (8, 8), c) for c in ("red", "lime")]
    frames[0].save(anim, save_all=True, append_images=frames[1:], duration=50)
    gc.disable()
    try:
        code, err = run(capsys, "play", media["one"], anim, noise, "-d", "virtual:64x48")
        assert code == 2 and "noise.mp4" in err, err
        assert open_fds(media["one"]) == 0 and open_fds(anim) == 0
    finally:
        gc.enable()


def test_cli_without_pyav_says_how_to_install(media, capsys, monkeypatch):
    """`fbgfx play movie.mp4` without PyAV: one line saying how to install it."""
    monkeypatch.setitem(sys.modules, "av", None)
    code, err = run(capsys, "play", media["two"], "-d", "virtual:64x48")
    assert code == 2 and "pip install 'fbgfx[video]'" in err and len(err.strip().splitlines()) == 1


def test_docs_video_example_runs(tmp_path, monkeypatch):
    """The media guide's first video example runs as shown and draws its overlay over the picture."""
    import re
    import textwrap

    text = (ROOT / "docs" / "guides" / "media.rst").read_text()
    blocks = re.findall(r"^\.\. testcode::\n\n((?:(?:   .*)?\n)+)", text[text.index("\nVideo files\n") :], re.M)
    block = textwrap.dedent(blocks[0])
    assert "duration=10" in block
    make_video(tmp_path / "movie.mp4", seconds=1, fps=10, size=(160, 120))
    monkeypatch.chdir(tmp_path)
    spec = f"virtual:320x240:XRGB8888:file={tmp_path / 'fb.raw'}"  # shared: readable after the example closes it
    monkeypatch.setenv("FRAMEBUFFER", spec)
    exec(compile(block.replace("duration=10", "duration=10, audio=False"), "media.rst", "exec"), {})
    with fbgfx.open(spec, readonly=True) as fb:
        picture = np.asarray(fb.snapshot().convert("RGB"))
    assert (picture[12, 12] == 0).all() and picture[14:40, 16:150].max() == 255  # the overlay's box and text
    assert close_to(picture[100, 100], np.array(quadrant_colors(0)[0]), 8)  # the video in the box


def test_cli_ctrl_c_exits_130(media, tmp_path):
    """Ctrl-C while a video plays (its decoder threads running): exit 130, no traceback."""
    import signal

    raw = tmp_path / "fb.raw"
    spec = f"virtual:64x48:RGB565:file={raw}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", "play", str(media["two"]), "--loop", "--no-audio", "-d", spec],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (raw.exists() and any(raw.read_bytes())) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None and any(raw.read_bytes()), "the video never reached the display"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err


def test_sound_reaches_alsa(media, open_virtual, tmp_path):
    """The file's 440 Hz tone goes to the ALSA device whole (ALSA's file plugin records it)."""
    import ctypes.util

    if ctypes.util.find_library("asound") is None:
        pytest.skip("libasound.so.2 (ALSA's library) is not installed")
    raw = tmp_path / "sound.raw"
    fb = open_virtual("64x48:RGB565")
    with fb.screen() as screen, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        played = screen.play(str(media["tone"]), audio_device=f"file:'{raw}',raw")
    assert not [str(w.message) for w in caught], "the device did not open"
    assert played.shown + played.dropped == 10
    samples = np.fromfile(raw, np.int16).reshape(-1, 2)[:, 0].astype(np.float64)
    assert samples.size / 48000 == pytest.approx(1.0, abs=0.1)
    spectrum = np.abs(np.fft.rfft(samples))
    assert np.fft.rfftfreq(samples.size, 1 / 48000)[int(np.argmax(spectrum))] == pytest.approx(440, abs=3)


def test_a_long_playlist_of_short_files(tmp_path, open_virtual):
    """Twenty files of two frames each, every one opened and decoding while the one
    before plays: all forty frames, in order, on one timeline."""
    clip = make_video(tmp_path / "short.mkv", seconds=0.2, fps=10, size=(32, 24))
    fb = open_virtual("32x24:XRGB8888")
    times = []
    with fb.screen() as screen:
        played = screen.play([str(clip)] * 20, fps=0, audio=False, on_frame=lambda s, t: times.append(t))
    assert played == (40, 0, None)
    assert np.allclose(times, np.arange(40) / 10)


def test_display_matrix_from_the_track_header(media):
    """Where PyAV reports no display matrix (Debian's PyAV 10), the MP4 track header turns the picture."""

    class Bare:  # a frame of an old PyAV: no rotation, no side data
        side_data = ()

    class Stream:
        metadata: dict[str, str] = {}

    assert _source._rotation(Bare(), Stream(), str(media["turned"])) == 90
    assert _source._rotation(Bare(), Stream(), str(media["two"])) == 0
    assert _source._rotation(Bare(), Stream(), None) == 0


def test_hwdec_that_decodes_nothing_falls_back(media, monkeypatch):
    """A hardware decoder that opens but gives no frame: one warning, then software decoding."""
    # mjpeg opens, and finds no JPEG in H.264 packets
    monkeypatch.setattr(
        _source, "choose_decoder", lambda codec, hwdec, available: ("mjpeg" if hwdec == "auto" else None, "test")
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with video.open(str(media["two"])) as v:
            assert v.decoder == "h264"
            assert len(list(v)) == 20
    assert [w for w in caught if "mjpeg" in str(w.message)]


def test_a_loop_keeps_no_file_open_behind_it(media, open_virtual):
    """Round after round of a loop, the file played is closed: at most one descriptor of it is
    open at a time (counted by what each descriptor names, not by how many the process has:
    other threads of the process open their own meanwhile)."""
    fb = open_virtual("64x48:RGB565")
    counts = []

    def open_of_the_file(screen, t):
        counts.append(open_fds(media["one"]))

    with fb.screen() as screen:
        played = screen.play(str(media["one"]), loop=True, duration=1.5, fps=0, audio=False, on_frame=open_of_the_file)
    assert played.shown > 30  # three rounds at least
    assert max(counts) == 1, counts


# -- A/V sync ----------------------------------------------------------------------------------------


class RealTimeSoundCard:
    """A test double of libasound at the cffi boundary (``_audio._alsa()``'s lib): a
    sound card whose speaker plays the written samples at ``speed`` times the nominal
    rate, paced by the monotonic clock. ``snd_pcm_writei`` blocks while its 120 ms
    buffer is full; ``snd_pcm_delay`` reports the samples not yet heard, as ALSA does.
    ALSA's file and null plugins do not pace in real time, and the host may have no
    sound card, so A/V sync is measured against this."""

    def __init__(self, speed: float) -> None:
        import threading

        self.speed, self.rate, self.buffer = speed, 48000, 5760
        self.written = 0
        self.level, self.stamp = 0.0, time.monotonic()  # samples queued, when last counted
        self.lock = threading.Lock()

    def _drain(self) -> float:
        """Samples still queued now (lock held)."""
        now = time.monotonic()
        self.level = max(self.level - (now - self.stamp) * self.rate * self.speed, 0.0)
        self.stamp = now
        return self.level

    def heard(self) -> float:
        """The time of the sample heard now, in seconds of sound."""
        with self.lock:
            return (self.written - self._drain()) / self.rate

    def snd_pcm_open(self, pcm, name, stream, mode):
        return 0

    def snd_pcm_set_params(self, pcm, fmt, access, channels, rate, soft_resample, latency):
        self.rate, self.buffer = rate, rate * latency // 1_000_000
        return 0

    def snd_pcm_writei(self, pcm, buffer, frames):
        while True:
            with self.lock:
                room = self.buffer - self._drain()
                if room >= min(frames, self.buffer):
                    n = int(min(frames, room))
                    self.level += n
                    self.written += n
                    return n
            time.sleep((min(frames, self.buffer) - room) / (self.rate * self.speed))

    def snd_pcm_delay(self, pcm, delayp):
        with self.lock:
            delayp[0] = int(self._drain())
        return 0

    def snd_pcm_recover(self, pcm, err, silent):
        return 0

    def snd_pcm_drop(self, pcm):
        return 0

    def snd_pcm_close(self, pcm):
        return 0

    def snd_lib_error_set_handler(self, handler):
        return 0


@pytest.mark.timing(
    "A/V sync is measured against a sound card paced by the monotonic clock (no event says a sample was heard)"
)
@pytest.mark.parametrize("speed", [1.0, 0.98, 1.02])
def test_pictures_follow_the_sound_within_40_ms(tmp_path, open_virtual, monkeypatch, speed):
    """Frames shown after the first few are within 40 ms of the sound heard (none early,
    the typical one and the last second's), also when the sound card runs 2% slow or fast
    (the pictures wait or drop to follow it)."""
    from fbgfx import _foreign
    from fbgfx.video import _audio

    ffi, _ = _foreign.load("alsa")
    card = RealTimeSoundCard(speed)
    monkeypatch.setattr(_audio, "_alsa", lambda: (ffi, card))
    path = make_video(tmp_path / "tone.mp4", seconds=4, fps=25, size=(32, 24), tone=True)
    fb = open_virtual("32x24:RGB565")
    offsets: list[float] = []
    with fb.screen() as screen:
        times: list[float] = []
        flip = screen.flip

        def flip_and_measure(*args, **kwargs):
            flip(*args, **kwargs)
            offsets.append(times[-1] - card.heard())

        monkeypatch.setattr(screen, "flip", flip_and_measure)
        played = screen.play(str(path), on_frame=lambda s, t: times.append(t))
    assert played.shown + played.dropped == 100 and played.shown > 90
    # 2% of 4 s is 80 ms: pictures on their own clock would end that far from the sound
    assert card.written / card.rate == pytest.approx(4.0, abs=0.05)
    measured = offsets[video.SETTLE + 1 :]
    shown = " ".join(str(round(o * 1000)) for o in offsets)
    # A busy machine can make a picture late (its flip delayed past its time), never early:
    # none comes more than 40 ms before its sound, and the typical one is within 40 ms of
    # it. A player that did not follow a card 2% slow or fast would be 80 ms off by the
    # end: the last second's median says it followed.
    assert max(measured) <= 0.040, shown
    assert np.median(np.abs(measured)) <= 0.040, shown
    assert abs(np.median(measured[-25:])) <= 0.040, shown
    assert played.av_offset is not None
    mean, worst = played.av_offset
    assert worst >= np.median(np.abs(measured)) and abs(mean - np.mean(measured)) <= 0.005, (played.av_offset, shown)


def test_play_options_follow_screen_play_keywords():
    """PlayOptions' fields are Screen.play's keywords in order (Screen.play passes them by position)."""
    import dataclasses
    import inspect

    keywords = [p.name for p in inspect.signature(fbgfx.Screen.play).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert [f.name for f in dataclasses.fields(video.PlayOptions)] == keywords
    defaults = {p.name: p.default for p in inspect.signature(fbgfx.Screen.play).parameters.values()}
    assert all(f.default == defaults[f.name] for f in dataclasses.fields(video.PlayOptions))
