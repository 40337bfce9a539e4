"""fbgfx.touch: recorded event streams read through real file descriptors, mapped
through rotation and calibration; device discovery and errors."""

from __future__ import annotations

import errno
import os
import selectors
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import RECORDINGS, ROOT
from support.refuse import refuse_open

import fbgfx
from fbgfx import touch
from fbgfx.touch import AbsInfo, InputDevice, TouchEvent, TouchMapping, _evdev, _evemu

RECORDINGS = RECORDINGS


# -- recordings (evemu-record's text format) --------------------------------------------


def load_recording(name: str) -> tuple[InputDevice, list[tuple]]:
    """The device description and the events of a recording in tests/support/recordings."""
    return _evemu.load(str(RECORDINGS / name))


def replay(name: str, screen=None, calibration=None, *, through: str = "pipe", tmp_path=None) -> list[TouchEvent]:
    """Every touch event of a recording, read through a pipe or a file of
    ``struct input_event`` bytes."""
    if through == "recording":
        with touch.open(str(RECORDINGS / name), screen, calibration) as ts:
            return list(ts)
    info, events = load_recording(name)
    data = _evdev.encode(events)
    if through == "file":
        f = tmp_path / "events.bin"
        f.write_bytes(data)
        fd = os.open(f, os.O_RDONLY)
    else:
        fd = _pipe_with(data)
    with touch.Touchscreen(fd, info, screen, calibration) as ts:
        return list(ts)


def _pipe_with(data: bytes) -> int:
    """The read end of a pipe a thread fills with ``data`` and then closes."""
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return r


def panel(width: int, height: int, rotate: int = 0) -> SimpleNamespace:
    """A stand-in for a Screen: its framebuffer's (panel's) size and its rotation."""
    return SimpleNamespace(fb=SimpleNamespace(width=width, height=height), rotate=rotate)


def short(events: list[TouchEvent]) -> list[tuple]:
    return [(e.type, e.x, e.y, e.slot) for e in events]


# -- the mapping -------------------------------------------------------------------------


def test_mapping_identity_on_a_panel_of_the_device_range():
    """With the identity, a device whose range is the panel's gives raw = pixel."""
    m = TouchMapping((0, 799), (0, 479), (800, 480))
    assert [m(x, y) for x, y in [(0, 0), (1, 1), (400, 240), (799, 479)]] == [(0, 0), (1, 1), (400, 240), (799, 479)]


def test_mapping_scales_like_libinput():
    """Raw values normalise by maximum - minimum + 1, as in libinput's convention."""
    m = TouchMapping((0, 32767), (0, 32767), (1280, 800))
    assert m(16384, 8192) == (640, 200)
    assert m(32767, 32767) == (1279, 799)
    assert m.normalize(16383.5, 8191.5) == (0.5, 0.25)


def test_mapping_with_an_offset_range():
    """A range not starting at 0 is moved to start at the panel's edge."""
    m = TouchMapping((100, 199), (-50, 49), (100, 100))
    assert m(100, -50) == (0, 0) and m(150, 0) == (50, 50) and m(199, 49) == (99, 99)


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_rotation_is_the_inverse_of_drawing(rotate):
    """Every panel pixel maps back to the logical pixel drawn there, for each rotation."""
    m = TouchMapping((0, 6), (0, 4), (7, 5), rotate)
    w, h = m.size
    assert (w, h) == ((5, 7) if rotate in (90, 270) else (7, 5))
    seen = set()
    for py in range(5):
        for px in range(7):
            x, y = m(px, py)
            assert 0 <= x < w and 0 <= y < h
            assert m.to_panel(x, y) == (px, py)
            seen.add((x, y))
    assert len(seen) == 35


def test_rotation_is_clockwise():
    """rotate=90: the logical top-left is the panel's top-right corner; the logical
    top-right is the panel's bottom-right."""
    m = TouchMapping((0, 799), (0, 479), (800, 480), rotate=90)
    assert m.size == (480, 800)
    assert m(799, 0) == (0, 0)
    assert m(799, 479) == (479, 0)
    assert m(0, 0) == (0, 799)


def test_rotation_180_and_270_corners():
    """180 turns the corners over; 270 puts the logical top-left at the panel's bottom-left."""
    m180 = TouchMapping((0, 799), (0, 479), (800, 480), rotate=180)
    assert m180(0, 0) == (799, 479) and m180(799, 479) == (0, 0)
    m270 = TouchMapping((0, 799), (0, 479), (800, 480), rotate=270)
    assert m270(0, 479) == (0, 0) and m270(0, 0) == (479, 0)


def test_calibration_swap_and_invert():
    """Swap and invert are special cases of the matrix."""
    swap = TouchMapping((0, 99), (0, 99), (100, 100), calibration=(0, 1, 0, 1, 0, 0))
    assert swap(10, 70) == (70, 10)
    invert_x = TouchMapping((0, 99), (0, 99), (100, 100), calibration="-1 0 1 0 1 0")
    assert invert_x(10, 70) == (89, 70)


def test_calibration_applies_before_rotation():
    """The matrix describes the sensor on the panel, so it holds for every rotation."""
    cal = (0, 1, 0, 1, 0, 0)
    flat = TouchMapping((0, 99), (0, 99), (100, 50), 0, cal)
    turned = TouchMapping((0, 99), (0, 99), (100, 50), 90, cal)
    for raw in [(10, 70), (0, 0), (99, 99), (50, 20)]:
        assert turned(*raw) == turned.from_panel(*flat(*raw))


def test_mapping_clamps_into_the_screen():
    """A calibration that reaches past the edge gives the edge pixel, never outside."""
    m = TouchMapping((0, 99), (0, 99), (100, 100), calibration=(1.2, 0, -0.1, 0, 1.2, -0.1))
    assert m(0, 0) == (0, 0) and m(99, 99) == (99, 99)


def test_mapping_refuses_bad_rotation_and_ranges():
    """A rotation other than a quarter turn, an empty range or an empty panel is a ValueError."""
    with pytest.raises(ValueError, match="0, 90, 180, 270"):
        TouchMapping((0, 9), (0, 9), (10, 10), rotate=45)
    with pytest.raises(ValueError, match="X axis"):
        TouchMapping((5, 4), (0, 9), (10, 10))
    with pytest.raises(ValueError, match="panel"):
        TouchMapping((0, 9), (0, 9), (0, 10))


@pytest.mark.parametrize("text", ["1 0 0 0 1", "1 0 0 0 1 0 0", "a b c d e f", "1 0 0 0 1 nan"])
def test_bad_calibration_is_a_value_error(text):
    """A calibration that is not 6 finite numbers is refused with the form it takes."""
    with pytest.raises(ValueError, match="6"):
        touch.parse_calibration(text)


def test_calibration_parses_commas_and_formats_for_the_environment():
    """Commas or spaces are accepted; the printed form reads back the same."""
    m = touch.parse_calibration("0,-1,1, 1,0,0")
    assert m == (0.0, -1.0, 1.0, 1.0, 0.0, 0.0)
    assert touch.format_calibration(m) == "0 -1 1 1 0 0"
    assert touch.parse_calibration(touch.format_calibration(m)) == m


def test_calibration_from_points_recovers_the_matrix():
    """Taps through a known distortion give that distortion's inverse back."""
    truth = (0.02, -1.05, 1.01, 0.98, 0.03, -0.02)  # sensor -> panel
    a, b, c, d, e, f = truth
    touched = [(0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9), (0.5, 0.5)]
    targets = [(a * x + b * y + c, d * x + e * y + f) for x, y in touched]
    got = touch.calibration_from_points(touched, targets)
    assert got == pytest.approx(truth, abs=1e-9)


def test_calibration_from_points_refuses_a_line():
    """Taps on one line cannot fix a matrix: a ValueError says to tap each crosshair."""
    with pytest.raises(ValueError, match="line"):
        touch.calibration_from_points([(0.1, 0.1), (0.5, 0.5), (0.9, 0.9)], [(0, 0), (0.5, 0.5), (1, 1)])
    with pytest.raises(ValueError, match="3 or more"):
        touch.calibration_from_points([(0.1, 0.1)], [(0, 0)])


# -- recorded streams --------------------------------------------------------------------

FT5406 = "ft5406-multitouch.evemu"
ADS7846 = "ads7846-single-touch.evemu"
TABLET = "qemu-tablet.evemu"

FT5406_EVENTS = [
    ("down", 100, 200, 0),
    ("move", 110, 205, 0),
    ("down", 700, 50, 1),
    ("move", 111, 205, 0),
    ("move", 699, 51, 1),
    ("up", 111, 205, 0),
    ("move", 699, 60, 1),
    ("up", 699, 60, 1),
    ("down", 111, 206, 0),  # a new contact in slot 0: X not sent again, kept from before
    ("up", 111, 206, 0),
]


@pytest.mark.parametrize("through", ["pipe", "file", "recording"])
def test_multitouch_protocol_b(through, tmp_path):
    """Two fingers in slots: downs, moves and ups per slot, the single-touch emulation
    ignored, raw = pixel on a panel of the device's size."""
    events = replay(FT5406, panel(800, 480), through=through, tmp_path=tmp_path)
    assert short(events) == FT5406_EVENTS
    assert [round(e.time, 3) for e in events][:3] == [0.0, 0.016, 0.032]


def test_multitouch_rotated_90():
    """rotate=90 on the 800x480 panel: logical (x, y) = (panel y, 799 - panel x)."""
    events = replay(FT5406, panel(800, 480, rotate=90))
    want = [(t, y, 799 - x, s) for t, x, y, s in FT5406_EVENTS]
    assert short(events) == want
    assert short(events)[0] == ("down", 200, 699, 0)


def test_multitouch_without_a_screen_is_the_raw_range():
    """screen=None: coordinates are the device's raw range from 0, unrotated."""
    assert short(replay(FT5406)) == FT5406_EVENTS


def test_single_touch_with_calibration():
    """A resistive panel whose sensor is turned against the picture, put right by the
    matrix: moves within one pixel and pressure changes give no event, nor does
    movement without a touch."""
    events = replay(ADS7846, panel(480, 320), calibration="0 -1 1 1 0 0")
    # n = raw / 4096; panel x = (1 - ny) * 480, panel y = nx * 320
    assert short(events) == [
        ("down", 128, 78, 0),
        ("move", 186, 117, 0),
        ("up", 186, 117, 0),
        ("down", 468, 312, 0),
        ("up", 468, 312, 0),
    ]


def test_single_touch_calibration_from_the_environment(monkeypatch):
    """$FBGFX_TOUCH_CALIBRATION is the default calibration."""
    monkeypatch.setenv("FBGFX_TOUCH_CALIBRATION", "0 -1 1 1 0 0")
    assert short(replay(ADS7846, panel(480, 320)))[0] == ("down", 128, 78, 0)


def test_tablet_on_a_framebuffer(open_virtual):
    """An absolute pointer: BTN_LEFT is the touch, hovering and other buttons give
    nothing; a Framebuffer as the screen maps onto its size, unrotated."""
    events = replay(TABLET, open_virtual("1280x800:XRGB8888"))
    assert short(events) == [("down", 640, 200, 0), ("move", 960, 600, 0), ("up", 0, 799, 0)]


def test_tablet_rotated_90():
    """The tablet on a 1280x800 panel with rotate=90 gives 800x1280 logical coordinates."""
    events = replay(TABLET, panel(1280, 800, rotate=90))
    assert short(events) == [("down", 200, 639, 0), ("move", 600, 319, 0), ("up", 799, 1279, 0)]


@pytest.mark.parametrize("rotate", [180, 270])
def test_tablet_rotated_180_and_270(rotate):
    """The other turns agree with TouchMapping on the whole stream."""
    m = TouchMapping((0, 32767), (0, 32767), (1280, 800), rotate)
    events = replay(TABLET, panel(1280, 800, rotate=rotate))
    raw = [(16384, 8192), (24576, 24576), (0, 32767)]
    assert [(e.x, e.y) for e in events] == [m(*p) for p in raw]


def test_screen_rotation_is_followed_while_reading():
    """The mapping follows the screen: a rotation changed between reads applies to
    the next events."""
    info, events = load_recording(TABLET)
    r, w = os.pipe()
    screen = panel(1280, 800)
    with touch.Touchscreen(r, info, screen) as ts:
        os.write(w, _evdev.encode(events[:5]))  # hover, press
        assert short(ts.read(timeout=5)) == [("down", 640, 200, 0)]
        screen.rotate = 90
        os.write(w, _evdev.encode(events[5:]))
        # The first move lies in the same raw pixel as the press, now seen turned.
        assert short(ts.read(timeout=5)) == [("move", 200, 639, 0), ("move", 600, 319, 0), ("up", 799, 1279, 0)]
        assert ts.size == (800, 1280)
    os.close(w)


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_real_screen_rotated(rotate, open_virtual):
    """A Screen's rotate and its framebuffer's size make the mapping: events land on
    the logical pixel whose drawing shows on the panel where the tablet was touched."""
    fb = open_virtual("1280x800:XRGB8888")
    with fb.screen(rotate=rotate, buffering="single") as screen:
        down = replay(TABLET, screen)[0]
        assert (screen.width, screen.height) == TouchMapping((0, 0), (0, 0), (1280, 800), rotate).size
        with screen.frame() as s:
            s.point((down.x, down.y), fill="white")
        assert fb.pixels[200, 640] != 0  # the tap was at panel (640, 200)
        assert int((fb.pixels != 0).sum()) == 1


def test_screen_rotation_from_the_environment(monkeypatch, open_virtual):
    """A Screen turned by $FBGFX_ROTATE turns the touches with it."""
    monkeypatch.setenv("FBGFX_ROTATE", "90")
    fb = open_virtual("1280x800:XRGB8888")
    with fb.screen() as screen:
        assert short(replay(TABLET, screen))[0] == ("down", 200, 639, 0)


# -- reading -----------------------------------------------------------------------------


def test_partial_records_wait_for_the_rest():
    """Half a struct input_event on a pipe is kept until the rest arrives."""
    info, events = load_recording(TABLET)
    data = _evdev.encode(events[:5])
    r, w = os.pipe()
    with touch.Touchscreen(r, info, None) as ts:
        os.write(w, data[: len(data) - _evdev.EVENT_SIZE // 2])
        assert ts.read(timeout=0) == []
        os.write(w, data[len(data) - _evdev.EVENT_SIZE // 2 :])
        assert short(ts.read(timeout=5)) == [("down", 16384, 8192, 0)]
    os.close(w)


def test_read_times_out_with_nothing():
    """read(timeout) returns an empty list when nothing came; fileno() works with selectors."""
    info, _ = load_recording(TABLET)
    r, w = os.pipe()
    with touch.Touchscreen(r, info, None) as ts:
        assert ts.read(timeout=0) == []
        assert ts.read(timeout=0.01) == []
        sel = selectors.DefaultSelector()
        sel.register(ts, selectors.EVENT_READ)
        assert sel.select(timeout=0) == []
        os.write(w, b"x")
        assert len(sel.select(timeout=5)) == 1
        sel.close()
    os.close(w)


def test_events_after_syn_dropped_are_skipped():
    """After SYN_DROPPED the events up to the next SYN_REPORT are incomplete and ignored."""
    info, _ = load_recording(TABLET)
    ev = [
        (0, 0, 3, 0, 100),
        (0, 0, 3, 1, 100),
        (0, 0, 1, 0x110, 1),
        (0, 0, 0, 0, 0),
        (0, 1, 0, 3, 0),  # SYN_DROPPED
        (0, 1, 3, 0, 30000),
        (0, 1, 0, 0, 0),
        (0, 2, 3, 0, 200),
        (0, 2, 0, 0, 0),
    ]
    r = _pipe_with(_evdev.encode(ev))
    with touch.Touchscreen(r, info, None) as ts:
        assert short(list(ts)) == [("down", 100, 100, 0), ("move", 200, 100, 0)]


def test_close_twice_and_read_after_close():
    """close() is safe twice; reading a closed Touchscreen is a TouchError (EBADF)."""
    info, _ = load_recording(TABLET)
    r, w = os.pipe()
    ts = touch.Touchscreen(r, info, None)
    ts.close()
    ts.close()
    assert ts.closed
    with pytest.raises(fbgfx.TouchError) as e:
        ts.read(timeout=0)
    assert e.value.errno == errno.EBADF
    os.close(w)


def test_unplugged_device_is_an_error_not_a_hang(monkeypatch):
    """ENODEV while reading (the device was unplugged) raises a TouchError saying so."""
    info, _ = load_recording(TABLET)
    r, w = os.pipe()
    os.write(w, b"x" * 8)
    real_read = os.read

    def gone(fd: int, n: int) -> bytes:
        if fd == r:
            raise OSError(errno.ENODEV, "No such device")
        return real_read(fd, n)

    with touch.Touchscreen(r, info, None) as ts:
        monkeypatch.setattr(os, "read", gone)
        with pytest.raises(fbgfx.TouchError, match="unplugged") as e:
            ts.read()
    assert e.value.errno == errno.ENODEV
    os.close(w)


def test_device_without_xy_is_refused():
    """A device without absolute X/Y (a keyboard) is not taken as a touchscreen."""
    r, w = os.pipe()
    with pytest.raises(fbgfx.TouchError, match="no absolute X/Y"):
        touch.Touchscreen(r, InputDevice("/dev/input/event0", "Keyboard", keys=frozenset({30})), None)
    os.close(w)
    with pytest.raises(OSError):
        os.fstat(r)  # the Touchscreen closed what it was given


def test_recording_header():
    """An evemu recording gives the device's name, properties, buttons and ranges."""
    info, events = load_recording(FT5406)
    assert info.name == "raspberrypi-ts" and info.kind == "touchscreen" and info.multitouch
    assert info.absinfo[0x35] == AbsInfo(0, 0, 799) and _evdev.BTN_TOUCH in info.keys
    assert events[0] == (0, 0, 3, 0x39, 21)
    tablet, _ = load_recording(TABLET)
    assert tablet.kind == "tablet" and _evdev.BTN_LEFT in tablet.keys


def test_not_a_recording(tmp_path):
    """A file that is not evemu's format is a ValueError naming the line."""
    bad = tmp_path / "bad.evemu"
    bad.write_text("N: x\nE: soon 3 0 1\n")
    with pytest.raises(ValueError, match=r"bad\.evemu:2"):
        touch.open_recording(str(bad))


def test_encode_decode_round_trip():
    """struct input_event bytes hold time, type, code and value, in the kernel's size."""
    ev = [(12, 345678, 3, 0x35, -7), (13, 0, 0, 0, 0)]
    data = _evdev.encode(ev)
    assert len(data) == 2 * _evdev.EVENT_SIZE
    assert _evdev.decode(data) == (ev, len(data))
    assert _evdev.decode(data[:-1]) == (ev[:1], _evdev.EVENT_SIZE)


# -- finding devices -----------------------------------------------------------------------


def _sysfs_words(bits) -> str:
    """A bitmap the way sysfs prints it: hex C longs, most significant first."""
    long_bits = _evdev._LONG_BITS
    top = max(bits, default=0) // long_bits
    words = [sum(1 << (b % long_bits) for b in bits if b // long_bits == i) for i in range(top + 1)]
    return " ".join(f"{w:x}" for w in reversed(words))


@pytest.fixture
def fake_input(tmp_path, monkeypatch):
    """A /dev/input and a /sys/class/input with the devices given to add()."""
    dev, sys_ = tmp_path / "dev-input", tmp_path / "sys-input"
    dev.mkdir()
    sys_.mkdir()
    monkeypatch.setattr(_evdev, "DEV_INPUT", str(dev))
    monkeypatch.setattr(_evdev, "SYSFS_INPUT", str(sys_))
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)

    def add(n: int, name: str, props=(), axes=(), keys=()) -> str:
        node = dev / f"event{n}"
        node.write_bytes(b"")
        base = sys_ / f"event{n}" / "device"
        (base / "capabilities").mkdir(parents=True)
        (base / "name").write_text(name + "\n")
        (base / "properties").write_text(_sysfs_words(props) + "\n")
        (base / "capabilities" / "abs").write_text(_sysfs_words(axes) + "\n")
        (base / "capabilities" / "key").write_text(_sysfs_words(keys) + "\n")
        return str(node)

    return add


KEYBOARD = dict(keys=range(1, 120))
TOUCHPAD = dict(props=[0], axes=[0, 1, 0x2F, 0x35, 0x36, 0x39], keys=[0x110, 0x14A])
TOUCHSCREEN = dict(props=[1], axes=[0, 1, 0x2F, 0x35, 0x36, 0x39], keys=[0x14A])
TABLET_CAPS = dict(axes=[0, 1], keys=[0x110, 0x111, 0x112])


def test_discovery_prefers_the_touchscreen(fake_input):
    """A touchscreen (INPUT_PROP_DIRECT) is chosen over a touchpad and a tablet."""
    fake_input(0, "AT Translated Set 2 keyboard", **KEYBOARD)
    fake_input(2, "SynPS/2 Synaptics TouchPad", **TOUCHPAD)
    fake_input(3, "QEMU Virtio Tablet", **TABLET_CAPS)
    want = fake_input(10, "raspberrypi-ts", **TOUCHSCREEN)
    devices = touch.list_devices()
    assert [d.kind for d in devices] == [None, "touchpad", "tablet", "touchscreen"]
    assert devices[3].multitouch
    assert touch.find_device().path == want


def test_discovery_takes_a_tablet_over_a_touchpad(fake_input):
    """Without a touchscreen, an absolute pointer with a left button is chosen."""
    fake_input(0, "keyboard", **KEYBOARD)
    fake_input(1, "SynPS/2 Synaptics TouchPad", **TOUCHPAD)
    want = fake_input(4, "QEMU Virtio Tablet", **TABLET_CAPS)
    assert touch.find_device().path == want
    assert touch.find_device().summary() == "QEMU Virtio Tablet: tablet"


def test_no_touch_device_lists_dev_input(fake_input):
    """No usable device: ENOENT, and the message lists what /dev/input has."""
    fake_input(0, "AT Translated Set 2 keyboard", **KEYBOARD)
    fake_input(1, "Power Button", keys=[116])
    with pytest.raises(fbgfx.TouchError, match="no touchscreen or tablet found") as e:
        touch.open()
    assert e.value.errno == errno.ENOENT
    assert "event0 (AT Translated Set 2 keyboard), event1 (Power Button)" in str(e.value)


def test_no_dev_input_at_all(monkeypatch, tmp_path):
    """Without /dev/input the message says no input drivers are loaded."""
    monkeypatch.setattr(_evdev, "DEV_INPUT", str(tmp_path / "missing"))
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)
    with pytest.raises(fbgfx.TouchError, match="does not exist"):
        touch.open()


def test_environment_names_the_device(fake_input, monkeypatch):
    """$FBGFX_TOUCH is taken before any search."""
    fake_input(0, "raspberrypi-ts", **TOUCHSCREEN)
    other = fake_input(1, "QEMU Virtio Tablet", **TABLET_CAPS)
    monkeypatch.setenv("FBGFX_TOUCH", other)
    assert touch.find_device().path == other


def test_environment_names_a_recording(monkeypatch):
    """$FBGFX_TOUCH may name an evemu recording: a program runs against it unchanged."""
    monkeypatch.setenv("FBGFX_TOUCH", str(RECORDINGS / TABLET))
    with touch.open() as ts:
        assert short(list(ts))[0] == ("down", 16384, 8192, 0)


def test_docs_touch_example_runs(monkeypatch):
    """The LCD guide's touch example runs as shown, against a recording and a virtual screen."""
    import re
    import textwrap

    guide = (Path(ROOT) / "docs" / "guides" / "lcd.rst").read_text()
    blocks = re.findall(r"^\.\. testcode::\n\n((?:(?:   .*)?\n)+)", guide, re.M)
    block = next(textwrap.dedent(b) for b in blocks if "fbgfx.touch.open(" in b)
    monkeypatch.setenv("FRAMEBUFFER", "virtual:1280x800:XRGB8888")
    monkeypatch.setenv("FBGFX_TOUCH", str(RECORDINGS / TABLET))
    drawn = []
    real_frame = fbgfx.Screen.frame

    def frame(self):  # count the frames the example draws
        drawn.append(1)
        return real_frame(self)

    monkeypatch.setattr(fbgfx.Screen, "frame", frame)
    exec(compile(block, "lcd.rst", "exec"), {})
    assert len(drawn) == 2  # the down and the move; the up draws nothing


def test_missing_path_lists_dev_input(fake_input):
    """A path that does not exist: ENOENT with the devices there are."""
    fake_input(0, "QEMU Virtio Tablet", **TABLET_CAPS)
    with pytest.raises(fbgfx.TouchError, match=r"no such input device.*event0 \(QEMU Virtio Tablet\)") as e:
        touch.open(os.path.join(_evdev.DEV_INPUT, "event7"))
    assert e.value.errno == errno.ENOENT


def test_permission_denied_says_join_input(fake_input, monkeypatch):
    """EACCES opening the device says to join the 'input' group."""
    path = fake_input(0, "raspberrypi-ts", **TOUCHSCREEN)
    refuse_open(monkeypatch, path, PermissionError, errno.EACCES, "Permission denied")
    with pytest.raises(fbgfx.TouchError, match="'input' group") as e:
        touch.open()
    assert e.value.errno == errno.EACCES and e.value.filename == path


def test_not_an_event_device(tmp_path):
    """A path that is not an evdev node is refused by name, not with an ioctl errno."""
    f = tmp_path / "not-a-device"
    f.write_bytes(b"")
    with pytest.raises(fbgfx.TouchError, match="not an input event device"):
        touch.open(str(f))


# -- properties ------------------------------------------------------------------------------

_finite = st.floats(-3, 3, allow_nan=False)


@given(
    raw=st.tuples(st.integers(-100, 5000), st.integers(-100, 5000)),
    lo=st.tuples(st.integers(-50, 50), st.integers(-50, 50)),
    span=st.tuples(st.integers(0, 4095), st.integers(0, 4095)),
    panel=st.tuples(st.integers(1, 2000), st.integers(1, 2000)),
    rotate=st.sampled_from([0, 90, 180, 270]),
    calibration=st.tuples(*[_finite] * 6),
)
def test_mapping_always_lands_in_the_screen(raw, lo, span, panel, rotate, calibration):
    """Whatever the raw value, range, panel, rotation and matrix: a pixel inside the
    logical screen, which to_panel takes back to the panel pixel it came from."""
    m = TouchMapping((lo[0], lo[0] + span[0]), (lo[1], lo[1] + span[1]), panel, rotate, calibration)
    x, y = m(*raw)
    w, h = m.size
    assert 0 <= x < w and 0 <= y < h
    assert m.to_panel(x, y) == m.panel_pixel(*raw)
