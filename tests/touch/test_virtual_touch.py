"""The virtual touchscreen of a file-backed virtual display: read by fbgfx.touch.open()
as a kernel touchscreen, touched by fbgfx.touch.virtual.VirtualTouch from any process."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from support import RECORDINGS, ROOT

import fbgfx
import fbgfx.touch
from fbgfx.touch import virtual as virtual_touch
from fbgfx.touch.virtual import VirtualTouch


@pytest.fixture
def display(tmp_path, monkeypatch):
    """A 320x240 file-backed virtual display named by $FRAMEBUFFER; yields its spec."""
    spec = f"virtual:320x240:XRGB8888:file={tmp_path / 'fb.raw'}"
    monkeypatch.setenv("FRAMEBUFFER", spec)
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)
    monkeypatch.delenv("FBGFX_TOUCH_CALIBRATION", raising=False)
    monkeypatch.delenv("FBGFX_ROTATE", raising=False)
    with fbgfx.open(spec):  # created, as the app under test would
        pass
    return spec


def child_env() -> dict[str, str]:
    """The environment for a child Python that imports this checkout's fbgfx."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))


def test_touch_open_without_arguments_reads_the_display_of_framebuffer(display):
    """touch.open() with no path reads $FRAMEBUFFER's virtual touchscreen: a tap is down and up there."""
    finger = VirtualTouch(display)
    with fbgfx.touch.open() as ts:
        assert ts.device.name == virtual_touch.NAME
        assert ts.device.kind == "touchscreen"
        assert ts.size == (320, 240)
        assert finger.tap(17, 203) == 1
        events = ts.read(0)
    assert [(e.type, e.x, e.y, e.slot) for e in events] == [("down", 17, 203, 0), ("up", 17, 203, 0)]


def test_press_move_release(display):
    """press, move and release arrive as down, move and up, in that order, stamped on time.monotonic()'s clock."""
    finger = VirtualTouch(display)
    with fbgfx.open() as fb, fb.screen() as screen, fbgfx.touch.open(screen=screen) as ts:
        before = time.monotonic()
        finger.press(1, 2)
        finger.move(30, 40)
        finger.move(319, 239)
        finger.release()
        after = time.monotonic()
        events = ts.read(0)
    assert [(e.type, e.x, e.y) for e in events] == [
        ("down", 1, 2),
        ("move", 30, 40),
        ("move", 319, 239),
        ("up", 319, 239),
    ]
    assert all(before <= e.time <= after for e in events)


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_a_touch_lands_where_the_app_draws_under_it(display, rotate):
    """On a rotated Screen the event's logical pixel, drawn and flipped, lights the panel pixel touched."""
    finger = VirtualTouch(display)
    with fbgfx.open() as fb, fb.screen(rotate=rotate) as screen, fbgfx.touch.open(screen=screen) as ts:
        for px, py in [(0, 0), (319, 0), (0, 239), (319, 239), (123, 45)]:
            finger.tap(px, py)
            down = ts.read(0)[0]
            with screen.frame() as s:
                s.clear("black")
                s.point((down.x, down.y), fill="white")
            lit = list(zip(*fb.pixels.nonzero()))
            assert lit == [(py, px)], (rotate, px, py, down)


def test_calibration_is_applied_as_for_a_real_panel(display, monkeypatch):
    """$FBGFX_TOUCH_CALIBRATION maps the virtual panel's touches too (X inverted here)."""
    monkeypatch.setenv("FBGFX_TOUCH_CALIBRATION", "-1 0 1 0 1 0")
    finger = VirtualTouch(display)
    with fbgfx.open() as fb, fbgfx.touch.open(screen=fb) as ts:
        finger.tap(10, 20)
        events = ts.read(0)
    assert (events[0].x, events[0].y) == (309, 20)


def test_every_pixel_is_exact_after_the_panel_grows(tmp_path, monkeypatch):
    """A touchscreen made for a 7x5 panel still hits every pixel of the 640x480 mode set later, and every one of 7x5."""
    monkeypatch.delenv("FBGFX_TOUCH_CALIBRATION", raising=False)
    spec = f"virtual:7x5:RGB565:file={tmp_path / 'fb.raw'}:memory=1000000"
    with fbgfx.open(spec) as fb:
        finger = VirtualTouch(fb)
        with fbgfx.touch.open(screen=fb) as ts:
            for y in range(5):
                for x in range(7):
                    finger.tap(x, y)
                    assert ts.read(0)[0][1:3] == (x, y)
        fb.set_mode(width=640, height=480)
        assert finger.device.absinfo[fbgfx.touch._evdev.ABS_X].maximum == 6  # the range stayed the 7x5 one
        with fbgfx.touch.open(screen=fb) as ts:
            for x, y in [(0, 0), (639, 479), (1, 478), (320, 240)]:
                finger.tap(x, y)
                got = ts.read(0)[0]
                # a 7-step sensor cannot tell 640 columns apart: the tap lands in the step's column span
                assert abs(got.x - x) <= 640 // 7 and abs(got.y - y) <= 480 // 5, (x, y, got)


def test_given_the_display_spec_or_screen(display, monkeypatch):
    """touch.open('virtual:...:file=...') and touch.open(screen=...) reach the same touchscreen without $FRAMEBUFFER."""
    monkeypatch.delenv("FRAMEBUFFER")
    finger = VirtualTouch(display)
    with fbgfx.touch.open(display) as a, fbgfx.open(display) as fb, fbgfx.touch.open(screen=fb) as b:
        assert finger.readers == 2
        assert finger.tap(5, 6) == 2
        assert a.read(0)[0][:3] == b.read(0)[0][:3] == ("down", 5, 6)


def test_app_in_a_subprocess_reads_taps(display):
    """A child that only calls fbgfx.touch.open() gets the taps the parent injects once it is reading."""
    code = (
        "import json, fbgfx.touch\n"
        "with fbgfx.touch.open() as ts:\n"
        "    print('ready', flush=True)\n"
        "    got = []\n"
        "    while len(got) < 4:\n"
        "        got += [list(e[:4]) for e in ts.read(10)]\n"
        "print(json.dumps(got))\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env()
    )
    try:
        finger = VirtualTouch(display)
        finger.wait_for_reader(30)
        finger.tap(3, 4)
        finger.tap(300, 200)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert json.loads(out.splitlines()[-1]) == [
        ["down", 3, 4, 0],
        ["up", 3, 4, 0],
        ["down", 300, 200, 0],
        ["up", 300, 200, 0],
    ]
    assert finger.readers == 0  # the child's FIFO went with it


def test_a_killed_readers_fifo_is_removed(display):
    """A reader killed without closing leaves a FIFO; the next injector removes it and reaches nobody."""
    code = "import fbgfx.touch, sys\nts = fbgfx.touch.open()\nprint('ready', flush=True)\nsys.stdin.read()\n"
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env()
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        finger = VirtualTouch(display)
        assert finger.readers == 1
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        child.kill()
    assert len([n for n in os.listdir(finger.folder) if n != "device.json"]) == 1
    assert finger.tap(1, 1) == 0
    assert os.listdir(finger.folder) == ["device.json"]


def test_no_reader_waits_then_says_so(display):
    """wait_for_reader times out with ETIMEDOUT naming fbgfx.touch.open(); a touch without a reader reaches none."""
    finger = VirtualTouch(display)
    assert finger.tap(1, 1) == 0
    with pytest.raises(fbgfx.TouchError, match=r"touch\.open\(\)") as info:
        finger.wait_for_reader(0.05)
    assert info.value.errno == errno.ETIMEDOUT


def test_a_reader_that_does_not_read_loses_touches_without_blocking(display):
    """Once a reader's FIFO is full, touches skip it (as a full evdev queue drops them); the injector goes on."""
    finger = VirtualTouch(display)
    with fbgfx.touch.open() as ts:
        reached = [finger.tap(1, 1) for _ in range(3000)]
        assert reached[0] == 1 and reached[-1] == 0
        events = ts.read(0)
    kept = reached.count(1)
    assert len(events) == 2 * kept
    assert [e.type for e in events] == ["down", "up"] * kept


def test_concurrent_injectors_never_interleave_a_touch(display):
    """Taps from 4 threads at once arrive whole: strictly alternating down and up, each pair at one position."""
    finger = VirtualTouch(display)
    with fbgfx.touch.open() as ts:

        def tap_many(n: int) -> None:
            mine = VirtualTouch(display)
            for i in range(50):
                mine.tap(n * 60 + i, n * 50 + i)

        threads = [threading.Thread(target=tap_many, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert finger.readers == 1
        got = ts.read(0)  # 200 taps fit in the FIFO: nothing dropped
    assert len(got) == 400
    for down, up in zip(got[::2], got[1::2]):
        assert (down.type, up.type) == ("down", "up")
        assert (down.x, down.y) == (up.x, up.y)
        assert down.x - 60 * (down.x // 60) == down.y - 50 * (down.x // 60)


def test_outside_the_panel_is_refused(display):
    """A touch off the glass is a ValueError naming the panel's size; nothing is sent."""
    finger = VirtualTouch(display)
    with fbgfx.touch.open() as ts:
        with pytest.raises(ValueError, match="320x240"):
            finger.tap(320, 0)
        with pytest.raises(ValueError, match="320x240"):
            finger.press(-1, 5)
        assert ts.read(0) == []


def test_only_file_backed_virtual_displays_have_one(monkeypatch):
    """An in-memory virtual display has no touchscreen other processes can reach: a clear TouchError."""
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)
    with pytest.raises(fbgfx.TouchError, match="file=") as info:
        fbgfx.touch.open("virtual:64x48")
    assert info.value.errno == errno.EINVAL
    with fbgfx.open("virtual:64x48") as fb, pytest.raises(fbgfx.TouchError, match="file="):
        VirtualTouch(fb)


def test_something_else_at_the_folder_is_refused_and_kept(display, tmp_path):
    """A file already at PATH.touch is not fbgfx's: opening the touchscreen fails and the file is left as it was."""
    (tmp_path / "fb.raw.touch").write_bytes(b"mine")
    with pytest.raises(fbgfx.TouchError, match="not a virtual touchscreen") as info:
        fbgfx.touch.open()
    assert info.value.errno == errno.ENOTDIR
    assert (tmp_path / "fb.raw.touch").read_bytes() == b"mine"


def test_touch_environment_still_wins(display, monkeypatch):
    """$FBGFX_TOUCH names the device even on a virtual display (a recording here)."""
    monkeypatch.setenv("FBGFX_TOUCH", str(RECORDINGS / "ft5406-multitouch.evemu"))
    with fbgfx.touch.open() as ts:
        assert ts.device.name != virtual_touch.NAME
