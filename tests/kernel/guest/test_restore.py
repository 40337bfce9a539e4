"""After close, an exception or SIGTERM, the mode and the console are as they were."""

import os
import signal
import time

import pytest

import fbgfx

pytestmark = pytest.mark.kernel

KD_TEXT, KD_GRAPHICS = 0, 1

# A mode each setup can really switch to; DRM fbdev emulation cannot switch at all.
OTHER_MODE = {"vfb": dict(width=800, height=600, bpp=16), "cirrusfb": dict(width=800, height=600, bpp=16)}


def change_everything(kernel, fb):
    """Switch mode where the driver can, open a Screen (KD_GRAPHICS) and draw."""
    if kernel.setup in OTHER_MODE:
        fb.set_mode(**OTHER_MODE[kernel.setup])
        assert kernel.fbset()["geometry"][:2] == (800, 600)
    screen = fb.screen(console=True)
    with screen.frame() as s:
        s.clear("white")
    return screen


def assert_restored(kernel, original):
    assert kernel.fbset()["geometry"] == original["fbset"]["geometry"]
    assert kernel.var()["yoffset"] == original["var"]["yoffset"]
    assert kernel.kd_mode() == KD_TEXT


def test_fb_console_is_a_vtconsole(kernel):
    """The framebuffer console is bound (vtcon0 under vng), so KD mode matters here."""
    vt = kernel.fb_vtcon()
    assert vt is not None and (vt / "bind").read_text().strip() == "1"


def test_close_restores_mode_and_console(kernel, original, text_console):
    """Screen puts the VT in KD_GRAPHICS; close() brings back KD_TEXT and the boot mode."""
    fb = fbgfx.open(kernel.device)
    screen = change_everything(kernel, fb)
    assert kernel.kd_mode() == KD_GRAPHICS
    screen.close()
    fb.close()
    fb.close()  # safe twice
    assert_restored(kernel, original)


def test_exception_restores_mode_and_console(kernel, original, text_console):
    """An exception out of the with-blocks restores mode and console on the way out."""
    with pytest.raises(RuntimeError, match="drawing failed"):
        with fbgfx.open(kernel.device) as fb:
            with change_everything(kernel, fb):
                assert kernel.kd_mode() == KD_GRAPHICS
                raise RuntimeError("drawing failed")
    assert_restored(kernel, original)


def test_sigterm_restores_mode_and_console(kernel, original, text_console):
    """A process killed by SIGTERM mid-drawing still restores mode and console."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: change everything, say so, then wait to be killed
        status = 1
        try:
            os.close(ready_r)
            fb = fbgfx.open(kernel.device)
            change_everything(kernel, fb)
            os.write(ready_w, b"ready")
            # Short sleeps: a signal landing just before a long sleep's system call
            # would only be handled (by Python, in the main thread) after it.
            for _ in range(600):
                time.sleep(0.05)
        finally:
            os._exit(status)
    os.close(ready_w)
    try:
        assert os.read(ready_r, 5) == b"ready", "the child failed before it was ready"
        assert kernel.kd_mode() == KD_GRAPHICS
        if kernel.setup in OTHER_MODE:
            assert kernel.fbset()["geometry"][:2] == (800, 600)
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail("the child was still alive 20 s after SIGTERM")
            time.sleep(0.05)
    finally:
        os.close(ready_r)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    assert_restored(kernel, original)
