"""Several monitors and hotplug on real kernels: one boot, checked on qemu's screendumps.

The ``monitors`` boot of _boots.CONFIGS (``drm_kms_helper.fbdev_emulation=0``): virtio-gpu with two outputs
(``max_outputs=2``: two connectors, each head read by QMP ``screendump`` with ``head``)
and bochs-display, a second card. ``monitors_guest.py`` draws,
unplugs and plugs monitors (forcing a connector's sysfs ``status`` and sending the
card's ``change`` uevent, as a real hotplug does) and records what it found; the tests
below check those records. Set FBGFX_VM_RESULTS=DIR to keep the logs and screendumps
in DIR/monitors/monitors_vm.
"""

from __future__ import annotations

import errno

import pytest
from _boots import PRELOAD, Guest, guest_fixture
from _vm import assert_shown, guest_step

pytestmark = pytest.mark.kernel

monitors_vm = guest_fixture(
    Guest("monitors_vm", config="monitors", script="monitors_guest.py", preload=PRELOAD + ("fbgfx.kiosk.mirror",))
)


def test_displays_lists_both_cards_connectors(monitors_vm):
    """fbgfx.displays() lists the virtio card's two connectors and bochs' one, with specs,
    modes and the monitor's EDID name; info --all prints the specs."""
    assert sorted(monitors_vm["cards"]) == ["bochs-drm", "virtio_gpu"], monitors_vm["cards"]
    card, (v1, v2) = monitors_vm["virtio"]["card"], monitors_vm["virtio"]["connectors"]
    r = guest_step(monitors_vm, "displays")
    found = {(d["card"], d["connector"]): d for d in r["displays"]}
    second = found[(f"/dev/dri/{card}", v2)]
    assert second["connected"] and second["spec"] == f"drm:{card}:connector={v2}", second
    assert "1024x768@60" in second["modes"], second
    first = found[(f"/dev/dri/{card}", v1)]
    assert first["preferred"] and first["monitor"] == "QEMU Monitor", first
    assert len([c for c, _ in found if c == monitors_vm["cards"]["bochs-drm"]]) == 1, sorted(found)
    assert r["info_rc"] == 0 and f"drm:{card}:connector={v2}  (connected" in r["info_all"], r


def test_each_head_shows_its_own_picture(monitors_vm):
    """Virtual-1 and Virtual-2 open in one program, each on its CRTC: each head's
    screendump is its own picture; a second open of Virtual-1 is a clear EBUSY."""
    r = guest_step(monitors_vm, "two_heads")
    assert r["crtcs"][0] != r["crtcs"][1]
    assert_shown(r["head0"], "head 0")
    assert_shown(r["head1"], "head 1")
    v1 = monitors_vm["virtio"]["connectors"][0]
    assert f"{v1} is already open in this program" in r["again"] and r["again_errno"] == errno.EBUSY, r


def test_flips_on_one_head_leave_the_other(monitors_vm):
    """Three page flips on head 0 are each on its screendump; head 1 keeps its picture."""
    r = guest_step(monitors_vm, "two_heads")
    for i, frame in enumerate(r["frames"]):
        assert_shown(frame, f"head 0 frame {i}")
    assert_shown(r["head1_after"], "head 1 after head 0's flips")
    assert r["flips"][0] >= 3


def test_mirror_shows_one_picture_on_both_heads(monitors_vm):
    """connector=Virtual-1,Virtual-2:mode=1024x768: the same picture on both heads; a
    mode they do not share is a ModeError listing the shared ones."""
    r = guest_step(monitors_vm, "mirror")
    assert r["size"] == [1024, 768] and r["connectors"] == monitors_vm["virtio"]["connectors"]
    assert_shown(r["head0"], "mirror head 0")
    assert_shown(r["head1"], "mirror head 1")
    assert "all offer; they share: " in r["refused"] and "1024x768" in r["refused"], r


def test_unplug_and_replug_while_drawing(monitors_vm):
    """A monitor unplugged and plugged back while a thread draws: fb.drm.connected
    follows both, drawing never raises and goes on, the picture is back after."""
    r = guest_step(monitors_vm, "replug")
    assert r["drawing"] and r["drawing_unplugged"] and r["drawing_replugged"], r
    assert r["seconds_to_disconnected"] is not None and r["seconds_to_connected"] is not None, r
    assert r["errors"] == [], r["errors"]
    assert [e[0] for e in r["events"]] == ["disconnected", "connected"], r["events"]
    assert_shown(r["back"], "the picture after replug")


def test_a_monitor_plugged_after_start_opens(monitors_vm):
    """Virtual-2 dark at start cannot be opened; once plugged it opens and shows."""
    r = guest_step(monitors_vm, "plug_after_start")
    assert "has no display connected" in r["before"], r
    assert_shown(r["shown"], "the late monitor")
    assert r["first_open"]


def test_default_open_takes_the_first_connected_over_both_cards(monitors_vm):
    """With card0's monitors unplugged, fbgfx.open() shows on card1."""
    r = guest_step(monitors_vm, "two_card_default")
    assert r["card"] == "/dev/dri/card1" and r["path"] == "drm:/dev/dri/card1", r
    assert_shown(r["shown"], "the default display on card1")


def test_kiosk_mirror_keeps_an_exited_programs_picture(monitors_vm):
    """fbgfx mirror (issue 32) of bochs-display onto virtio's first head, both 1024x768
    (an exact copy): nothing to show before the first program; each program's picture is
    shown; after it exits (its CRTC off) the looks are skipped and its picture stays; the
    next program's picture is shown."""
    r = guest_step(monitors_vm, "kiosk_mirror_source_exit")
    assert r["before"] is False, r
    for name in ("first", "second"):
        assert r[f"{name}_step"] is True, r
        assert_shown(r[name], f"the {name} program's picture")
        assert r[f"{name}_rc"] == 0, r
        assert r[f"{name}_exit_steps"] == [False, False, False], r
        assert_shown(r[f"{name}_kept"], f"the {name} program's picture after it exited")
