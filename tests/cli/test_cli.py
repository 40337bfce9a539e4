"""The fbgfx command line, driven on virtual framebuffers (in-process and as `python -m fbgfx`)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image
from support import ROOT
from support.cli_run import COLORS, V32, V565, animation, near, one_error_line, rgb_at, run, run_module, solid

import fbgfx

# -- info -----------------------------------------------------------------------------------


def test_info_text_reads_like_fbset(capsys):
    """info prints geometry, bitfields, stride, memory and visual as fbset -i does."""
    code, out, err = run(capsys, "info", "-d", "virtual:801x480:RGB565")
    assert code == 0 and err == ""
    assert "geometry 801 480 801 480 16" in out
    assert "rgba 5/11,6/5,5/0,0/0" in out
    assert "LineLength  : 1604" in out  # odd width: padded to 4 bytes like vfb
    assert "Format      : RGB565 (16 bpp)" in out
    assert "Visual      : TRUECOLOR" in out
    assert "YPanStep    : 1" in out


def test_info_palette_device(capsys):
    """info names an 8 bpp palette device's format and visual."""
    code, out, _ = run(capsys, "info", "-d", "virtual:640x480:C8")
    assert code == 0
    assert "Format      : C8 (8 bpp)" in out and "Visual      : PSEUDOCOLOR" in out


def test_info_json(capsys):
    """info --json gives var, fix and format with the kernel's field names."""
    code, out, _ = run(capsys, "info", "--json", "-d", "virtual:800x480:RGB565:vh=960")
    assert code == 0
    data = json.loads(out)
    assert data["var"]["xres"] == 800 and data["var"]["yres_virtual"] == 960
    assert data["var"]["red"] == {"offset": 11, "length": 5, "msb_right": 0}
    assert data["fix"]["line_length"] == 1600 and data["fix"]["smem_len"] >= 1600 * 960
    assert data["format"]["name"] == "RGB565" and data["format"]["bpp"] == 16


def test_info_subprocess():
    """`python -m fbgfx info` works as a program."""
    res = run_module("info", "-d", V32)
    assert res.returncode == 0 and b"geometry 800 480" in res.stdout


@pytest.mark.parametrize("command", ["info", "show", "play", "grab", "mode", "demo"])
def test_help(capsys, command):
    """Every command has --help, naming --device."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0 and "--device" in out, command


# -- grab -----------------------------------------------------------------------------------

GRAB_FORMATS = sorted(fbgfx.FORMATS)


@pytest.mark.parametrize("name", GRAB_FORMATS)
def test_grab_every_format(tmp_path, capsys, name):
    """grab saves the visible page of every pixel format as the colours it holds."""
    spec = f"virtual:97x40:{name}:file={tmp_path / 'fb.raw'}"
    rng = np.random.default_rng(1)
    with fbgfx.open(spec) as fb:
        rgb = rng.integers(0, 256, (fb.height, fb.width, 3), dtype=np.uint8)
        rgb[:, :20] = (255, 255, 255)
        native = fb.format.pack(rgb, fb.palette)
        if fb.format.is_packed:
            native = fb.format.pack_bits(native)
        fb.pixels[...] = native
        expected = np.asarray(fb.snapshot())
    out = tmp_path / "grab.png"
    code, _, err = run(capsys, "grab", out, "-d", spec)
    assert code == 0, err
    got = np.asarray(Image.open(out).convert("RGB"))
    assert got.shape == (40, 97, 3)
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got.reshape(-1, 3), axis=0)) > 1


def test_grab_region(tmp_path, capsys):
    """grab --region saves just that rectangle; a region off the screen is one error line."""
    spec = f"virtual:64x48:XRGB8888:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = fb.format.pack_color((0, 0, 255))
        fb.view(10, 12, 5, 5)[...] = fb.format.pack_color((255, 0, 0))
    out = tmp_path / "r.png"
    code, _, err = run(capsys, "grab", out, "--region", "10,12,6,5", "-d", spec)
    assert code == 0, err
    with Image.open(out) as im:
        assert im.size == (6, 5)
        assert im.getpixel((0, 0)) == (255, 0, 0) and im.getpixel((4, 4)) == (255, 0, 0)
        assert im.getpixel((5, 0)) == (0, 0, 255)
    code, _, err = run(capsys, "grab", out, "--region", "60,40,10,10", "-d", spec)
    assert code == 2 and "not inside the 64x48 screen" in one_error_line(err)


def test_grab_unknown_extension(tmp_path, capsys):
    """grab to a file type Pillow cannot write is one error line."""
    code, _, err = run(capsys, "grab", tmp_path / "x.nope", "-d", V32)
    assert code == 2 and "unknown image type" in one_error_line(err)


# -- mode -----------------------------------------------------------------------------------


def test_mode_prints_and_lists_current(capsys):
    """mode alone prints the current mode; --list lists the modes and marks the current one."""
    code, out, _ = run(capsys, "mode", "-d", "virtual:800x480:RGB565:vh=960")
    assert code == 0 and out.strip() == "800x480-16 (virtual 800x960) RGB565"
    code, out, _ = run(capsys, "mode", "--list", "-d", V565 + ":modelist=800x480-16,640x480-16,320x240-8")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "current: 800x480-16 RGB565"
    assert lines[1].startswith("* 800x480-16") and lines[2].startswith("  640x480-16")
    assert lines[3].startswith("  320x240-8")


def test_mode_test_accepts_and_refuses(capsys):
    """mode --test says whether the driver takes a mode (vfb-like yes, DRM-like no, too little memory no)."""
    code, out, _ = run(capsys, "mode", "640x480-32@600", "--test", "-d", V565)
    assert code == 0 and "takes it" in out and "640x480-32 (virtual 640x600)" in out
    code, _, err = run(capsys, "mode", "640x480-32", "--test", "-d", V565 + ":modes=refuse")
    assert code == 2 and "refused 640x480-32" in one_error_line(err)
    code, _, err = run(capsys, "mode", "800x480-32", "--test", "-d", V565 + ":memory=768000")
    assert code == 2 and "refused" in one_error_line(err)


def test_test_mode_changes_nothing(open_virtual):
    """Framebuffer.test_mode leaves the mode alone and returns what the driver would set."""
    fb = open_virtual(V565)
    got = fb.test_mode(640, 480, 32)
    assert (got.xres, got.bits_per_pixel) == (640, 32)
    assert (fb.width, fb.format.name) == (800, "RGB565")
    assert fb.device.get_var().bits_per_pixel == 16


def test_keep_mode_survives_close():
    """Framebuffer.keep_mode leaves a set mode in place after close; without it close restores."""
    fb = fbgfx.open(V565)
    fb.set_mode(640, 480, 32)
    fb.keep_mode()
    fb.close()
    assert (fb.device.get_var().xres, fb.device.get_var().bits_per_pixel) == (640, 32)
    fb = fbgfx.open(V565)
    fb.set_mode(640, 480, 32)
    fb.close()
    assert (fb.device.get_var().xres, fb.device.get_var().bits_per_pixel) == (800, 16)


def test_mode_set_previews_test_pattern(tmp_path, capsys):
    """mode WxH-BPP sets the mode and shows a test pattern in it (seen through --out)."""
    out = tmp_path / "m.png"
    code, _, err = run(capsys, "mode", "640x400-32", "--duration", "0", "--out", out, "-d", V565)
    assert code == 0, err
    with Image.open(out) as im:
        assert im.size == (640, 400)
        assert im.convert("RGB").getpixel((1, 100)) == (255, 0, 0)  # the red border
        assert near(im.convert("RGB").getpixel((45, 100)), (255, 255, 255))  # first bar: white
        assert near(im.convert("RGB").getpixel((600, 100)), (0, 0, 255))  # last bar: blue


def test_mode_keep_sets_and_reports(tmp_path, capsys):
    """mode --keep sets the mode and says so."""
    out = tmp_path / "k.png"
    code, text, err = run(capsys, "mode", "320x240-16", "--keep", "--out", out, "-d", V32)
    assert code == 0, err
    assert "mode set: 320x240-16 RGB565" in text
    assert Image.open(out).size == (320, 240)


def test_mode_refused_and_bad(capsys):
    """A refused mode, a malformed mode and --keep without a mode are one error line each."""
    code, _, err = run(capsys, "mode", "1024x768-16", "-d", V565 + ":modes=refuse")
    assert code == 2 and "refused" in one_error_line(err)
    code, _, err = run(capsys, "mode", "800by600", "-d", V565)
    assert code == 2 and "bad mode" in one_error_line(err)
    code, _, err = run(capsys, "mode", "--keep", "-d", V565)
    assert code == 2 and "need a MODE" in one_error_line(err)


# -- show -----------------------------------------------------------------------------------


def test_show_image_fit_and_background(tmp_path, capsys):
    """show scales a picture to fit, with the background colour around it."""
    img = solid(tmp_path / "wide.png", (400, 100), (255, 0, 0))
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", img, "--duration", "0", "--background", "white", "--out", out, "-d", V565)
    assert code == 0, err
    assert Image.open(out).size == (800, 480)
    assert near(rgb_at(out, (400, 240)), (255, 0, 0))
    assert near(rgb_at(out, (400, 10)), (255, 255, 255))


@pytest.mark.parametrize("fit, corner", [("--stretch", (255, 0, 0)), ("--fill", (255, 0, 0)), ("--center", (0, 0, 0))])
def test_show_scaling_modes(tmp_path, capsys, fit, corner):
    """--stretch and --fill cover the screen; --center leaves the picture at its own size."""
    img = solid(tmp_path / "wide.png", (400, 100), (255, 0, 0))
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", img, fit, "--duration", "0", "--out", out, "-d", V565)
    assert code == 0, err
    assert near(rgb_at(out, (2, 2)), corner)
    assert near(rgb_at(out, (400, 240)), (255, 0, 0))


def test_show_honours_exif_orientation(tmp_path, capsys):
    """A photo whose EXIF says 'rotate 90 CW' is shown upright (left half on top)."""
    im = Image.new("RGB", (200, 100), (255, 0, 0))
    im.paste((0, 0, 255), (100, 0, 200, 100))
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90 CW to view
    path = tmp_path / "photo.jpg"
    im.save(path, exif=exif, quality=95)
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", path, "--duration", "0", "--out", out, "-d", V32)
    assert code == 0, err
    assert near(rgb_at(out, (400, 60)), (255, 0, 0), 40)  # top: what was the left half
    assert near(rgb_at(out, (400, 420)), (0, 0, 255), 40)
    assert near(rgb_at(out, (100, 240)), (0, 0, 0))  # portrait: black bars at the sides


def test_show_slideshow_ends_on_last_image(tmp_path, capsys):
    """A slideshow without --loop steps through the images and holds the last one."""
    a = solid(tmp_path / "a.png", (80, 48), (255, 0, 0))
    b = solid(tmp_path / "b.bmp", (80, 48), (0, 255, 0))
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", a, b, "--delay", "0", "--duration", "2", "--out", out, "-d", V565)
    assert code == 0, err
    assert near(rgb_at(out, (400, 240)), (0, 255, 0))


def test_show_rgba_over_background(tmp_path, capsys):
    """A transparent image is shown over the --background colour."""
    path = tmp_path / "t.png"
    Image.new("RGBA", (80, 48), (255, 0, 0, 0)).save(path)
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", path, "--background", "#0000ff", "--duration", "0", "--out", out, "-d", V32)
    assert code == 0, err
    assert rgb_at(out, (400, 240)) == (0, 0, 255)


def test_show_bad_inputs_leave_screen_alone(tmp_path, capsys):
    """A missing image, a corrupt one and an unknown colour: one line, exit 2, screen untouched."""
    spec = f"virtual:64x48:RGB565:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = 0x1234
    good = solid(tmp_path / "g.png", (10, 10), "red")
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(200))
    garbage = tmp_path / "garbage.jpg"
    garbage.write_bytes(b"this is not an image")
    cases = [
        ([tmp_path / "missing.png"], "no such file"),
        ([good, tmp_path / "missing.png"], "no such file"),
        ([corrupt], "corrupt.png"),
        ([garbage], "not an image"),
        ([good, "--background", "notacolour"], "unknown colour"),
    ]
    for argv, words in cases:
        code, _, err = run(capsys, "show", *argv, "--duration", "0", "-d", spec)
        assert code == 2, argv
        assert words in one_error_line(err), err
        with fbgfx.open(spec) as fb:
            assert np.all(fb.pixels == 0x1234), argv


def test_show_missing_device(tmp_path, capsys):
    """A device that does not exist is one error line naming it."""
    img = solid(tmp_path / "a.png", (8, 8), "red")
    code, _, err = run(capsys, "show", img, "--duration", "0", "-d", "/dev/fb97")
    assert code == 2 and "/dev/fb97" in one_error_line(err)
    res = run_module("info", "-d", "/dev/fb97")
    assert res.returncode == 2 and "/dev/fb97" in one_error_line(res.stderr.decode())


# -- play -----------------------------------------------------------------------------------


@pytest.mark.parametrize("ext", ["gif", "png", "webp"])
def test_play_animation_to_last_frame(tmp_path, capsys, ext):
    """play shows every frame of a GIF/APNG/WebP; the last one stays on screen."""
    anim = animation(tmp_path / f"a.{ext}")
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "play", anim, "--fps", "0", "--stats", "--out", out, "-d", V565)
    assert code == 0, err
    assert near(rgb_at(out, (400, 240)), COLORS[3], 20)
    assert "fbgfx: played 4 frames" in err and "0 dropped" in err


def test_play_keeps_file_timing(tmp_path, capsys):
    """play with the file's own durations shows the frames in order and ends on the last."""
    anim = animation(tmp_path / "a.gif", durations=(30, 30, 30, 200))
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "play", anim, "--out", out, "-d", V32)
    assert code == 0, err
    assert rgb_at(out, (400, 240)) == COLORS[3]


def test_play_loop_with_duration(tmp_path, capsys):
    """play --loop repeats until --duration ends it."""
    anim = animation(tmp_path / "a.gif", durations=(20, 20))
    code, _, err = run(capsys, "play", anim, "--loop", "--duration", "1", "--stats", "-d", V565)
    assert code == 0, err
    shown = int(err.split("played ")[1].split()[0])
    dropped = int(err.split("fps, ")[1].split()[0])
    assert shown + dropped > 2  # more frames went by than the file has


def raw_frames(pix_fmt, colors, size=(64, 48)):
    """Bytes of whole raw frames in an ffmpeg pixel format, one colour per frame."""
    fmt = {"rgb24": None, "bgra": "XRGB8888", "rgb565le": "RGB565"}[pix_fmt]
    data = b""
    for color in colors:
        rgb = np.empty((size[1], size[0], 3), np.uint8)
        rgb[...] = color
        data += rgb.tobytes() if fmt is None else fbgfx.FORMATS[fmt].pack(rgb).tobytes()
    return data


@pytest.mark.parametrize("pix_fmt", ["rgb24", "bgra", "rgb565le"])
def test_play_raw_stdin(tmp_path, capsys, monkeypatch, pix_fmt):
    """play - reads raw frames from stdin in each pixel format and shows them."""
    src = tmp_path / "frames.raw"
    src.write_bytes(raw_frames(pix_fmt, COLORS))
    out = tmp_path / "o.png"
    with open(src, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code, _, err = run(
            capsys,
            "play",
            "-",
            "--size",
            "64x48",
            "--pix-fmt",
            pix_fmt,
            "--fps",
            "0",
            "--stats",
            "--stretch",
            "--out",
            out,
            "-d",
            V32,
        )
    assert code == 0, err
    assert "played 4 frames" in err
    assert near(rgb_at(out, (400, 240)), COLORS[3], 8)


def test_play_raw_through_pipe():
    """Raw frames piped into `python -m fbgfx play -` play to the end."""
    res = run_module(
        "play", "-", "--size", "64x48", "--fps", "200", "--stats", "-d", V565, input=raw_frames("rgb24", COLORS * 3)
    )
    assert res.returncode == 0, res.stderr
    text = res.stderr.decode()
    shown = int(text.split("played ")[1].split()[0])
    dropped = int(text.split("fps, ")[1].split()[0])
    assert shown + dropped == 12


def test_play_stdin_ended_mid_frame():
    """A --size that does not match the byte count: one line naming both counts, exit 2."""
    data = raw_frames("rgb24", COLORS[:2]) + b"\0" * 100
    res = run_module("play", "-", "--size", "64x48", "--pix-fmt", "rgb24", "--fps", "0", "-d", V565, input=data)
    assert res.returncode == 2
    line = one_error_line(res.stderr.decode())
    assert f"stdin ended mid-frame: got 100 of {64 * 48 * 3} bytes" in line and "--size/--pix-fmt" in line
    res = run_module("play", "-", "--size", "100x100", "-d", V565, input=raw_frames("rgb24", COLORS[:1]))
    assert res.returncode == 2 and "stdin ended mid-frame: got 9216 of 30000 bytes" in res.stderr.decode()


def test_play_bad_inputs(tmp_path, capsys, monkeypatch):
    """Unknown pixel format, bad or missing --size, empty stdin, missing or corrupt file: one line, exit 2."""
    empty = tmp_path / "empty.raw"
    empty.write_bytes(b"")
    corrupt = tmp_path / "c.gif"
    corrupt.write_bytes(b"GIF89a" + os.urandom(64))
    with open(empty, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        cases = [
            (["-", "--size", "64x48", "--pix-fmt", "yuv420p"], "unknown --pix-fmt 'yuv420p'"),
            (["-", "--size", "64by48"], "--size must be WIDTHxHEIGHT"),
            (["-"], "need --size"),
            (["-", "--size", "64x48"], "stdin had no frames"),
            ([tmp_path / "nope.gif"], "no such file"),
            ([corrupt], "c.gif"),
            (["-", "--size", "64x48", "--fps", "fast"], "expected frames per second"),
        ]
        for argv, words in cases:
            code, _, err = run(capsys, "play", *argv, "-d", V565)
            assert code == 2, argv
            assert words in one_error_line(err), (argv, err)


def test_play_box_on_virtual_says_composed_and_keeps_the_rest(tmp_path, capsys):
    """play --box on virtual: says the video is composed by fbgfx and why; the video fills
    the box, the screen around it is as before, and the last frame stays after the play."""
    spec = f"virtual:200x120:XRGB8888:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = 0x00808080
    anim = animation(tmp_path / "a.gif", size=(80, 40))
    code, _, err = run(capsys, "play", anim, "--box", "20,10,100,50", "--fps", "0", "-d", spec)
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("fbgfx: play: ")]
    assert lines == ["fbgfx: play: video composed by fbgfx (virtual:200x120:XRGB8888 has no display planes)"], err
    with fbgfx.open(spec) as fb:
        shot = np.asarray(fb.snapshot())
    assert (shot[10:50, 20:100] == COLORS[3]).all()  # the last frame, in the box
    outside = np.ones(shot.shape[:2], bool)
    outside[10:50, 20:100] = False
    assert (shot[outside] == 128).all()


def test_play_box_on_a_palette_display_plays_in_the_screens_box(tmp_path, capsys):
    """play --box on an 8-bit palette display (no layers there): composed, with the reason, in the box."""
    out = tmp_path / "o.png"
    anim = animation(tmp_path / "a.gif", size=(80, 40))
    code, _, err = run(
        capsys, "play", anim, "--box", "20,10,100,50", "--fps", "0", "--out", out, "-d", "virtual:200x120:C8"
    )
    assert code == 0, err
    assert "fbgfx: play: video composed by fbgfx (layers need a true-colour display" in err
    assert (
        rgb_at(out, (60, 30)) == COLORS[3]
        and rgb_at(out, (10, 5)) == (0, 0, 0)
        and rgb_at(out, (150, 100)) == (0, 0, 0)
    )


def test_play_box_bad_boxes_are_one_line_before_the_screen_changes(tmp_path, capsys):
    """--box that is not four integers, empty, or off the screen: one error line, exit 2, screen untouched."""
    spec = f"virtual:64x48:RGB565:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = 0x1234
    anim = animation(tmp_path / "a.gif", size=(16, 16))
    cases = [
        ("1,2,3", "--box must be X0,Y0,X1,Y1"),
        ("a,b,c,d", "--box must be X0,Y0,X1,Y1"),
        ("10,10,10,20", "is empty"),
        ("0,0,65,48", "not inside the 64x48 screen"),
        ("-1,0,10,10", "not inside the 64x48 screen"),
    ]
    for box, words in cases:
        code, _, err = run(capsys, "play", anim, f"--box={box}", "--fps", "0", "-d", spec)
        assert code == 2, box
        assert words in one_error_line(err), err
        with fbgfx.open(spec) as fb:
            assert np.all(fb.pixels == 0x1234), box


def test_play_box_is_in_the_turned_screens_coordinates(tmp_path, capsys):
    """--box with --rotate 90 is in the turned picture's coordinates (as drawing is)."""
    out = tmp_path / "o.png"
    anim = animation(tmp_path / "a.gif", size=(40, 20))
    argv = ("--box", "0,0,40,20", "--fps", "0", "--rotate", "90", "--out", out, "-d", "virtual:120x200:XRGB8888")
    code, _, err = run(capsys, "play", anim, *argv)
    assert code == 0, err
    with Image.open(out) as im:
        turned = np.asarray(im.convert("RGB").rotate(90, expand=True))  # back to the picture as drawn
    assert turned.shape[:2] == (120, 200)
    assert (turned[0:20, 0:40] == COLORS[3]).all() and (turned[20:, :] == 0).all() and (turned[:, 40:] == 0).all()


# -- demo -----------------------------------------------------------------------------------


def test_demo_writes_picture(tmp_path, capsys):
    """demo draws the tour and writes its last frame where --out says."""
    out = tmp_path / "d.png"
    code, _, err = run(capsys, "demo", "--seconds", "0.3", "--out", out, "-d", V565)
    assert code == 0, err
    with Image.open(out) as im:
        assert im.size == (800, 480)
        colours = im.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 50
    assert str(out) in err


def test_demo_without_framebuffer_runs_virtual(tmp_path):
    """With no framebuffer, `python -m fbgfx demo` runs on a virtual one and says where demo.png went."""
    res = subprocess.run(
        [sys.executable, "-m", "fbgfx", "demo", "--seconds", "0.3"],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
        env=dict(os.environ, FRAMEBUFFER=str(tmp_path / "no-fb"), PYTHONPATH=ROOT),
    )
    assert res.returncode == 0, res.stderr
    picture = tmp_path / "demo.png"
    assert Image.open(picture).size == (800, 480)
    assert str(picture) in res.stderr.decode() and "virtual" in res.stderr.decode()


def test_demo_named_missing_device_is_an_error(capsys):
    """demo -d with a device that does not exist is an error, not a silent fallback."""
    code, _, err = run(capsys, "demo", "--seconds", "0", "-d", "/dev/fb97")
    assert code == 2 and "/dev/fb97" in one_error_line(err)


# -- usage and Ctrl-C -----------------------------------------------------------------------


def test_usage_errors_are_one_line(capsys):
    """Unknown commands and options give one error line and exit 2."""
    for argv in (["frobnicate"], ["info", "--bogus"], ["show"], ["show", "x.png", "--delay", "-1"]):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        one_error_line(err)


def wait_for_change(path, before, proc, timeout=300):
    """Wait until a file-backed framebuffer's bytes differ from `before`; False when `proc`
    ends first. The deadline is for a hung process only: a busy machine can take a minute
    to start Python."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        if path.exists() and path.read_bytes() != before:
            return True
        time.sleep(0.05)
    return path.exists() and path.read_bytes() != before


@pytest.mark.parametrize("argv", [["show", "IMG"], ["mode", "64x48-32"]])
def test_ctrl_c_exits_130_and_restores(tmp_path, argv):
    """Ctrl-C during show or a mode preview exits with 130 and no traceback."""
    raw = tmp_path / "fb.raw"
    img = solid(tmp_path / "a.png", (64, 48), (255, 0, 0))
    argv = [img if a == "IMG" else a for a in argv]
    spec = f"virtual:64x48:RGB565:file={raw}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", *argv, "-d", spec], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert wait_for_change(raw, b"\0" * (64 * 48 * 2 * 2), proc), proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err


def test_show_then_grab_through_shared_file(tmp_path, capsys):
    """What show draws on a file-backed virtual framebuffer, a later grab of that file sees."""
    spec = f"virtual:200x120:RGB565:file={tmp_path / 'fb.raw'}"
    img = solid(tmp_path / "a.png", (200, 120), (0, 255, 0))
    code, _, err = run(capsys, "show", img, "--duration", "0", "-d", spec)
    assert code == 0, err
    out = tmp_path / "g.png"
    code, _, err = run(capsys, "grab", out, "-d", spec)
    assert code == 0, err
    assert rgb_at(out, (100, 60)) == (0, 255, 0)


def test_play_shows_progress_on_a_terminal(tmp_path):
    """On a terminal, play rewrites one frames/fps/drops line on stderr and ends with a summary."""
    import pty

    anim = animation(tmp_path / "a.gif", durations=(100, 100, 100, 400))
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fbgfx", "play", anim, "-d", V565, "--out", tmp_path / "o.png"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=slave,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(master)
    text = b"".join(chunks).decode()
    assert "\rplay: " in text and " fps, " in text and " dropped" in text
    # all 4 frames counted: shown, or dropped when a busy machine made one late
    summary = re.search(r"fbgfx: played (\d+) frames, [\d.]+ fps, (\d+) dropped", text.splitlines()[-1])
    assert summary is not None and int(summary[1]) + int(summary[2]) == 4 and int(summary[1]) >= 1, text


def test_unknown_device_format(capsys):
    """A virtual device spec with an unknown pixel format is one error line naming it."""
    code, _, err = run(capsys, "info", "-d", "virtual:800x480:RGB666")
    assert code == 2 and "unknown pixel format 'RGB666'" in one_error_line(err)


def test_virtual_without_out(tmp_path, capsys, monkeypatch):
    """On an in-process virtual framebuffer, demo keeps demo.png and show says to add --out."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "demo", "--seconds", "0", "-d", "virtual:320x240")
    assert code == 0, err
    assert Image.open(tmp_path / "demo.png").size == (320, 240)
    img = solid(tmp_path / "a.png", (8, 8), "red")
    code, _, err = run(capsys, "show", img, "--duration", "0", "-d", "virtual:320x240")
    assert code == 0 and "add --out FILE.png" in err


def test_ctrl_c_while_waiting_for_stdin(tmp_path):
    """Ctrl-C while play waits on a quiet pipe exits with 130 and no traceback."""
    raw = tmp_path / "fb.raw"
    spec = f"virtual:64x48:RGB565:file={raw}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", "play", "-", "--size", "64x48", "-d", spec],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(raw_frames("rgb24", COLORS[:1]))
        proc.stdin.flush()  # one frame, then nothing: the producer stalls
        assert wait_for_change(raw, b"\0" * (64 * 48 * 2 * 2), proc), proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=300) == 130
        assert b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()


def test_play_drops_late_frames_but_never_the_last(monkeypatch):
    """When showing a frame takes longer than the frame time, late frames are skipped and the last is shown."""
    from fbgfx import video

    class Frames:
        """Eight 10 ms RGB frames, numbered by their first pixel."""

        name = "frames"

        def open(self, cancel):
            return self

        video = None
        live = False

        def frames(self):
            for i in range(8):
                yield video.Frame("rgb", np.full((4, 4, 3), i, np.uint8), i * 0.01, 0.01)

        def close(self):
            pass

    shown = []
    with fbgfx.open("virtual:4x4") as fb, fb.screen() as screen:
        present = screen.present

        def slow_present(frame, **kwargs):
            shown.append(int(frame[0, 0, 0]))
            present(frame, **kwargs)
            time.sleep(0.05)  # five frame times of 10 ms

        monkeypatch.setattr(screen, "present", slow_present)
        played = video.Player(screen, Frames()).run()
    assert shown[0] == 0 and shown[-1] == 7
    assert len(shown) < 8 and played.shown == len(shown) and played.dropped == 8 - len(shown)


def test_ctrl_c_restores_mode_in_process(monkeypatch, capsys):
    """Ctrl-C during a mode preview puts the old mode back on the device and returns 130."""
    import importlib

    opened = []
    real_open = fbgfx.open

    def recording_open(path=None, **options):
        fb = real_open(path, **options)
        opened.append(fb)
        return fb

    monkeypatch.setattr(fbgfx, "open", recording_open)
    preview = importlib.import_module("fbgfx.cli.mode")
    wait = preview.wait_until

    def ctrl_c_once_waiting(deadline):
        # Ctrl-C once the preview waits, not after a guessed second: on a busy machine the
        # mode change can take longer, and an earlier SIGINT is not this test's case.
        os.kill(os.getpid(), signal.SIGINT)
        wait(deadline)

    monkeypatch.setattr(preview, "wait_until", ctrl_c_once_waiting)
    # As in a terminal: pytest-xdist's workers ignore SIGINT, and the preview would wait on.
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code, _, err = run(capsys, "mode", "640x480-32", "-d", V565)
    finally:
        signal.signal(signal.SIGINT, handler)
    assert code == 130, err
    fb = opened[0]
    assert fb.closed
    var = fb.device.get_var()
    assert (var.xres, var.yres, var.bits_per_pixel) == (800, 480, 16)
