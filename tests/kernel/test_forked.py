"""The guests' forked children (_forked.py) end as a new Python would: the exit status,
death by a signal, output in pipes, no descriptor of the parent's, and fbgfx restoring
the child's own display on SIGTERM. Host-side: no VM needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import _forked
import pytest

import fbgfx


@pytest.fixture(autouse=True)
def _no_child_left(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every child a test forks is killed at its end, also when the test fails."""
    children: list[_forked.Child] = []
    fork = _forked.fork

    def tracked(*args: Any, **kwargs: Any) -> _forked.Child:
        children.append(fork(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(_forked, "fork", tracked)
    yield
    for child in children:
        child.kill()
        child.wait(60)


def _hold() -> None:
    print("ready", flush=True)
    while True:
        time.sleep(0.05)


def test_exit_status_output_and_errors() -> None:
    info = _forked.cli("info", "-d", "virtual:64x48")
    out, err = info.communicate(timeout=60)
    assert info.returncode == 0 and "64x48" in out and err == ""

    usage = _forked.cli("frobnicate")
    _, err = usage.communicate(timeout=60)
    assert usage.returncode == 2 and err.startswith("fbgfx: ")

    message = _forked.fork(lambda: sys.exit("no screen"))
    assert message.communicate(timeout=60) == ("", "no screen\n") and message.returncode == 1

    crash = _forked.fork(lambda: 1 / 0)
    _, err = crash.communicate(timeout=60)
    assert crash.returncode == 1 and err.splitlines()[-1].startswith("ZeroDivisionError")


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)])
def test_signals_end_the_child_as_they_end_python(signum: int, status: int) -> None:
    child = _forked.fork(_hold)
    assert child.stdout.readline() == "ready\n"
    child.send_signal(signum)
    _, err = child.communicate(timeout=60)
    assert child.returncode == status
    assert ("KeyboardInterrupt" in err) == (signum == signal.SIGINT)


def test_communicate_times_out_and_leaves_the_child() -> None:
    child = _forked.fork(_hold)
    with pytest.raises(subprocess.TimeoutExpired):
        child.communicate(timeout=0.2)
    assert child.poll() is None
    child.kill()
    assert child.wait(60) == -signal.SIGKILL


def test_the_parents_descriptors_are_closed(tmp_path) -> None:
    with open(tmp_path / "mine", "w") as mine:
        child = _forked.fork(lambda: os.fstat(mine.fileno()))
        _, err = child.communicate(timeout=60)
    assert child.returncode == 1 and "Bad file descriptor" in err


def test_sigterm_ends_the_childs_display_and_leaves_the_parents(tmp_path) -> None:
    """A child showing a picture on a display the parent has open too dies of SIGTERM
    after fbgfx's restore; the parent's display is still registered and still draws."""
    import numpy as np

    from fbgfx import _restore

    spec = f"virtual:8x8:RGB565:file={tmp_path / 'fb.raw'}"

    def hold_a_screen() -> None:
        with fbgfx.open(spec) as fb, fb.screen() as screen:
            screen.present(np.full((8, 8, 3), (255, 0, 0), np.uint8))
            _hold()

    with fbgfx.open(spec) as parent, parent.screen() as screen:
        mine = _restore.registered()
        child = _forked.fork(hold_a_screen)
        assert child.stdout.readline() == "ready\n"
        child.terminate()
        assert child.wait(60) == -signal.SIGTERM
        assert _restore.registered() == mine
        screen.present(np.full((8, 8, 3), (0, 0, 255), np.uint8))
        assert parent.snapshot().getpixel((4, 4)) == (0, 0, 255)


def test_stdin_pipe_stderr_file_and_environment(tmp_path) -> None:
    """A conversation over stdin and stdout, stderr into a file readable while the child
    runs, and an environment of the child's own."""

    def talk() -> None:
        print("ready", file=sys.stderr, flush=True)
        print(os.environ["FBGFX_TALK"], flush=True)
        print(sys.stdin.readline().strip().upper(), flush=True)

    log = tmp_path / "stderr.txt"
    child = _forked.fork(talk, stdin=True, stderr=log, env={"FBGFX_TALK": "hello"})
    assert child.stdout.readline() == "hello\n"
    assert log.read_text() == "ready\n" and "FBGFX_TALK" not in os.environ
    assert child.stdin is not None and child.stderr is None
    child.stdin.write("again\n")
    assert child.communicate(timeout=60) == ("AGAIN\n", "") and child.returncode == 0


def test_the_parents_temporary_directory_outlives_the_child() -> None:
    """A child that ends normally runs its atexit functions, not the parent's finalizers:
    the parent's TemporaryDirectory is still there."""
    with tempfile.TemporaryDirectory() as tmp:
        child = _forked.fork(lambda: None)
        assert child.wait(60) == 0
        assert os.path.isdir(tmp)


def test_stdout_into_a_file_and_the_parents_stdin(tmp_path) -> None:
    """stdout=PATH: the child's output in that file (no pipe); stdin=None: the parent's own
    stdin, as a child started by a shell gets it (how _guest_runner.py starts guests)."""
    out = tmp_path / "stdout.txt"
    saved = os.dup(0)
    r, w = os.pipe()
    try:
        os.dup2(r, 0)  # this process's stdin, for the test: a pipe holding one line
        os.write(w, b"from the parent's stdin\n")
        child = _forked.fork(lambda: print(sys.stdin.readline().upper(), end=""), stdin=None, stdout=out)
    finally:
        os.dup2(saved, 0)
        for fd in (saved, r, w):
            os.close(fd)
    assert child.stdout is None and child.wait(60) == 0
    assert out.read_text() == "FROM THE PARENT'S STDIN\n"
