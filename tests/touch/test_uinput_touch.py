"""fbgfx.touch.uinput off a real kernel: its errors say what is missing; finger_for picks the touchscreen.

Touches through a real uinput device are checked under qemu (tests/kernel/test_touch_vm.py)."""

from __future__ import annotations

import errno
import os
import platform
import threading

import pytest
from support.refuse import refuse_open

import fbgfx
from fbgfx.touch import uinput as uinput_touch
from fbgfx.touch.uinput import UinputTouch, finger_for
from fbgfx.touch.virtual import VirtualTouch


def test_missing_uinput_says_modprobe(tmp_path):
    """No /dev/uinput: ENOENT naming the module to load."""
    with pytest.raises(fbgfx.TouchError, match=r"modprobe uinput") as info:
        UinputTouch((320, 240), path=str(tmp_path / "uinput"))
    assert info.value.errno == errno.ENOENT


def test_no_permission_says_root_or_udev(monkeypatch):
    """/dev/uinput not writable: EACCES naming root and a udev rule."""
    refuse_open(monkeypatch, "/dev/uinput", PermissionError, errno.EACCES, "Permission denied")
    with pytest.raises(fbgfx.TouchError, match=r"needs root, or a udev rule") as info:
        UinputTouch((320, 240))
    assert info.value.errno == errno.EACCES


@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"),
    reason="qemu-user answers the uinput ioctls it does not translate with ENOSYS, not the kernel's errno",
)
def test_not_a_uinput_device_is_refused_and_closed(monkeypatch):
    """A file that is not uinput (/dev/null) fails the first ioctl with the kernel's error; the
    descriptor it opened is closed (counted by this thread's calls: other threads of the process,
    such as the kernel boots beside the suite, open and close their own meanwhile)."""
    me = threading.get_ident()
    opened: list[int] = []
    closed: list[int] = []
    real_open, real_close = os.open, os.close

    def tracked_open(path, *args, **kwargs):
        fd = real_open(path, *args, **kwargs)
        if threading.get_ident() == me and path == "/dev/null":
            opened.append(fd)
        return fd

    def tracked_close(fd):
        if threading.get_ident() == me and fd in opened:
            closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(uinput_touch.os, "open", tracked_open)
    monkeypatch.setattr(uinput_touch.os, "close", tracked_close)
    with pytest.raises(fbgfx.TouchError, match="creating the touchscreen") as info:
        UinputTouch((320, 240), path="/dev/null")
    assert info.value.errno in (errno.ENOTTY, errno.EINVAL)
    assert len(opened) == 1
    assert closed == opened


def test_finger_for_picks_the_virtual_touchscreen(tmp_path):
    """A file-backed virtual display is touched through its own touchscreen; an in-memory one is refused."""
    with fbgfx.open(f"virtual:32x24:file={tmp_path / 'fb.raw'}") as fb:
        finger = finger_for(fb)
        assert isinstance(finger, VirtualTouch)
        finger.close()
    with fbgfx.open("virtual:32x24") as fb, pytest.raises(fbgfx.TouchError, match="file="):
        finger_for(fb)
