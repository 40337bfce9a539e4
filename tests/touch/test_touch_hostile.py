"""Touch input against hostile use: closing under a blocked reader, absurd recordings,
calibrations that overflow."""

from __future__ import annotations

import os
import threading

import pytest
from support import RECORDINGS

import fbgfx
from fbgfx import touch
from fbgfx.errors import TouchError
from fbgfx.touch import AbsInfo, InputDevice, Touchscreen, _evdev

FT5406 = RECORDINGS / "ft5406-multitouch.evemu"
HEADER = "".join(line + "\n" for line in FT5406.read_text().splitlines() if not line.startswith("E:"))


def tablet() -> InputDevice:
    return InputDevice(
        "pipe",
        "test tablet",
        axes=frozenset({_evdev.ABS_X, _evdev.ABS_Y}),
        keys=frozenset({_evdev.BTN_TOUCH}),
        absinfo={_evdev.ABS_X: AbsInfo(0, 0, 4095), _evdev.ABS_Y: AbsInfo(0, 0, 4095)},
    )


@pytest.mark.parametrize("how", ["read", "iterate"])
def test_close_from_another_thread_wakes_a_blocked_read(how):
    """ts.close() from another thread ends a read() waiting without a timeout (it hung forever)."""
    r, w = os.pipe()
    ts = Touchscreen(r, tablet())
    got = []
    reading = threading.Event()

    def reader():
        reading.set()
        got.append(ts.read() if how == "read" else list(ts))

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    reading.wait()
    while not ts._readers and t.is_alive():  # the reader is inside read() (no sleeping: it polls)
        pass
    ts.close()
    t.join(timeout=30)
    assert not t.is_alive(), "read() still blocked after close()"
    assert got == [[]] and ts.closed
    with pytest.raises(TouchError, match="closed"):
        ts.read(0)
    with pytest.raises(BrokenPipeError):  # the reader closed the device on its way out
        os.write(w, b"x" * _evdev.EVENT_SIZE)
    os.close(w)


def read_unless_closed(ts: Touchscreen) -> None:
    try:
        ts.read()
    except TouchError as e:  # closed before the read began
        assert "closed" in str(e)


def test_close_wakes_readers_many_times():
    """200 rounds of a reader blocked in read() and a close from another thread: each returns."""
    for _ in range(200):
        r, w = os.pipe()
        ts = Touchscreen(r, tablet())
        t = threading.Thread(target=read_unless_closed, args=(ts,), daemon=True)
        t.start()
        ts.close()  # before, during or after the reader's poll
        t.join(timeout=30)
        assert not t.is_alive()
        os.close(w)


def test_recording_declaring_300_million_slots_is_refused(tmp_path):
    """ABS_MT_SLOT 0..299999999 in a recording: TouchError naming the kernel's limit, no huge allocation."""
    path = tmp_path / "slots.evemu"
    path.write_text(HEADER.replace("A: 2f 0 9 0 0 0", "A: 2f 0 299999999 0 0 0"))
    with pytest.raises(TouchError, match="299999999|300000000") as e:
        touch.open(str(path))
    assert str(touch.MAX_SLOTS) in str(e.value)


def test_recording_within_the_slot_limit_opens(tmp_path):
    """The kernel's most slots (1024) is accepted."""
    path = tmp_path / "slots.evemu"
    path.write_text(HEADER.replace("A: 2f 0 9 0 0 0", f"A: 2f 0 {touch.MAX_SLOTS - 1} 0 0 0"))
    with touch.open(str(path)) as ts:
        assert ts.read(0) == []


def test_event_value_beyond_int32_names_the_line(tmp_path):
    """An event value beyond int32 in a recording: ValueError naming the file and line, not OverflowError."""
    path = tmp_path / "big.evemu"
    path.write_text(HEADER + "E: 0.000001 0003 0035 4294967296\n")
    with pytest.raises(ValueError, match=r"big\.evemu:\d+: value 4294967296"):
        touch.open(str(path))


def test_garbage_recording_names_the_file(tmp_path):
    """Bytes that are not UTF-8 text: ValueError naming the file, not UnicodeDecodeError."""
    path = tmp_path / "garbage.evemu"
    path.write_bytes(b"N: x\n\xff\xfe\x00junk\n")
    with pytest.raises(ValueError, match=r"garbage\.evemu: not an evemu recording") as e:
        touch.open(str(path))
    assert not isinstance(e.value, UnicodeDecodeError)


def test_overflowing_calibration_from_the_environment_is_refused_at_open(monkeypatch):
    """$FBGFX_TOUCH_CALIBRATION="1e308 0 0 0 1 0": ValueError at open naming the variable, not OverflowError later."""
    monkeypatch.setenv("FBGFX_TOUCH_CALIBRATION", "1e308 0 0 0 1 0")
    r, w = os.pipe()
    with fbgfx.open("virtual:800x480") as fb, pytest.raises(ValueError, match=r"^\$FBGFX_TOUCH_CALIBRATION: "):
        Touchscreen(r, tablet(), fb)
    os.close(w)
    with pytest.raises(OSError):
        os.fstat(r)  # the descriptor was closed with the refusal


@pytest.mark.parametrize("matrix", ["1e308 0 0 0 1 0", "1 0 0 0 1e300 1e300", "0 0 3e306 1 0 0"])
def test_overflowing_calibration_argument_is_refused(matrix):
    """A calibration argument that takes the device's range beyond any screen is a ValueError at open."""
    r, w = os.pipe()
    with fbgfx.open("virtual:800x480") as fb, pytest.raises(ValueError, match="outside any screen"):
        Touchscreen(r, tablet(), fb, calibration=matrix)
    os.close(w)


def test_large_but_finite_calibration_maps_into_the_screen():
    """A steep but usable matrix still maps every position into the screen (clamped)."""
    r, w = os.pipe()
    with fbgfx.open("virtual:800x480") as fb, Touchscreen(r, tablet(), fb, calibration="1000 0 -500 0 1 0") as ts:
        events = _evdev.encode(
            [
                (1, 0, _evdev.EV_ABS, _evdev.ABS_X, 4095),
                (1, 0, _evdev.EV_ABS, _evdev.ABS_Y, 10),
                (1, 0, _evdev.EV_KEY, _evdev.BTN_TOUCH, 1),
                (1, 0, 0, 0, 0),
            ]
        )
        os.write(w, events)
        assert [(e.type, e.x) for e in ts.read(timeout=5)] == [("down", 799)]
    os.close(w)
