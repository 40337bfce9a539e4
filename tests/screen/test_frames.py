"""Frames shown, counted for waiters in any process: fbgfx._screen.frames and the Screen's counting."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from support import ROOT

import fbgfx
from fbgfx._screen import frames as _frames
from fbgfx._screen.frames import FrameCounter


def test_screen_counts_flips_presents_and_frames(tmp_path):
    """A Screen counts flip(), present() and frame() blocks, not discard() nor a frame() that raised."""
    spec = f"virtual:32x24:RGB565:file={tmp_path / 'fb.raw'}"
    counter = FrameCounter(str(tmp_path / "fb.raw.frames"))
    assert counter.read() == 0  # made by the waiter
    with fbgfx.open(spec) as fb, fb.screen() as screen:
        screen.flip()
        with screen.frame() as s:
            s.clear("red")
        screen.present(fb.snapshot())
        screen.present(fb.snapshot().resize((8, 8)))  # a smaller picture: drawn in part
        screen.discard()
        try:
            with screen.frame() as s:
                raise KeyError
        except KeyError:
            pass
        assert counter.read() == 4
    assert (tmp_path / "fb.raw.frames").stat().st_size == 8


def test_no_counter_without_a_shared_display(tmp_path, monkeypatch):
    """In-memory virtual displays and read-only opens keep no counter; $FBGFX_FRAMES names one for other displays."""
    monkeypatch.delenv("FBGFX_FRAMES", raising=False)
    with fbgfx.open("virtual:8x8") as fb:
        assert _frames.counter_for(fb) is None
        monkeypatch.setenv("FBGFX_FRAMES", str(tmp_path / "counter"))
        with fb.screen() as screen:
            screen.flip()
        assert FrameCounter(str(tmp_path / "counter")).read() == 1
    spec = f"virtual:8x8:file={tmp_path / 'fb.raw'}"
    fbgfx.open(spec).close()
    with fbgfx.open(spec, readonly=True) as fb:
        assert _frames.counter_for(fb) is None


def test_a_screen_makes_no_counter(tmp_path):
    """Without a waiter's counter a Screen on a file-backed display counts nothing and adds no file."""
    with fbgfx.open(f"virtual:8x8:file={tmp_path / 'fb.raw'}") as fb, fb.screen() as screen:
        screen.flip()
        screen.flip()
    assert sorted(os.listdir(tmp_path)) == ["fb.raw", "fb.raw.state.json"]


def test_a_file_that_is_not_a_counter_is_left_alone(tmp_path):
    """Something else at PATH.frames (here 3 bytes) is neither counted into nor changed; drawing goes on."""
    (tmp_path / "fb.raw.frames").write_bytes(b"abc")
    with fbgfx.open(f"virtual:8x8:file={tmp_path / 'fb.raw'}") as fb, fb.screen() as screen:
        screen.flip()
    assert (tmp_path / "fb.raw.frames").read_bytes() == b"abc"


def test_wait_beyond(tmp_path):
    """wait_beyond returns the count once it passes the one given, and None at the timeout."""
    counter = FrameCounter(str(tmp_path / "c"))
    assert counter.wait_beyond(0, 0.01) is None
    counter.bump()
    assert counter.wait_beyond(0, 0) == 1
    done = threading.Event()

    def later() -> None:
        done.wait()
        counter.bump()

    t = threading.Thread(target=later)
    t.start()
    done.set()
    assert counter.wait_beyond(1, 30) == 2
    t.join()


def test_threads_and_processes_count_every_frame(tmp_path):
    """4 threads and 2 child processes flipping at once on one display lose no count (the stress test)."""
    spec = f"virtual:16x16:file={tmp_path / 'fb.raw'}"
    fbgfx.open(spec).close()
    FrameCounter(str(tmp_path / "fb.raw.frames")).read()  # a waiter's counter
    child = (
        "import sys, fbgfx\n"
        "with fbgfx.open(sys.argv[1]) as fb, fb.screen() as screen:\n"
        "    for _ in range(300):\n"
        "        screen.flip()\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    children = [subprocess.Popen([sys.executable, "-c", child, spec], env=env) for _ in range(2)]

    def flips() -> None:
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            for _ in range(300):
                screen.flip()

    threads = [threading.Thread(target=flips) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [c.wait(120) for c in children] == [0, 0]
    assert FrameCounter(str(tmp_path / "fb.raw.frames")).read() == 6 * 300


def test_a_forked_child_counts_into_the_same_file(tmp_path):
    """A counter used before fork() counts the child's frames and the parent's into the one file."""
    counter = FrameCounter(str(tmp_path / "c"))
    counter.bump()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            for _ in range(100):
                counter.bump()
        finally:
            os._exit(0)
    for _ in range(100):
        counter.bump()
    os.waitpid(pid, 0)
    assert counter.read() == 201
