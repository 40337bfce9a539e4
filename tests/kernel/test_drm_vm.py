"""drm: on real kernels: DRM/KMS drivers under qemu, checked on qemu's own screendumps.

Two boots run ``drm_guest.py``, which asks the host for screendumps through files in
the shared directory and records what it found; the tests below check those records.

- ``drm``: ``drm_kms_helper.fbdev_emulation=0`` (no /dev/fb*) with three display
  devices at once, each with its own DRM driver: ``cirrus-vga`` (cirrus),
  ``bochs-display`` (bochs) and ``virtio-gpu-pci`` (virtio-gpu). Per driver: a scene
  and each page-flipped frame on the screendump exactly, one flip event per flip,
  ``set_mode`` changing the monitor's size, a second opener's clear error, ``grab``
  (read_scanout) equal to the screendump, SIGTERM to a holder restoring the CRTC.
- ``fbdev``: bochs with fbdev emulation (``drm_fbdev_overalloc=200``: two pages in
  /dev/fb0) and text on the console: the console's screendump after ``close()`` and
  after SIGTERM equals the one before; Screen on /dev/fb0 shows every frame although
  the driver's pan never reaches the monitor.

The boots are the ``drm`` and ``std`` configurations of _boots.CONFIGS. Set
FBGFX_VM_RESULTS=DIR to keep the logs and screendumps in DIR/drm/drm_vm and
DIR/std/fbdev_vm.
"""

from __future__ import annotations

import errno
import signal

import pytest
from _boots import Guest, guest_fixture
from _vm import assert_shown, guest_step

pytestmark = pytest.mark.kernel

DRIVERS = ["bochs-drm", "cirrus", "virtio_gpu"]

drm_vm = guest_fixture(Guest("drm_vm", config="drm", script="drm_guest.py", args=("drm",)))
# First in the std boot: it checks the text console as the boot left it.
fbdev_vm = guest_fixture(Guest("fbdev_vm", config="std", script="drm_guest.py", args=("fbdev",), order=5))


# -- the drm boot: three drivers without fbdev ----------------------------------------------------------


def test_drm_boot_has_three_cards_and_no_fb(drm_vm):
    """fbdev_emulation=0 leaves one card per display device and no /dev/fb0; open()
    with no argument finds a card."""
    assert sorted(drm_vm["cards"]) == DRIVERS, drm_vm["cards"]
    r = guest_step(drm_vm, "open_default")
    assert r["fb0"] is False
    assert r["card"] in drm_vm["cards"].values() and r["path"] == f"drm:{r['card']}"


@pytest.mark.parametrize("driver", DRIVERS)
def test_scene_on_screendump(drm_vm, driver):
    """A scene drawn in a Screen frame is on qemu's screendump exactly; close puts the
    CRTC back as it was (off)."""
    r = guest_step(drm_vm, f"scene:{driver}")
    assert (r["buffering"], r["format"]) == ("flip", "XRGB8888"), r
    assert_shown(r, f"{driver} scene")
    assert r["restored"], r


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_flipped_frame_on_screendump(drm_vm, driver):
    """Every page-flipped frame is on the screendump, with one flip event per flip."""
    r = guest_step(drm_vm, f"flips:{driver}")
    assert r["buffering"] == "flip"
    for i, frame in enumerate(r["frames"]):
        assert_shown(frame, f"{driver} frame {i}")
    assert r["flips"] == 3 and r["events"] == r["flips"], r


@pytest.mark.parametrize("driver", DRIVERS)
def test_copy_mode_shows_dirty_rectangles(drm_vm, driver):
    """Screen("copy") writes into the buffer on screen and sends DIRTYFB: the first frame
    and then a small change are on the screendump, with no page flip."""
    r = guest_step(drm_vm, f"copy:{driver}")
    assert r["buffering"] == "copy" and r["flips"] == 0
    assert_shown(r["first"], f"{driver} copy frame")
    assert_shown(r["second"], f"{driver} copy change")


@pytest.mark.parametrize("driver", DRIVERS)
def test_rgb565_where_the_plane_offers_it(drm_vm, driver):
    """format=RGB565 on a plane that lists RG16 shows a random picture to its bits."""
    r = guest_step(drm_vm, f"rgb565:{driver}")
    if "skipped" in r:
        pytest.skip(f"{driver}: {r['skipped']} (offers {r['offered']})")
    assert r["format"] == "RGB565" and r["buffering"] == "flip"
    assert_shown(r, f"{driver} RGB565")


@pytest.mark.parametrize("driver", DRIVERS)
def test_forked_child_close_and_old_views(drm_vm, driver):
    """A forked child closing the Screen and device leaves the parent flipping (master
    kept, its next frame on the screendump); after close, writing through an old
    fb.pixels view changes nothing on the monitor; the CRTC comes back as it was."""
    r = guest_step(drm_vm, f"fork:{driver}")
    assert_shown(r["after_child"], f"{driver} frame after the child closed")
    assert_shown(r["old_view"], f"{driver} monitor after writing an old view")
    assert r["restored"], r


@pytest.mark.parametrize("driver", DRIVERS)
def test_set_mode_changes_the_monitor(drm_vm, driver):
    """set_mode to another connector mode changes the monitor's size; a size the
    connector does not list is a ModeError naming its modes."""
    r = guest_step(drm_vm, f"mode:{driver}")
    assert r["to"] != r["from"]
    assert_shown(r, f"{driver} after set_mode {r['to']}")
    assert "its modes:" in r["refused"], r


@pytest.mark.parametrize("driver", DRIVERS)
def test_second_opener_grab_and_sigterm(drm_vm, driver):
    """While another process shows a picture: opening the card is a clear EBUSY error,
    read_scanout equals the screendump and the picture; SIGTERM to the holder ends it
    by the signal and puts the CRTC back."""
    r = guest_step(drm_vm, f"holder:{driver}")
    assert "another program owns this display" in r["second"], r
    assert r["second_errno"] == errno.EBUSY
    assert_shown(r["grab_vs_screendump"], f"{driver} grab vs screendump")
    assert_shown(r["grab_vs_drawn"], f"{driver} grab vs drawn")
    assert r["returncode"] == -signal.SIGTERM, r["holder_stderr"]
    assert r["restored"], (r["before"], r["after"])


# -- the fbdev boot: the console comes back ---------------------------------------------------------------


def test_close_gives_the_console_back(fbdev_vm):
    """drm: on a card whose console shows text: the picture is shown, the VT is in
    graphics mode meanwhile, and after close() the screendump equals the one before."""
    assert fbdev_vm["console_nonblank"]
    r = guest_step(fbdev_vm, "close_restores_console")
    assert_shown(r["shown"], "drm: picture over the console")
    assert (r["kd_while"], r["kd_after"]) == (1, 0)
    assert_shown(r, "console after close()")


def test_sigterm_gives_the_console_back(fbdev_vm):
    """SIGTERM to a process showing a drm: picture: the console's screendump after
    equals the one before."""
    r = guest_step(fbdev_vm, "sigterm_restores_console")
    assert_shown(r["held"], "the holder's picture")
    assert r["returncode"] == -signal.SIGTERM
    assert r["kd_after"] == 0
    assert_shown(r, "console after SIGTERM")


def test_sigkilled_holder_console_comes_back_with_the_next_opener(fbdev_vm):
    """A holder killed with SIGKILL leaves tty1 in graphics mode; the next fbgfx program
    finds the holder dead in its record and restores text mode (the console shows again)."""
    r = guest_step(fbdev_vm, "sigkill_then_next_opener")
    assert (r["kd_held"], r["kd_after_kill"], r["kd_while"]) == (1, 1, 1), r
    assert r["kd_after"] == 0, r
    assert_shown(r, "console after the next opener closed")


def test_grab_reads_the_console(fbdev_vm):
    """read_scanout reads the fbdev emulation's buffer on screen: the console's screendump."""
    r = guest_step(fbdev_vm, "grab_console")
    assert_shown(r, "grab of the console")


def test_fbdev_screen_shows_every_frame(fbdev_vm):
    """On bochs' fbdev emulation with two pages, a raw pan is accepted but not shown, so
    Screen copies: each of three frames is on the screendump."""
    r = guest_step(fbdev_vm, "fbdev_flips")
    assert r["id"] == "bochs-drmdrmfb" and r["virtual"][1] >= 2 * 800, r
    assert r["raw_pan_shown"] is False
    assert r["buffering"] == "copy"
    for i, frame in enumerate(r["frames"]):
        assert_shown(frame, f"fbdev frame {i}")
