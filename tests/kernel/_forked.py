"""Guest side: run a program in a child forked from this guest instead of a new Python.

Under TCG a new interpreter costs about 10 s of the VM's CPU before its first line, and a
minute when the host is busy: Python's start, site's ``.pth`` files, then numpy, Pillow,
PyAV and fbgfx imported again. A child forked from the guest, which has imported them
already, starts at once and is still another process, which is what the guests test: its
own pid, signals and exit status; only its standard streams are inherited (as
``subprocess`` gives, every other descriptor is closed); fbgfx's own state is what any
forked child has (the parent's devices are not its to restore, see ``fbgfx._restore``).
How ``python -m fbgfx`` starts is the host's tests' business; the guests test what it
does on the device.

``fork(fn, *args)`` runs ``fn(*args)`` there; its return value is the exit status, as
``SystemExit`` and ``KeyboardInterrupt`` (death by SIGINT) give it in a real interpreter,
after the ``atexit`` functions. ``cli(*argv)`` is ``python -m fbgfx ARGV``,
``script(path, *argv)`` is ``python PATH ARGV``. Each takes Popen's choices the guests
need: ``stdin=True`` (a pipe to the child; ``None``: this process's own stdin; else
/dev/null), ``stdout=PATH`` and ``stderr=PATH`` (files, read while the child runs, else
pipes), ``env`` (added to the child's environment) and ``new_session``.
"""

from __future__ import annotations

import atexit
import os
import runpy
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Callable


class Child:
    """A forked child with the parts of :class:`subprocess.Popen` the guests use: ``pid``,
    ``stdout`` and ``stderr`` (text pipes), ``returncode`` (``-N`` after signal N),
    ``poll``, ``wait``, ``communicate``, ``send_signal``, ``terminate``, ``kill``; ``stdin``
    (a text pipe) with ``stdin=True``, no ``stdout`` or ``stderr`` pipe with ``stdout=PATH``
    or ``stderr=PATH``."""

    def __init__(self, pid: int, stdin: IO[str] | None, stdout: IO[str] | None, stderr: IO[str] | None) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"child {self.pid}", timeout or 0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Everything the child writes until it exits; TimeoutExpired if it does not
        within ``timeout`` seconds (it is left running, as Popen leaves it)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[IO[str], list[str]] = {stream: [] for stream in (self.stdout, self.stderr) if stream}
        with selectors.DefaultSelector() as sel:
            for stream in chunks:
                if not stream.closed:
                    sel.register(stream, selectors.EVENT_READ)
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(f"child {self.pid}", timeout or 0)
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fileobj].append(data.decode(errors="replace"))  # type: ignore[index]
                    else:
                        sel.unregister(key.fileobj)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        out = chunks.get(self.stdout, []) if self.stdout else []
        return "".join(out), "".join(chunks.get(self.stderr, []) if self.stderr else [])

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def fork(
    fn: Callable[..., Any],
    *args: Any,
    stdin: bool | None = False,
    stdout: Path | None = None,
    stderr: Path | None = None,
    env: Mapping[str, str] | None = None,
    new_session: bool = False,
) -> Child:
    """Run ``fn(*args)`` in a forked child (see the module for the options)."""
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if others:  # their locks would stay taken in the child
        raise RuntimeError(f"fork with other threads running: {others}")
    if stdin is None:  # this process's own, as a child started by a shell gets it
        in_r, in_w = os.dup(0), -1
    else:
        in_r, in_w = os.pipe() if stdin else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = (-1, _create(stdout)) if stdout else os.pipe()
    err_r, err_w = (-1, _create(stderr)) if stderr else os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _run_child(fn, args, (in_r, out_w, err_w), env or {}, new_session)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    return Child(
        pid,
        open(in_w, "w", buffering=1, encoding="utf-8") if stdin else None,
        open(out_r, encoding="utf-8", errors="replace") if out_r >= 0 else None,
        open(err_r, encoding="utf-8", errors="replace") if err_r >= 0 else None,
    )


def _create(path: Path) -> int:
    """A descriptor writing ``path`` from its start (a new file, or the old one emptied)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)


def cli(*argv: str, **options: Any) -> Child:
    """``python -m fbgfx ARGV`` in a forked child (``options`` as fork's)."""
    from fbgfx.cli import main

    return fork(lambda: main(list(argv)), **options)


def script(path: str, *argv: str, **options: Any) -> Child:
    """``python PATH ARGV`` in a forked child (``options`` as fork's)."""

    def run() -> None:
        sys.argv = [path, *argv]
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        runpy.run_path(path, run_name="__main__")

    return fork(run, **options)


def _run_child(
    fn: Callable[..., Any], args: tuple[Any, ...], fds: tuple[int, int, int], env: Mapping[str, str], new_session: bool
) -> None:
    status: object = 1
    interrupted = False
    try:
        if new_session:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.environ.update(env)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # what subprocess's close_fds does
        # A new Python's streams on 0, 1 and 2 (not whatever the parent had put there);
        # stderr written line by line, as Python's
        sys.stdin = open(0, closefd=False, encoding="utf-8")
        sys.stdout = open(1, "w", closefd=False, encoding="utf-8")
        sys.stderr = open(2, "w", buffering=1, closefd=False, encoding="utf-8", errors="backslashreplace")
        # The parent's objects are the parent's to clean up: their finalizers (a
        # TemporaryDirectory's, say) must not run at this child's exit with its atexit.
        for finalizer in list(weakref.finalize._registry):  # type: ignore[attr-defined]
            finalizer.detach()
        # The guest's own handlers are not the child's: a new Python's defaults.
        for signum in signal.valid_signals():
            handler = signal.getsignal(signum)
            if callable(handler) and handler is not signal.default_int_handler:
                signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        status = fn(*args)
    except SystemExit as e:
        status = e.code
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        try:
            atexit._run_exitfuncs()
            if status is None:
                status = 0
            elif not isinstance(status, int):
                print(status, file=sys.stderr)  # sys.exit("message")
                status = 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if interrupted:  # as Python ends after an uncaught Ctrl-C: by the signal
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGINT)
            os._exit(status if isinstance(status, int) else 1)
