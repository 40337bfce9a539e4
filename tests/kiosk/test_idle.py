"""fbgfx.Idle / fbgfx idle without hardware: backlights in a sysfs-shaped folder, touches through a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fbgfx
from fbgfx.cli import main
from fbgfx.errors import FramebufferError
from fbgfx.kiosk.backlight import find_backlight
from fbgfx.kiosk.idle import DARK, DIM, LIT, Idle
from fbgfx.touch import _evdev

EV_KEY, EV_SYN, BTN_TOUCH = _evdev.EV_KEY, _evdev.EV_SYN, _evdev.BTN_TOUCH


def _backlight(root: Path, name: str, level: int = 200, maximum: int = 255) -> Path:
    folder = root / "class" / "backlight" / name
    folder.mkdir(parents=True)
    (folder / "brightness").write_text(f"{level}\n")
    (folder / "max_brightness").write_text(f"{maximum}\n")
    (folder / "bl_power").write_text("0\n")
    return folder


def _read(folder: Path, name: str) -> int:
    return int((folder / name).read_text())


class _PipeTouch:
    """A touchscreen stand-in: events written to a pipe (a pipe cannot be grabbed)."""

    path = "pipe-touch"

    def __init__(self) -> None:
        self.r, self.w = os.pipe()

    def fileno(self) -> int:
        return self.r

    def touch(self, down: int) -> None:
        os.write(self.w, _evdev.encode([(0, 0, EV_KEY, BTN_TOUCH, down), (0, 0, EV_SYN, 0, 0)]))

    def close(self) -> None:
        for fd in (self.r, self.w):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    """An empty sysfs-shaped folder named by $FBGFX_SYSFS."""
    root = tmp_path / "sys"
    (root / "class" / "backlight").mkdir(parents=True)
    monkeypatch.setenv("FBGFX_SYSFS", str(root))
    return root


def _wait(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


class _Changes:
    """The Idle's state changes as it made them, each with the backlight and display as they were then.

    ``on_change`` runs in the Idle's thread right after a change, before that thread can make
    the next one: what it records is the change's own state, however late the test looks.
    """

    def __init__(self, backlight: Path, fb) -> None:
        self.backlight, self.fb = backlight, fb
        self.seen: list[tuple[str, int, int, int]] = []
        self._cond = threading.Condition()

    def __call__(self, state: str) -> None:
        bl = self.backlight
        with self._cond:
            self.seen.append((state, _read(bl, "brightness"), _read(bl, "bl_power"), self.fb._device.blanked))
            self._cond.notify_all()

    def wait(self, count: int, timeout: float = 30.0) -> list[tuple[str, int, int, int]]:
        """The first ``count`` changes, once that many came."""
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.seen) >= count, timeout), self.seen
            return self.seen[:count]


def test_dims_blanks_wakes_and_restores(sysfs, open_virtual):
    """Idle dims, then blanks backlight and display; a touch lights both; close puts the level back."""
    bl = _backlight(sysfs, "panel")
    fb = open_virtual("64x48:RGB565:blank=1")
    touch = _PipeTouch()
    changes = _Changes(bl, fb)
    dimmed = round(255 * 0.1)
    try:
        # DIM is entered only while the idle time lies between dim_after and off_after: a thread
        # waking later than that goes straight to DARK (rightly), so the window is 2 s wide
        with Idle(fb, touch, dim_after=0.2, off_after=2.2, dim=0.1, on_change=changes) as idle:
            assert changes.wait(2) == [(DIM, dimmed, 0, 0), (DARK, dimmed, 4, 4)]
            touch.touch(1)
            # lit again (backlight level and power, display unblanked), then idle anew
            assert changes.wait(4)[2:] == [(LIT, 200, 0, 0), (DIM, dimmed, 0, 0)]
            assert any("cannot be grabbed" in n for n in idle.notes)  # a pipe: said once, not an error
        assert _read(bl, "brightness") == 200 and _read(bl, "bl_power") == 0 and fb._device.blanked == 0
    finally:
        touch.close()


def test_input_keeps_it_lit(sysfs, open_virtual):
    """Input more often than dim_after keeps the display lit."""
    bl = _backlight(sysfs, "panel")
    touch = _PipeTouch()
    changes: list[str] = []
    try:
        # 8 touches 0.1 s apart against a 3 s dim_after: a stall of seconds, not a busy machine, dims it
        with Idle(open_virtual("64x48"), touch, dim_after=3.0, off_after=6.0, on_change=changes.append) as idle:
            for _ in range(8):
                touch.touch(1)
                touch.touch(0)
                time.sleep(0.1)
            assert idle.state == LIT and changes == []
        assert _read(bl, "brightness") == 200
    finally:
        touch.close()


def test_no_backlight_blanks_only(sysfs, open_virtual):
    """Without a backlight the display is still blanked, and that is said once."""
    fb = open_virtual("64x48:blank=1")
    touch = _PipeTouch()
    try:
        with Idle(fb, touch, dim_after=0.1, off_after=0.2) as idle:
            assert idle.backlight is None and "no backlight found: blanking only" in idle.notes
            assert _wait(lambda: fb._device.blanked == 4)
        assert fb._device.blanked == 0
    finally:
        touch.close()


def test_finds_the_displays_own_backlight(sysfs):
    """The display's own backlight wins (fbtft's under its device), else the only one, else an error."""
    _backlight(sysfs, "other")
    _backlight(sysfs, "fb_ili9341")
    own = sysfs / "class" / "graphics" / "fb1" / "device" / "backlight" / "fb_ili9341"
    own.mkdir(parents=True)
    found = find_backlight("/dev/fb1")
    assert found is not None and found.name == "fb_ili9341" and found.max_brightness == 255
    with pytest.raises(FramebufferError, match="--backlight NAME"):
        find_backlight("/dev/fb0")
    named = find_backlight("/dev/fb0", "other")
    assert named is not None and named.name == "other"
    with pytest.raises(FramebufferError, match=r"no backlight 'nope'; backlights: fb_ili9341, other"):
        find_backlight(None, "nope")


def test_drm_connector_backlight(sysfs):
    """A backlight under a DRM connector's folder (intel_backlight) belongs to that connector."""
    _backlight(sysfs, "acpi_video0")
    _backlight(sysfs, "intel_backlight")
    (sysfs / "class" / "drm" / "card0-eDP-1" / "intel_backlight").mkdir(parents=True)
    (sysfs / "class" / "drm" / "card0-eDP-1" / "intel_backlight" / "max_brightness").write_text("255\n")
    found = find_backlight("drm:card0:connector=eDP-1")
    assert found is not None and found.name == "intel_backlight"


def test_bad_arguments():
    """Times and levels out of range are ValueErrors before anything opens."""
    with pytest.raises(ValueError, match="comes before"):
        Idle(None, dim_after=10, off_after=5)
    with pytest.raises(ValueError, match="0..1"):
        Idle(None, dim=2)


def test_cli_sigterm_while_dark_relights(sysfs, tmp_path):
    """SIGTERM to fbgfx idle while dark: the backlight is back at its level and powered, exit 0."""
    bl = _backlight(sysfs, "panel", level=180)
    spec = f"virtual:64x48:blank=1:file={tmp_path / 'fb.raw'}"
    with fbgfx.open(spec):
        pass  # create it; its touchscreen is what fbgfx idle watches
    env = dict(os.environ, FBGFX_SYSFS=str(sysfs))
    proc = subprocess.Popen(
        # dimmed first (2 s to do so: a later look goes straight to dark, leaving the level as it was)
        [sys.executable, "-m", "fbgfx", "idle", "-d", spec, "--dim-after", "0.2", "--off-after", "2.2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        # read as text while the process may be writing it: this sysfs is made of plain files, which
        # a writer truncates before it writes (a kernel attribute is never seen half-written)
        assert _wait(lambda: (bl / "bl_power").read_text() == "4\n", 60)
        assert _read(bl, "brightness") == round(255 * 0.2)
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "fbgfx: idle: dark" in err
    assert _read(bl, "bl_power") == 0 and _read(bl, "brightness") == 180


def test_cli_off_before_dim_is_an_error(capsys):
    """--off-after before --dim-after: one error line, exit 2."""
    assert main(["idle", "-d", "virtual:8x8", "--dim-after", "10", "--off-after", "5"]) == 2
    assert "comes before --dim-after" in capsys.readouterr().err
