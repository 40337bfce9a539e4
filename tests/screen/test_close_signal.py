"""close() from a signal handler in the middle of a present() on a framebuffer file.

A signal is raised from inside the device's critical section (while the pan's new state
is being written, while a page is being converted), deterministically, by wrapping the
device's methods; a second test fires a timer at random points over many frames. Either
way the close must wait for the operation's end and put the device back as it was.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import fbgfx
from fbgfx import virtual
from fbgfx.errors import FramebufferError
from fbgfx.virtual import _file as _virtual_file

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}
ORIGINAL = (32, 24, 32, 24, 0, 0)  # xres, yres, xres_virtual, yres_virtual, xoffset, yoffset


def geometry(path) -> tuple[int, ...]:
    with fbgfx.open(f"virtual:32x24:RGB565:file={path}", readonly=True) as fb:
        var = fb.var
        return (var.xres, var.yres, var.xres_virtual, var.yres_virtual, var.xoffset, var.yoffset)


@pytest.fixture
def usr1():
    """SIGUSR1's handler is put back after the test."""
    before = signal.getsignal(signal.SIGUSR1)
    yield
    signal.signal(signal.SIGUSR1, before)


@pytest.mark.parametrize(
    "where", [(_virtual_file.FramebufferFile, "write_state"), (virtual.VirtualDevice, "_sync")], ids=["write", "sync"]
)
@pytest.mark.parametrize("closing", ["fb", "screen-then-fb"])
def test_close_from_handler_inside_present_waits_and_restores(tmp_path, monkeypatch, usr1, where, closing):
    """A handler closing the Screen and device in the middle of present()'s pan: no EBADF, state as before."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=8192")
    screen = fb.screen(buffering="flip", console=False)
    screen.present(np.zeros((24, 32, 3), np.uint8))
    assert geometry(path)[3] == 48  # grown to two pages

    def handler(signum, frame):
        if closing == "screen-then-fb":
            screen.close()
        fb.close()

    signal.signal(signal.SIGUSR1, handler)
    cls, name = where
    original = getattr(cls, name)
    fired = []

    def wrapped(self, *args, **kwargs):
        if not fired:
            fired.append(True)
            signal.raise_signal(signal.SIGUSR1)  # the handler runs before this returns
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapped)
    screen.present(np.full((24, 32, 3), 255, np.uint8))
    assert fired and fb.closed and screen.closed
    assert geometry(path) == ORIGINAL
    with pytest.raises(FramebufferError, match="closed"):
        screen.present(np.zeros((24, 32, 3), np.uint8))


def test_close_from_handler_inside_page_write(tmp_path, monkeypatch, usr1):
    """A handler closing the device while a frame is converted into the page: the frame ends, then the close runs."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=8192")
    screen = fb.screen(buffering="flip", console=False)
    signal.signal(signal.SIGUSR1, lambda signum, frame: fb.close())
    from fbgfx._screen import transfer as _transfer

    original = _transfer._Plain.convert  # RGB565 unturned
    fired = []

    def wrapped(self, rgb, page):
        if not fired:
            fired.append(True)
            signal.raise_signal(signal.SIGUSR1)
        return original(self, rgb, page)

    monkeypatch.setattr(_transfer._Plain, "convert", wrapped)
    screen.present(np.full((24, 32, 3), 255, np.uint8))
    assert fired and fb.closed
    assert geometry(path) == ORIGINAL


STRESS = textwrap.dedent(
    r"""
    import json, os, signal, sys
    import numpy as np
    import fbgfx
    from fbgfx.errors import FramebufferError

    path, runs = sys.argv[1], int(sys.argv[2])
    results = []
    frames = [np.full((24, 32, 3), v, np.uint8) for v in (0, 255)]
    for run in range(runs):
        fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=8192")
        screen = fb.screen(buffering="flip", console=False)
        signal.signal(signal.SIGALRM, lambda signum, frame: (screen.close(), fb.close()))
        # a timer at a different point of the loop each run
        signal.setitimer(signal.ITIMER_REAL, 0.002 + 0.0013 * run)
        n, error = 0, None
        try:
            while not fb.closed and n < 100000:
                screen.present(frames[n % 2])
                n += 1
        except FramebufferError as e:
            if "closed" not in str(e):
                error = repr(e)
        except Exception as e:
            error = repr(e)
        signal.setitimer(signal.ITIMER_REAL, 0)
        with fbgfx.open(f"virtual:32x24:RGB565:file={path}", readonly=True) as after:
            v = after.var
            results.append([v.yres_virtual, v.yoffset, error])
    print(json.dumps(results))
    """
)


def test_timer_closing_at_random_points_of_presents(tmp_path):
    """20 runs of a timer closing Screen and device at a random point of a present() loop: no error, state as before."""
    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "fb.raw"), "20"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert results == [[24, 0, None]] * 20, results


SIGTERM_CHILD = textwrap.dedent(
    r"""
    import os, signal, sys
    import numpy as np
    import fbgfx
    from fbgfx.virtual import _file as _virtual_file

    path = sys.argv[1]
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=8192")
    screen = fb.screen(buffering="flip", console=False)
    screen.present(np.zeros((24, 32, 3), np.uint8))
    original = _virtual_file.FramebufferFile.write_state

    def wrapped(self, *args):
        signal.raise_signal(signal.SIGTERM)  # fbgfx's handler: restore, then die of it
        return original(self, *args)

    _virtual_file.FramebufferFile.write_state = wrapped
    screen.present(np.full((24, 32, 3), 255, np.uint8))
    print("survived")
    """
)


def test_sigterm_inside_present_restores_then_dies(tmp_path):
    """SIGTERM landing inside present()'s pan: fbgfx restores after the pan, and the process dies of SIGTERM."""
    script = tmp_path / "child.py"
    script.write_text(SIGTERM_CHILD)
    path = tmp_path / "fb.raw"
    out = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True, env=ENV, timeout=120)
    assert out.returncode == -signal.SIGTERM, out.stderr
    assert "survived" not in out.stdout
    assert geometry(path) == ORIGINAL


def test_close_from_handler_while_the_frame_is_counted(tmp_path, monkeypatch):
    """A close from a signal handler arriving while present() counts its frame (the frame
    counter's lock held) closes Screen and device after the count instead of hanging."""
    path = tmp_path / "fb.raw"
    fb = fbgfx.open(f"virtual:32x24:RGB565:file={path}:memory=8192")
    screen = fb.screen(buffering="flip", console=False)
    counter = screen._frames
    assert counter is not None
    count_open = counter._open
    fired: list[bool] = []

    def handler_arrives() -> int:
        if not fired:
            fired.append(True)
            screen.close()  # what the application's handler does, arriving here
            fb.close()
        return count_open()

    monkeypatch.setattr(counter, "_open", handler_arrives)
    errors: list[BaseException] = []

    def present() -> None:  # on a thread of its own: a hang fails the test instead of stopping it
        try:
            screen.present(np.full((24, 32, 3), 255, np.uint8))
        except BaseException as e:
            errors.append(e)

    worker = threading.Thread(target=present, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "present() hung in the close"
    assert errors == [] and fired and fb.closed and screen.closed
    assert geometry(path) == ORIGINAL
