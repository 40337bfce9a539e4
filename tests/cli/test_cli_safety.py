"""The command line on hostile input: one error line, bounded waits, files whole or untouched."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from support import PEAK_KB, ROOT
from support.cli_run import V32, V565, animation, near, one_error_line, rgb_at, run, solid

import fbgfx
from fbgfx.cli import _clock, _pictures, info, mode, show

# -- one error line, never a traceback --------------------------------------------------------


def test_absurd_virtual_size_is_one_error_line(capsys: Any) -> None:
    """info on virtual:99999999999x99999999999 is one `fbgfx: error:` line with exit 2, not an OverflowError."""
    code, _, err = run(capsys, "info", "-d", "virtual:99999999999x99999999999")
    assert code == 2
    one_error_line(err)


def _state_file(tmp_path: Path) -> tuple[str, Path]:
    """A file-backed virtual device made by fbgfx; its spec and its state file."""
    spec = f"virtual:16x8:RGB565:file={tmp_path / 'fb.raw'}"
    fbgfx.open(spec).close()
    return spec, tmp_path / "fb.raw.state.json"


def _nested(state: Path) -> None:
    state.write_text("[" * 100000 + "]" * 100000)


def _huge_cmap(state: Path) -> None:
    data = json.loads(state.read_text())
    data["cmap"] = [[10**30] * 4] * len(data["cmap"])
    state.write_text(json.dumps(data))


def _wrong_types(state: Path) -> None:
    data = json.loads(state.read_text())
    data["var"]["xres"] = "16"
    state.write_text(json.dumps(data))


def _not_json(state: Path) -> None:
    state.write_text("{ not json")


@pytest.mark.parametrize(
    "damage",
    [_nested, _huge_cmap, _wrong_types, _not_json],
    ids=["deeply-nested", "huge-numbers", "wrong-types", "not-json"],
)
@pytest.mark.parametrize("command", ["info", "grab"])
def test_corrupt_state_file_is_one_error_line(tmp_path: Path, capsys: Any, damage: Any, command: str) -> None:
    """A damaged FILE.state.json (nested too deep, numbers too large) gives one error line and exit 2."""
    spec, state = _state_file(tmp_path)
    damage(state)
    argv = [command, "-d", spec] + ([str(tmp_path / "g.png")] if command == "grab" else [])
    code, _, err = run(capsys, *argv)
    assert code == 2
    one_error_line(err)
    assert not (tmp_path / "g.png").exists()


def test_play_absurd_fps_is_one_error_line(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """play - --fps 1e-300 is refused with one error line (it overflowed the sleep before)."""
    raw = tmp_path / "f.raw"
    raw.write_bytes(bytes(2 * 4 * 3))
    with open(raw, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        code, _, err = run(capsys, "play", "-", "--size", "2x4", "--fps", "1e-300", "-d", V565)
    assert code == 2
    assert "--fps must be 0 or 0.001..1000" in one_error_line(err)


@pytest.mark.parametrize(
    "error", [OverflowError("int too large"), RecursionError("maximum recursion depth"), MemoryError()]
)
def test_last_line_of_defence(capsys: Any, monkeypatch: Any, error: BaseException) -> None:
    """OverflowError, RecursionError and MemoryError from anywhere below the CLI are one line, exit 2."""

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(info, "open_device", explode)
    code, _, err = run(capsys, "info", "-d", V565)
    assert code == 2
    one_error_line(err)


# -- --duration bounds every wait ---------------------------------------------------------------


class FakeClock:
    """time.monotonic/time.sleep stand-ins: sleeping advances the clock at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: Any) -> FakeClock:
    """The command line's clock replaced by a FakeClock (threads keep real time)."""
    fake = FakeClock()
    monkeypatch.setattr(_clock, "time", fake)
    return fake


@pytest.fixture
def player_clock(monkeypatch: Any) -> FakeClock:
    """The player's clock (fbgfx.video's present loop and timeline) replaced by a FakeClock."""
    from fbgfx.video import _player, _timeline

    fake = FakeClock()
    monkeypatch.setattr(_player, "time", fake)
    monkeypatch.setattr(_timeline, "time", fake)
    return fake


@pytest.mark.parametrize("extra", [[], ["--fps", "0.01"]], ids=["8s-frames", "fps-0.01"])
def test_play_duration_cuts_a_long_frame(
    tmp_path: Path, capsys: Any, player_clock: FakeClock, extra: list[str]
) -> None:
    """play --duration 1 of a GIF with 8-second frames (or at --fps 0.01) ends after 1 s, not 8 s or 100 s."""
    anim = animation(tmp_path / "slow.gif", size=(16, 8), durations=(8000, 8000))
    start = player_clock.now
    code, _, err = run(capsys, "play", anim, "--duration", "1", *extra, "--out", tmp_path / "o.png", "-d", V565)
    assert code == 0, err
    assert player_clock.slept  # the play waited on this clock, and no longer than --duration
    assert player_clock.now - start <= 1.0 + 1e-6


def test_show_and_mode_duration_bound_the_wait(tmp_path: Path, capsys: Any, clock: FakeClock) -> None:
    """show (a slideshow with a long --delay) and a mode preview end at --duration."""
    a = solid(tmp_path / "a.png", (8, 8), "red")
    b = solid(tmp_path / "b.png", (8, 8), "blue")
    start = clock.now
    code, _, err = run(capsys, "show", a, b, "--delay", "8", "--duration", "1", "--out", tmp_path / "o.png", "-d", V565)
    assert code == 0, err
    assert clock.now - start <= 1.0 + 1e-6
    start = clock.now
    code, _, err = run(capsys, "mode", "64x48-16", "--duration", "1", "--out", tmp_path / "m.png", "-d", V565)
    assert code == 0, err
    assert clock.now - start <= 1.0 + 1e-6


def test_show_duration_does_not_wait_for_a_slow_decode(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """show --duration returns on time while the next picture is still being decoded."""
    a = solid(tmp_path / "a.png", (8, 8), "red")
    b = solid(tmp_path / "b.png", (8, 8), "blue")
    release, finished = threading.Event(), threading.Event()
    real_load = _pictures.load_image

    def slow_load(path: str, *args: Any, **kwargs: Any) -> Any:
        if path == b:
            release.wait(30)  # a decode that takes "forever"
            finished.set()
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(show, "load_image", slow_load)
    try:
        code, _, err = run(
            capsys, "show", a, b, "--delay", "0", "--duration", "0.3", "--out", tmp_path / "o.png", "-d", V565
        )
        returned_while_decoding = not finished.is_set()
    finally:
        release.set()
    assert code == 0, err
    assert returned_while_decoding
    assert rgb_at(tmp_path / "o.png", (400, 240)) == (255, 0, 0)


def test_play_duration_does_not_wait_for_a_quiet_pipe() -> None:
    """play - --duration 0.5 returns although the producer never sends a frame nor closes the pipe."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", "play", "-", "--size", "8x8", "--duration", "0.5", "-d", V565],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        proc.wait(timeout=60)  # stdin stays open and silent all along
    finally:
        if proc.poll() is None:
            proc.kill()
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.close()
        err = proc.stderr.read()
        proc.stderr.close()
        proc.stdout.close()  # type: ignore[union-attr]
    assert proc.returncode == 0, err


# -- the mode test card fits every mode ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["6x24-16", "1x1-1", "32x1-16", "1x32-32", "7x3-16"])
def test_mode_preview_of_tiny_modes(tmp_path: Path, capsys: Any, mode: str) -> None:
    """mode previews of modes a driver takes, however small, show a card of exactly that size."""
    out = tmp_path / "m.png"
    code, _, err = run(capsys, "mode", mode, "--duration", "0", "--out", out, "-d", "virtual:64x48:XRGB8888")
    assert code == 0, err
    width, height = (int(v) for v in mode.split("-")[0].split("x"))
    with Image.open(out) as im:
        assert im.size == (width, height)


def test_mode_card_any_size() -> None:
    """mode_card draws a card of every size from 1x1 up, with the label only where it fits."""
    for width in (1, 2, 3, 6, 7, 13, 32):
        for height in (1, 2, 3, 5, 24):
            card = mode.mode_card(width, height, "640x480-16 RGB565")
            assert card.size == (width, height)
    card = mode.mode_card(800, 480, "800x480-16 RGB565")
    assert card.getpixel((400, 160)) != card.getpixel((400, 20))  # the label's box sits in the bars


# -- grab and --out write whole files or nothing -----------------------------------------------------


def _failing_save(self: Any, fp: Any, format: Any = None, **params: Any) -> None:
    """Image.save that writes half a file and then fails (a full disk)."""
    if isinstance(fp, (str, os.PathLike)):
        with open(fp, "wb") as f:
            f.write(b"\x89PNG half")
    else:
        fp.write(b"\x89PNG half")
    raise OSError(28, "No space left on device")


def test_grab_failed_save_leaves_out_untouched(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """A grab whose save fails leaves an existing OUT as it was and no temp file behind."""
    out = tmp_path / "shot.png"
    out.write_bytes(b"precious")
    monkeypatch.setattr(Image.Image, "save", _failing_save)
    code, _, err = run(capsys, "grab", out, "-d", V32)
    assert code == 2 and "No space left on device" in one_error_line(err)
    assert out.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.png"]
    code, _, err = run(capsys, "grab", tmp_path / "new.png", "-d", V32)
    assert code == 2 and not (tmp_path / "new.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.png"]


def test_out_failed_save_leaves_file_untouched(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """show --out whose save fails leaves the existing file as it was."""
    img = solid(tmp_path / "a.png", (8, 8), "red")
    out = tmp_path / "o.png"
    out.write_bytes(b"precious")
    monkeypatch.setattr(Image.Image, "save", _failing_save)
    code, _, err = run(capsys, "show", img, "--duration", "0", "--out", out, "-d", V565)
    assert code == 2
    one_error_line(err)
    assert out.read_bytes() == b"precious"


def test_grab_never_follows_planted_symlinks(tmp_path: Path, capsys: Any) -> None:
    """Symlinks planted at likely temp names beside OUT are left alone; OUT becomes a whole PNG."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "shot.png"
    for name in ("shot.png.tmp", ".shot.png.tmp", f"shot.png.{os.getpid()}.tmp", ".shot.png.", "shot.tmp"):
        (tmp_path / name).symlink_to(victim)
    code, _, err = run(capsys, "grab", out, "-d", V32)
    assert code == 0, err
    assert victim.read_text() == "keep me"
    with Image.open(out) as im:
        assert im.size == (800, 480)


def test_grab_keeps_permissions(tmp_path: Path, capsys: Any) -> None:
    """grab over an existing file keeps its mode; a new file gets 0666 less the umask, as before."""
    out = tmp_path / "shot.png"
    out.write_bytes(b"old")
    os.chmod(out, 0o640)
    code, _, err = run(capsys, "grab", out, "-d", V32)
    assert code == 0, err
    assert out.stat().st_mode & 0o7777 == 0o640
    umask = os.umask(0)
    os.umask(umask)
    fresh = tmp_path / "fresh.png"
    code, _, err = run(capsys, "grab", fresh, "-d", V32)
    assert code == 0, err
    assert fresh.stat().st_mode & 0o7777 == 0o666 & ~umask


def test_out_unknown_extension_fails_first(tmp_path: Path, capsys: Any) -> None:
    """--out with a type Pillow cannot write is refused before the screen changes."""
    spec = f"virtual:16x8:RGB565:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = 0x1234
    img = solid(tmp_path / "a.png", (8, 8), "red")
    code, _, err = run(capsys, "show", img, "--duration", "0", "--out", tmp_path / "o.nope", "-d", spec)
    assert code == 2 and "unknown image type" in one_error_line(err)
    with fbgfx.open(spec) as fb:
        assert np.all(fb.pixels == 0x1234)


# -- huge images ------------------------------------------------------------------------------------


def test_decompression_bomb_warning_is_one_line(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """Pillow's DecompressionBombWarning reaches the user as one `fbgfx: warning:` line."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    img = solid(tmp_path / "a.png", (40, 40), "red")  # 1600 pixels: over the limit, under twice it
    code, _, err = run(capsys, "show", img, "--duration", "0", "--out", tmp_path / "o.png", "-d", V565)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: warning: Image size (1600 pixels) exceeds limit"), err


def _big_png(path: Path, width: int, height: int, rgb: tuple[int, int, int]) -> None:
    """A solid RGB PNG written row by row (the test never holds the picture)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\0" + bytes(rgb) * width
    z = zlib.compressobj(1)
    parts: Iterator[bytes] = (z.compress(row) for _ in range(height))
    data = b"".join(parts) + z.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b""))


@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="under AddressSanitizer its shadow memory and quarantine double the peak RSS this measures",
)
def test_show_huge_png_memory(tmp_path: Path) -> None:
    """show of a 100-megapixel PNG on a small screen peaks near one decoded copy (it needed ~1.1 GB)."""
    big = tmp_path / "big.png"
    _big_png(big, 10000, 10000, (200, 40, 40))
    out = tmp_path / "o.png"
    code = (
        "import sys\n"
        "from fbgfx.cli import main\n"
        f"status = main(['show', {str(big)!r}, '--duration', '0', '--out', {str(out)!r}, '-d', 'virtual:320x240'])\n"
        f"print({PEAK_KB})\n"
        "sys.exit(status)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    peak_mb = int(res.stdout.split()[-1]) / 1024
    assert peak_mb < 750, f"peak {peak_mb:.0f} MB"
    assert res.stderr.startswith("fbgfx: warning: Image size (100000000 pixels)")
    assert rgb_at(out, (160, 120)) == (200, 40, 40)


@pytest.mark.parametrize("fit", ["fit", "fill", "stretch"])
def test_show_reduced_picture_looks_the_same(tmp_path: Path, capsys: Any, fit: str, open_virtual: Any) -> None:
    """A picture reduced while read shows the same quadrants as the full-size one would."""
    im = Image.new("RGB", (1603, 1201), (255, 0, 0))
    im.paste((0, 255, 0), (801, 0, 1603, 600))
    im.paste((0, 0, 255), (0, 600, 801, 1201))
    path = tmp_path / "q.png"
    im.save(path)
    out = tmp_path / "o.png"
    code, _, err = run(capsys, "show", path, f"--{fit}", "--duration", "0", "--out", out, "-d", "virtual:160x120")
    assert code == 0, err
    fb = open_virtual("160x120")
    fb.screen().present(im, fit=fit)
    want = np.asarray(fb.snapshot())
    got = np.asarray(Image.open(out).convert("RGB"))
    assert near(got[30, 40], want[30, 40]) and near(got[30, 120], want[30, 120])
    assert near(got[90, 40], want[90, 40]) and near(got[90, 120], want[90, 120])
    assert np.abs(got.astype(int) - want.astype(int)).mean() < 3


def test_show_center_of_a_huge_picture_is_exact(tmp_path: Path, capsys: Any, open_virtual: Any) -> None:
    """--center of a picture larger than the screen shows exactly the middle pixels, as present() does."""
    rng = np.random.default_rng(3)
    im = Image.fromarray(rng.integers(0, 256, (301, 403, 3), dtype=np.uint8))
    path = tmp_path / "r.png"
    im.save(path)
    out = tmp_path / "o.png"
    code, _, err = run(
        capsys, "show", path, "--center", "--duration", "0", "--out", out, "-d", "virtual:101x77:XRGB8888"
    )
    assert code == 0, err
    fb = open_virtual("101x77:XRGB8888")
    fb.screen().present(im, fit="center")
    want = np.asarray(fb.snapshot())
    np.testing.assert_array_equal(np.asarray(Image.open(out).convert("RGB")), want)


# -- read-only commands -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "grab"])
def test_read_only_commands_create_nothing(tmp_path: Path, capsys: Any, command: str) -> None:
    """info and grab of a file-backed virtual device that does not exist: one error line, no file made."""
    spec = f"virtual:16x8:RGB565:file={tmp_path / 'fb.raw'}"
    argv = [command, "-d", spec] + ([str(tmp_path / "g.png")] if command == "grab" else [])
    code, _, err = run(capsys, *argv)
    assert code == 2
    one_error_line(err)
    assert list(tmp_path.iterdir()) == []


def test_read_only_commands_change_nothing(tmp_path: Path, capsys: Any) -> None:
    """info and grab leave a file-backed device's memory and state files byte for byte and time for time."""
    spec = f"virtual:16x8:RGB565:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec) as fb:
        fb.pixels[...] = 0x1234
    files = [tmp_path / "fb.raw", tmp_path / "fb.raw.state.json"]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    for argv in (["info"], ["info", "--json"], ["grab", str(tmp_path / "g.png")]):
        code, _, err = run(capsys, *argv, "-d", spec)
        assert code == 0, err
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in files] == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fb.raw", "fb.raw.state.json", "g.png"]


def test_grab_replaces_a_symlink_at_out(tmp_path: Path, capsys: Any) -> None:
    """grab OUT where OUT is a symlink replaces the link with a new file; the link's target is untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.chmod(victim, 0o600)
    out = tmp_path / "shot.png"
    out.symlink_to(victim)
    code, _, err = run(capsys, "grab", out, "-d", V32)
    assert code == 0, err
    assert victim.read_text() == "keep me"
    assert not out.is_symlink()
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o7777 == 0o666 & ~umask
    with Image.open(out) as im:
        assert im.size == (800, 480)
