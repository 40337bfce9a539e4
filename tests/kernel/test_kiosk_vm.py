"""fbgfx mirror and fbgfx idle on real drivers: bochs as the source, vfb as the destination,
qemu's virtio tablet driven through QMP; checked against the bytes of the devices, qemu's
screendump and the DRM atomic state in debugfs.

The guest (``kiosk_guest.py``) runs in the shared ``std`` boot (_boots.py): no boot of
its own. Its steps, checked here:

- ``fbgfx.mirror("/dev/fb0", vfb)`` and ``fbgfx.mirror("drm:card0", vfb)`` while another
  process holds a picture on bochs: vfb holds it averaged in 4x4 blocks (1280x800 to
  320x200, letterboxed), and the still looks are counted as skipped;
- ``fbgfx idle -d /dev/fb0``: the fake backlight (``$FBGFX_SYSFS``) dims, then powers
  off while the monitor goes black (FBIOBLANK: DPMS off, the CRTC inactive); a key of a
  uinput keyboard neither wakes it nor is grabbed; a tap wakes it, and a second reader of
  the tablet does not get that tap (EVIOCGRAB), but gets the next one; SIGTERM while dark
  leaves the backlight at its level and the picture shown;
- ``fbgfx idle --any-input``: the keyboard is watched, its key wakes the dark screen
  and a second reader of the keyboard does not get it;
- a mirror of ``drm:card0`` onto vfb while another process (DRM master) shows a
  picture, sets another mode and shows another, then exits: each followed;
- a mirror from vfb onto ``drm:card0`` looked at while vfb's programs (``fbset``,
  ``cat``) come and go: the picture of one that exited stays, the next one's new mode
  is followed, and bochs' monitor unplugged and back (its connector forced off and on)
  shows the source again;
- ``fbgfx.Idle`` on a ``drm:card0`` display: the CRTC turned off (``active=0``), the
  monitor black, and a tap lights both again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from _boots import KIOSK, PRELOAD, Guest, guest_fixture
from _vm import Qmp, answer_screendump, guest_step

pytestmark = pytest.mark.kernel

ORANGE_AREA = 400 * 200  # the held picture's orange rectangle, in pixels


def _answer(qmp: Qmp, cmd: Path) -> None:
    """Carry out the guest's cmd-N: a tap on the tablet (press, then release), or a screendump."""
    request = json.loads(cmd.read_text())
    if request["do"] == "tap":
        qmp.execute(
            "input-send-event",
            events=[
                {"type": "abs", "data": {"axis": "x", "value": request["x"]}},
                {"type": "abs", "data": {"axis": "y", "value": request["y"]}},
                {"type": "btn", "data": {"down": True, "button": "left"}},
            ],
        )
        time.sleep(0.2)
        qmp.execute("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])
    else:
        answer_screendump(qmp, cmd)


kiosk_vm = guest_fixture(
    Guest("kiosk_vm", config="std", script="kiosk_guest.py", handle=_answer, order=60, preload=PRELOAD + KIOSK)
)


def _step(guest: dict[str, Any], name: str) -> dict[str, Any]:
    result = guest_step(guest, name)
    if "skipped" in result:
        pytest.skip(result["skipped"])
    return result


@pytest.mark.parametrize("step", ["mirror_fbdev", "mirror_drm"])
def test_mirror_shows_bochs_on_vfb_scaled(kiosk_vm, step):
    """vfb shows bochs' held picture averaged in 4x4 blocks (RGB565: within 9 levels), letterboxed black;
    the still source's looks are skipped."""
    r = _step(kiosk_vm, step)
    assert r["distinct"] >= 3, r  # navy, orange, white (not a blank picture)
    assert r["diff"] <= 9, r
    assert r["letterbox"] == 0, r
    assert r["mirrored"] >= 1 and r["still_looks"] >= 3, r["report"]  # TCG: a few looks a second


def test_idle_blanks_bochs_and_swallows_the_waking_tap(kiosk_vm):
    """fbgfx idle -d /dev/fb0: dimmed, then dark (backlight off, monitor black, CRTC inactive);
    the waking tap lights it and reaches no second reader; the next tap does."""
    r = _step(kiosk_vm, "idle_fbdev")
    assert r["lit_before"]["orange"] == ORANGE_AREA, r
    assert r["went_dark"] and r["dim_level"] == round(255 * 0.2), r  # dimmed first, then powered off
    assert r["dark"]["max"] == 0, r  # the monitor is black
    assert r["dark_active"] == ["0"], r
    assert r["woke"], r
    assert r["woke_level"] == 200 or "dim" in r["states_at_woke_level"][1:], r  # the level it had at start
    assert r["lit"]["orange"] == ORANGE_AREA, r
    assert r["second_reader_while_dark"] == 0, r
    assert r["second_reader_while_lit"] > 0, r  # the reader works: the dark tap was swallowed


def test_idle_without_any_input_a_key_does_not_wake(kiosk_vm):
    """Without --any-input only the tablet is watched: a key while dark reaches a second
    reader of the keyboard (no grab) and the screen stays dark until the tap."""
    r = _step(kiosk_vm, "idle_fbdev")
    assert r["watching"] == r["tablet"], r
    assert r["keys_while_dark"] > 0, r
    assert r["dark_after_key"] == {"bl_power": 4, "state": ["dark"]}, r


def test_idle_any_input_a_key_wakes_and_is_swallowed(kiosk_vm):
    """fbgfx idle --any-input: the uinput keyboard is watched; its key wakes the dark
    screen and does not reach a second reader of the keyboard, which got a key before."""
    r = _step(kiosk_vm, "idle_any_input")
    assert r["keyboard"] in r["watching"].split(", "), r
    assert r["keys_before"] > 0, r  # the reader works
    assert r["went_dark"] and r["dark_bl_power"] == 4 and r["dark_active"] == ["0"], r
    assert r["keys_while_dark"] == 0, r  # the waking key: swallowed
    assert r["woke"] and r["states"][:3] == ["dim", "dark", "lit"], r
    assert r["rc"] == 0, r["stderr"]
    assert r["after_sigterm"] == {"bl_power": 0, "brightness": 200}, r


def test_mirror_follows_a_drm_program_mode_set_and_exit(kiosk_vm):
    """A mirror of drm:card0 onto vfb while another process, DRM master, shows a picture
    at 1280x800, then sets 640x480 and shows another, then exits: vfb holds each of what
    bochs' monitor showed (its screendump) averaged in blocks, letterboxed for 16:10 only,
    and after the exit the console the kernel put back (a blinking cursor aside)."""
    r = _step(kiosk_vm, "mirror_drm_follows")
    first, mode_set, after = r["first"], r["mode_set"], r["after_exit"]
    assert first["source"] == [1280, 800] and first["diff"] <= 9 and first["letterbox"] == 0, r
    assert first["distinct"] >= 3, r  # navy, orange, white
    assert mode_set["source"] == [640, 480] and mode_set["diff"] <= 9 and mode_set["letterbox"] == 0, r
    assert mode_set["distinct"] >= 2, r  # maroon, lime
    assert r["rc"] == 0, r
    assert after["source"] == [1280, 800] and after["off"] <= 0.002 and after["letterbox"] == 0, r


def test_mirror_follows_its_source_and_dest_replug(kiosk_vm):
    """A mirror from vfb onto bochs: 1:1 exact; the picture stays after its program exits;
    the next program's mode (twice the size) is followed as 2x2 averages; bochs' monitor
    unplugged while the source changes and plugged back shows the new picture."""
    r = _step(kiosk_vm, "mirror_follows")
    w, h, _ = r["dest"]
    assert r["vfb"][:3] == [w, h, 4 * w], r
    assert r["a_rc"] == r["b_rc"] == r["c_rc"] == 0, r
    assert r["a"]["size"] == [w, h] and 0 <= r["a"]["diff"] <= 1, r
    assert r["a_looks_after_exit"] == [False, False, False], r  # nothing new: looks skipped
    assert 0 <= r["a_kept"]["diff"] <= 1, r  # the exited program's picture stays
    assert r["b"]["size"] == [w, h] and 0 <= r["b"]["diff"] <= 1, r
    assert r["unplugged"] and r["looks_unplugged"][0], r  # the mirror went on: C written
    assert r["replugged"], r
    assert r["c"]["size"] == [w, h] and 0 <= r["c"]["diff"] <= 1, r


def test_idle_sigterm_while_dark_relights(kiosk_vm):
    """SIGTERM to fbgfx idle while dark: exit 0, the backlight powered at its level, the picture shown."""
    r = _step(kiosk_vm, "idle_fbdev")
    assert r["dark_again"], r
    assert r["rc"] == 0, r["stderr"]
    assert r["after_sigterm"] == {"bl_power": 0, "brightness": 200}
    assert r["after_sigterm_shown"]["orange"] == ORANGE_AREA, r


def test_idle_turns_a_drm_crtc_off_and_a_tap_on(kiosk_vm):
    """fbgfx.Idle on drm:card0: the CRTC inactive in debugfs and the monitor black; a tap
    turns the CRTC on and the picture shows again.

    The guest takes the states from ``on_change`` (a queue) and keeps the display lit
    after the wake: it once polled ``idle.state`` for "lit", which lasted 0.5 s after
    the tap (``dim_after``), and missed it under load."""
    r = _step(kiosk_vm, "idle_drm")
    assert r["lit_before"]["orange"] == ORANGE_AREA, r
    assert r["went_dark"] and r["to_dark"] == ["dim", "dark"], r
    assert r["dark"]["max"] == 0, r
    assert r["dark_active"] == ["0"], r
    assert r["woke"] and r["to_lit"] == ["lit"], r
    assert r["lit_active"] == ["1"], r
    assert r["lit"]["orange"] == ORANGE_AREA and r["still_lit"], r
