"""Layers on real kernels, as guests of the ``drm`` boot: ``layers_vm`` on vkms (atomic
KMS with 8 overlay planes, loaded after the boot's other guests ran) and
``layers_bochs_vm`` on bochs (one primary plane: software composition).

The guest (layers_guest.py) reads the kernel's atomic state from debugfs and each plane's
framebuffer through GETFB2 + MAP_DUMB, without fbgfx's layer code, and asks for bochs'
screendump. Set FBGFX_VM_RESULTS=DIR to keep the logs in DIR/drm/layers_vm and
DIR/drm/layers_bochs_vm.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from _boots import PRELOAD, VIDEO, Guest, guest_fixture, vkms_missing, vkms_module
from _vm import guest_step

pytestmark = pytest.mark.kernel


def _hand_over_vkms(gdir: Path) -> None:
    """A copy of vkms.ko in the guest's directory, for the guest's prepare line."""
    if vkms_module().exists():
        shutil.copy(vkms_module(), gdir / "vkms.ko")


layers_vm = guest_fixture(
    Guest(
        "layers_vm",
        config="drm",
        script="layers_guest.py",
        args=("vkms",),
        preload=PRELOAD + VIDEO,
        before=_hand_over_vkms,
        missing=vkms_missing,
        # after the drm boot's other guests (which count three cards), vkms as a fourth
        # card, loaded from the copy in the guest's directory (the guest's /var may not
        # show the host's cache)
        order=60,
        prepare=(
            "modprobe -q drm_kms_helper; modprobe -q drm_shmem_helper",
            "insmod {gdir}/vkms.ko enable_overlay=1 enable_writeback=1 enable_cursor=1 >>{gdir}/insmod.txt 2>&1",
            "for i in $(seq 100); do grep -qs DRIVER=vkms /sys/class/drm/card*/device/uevent && break; sleep 0.1; done",
            "mount -t debugfs none /sys/kernel/debug 2>/dev/null || true",
        ),
    )
)

layers_bochs_vm = guest_fixture(
    Guest("layers_bochs_vm", config="drm", script="layers_guest.py", args=("bochs",), preload=PRELOAD + VIDEO)
)


def test_vkms_is_atomic_and_lists_its_planes(layers_vm):
    """fb.drm.atomic on vkms; fb.planes lists a primary, 8 overlays (with AR24) and a cursor; info prints them."""
    r = guest_step(layers_vm, "vkms_planes")
    assert r["atomic"] is True
    assert r["types"].count("primary") == 1 and r["types"].count("overlay") == 8 and "cursor" in r["types"], r
    assert "AR24" in r["formats"]["overlay"] and "XR24" in r["formats"]["primary"]
    info = guest_step(layers_vm, "vkms_info")
    assert info["rc"] == 0 and " overlay (" in info["stdout"] and " primary (" in info["stdout"], info


def test_vkms_scene_on_planes_within_one_level(layers_vm):
    """An opaque and an alpha layer go on overlay planes at their boxes; the planes as
    the kernel shows them, and fbgfx grab, equal the expected picture within 1 level."""
    r = guest_step(layers_vm, "vkms_scene")
    assert r["hardware"] == [True, True], r["reasons"]
    positions = sorted(tuple(p) for p in r["positions"].values())
    assert [300, 200, 100, 100] in [list(p) for p in positions] and [400, 300, 300, 200] in [list(p) for p in positions]
    assert r["engine"]["max"] <= 1 and not r["engine"]["blank"], r["engine"]
    assert r["grab"]["max"] <= 1, r["grab"]


def test_vkms_layer_updates_touch_their_plane_only(layers_vm):
    """100 updates of one layer leave the other planes' framebuffer ids unchanged; a
    Screen frame flips the primary plane alone."""
    r = guest_step(layers_vm, "vkms_scene")
    assert r["others_changed"] == 0, r
    assert r["alpha_fbs"] == 2, r  # its two buffers, flipped in turn
    assert r["screen_flip_changed"] == [r["primary"]], r


def test_vkms_move_hide_show_close(layers_vm):
    """move() moves the plane, hide() turns it off, show() on again; close() and fb.close()
    leave the planes as they were before open."""
    r = guest_step(layers_vm, "vkms_scene")
    assert r["moved_pos"] == [400, 300, 10, 10], r
    assert r["hidden_fb"] == 0 and r["shown_fb"] != 0 and r["closed_fb"] == 0, r
    assert r["after_close"] == r["before_open"], r


def test_vkms_more_layers_than_planes_fall_back(layers_vm):
    """Eleven layers on 8 overlay planes: the extra ones are composed by fbgfx, with the
    reason, and the picture is right."""
    r = guest_step(layers_vm, "vkms_more_layers_than_planes")
    assert r["hardware"][:8] == [True] * 8 and r["hardware"][8:] == [False] * 3, r
    assert all("no free overlay plane" in why for why in r["reasons"][8:]), r["reasons"]
    assert r["grab"]["max"] <= 1, r["grab"]


def test_vkms_sigterm_turns_the_planes_off(layers_vm):
    """SIGTERM to a program showing layers: its planes are off and the CRTC as before
    (the primary plane back on the framebuffer it showed before the program)."""
    r = guest_step(layers_vm, "vkms_sigterm")
    assert r["ready"] == "ready" and r["during"] == 3, r
    assert r["after"] == r["before"], r


def test_vkms_legacy_kms_composes_in_software(layers_vm):
    """With FBGFX_DRM_ATOMIC=0 the layers are composed by fbgfx into one plane, same picture."""
    r = guest_step(layers_vm, "vkms_legacy")
    assert r["atomic"] is False and r["hardware"] == [False, False] and "legacy" in r["reason"], r
    assert r["planes_on"] == 1
    assert r["grab"]["max"] <= 1, r["grab"]


def test_vkms_video_on_a_plane(layers_vm):
    """layer.play() shows a video on a plane without flipping the Screen's plane; 6.1's
    vkms lists no YUV format, so the frames go in RGB, saying so."""
    r = guest_step(layers_vm, "vkms_video")
    assert r["hardware"] is True and r["shown"] >= 5, r
    assert r["yuv"] == [None, "the plane lists no NV12 or YUV420 (YU12)"], r
    assert r["primary_same"] and r["screen_flips"] == 0, r


def test_vkms_play_box_says_the_video_is_on_a_plane(layers_vm):
    """fbgfx play --box on vkms says the video is on an overlay plane."""
    r = guest_step(layers_vm, "vkms_play_box")
    assert r["rc"] == 0 and len(r["lines"]) == 1, r
    assert re.fullmatch(r"fbgfx: play: video on plane \d+ \(overlay\)", r["lines"][0]), r


def test_bochs_play_box_says_the_video_is_composed(layers_bochs_vm):
    """fbgfx play --box on bochs (one plane) says the video is composed by fbgfx, and why."""
    r = guest_step(layers_bochs_vm, "bochs_play_box")
    assert r["rc"] == 0 and r["lines"] == ["fbgfx: play: video composed by fbgfx (no free overlay plane)"], r


def test_bochs_composes_in_software_with_the_same_pixels(layers_bochs_vm):
    """bochs has one plane: the layers are composed by fbgfx; qemu's screendump and grab
    equal the picture within 1 level."""
    r = guest_step(layers_bochs_vm, "bochs_scene")
    assert r["atomic"] is True and r["hardware"] == [False, False], r
    assert "no free overlay plane" in r["reason"], r
    assert r["screendump"]["max"] <= 1 and not r["screendump"]["blank"], r["screendump"]
    assert r["grab"]["max"] <= 1, r["grab"]


def test_vkms_benchmark_ran(layers_vm):
    """benchmarks/bench_layers.py runs on vkms: the video on a plane with atomic KMS,
    composed by fbgfx without (its figures, printed with -s, are TCG's, not a speed)."""
    r = guest_step(layers_vm, "vkms_bench")
    assert r["planes"]["layers"]["video_on_plane"] is True, r
    assert r["software"]["layers"]["video_on_plane"] is False, r
    print("vkms bench:", r, "boot seconds:", round(layers_vm["_seconds"]))
