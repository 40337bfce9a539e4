"""``fbgfx touch``: --list, events printed in screen coordinates, --calibrate, errors."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from support import RECORDINGS
from support.refuse import refuse_open

from fbgfx.cli import main
from fbgfx.touch import _evdev

RECORDINGS = RECORDINGS
TABLET = str(RECORDINGS / "qemu-tablet.evemu")
FT5406 = str(RECORDINGS / "ft5406-multitouch.evemu")

# The tablet recording's header: BTN_LEFT (0x110) and ABS_X/ABS_Y 0..32767.
TABLET_HEAD = "".join(line + "\n" for line in Path(TABLET).read_text().splitlines() if not line.startswith("E:"))


def _calibration_taps(path: Path, width: int, height: int, rotate: int, sensor) -> None:
    """A recording tapping the five crosshairs of `fbgfx touch --calibrate` exactly, on
    a sensor that ``sensor(panel_x, panel_y)`` turns into raw tablet values."""
    from fbgfx.touch import TouchMapping

    logical = TouchMapping((0, 0), (0, 0), (width, height), rotate)
    lw, lh = logical.size
    lines = [TABLET_HEAD]
    for t, (fx, fy) in enumerate([(0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9), (0.5, 0.5)], 1):
        px, py = logical.to_panel(min(int(fx * lw), lw - 1), min(int(fy * lh), lh - 1))
        rx, ry = sensor((px + 0.5) / width, (py + 0.5) / height)
        for type_, code, value in [(3, 0, rx), (3, 1, ry), (1, 0x110, 1), (0, 0, 0), (1, 0x110, 0), (0, 0, 0)]:
            lines.append(f"E: {t}.000000 {type_:04x} {code:04x} {value}\n")
    path.write_text("".join(lines))


def _matrix(out: str) -> list:
    line = [ln for ln in out.splitlines() if ln.startswith("export FBGFX_TOUCH_CALIBRATION=")]
    assert len(line) == 1, out
    return [float(v) for v in line[0].split("=", 1)[1].strip('"').split()]


def test_prints_events_in_screen_coordinates(capsys):
    """Each event is one line: type, logical x and y, slot, time."""
    assert main(["touch", "-d", "virtual:1280x800", "--touch", TABLET]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "down x=640 y=200 slot=0 t=0.100",
        "move x=960 y=600 slot=0 t=0.140",
        "up   x=0 y=799 slot=0 t=0.200",
    ]
    assert "QEMU Virtio Tablet" in err and "1280x800, rotate 0" in err


def test_prints_events_rotated_and_counted(capsys):
    """--rotate 90 turns the printed coordinates; --count stops early."""
    assert main(["touch", "-d", "virtual:1280x800", "--touch", TABLET, "--rotate", "90", "--count", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["down x=200 y=639 slot=0 t=0.100"]


def test_prints_slots_of_a_multitouch_panel(capsys):
    """Two fingers come out with their slots."""
    assert main(["touch", "-d", "virtual:800x480", "--touch", FT5406]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "down x=700 y=50 slot=1 t=0.032"
    assert len(lines) == 10


def test_calibrate_finds_swapped_axes(tmp_path, capsys):
    """A sensor with its axes swapped gives the swap matrix, in the form the
    environment variable takes."""
    rec = tmp_path / "swapped.evemu"
    _calibration_taps(rec, 800, 480, 0, lambda ux, uy: (int(uy * 32768), int(ux * 32768)))
    assert main(["touch", "--calibrate", "-d", "virtual:800x480", "--touch", str(rec)]) == 0
    out, err = capsys.readouterr()
    assert _matrix(out) == pytest.approx([0, 1, 0, 1, 0, 0], abs=2e-4)
    assert "tap the crosshair at the top left" in err and "largest miss" in err


def test_calibrate_under_rotation_gives_the_panel_matrix(tmp_path, capsys):
    """The matrix describes the sensor on the panel, so calibrating a rotated screen
    gives the same matrix (here X mirrored) as an unrotated one."""
    rec = tmp_path / "mirrored.evemu"
    _calibration_taps(rec, 800, 480, 90, lambda ux, uy: (int((1 - ux) * 32768), int(uy * 32768)))
    assert main(["touch", "--calibrate", "-d", "virtual:800x480", "--rotate", "90", "--touch", str(rec)]) == 0
    assert _matrix(capsys.readouterr().out) == pytest.approx([-1, 0, 1, 0, 1, 0], abs=2e-4)


def test_calibrate_refuses_taps_that_do_not_fit(tmp_path, capsys):
    """Taps plainly off their crosshairs (one 200 px away): exit 2, why, and no matrix to export."""

    def sensor(ux, uy):
        if abs(ux - 0.9) < 0.01 and abs(uy - 0.9) < 0.01:  # the bottom-right tap lands far off
            ux, uy = ux - 0.25, uy - 0.1
        return int(ux * 32768), int(uy * 32768)

    rec = tmp_path / "bad.evemu"
    _calibration_taps(rec, 800, 480, 0, sensor)
    assert main(["touch", "--calibrate", "-d", "virtual:800x480", "--touch", str(rec)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    last = err.strip().splitlines()[-1]  # after the "tap the crosshair" prompts
    assert last.startswith("fbgfx: error: ") and "no calibration" in last and "pixels off" in last
    assert "export" not in err


def test_calibrate_recording_too_short(capsys):
    """Fewer taps than crosshairs: one error line, exit status 2."""
    assert main(["touch", "--calibrate", "-d", "virtual:800x480", "--touch", TABLET]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("fbgfx: error:") and "ended before every crosshair" in err


def test_list_marks_the_chosen_device(tmp_path, monkeypatch, capsys):
    """--list shows every event device, what it is, and stars the one fbgfx takes."""
    dev, sys_ = tmp_path / "dev", tmp_path / "sys"
    dev.mkdir()
    for n, name, props, abs_, key in [
        (0, "AT Translated Set 2 keyboard", "0", "0", "fffffffe"),
        (3, "QEMU Virtio Tablet", "0", "3", "70000 0 0 0 0"),  # BTN_LEFT, RIGHT, MIDDLE
    ]:
        (dev / f"event{n}").write_bytes(b"")
        base = sys_ / f"event{n}" / "device"
        (base / "capabilities").mkdir(parents=True)
        (base / "name").write_text(name + "\n")
        (base / "properties").write_text(props + "\n")
        (base / "capabilities" / "abs").write_text(abs_ + "\n")
        (base / "capabilities" / "key").write_text(key + "\n")
    monkeypatch.setattr(_evdev, "DEV_INPUT", str(dev))
    monkeypatch.setattr(_evdev, "SYSFS_INPUT", str(sys_))
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)
    if _evdev._LONG_BITS != 64:
        pytest.skip("the fake sysfs bitmaps are written for 64-bit longs")
    assert main(["touch", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"  {dev}/event0  AT Translated Set 2 keyboard: not a touch device"
    assert lines[1].startswith(f"* {dev}/event3  QEMU Virtio Tablet: tablet")
    assert lines[2].startswith("* = ")


def test_no_touch_device_is_one_error_line(tmp_path, monkeypatch, capsys):
    """No input devices at all: one error line naming /dev/input, exit status 2."""
    monkeypatch.setattr(_evdev, "DEV_INPUT", str(tmp_path / "none"))
    monkeypatch.delenv("FBGFX_TOUCH", raising=False)
    assert main(["touch", "-d", "virtual:800x480"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fbgfx: error:") and "no touchscreen or tablet found" in err and "does not exist" in err


def test_bad_calibration_is_one_error_line(capsys):
    """A --calibration that is not 6 numbers is refused before anything is read."""
    assert main(["touch", "-d", "virtual:800x480", "--touch", TABLET, "--calibration", "1 2 3"]) == 2
    assert "6" in capsys.readouterr().err


def test_permission_hint(monkeypatch, capsys):
    """EACCES opening the device says to join the input group."""
    refuse_open(monkeypatch, "/dev/input/event9", PermissionError, errno.EACCES, "Permission denied")
    assert main(["touch", "-d", "virtual:800x480", "--touch", "/dev/input/event9"]) == 2
    assert "'input' group" in capsys.readouterr().err
