"""Console KD mode handling, with a fake VT (the real ioctls run in the kernel tests)."""

import errno
import os
import warnings

import pytest

from fbgfx import _restore, console
from fbgfx.console import KD_GRAPHICS, KD_TEXT, Console, VirtualTerminal, find_vt


class FakeVT:
    """A VT that keeps its KD mode and records every KDSETMODE."""

    def __init__(self, mode=KD_TEXT, get_error=None, set_error=None):
        self.mode = mode
        self.calls = []
        self.get_error, self.set_error = get_error, set_error
        self.closed = False

    def get_mode(self):
        if self.get_error:
            raise OSError(self.get_error, os.strerror(self.get_error))
        return self.mode

    def set_mode(self, mode):
        if self.set_error:
            raise OSError(self.set_error, os.strerror(self.set_error))
        self.calls.append(mode)
        self.mode = mode

    def close(self):
        self.closed = True


def test_graphics_then_restore_text():
    """The console goes to KD_GRAPHICS and back to the KD_TEXT it had."""
    vt = FakeVT()
    c = Console(vt)
    assert c.graphics() and c.active
    assert vt.mode == KD_GRAPHICS
    c.restore()
    c.restore()
    assert vt.calls == [KD_GRAPHICS, KD_TEXT]
    assert not c.active


def test_already_graphics_is_left_alone():
    """A VT already in graphics mode (a display server) is neither switched nor 'restored' to text."""
    vt = FakeVT(mode=KD_GRAPHICS)
    with Console(vt) as c:
        assert not c.active
    assert vt.calls == [] and vt.mode == KD_GRAPHICS


def test_not_a_vt_is_silent():
    """A terminal that is not a VT (ENOTTY) means no console handling, no warning, no error."""
    vt = FakeVT(get_error=errno.ENOTTY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Console(vt) as c:
            assert not c.graphics()
    assert vt.calls == []


def test_not_permitted_warns_and_carries_on():
    """EPERM on KDSETMODE (not our terminal, not root) warns once and draws anyway."""
    vt = FakeVT(set_error=errno.EPERM)
    with pytest.warns(RuntimeWarning, match="graphics mode"):
        assert not Console(vt).graphics()
    assert vt.mode == KD_TEXT


def test_no_vt_console_does_nothing():
    """Console(None) — ssh, a service, CI — does nothing and never fails."""
    with Console(None) as c:
        assert not c.graphics() and not c.active
    c.restore()


def test_registered_while_in_graphics_mode():
    """A console in graphics mode is restored by a signal or exit until it is restored itself."""
    vt = FakeVT()
    c = Console(vt)
    c.graphics()
    assert c in _restore.registered()
    _restore.restore_all()
    assert vt.mode == KD_TEXT and not c.active
    assert c not in _restore.registered()


def test_owned_tty_is_closed_on_restore():
    """A VT the Console opened itself is closed when it is done."""
    vt = FakeVT()
    with Console(vt, owns=True):
        pass
    assert vt.closed


def test_virtual_framebuffer_has_no_console(open_virtual):
    """A virtual framebuffer is not on a VT: its Console is inactive."""
    fb = open_virtual("16x8")
    assert Console.for_framebuffer(fb).tty is None


def test_find_vt_without_a_vt_returns_none(tmp_path):
    """With no VT anywhere (stdin a pipe, no active VT, no tty0) find_vt is None, not an error."""
    r, w = os.pipe()
    try:
        assert find_vt(stdin=r, active_path=str(tmp_path / "active"), fallback=str(tmp_path / "tty0")) is None
        (tmp_path / "active").write_text("tty999\n")  # names a VT that does not exist
        notvt = tmp_path / "plainfile"
        notvt.write_text("")
        assert find_vt(stdin=r, active_path=str(tmp_path / "active"), fallback=str(notvt)) is None
    finally:
        os.close(r)
        os.close(w)


def test_real_kd_ioctl_on_a_non_vt_fails_cleanly(tmp_path):
    """KDGETMODE through the native wrapper on a non-VT file raises OSError ENOTTY naming the path."""
    fd = os.open(os.devnull, os.O_RDWR)
    vt = VirtualTerminal(fd, os.devnull)
    with pytest.raises(OSError) as e:
        vt.get_mode()
    # ENOSYS: qemu-user (CI's ARM runs) answers the KD ioctls it does not translate so.
    assert e.value.errno in (errno.ENOTTY, errno.EINVAL, errno.ENOSYS)
    assert os.devnull in str(e.value)
    vt.close()
    vt.close()


@pytest.fixture
def kernel_fb_with_fake_vt(monkeypatch, open_virtual):
    """A virtual fb that Console.for_framebuffer takes for a kernel one on a VT (the fake)."""
    vt = FakeVT()
    monkeypatch.setattr(console, "_is_kernel_framebuffer", lambda fb: True)
    monkeypatch.setattr(console, "find_vt", lambda *a, **k: vt)
    yield open_virtual("32x16:RGB565"), vt


def test_screen_switches_console_while_open(kernel_fb_with_fake_vt):
    """A Screen on a VT-backed fb holds the console in graphics mode and gives text back on close."""
    fb, vt = kernel_fb_with_fake_vt
    with fb.screen() as screen:
        assert vt.mode == KD_GRAPHICS
        with screen.frame() as s:
            s.clear("red")
    assert vt.mode == KD_TEXT and vt.closed


def test_screen_console_false_leaves_console(kernel_fb_with_fake_vt):
    """console=False never touches the VT."""
    fb, vt = kernel_fb_with_fake_vt
    with fb.screen(console=False):
        pass
    assert vt.calls == []


def test_screen_console_restored_after_exception(kernel_fb_with_fake_vt):
    """An exception inside the Screen's with-block still gives the console back."""
    fb, vt = kernel_fb_with_fake_vt
    with pytest.raises(ZeroDivisionError):
        with fb.screen() as screen:
            with screen.frame():
                1 / 0
    assert vt.calls == [KD_GRAPHICS, KD_TEXT]


def test_screen_takes_a_tty_object(open_virtual):
    """fb.screen(console=tty) uses that VT even on a virtual framebuffer."""
    vt = FakeVT()
    with open_virtual("32x16").screen(console=vt):
        assert vt.mode == KD_GRAPHICS
    assert vt.mode == KD_TEXT
