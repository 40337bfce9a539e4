"""Touch on a real kernel: qemu's virtio tablet (an evdev absolute pointer) driven from
the host through QMP's ``input-send-event``, read by fbgfx.touch in the guest.

In the ``std`` boot (``-vga std`` for bochs' /dev/fb0 at 1280x800, ``-device
virtio-tablet-pci``; see _boots.CONFIGS), ``touch_guest.py`` asks the host for taps
and screendumps through files in the shared directory; the tests below check what it
recorded:

- ``fbgfx.touch`` finds "QEMU Virtio Tablet" by itself;
- a tap comes out as down/up in logical coordinates, for rotate 0 and 90;
- ``examples/paint.py --rotate 90`` draws under the tap, on qemu's own screendump;
- ``fbgfx touch --list`` stars the tablet; ``fbgfx touch --rotate 90`` prints a tap;
- an overflow of the kernel's event buffer (SYN_DROPPED) is resynchronised;
- a uinput touchscreen (fbgfx.touch.uinput, the plugin's way to touch real displays)
  is found and read like the panel's own;
- unbinding the tablet's driver while a read waits ends it with ENODEV, not a hang;
- ``fbgfx serve --input`` on /dev/fb0 makes a uinput touchscreen that programs read (last).

Set FBGFX_VM_RESULTS=DIR to keep the logs in DIR/std/touch_vm.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from _boots import PRELOAD, TOUCH, Guest, guest_fixture
from _vm import Qmp, answer_screendump, guest_step

pytestmark = pytest.mark.kernel

PANEL = (1280, 800)  # bochs' preferred mode under -vga std
YELLOW = (255, 215, 0)  # paint.py's first finger
BUTTON_GREY = (70, 70, 70)


def _tap(qmp: Qmp, x: int, y: int) -> None:
    """Move to raw (x, y) pressing the left button, then let go: two SYN frames."""
    qmp.execute(
        "input-send-event",
        events=[
            {"type": "abs", "data": {"axis": "x", "value": x}},
            {"type": "abs", "data": {"axis": "y", "value": y}},
            {"type": "btn", "data": {"down": True, "button": "left"}},
        ],
    )
    time.sleep(0.2)
    qmp.execute("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])


def _burst(qmp: Qmp, moves: int) -> None:
    """Press and move ``moves`` times across the tablet, still pressed: more events
    than an evdev client buffer holds."""
    qmp.execute(
        "input-send-event",
        events=[
            {"type": "abs", "data": {"axis": "x", "value": 1000}},
            {"type": "btn", "data": {"down": True, "button": "left"}},
        ],
    )
    for i in range(moves):
        qmp.execute(
            "input-send-event",
            events=[
                {"type": "abs", "data": {"axis": "x", "value": 1000 + 70 * i}},
                {"type": "abs", "data": {"axis": "y", "value": 1000 + 70 * i}},
            ],
        )


def _answer(qmp: Qmp, cmd: Path) -> None:
    """Carry out the guest's cmd-N: a tap, a burst of moves, a release or a screendump."""
    request = json.loads(cmd.read_text())
    if request["do"] == "tap":
        _tap(qmp, request["x"], request["y"])
    elif request["do"] == "burst":
        _burst(qmp, request["moves"])
    elif request["do"] == "release":
        qmp.execute("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])
    elif request["do"] == "screendump":
        answer_screendump(qmp, cmd)


touch_vm = guest_fixture(
    # Last in its boot: it unbinds the tablet's driver.
    Guest("touch_vm", config="std", script="touch_guest.py", handle=_answer, order=90, preload=PRELOAD + TOUCH)
)


def _step(guest: dict[str, Any], name: str) -> dict[str, Any]:
    """guest_step, skipping the test where the guest skipped the step (with its reason)."""
    result = guest_step(guest, name)
    if "skipped" in result:
        pytest.skip(result["skipped"])
    return result


def _raw_to_panel(x: int, y: int) -> tuple[int, int]:
    # The tablet's range is 0..32767 on both axes; fbgfx takes each raw step at its middle.
    return int((x + 0.5) / 32768 * PANEL[0]), int((y + 0.5) / 32768 * PANEL[1])


def test_finds_the_virtio_tablet(touch_vm):
    """touch.open() with no path finds and opens "QEMU Virtio Tablet" as a tablet."""
    r = _step(touch_vm, "discovery")
    assert r["chosen"][1] == "QEMU Virtio Tablet"
    assert r["opened"]["name"] == "QEMU Virtio Tablet"
    assert r["opened"]["summary"] == "QEMU Virtio Tablet: tablet, 0..32767 x 0..32767"


def test_tap_in_logical_coordinates_rotate_0(touch_vm):
    """A tap at raw (16384, 8192) is down then up at panel pixel (640, 200)."""
    r = _step(touch_vm, "tap_rotate_0")
    assert r["size"] == list(PANEL)
    kinds = [(t, x, y, slot) for t, x, y, slot, _ in r["events"]]
    assert kinds == [("down", 640, 200, 0), ("up", 640, 200, 0)]
    # timestamps on time.monotonic()'s clock: seconds ago, not since 1970
    assert all(-120 < age <= 0.5 for *_, age in r["events"])


def test_tap_in_logical_coordinates_rotate_90(touch_vm):
    """rotate=90: the 1280x800 panel is an 800x1280 screen, and a tap at panel
    (320, 600) is logical (600, 1279 - 320)."""
    r = _step(touch_vm, "tap_rotate_90")
    assert r["size"] == [PANEL[1], PANEL[0]]
    px, py = _raw_to_panel(8192, 24576)
    assert (px, py) == (320, 600)
    kinds = [(t, x, y) for t, x, y, *_ in r["events"]]
    assert kinds == [("down", py, PANEL[0] - 1 - px), ("up", py, PANEL[0] - 1 - px)]


def test_paint_draws_under_the_tap_rotate_90(touch_vm):
    """examples/paint.py --rotate 90: qemu's own screendump shows the dot under the tap
    and the CLEAR button in the panel's bottom-right (the logical top-right)."""
    r = _step(touch_vm, "paint_rotate_90")
    out = Path(touch_vm["_outdir"])
    from PIL import Image

    with Image.open(out / r["shots"][-1]) as im:
        im = im.convert("RGB")
        assert im.size == PANEL
        px, py = _raw_to_panel(8192, 24576)
        assert im.getpixel((px, py)) == YELLOW, touch_vm.get("paint_output")
        assert im.getpixel((px + 40, py)) == (0, 0, 0)
        # the button spans logical x 640..799, y 0..106: panel x 1173..1279, y 640..799
        assert im.getpixel((1180, 650)) == BUTTON_GREY
        assert im.getpixel((100, 650)) == (0, 0, 0)


def test_cli_lists_the_tablet_as_chosen(touch_vm):
    """``fbgfx touch --list`` stars the tablet and shows its range from EVIOCGABS."""
    r = _step(touch_vm, "cli_list")
    assert r["rc"] == 0, r["stderr"]
    starred = [ln for ln in r["stdout"].splitlines() if ln.startswith("* /dev/input/")]
    assert len(starred) == 1 and starred[0].endswith("QEMU Virtio Tablet: tablet, 0..32767 x 0..32767")
    assert "keyboard" in r["stdout"].lower()


def test_cli_prints_a_tap_rotated(touch_vm):
    """``fbgfx touch --rotate 90 --count 2`` prints the tap's down and up in logical coordinates."""
    r = _step(touch_vm, "cli_events")
    assert r["rc"] == 0, r["stderr"]
    assert "/dev/fb0 800x1280, rotate 90" in r["header"]
    lines = [ln.rsplit(" t=", 1)[0] for ln in r["stdout"].splitlines()]
    assert lines == ["down x=600 y=959 slot=0", "up   x=600 y=959 slot=0"]


def test_overflow_is_resynchronised(touch_vm):
    """The kernel drops events (SYN_DROPPED) while nobody reads a press and 400 moves:
    fbgfx takes the device's state instead, so the press still comes out as a down at
    the contact's position now, its release as the up, and the next tap reads normally."""
    r = _step(touch_vm, "overflow")
    last = 1000 + 70 * 399  # raw: no screen in this step
    # One down where the contact is now: not the stale moves queued behind the overflow
    # (a reader that replayed them would report 400 moves, or jump back along them).
    assert r["events"] == [["down", last, last]]
    assert r["released"] == [["up", last, last]]
    assert r["after"] == [["down", 16384, 8192], ["up", 16384, 8192]]


def test_serve_input_makes_a_uinput_touchscreen(touch_vm):
    """What ``fbgfx serve -d /dev/fb0 --input`` does: a "fbgfx uinput touchscreen" that touch.open()
    picks; a viewer's press at canvas pixel (100, 50) reads as a tap there; gone once closed."""
    r = _step(touch_vm, "serve_uinput")
    assert "made" in r, r
    assert [name for _, name in r["made"]] == ["fbgfx uinput touchscreen"]
    assert r["name"] == "fbgfx uinput touchscreen"
    assert r["events"] == [["down", 100, 50], ["up", 100, 50]]
    assert r["left"] == [], r["stderr"]


def test_uinput_touchscreen_on_the_real_panel(touch_vm):
    """A uinput touchscreen for /dev/fb0 is found first, read turned 90 under the tap, and removed on close."""
    r = _step(touch_vm, "uinput")
    assert r["chosen"] == r["node"] and r["node"].startswith("/dev/input/event")
    assert r["summary"] == "fbgfx uinput touchscreen: touchscreen, 0..1279 x 0..799"
    assert r["readers"] == 1
    assert r["events"] == [["down", 600, 1179, 0], ["up", 600, 1179, 0]]
    assert r["gone"]


def test_unplugged_device_ends_the_read(touch_vm):
    """Unbinding the tablet's driver while read() waits raises TouchError ENODEV at once."""
    import errno

    r = _step(touch_vm, "unplug")
    assert r["errno"] == errno.ENODEV, r
    assert "unplugged" in r["message"]
    assert r["seconds"] < 60
