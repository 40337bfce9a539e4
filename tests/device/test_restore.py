"""Restore on every exit path: the registry in-process, and real signals to a child process.

The child runs a Screen on a file-backed virtual framebuffer whose device model writes
what a kernel would hold (mode, virtual size, pan offset, colour map, the VT's KD
mode) to a state file after every change. The parent reads that file after the child
is gone: the last state the "kernel" saw must be the one before the child started.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import fbgfx
from fbgfx import _restore

CHILD = textwrap.dedent(
    r'''
    import json, os, signal, sys, time
    import fbgfx
    from fbgfx.device import Framebuffer
    from fbgfx.virtual import VirtualDevice

    state_path, raw_path, scenario = sys.argv[1:4]
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in an interactive shell

    kd = {"mode": 0}

    def record(device):
        var = device.get_var()
        state = {
            "xres": var.xres, "yres": var.yres, "yres_virtual": var.yres_virtual,
            "bpp": var.bits_per_pixel, "xoffset": var.xoffset, "yoffset": var.yoffset,
            "cmap": (device.cmap[:, :3] >> 8).tolist(), "kd": kd["mode"],
        }
        tmp = state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, state_path)

    class RecordingDevice(VirtualDevice):
        """Writes its state after every call that changes it, like a kernel keeps it."""
        def put_var(self, var):
            result = super().put_var(var)
            record(self)
            return result
        def pan(self, var):
            super().pan(var)
            record(self)
        def put_cmap(self, start, entries):
            super().put_cmap(start, entries)
            record(self)

    class FakeVT:
        def get_mode(self):
            return kd["mode"]
        def set_mode(self, mode):
            kd["mode"] = mode
            record(device)

    if scenario == "app-handler-exits":
        def on_term(signum, frame):
            # os.write, not print: the signal may land while print("READY") is still
            # flushing, and re-entering stdout's buffer raises RuntimeError
            os.write(1, b"app handler ran\n")
            sys.exit(3)
        signal.signal(signal.SIGTERM, on_term)
    stop = []
    if scenario == "app-handler-returns":
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))

    device = RecordingDevice(64, 48, "C8", memory=65536, file=raw_path)
    record(device)
    fb = Framebuffer(device, "virtual-child")
    fb.set_mode("32x24-8")                      # a resolution change
    screen = fb.screen(console=FakeVT())        # palette, 2 pages, KD_GRAPHICS
    n = 0
    def frame():
        global n
        with screen.frame() as s:
            s.clear("navy")
            s.rectangle((n % 20, 2, n % 20 + 5, 7), fill="yellow")
        n += 1
    frame(); frame(); frame()                   # odd number of flips: panned to page 2
    print("READY", flush=True)
    if scenario == "exit-without-close":
        sys.exit(0)
    if scenario == "exception":
        with screen:
            raise RuntimeError("boom inside with")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not stop:
        frame()
        time.sleep(0.005)
    if stop:
        var = fb.var
        print(f"carried on with yres_virtual={var.yres_virtual} kd={kd['mode']}", flush=True)
        screen.close()
        fb.close()
        print("closed", flush=True)
    '''
)


def run_child(tmp_path, scenario, send=None):
    """Start the child, wait for READY, check the changes are in force, optionally signal it."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    state = tmp_path / "state.json"
    raw = tmp_path / "fb.raw"
    proc = subprocess.Popen(
        [sys.executable, str(script), str(state), str(raw), scenario],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # the child imports the same fbgfx as this test run
        env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))},
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "READY", line + proc.stderr.read()
        if send is not None:
            during = json.loads(state.read_text())
            # the child keeps flipping after READY, so the shown page is either one
            assert (during["xres"], during["yres_virtual"], during["kd"]) == (32, 48, 1)
            assert during["yoffset"] in (0, 24)
            assert during["cmap"][:252] == fbgfx.default_palette(8)[:252].tolist()
            proc.send_signal(send)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, line + out, err, json.loads(state.read_text()), raw


ORIGINAL = {"xres": 64, "yres": 48, "yres_virtual": 48, "bpp": 8, "xoffset": 0, "yoffset": 0, "kd": 0}


def assert_restored(state):
    """The device holds the mode, pan, KD mode and console colour map it started with."""
    assert {k: state[k] for k in ORIGINAL} == ORIGINAL
    console = (fbgfx.VirtualDevice(8, 8, "C8").cmap[:, :3] >> 8).tolist()
    assert state["cmap"] == console


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_fatal_signal_restores_and_kills_with_that_signal(tmp_path, sig):
    """SIGTERM/SIGHUP: mode, virtual size, pan, palette and KD mode restored; the child still dies of the signal."""
    code, out, err, state, raw = run_child(tmp_path, "plain", send=sig)
    assert code == -sig, err
    assert_restored(state)
    assert raw.stat().st_size == 65536


def test_sigint_restores_and_raises_keyboard_interrupt(tmp_path):
    """SIGINT: everything restored, then KeyboardInterrupt ends the child as Ctrl-C does."""
    code, out, err, state, _ = run_child(tmp_path, "plain", send=signal.SIGINT)
    assert "KeyboardInterrupt" in err
    assert code in (-signal.SIGINT, 1), err  # Python re-raises SIGINT after an uncaught KeyboardInterrupt
    assert_restored(state)


def test_application_handler_that_exits_is_chained(tmp_path):
    """An application's own SIGTERM handler runs and decides the exit status; fbgfx still restores."""
    code, out, err, state, _ = run_child(tmp_path, "app-handler-exits", send=signal.SIGTERM)
    assert "app handler ran" in out, (code, out, err)
    assert code == 3, err
    assert_restored(state)


def test_application_handler_that_returns_keeps_the_screen(tmp_path):
    """An application handler that returns means "carry on": nothing is restored until it closes."""
    code, out, err, state, _ = run_child(tmp_path, "app-handler-returns", send=signal.SIGTERM)
    assert code == 0, err
    assert "carried on with yres_virtual=48 kd=1" in out and "closed" in out
    assert_restored(state)


def test_interpreter_exit_restores_unclosed_screen(tmp_path):
    """A program that exits without closing its Screen or framebuffer gets them restored by atexit."""
    code, out, err, state, _ = run_child(tmp_path, "exit-without-close")
    assert code == 0, err
    assert_restored(state)


def test_uncaught_exception_restores(tmp_path):
    """An exception escaping a with-block ends the child with a traceback and everything restored."""
    code, out, err, state, _ = run_child(tmp_path, "exception")
    assert code == 1 and "boom inside with" in err
    assert_restored(state)


# -- the registry in-process ------------------------------------------------------------------


@pytest.fixture
def registry():
    """Start and end each test with an empty registry and the original handlers."""
    before = {s: signal.getsignal(s) for s in _restore.SIGNALS}
    _restore.restore_all()
    yield _restore
    _restore.restore_all()
    for s, h in before.items():
        signal.signal(s, h)


class Owner:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def restore(self):
        self.log.append(self.name)


def test_restore_all_runs_newest_first_once(registry):
    """restore_all runs each registered callback once, newest first, and empties the registry."""
    log = []
    a, b = Owner(log, "a"), Owner(log, "b")
    registry.register(a, a.restore)
    registry.register(b, b.restore)
    registry.register(a, a.restore)  # again: keeps its place
    assert registry.registered() == [a, b]
    registry.restore_all()
    registry.restore_all()
    assert log == ["b", "a"]
    assert registry.registered() == []


def test_failing_callback_warns_and_others_still_run(registry):
    """One device failing to restore does not stop the others; it is reported as a warning."""
    log = []
    a = Owner(log, "a")

    def broken():
        raise OSError(5, "gone")

    failing = Owner(log, "failing")
    registry.register(a, a.restore)
    registry.register(failing, broken)
    with pytest.warns(RuntimeWarning, match="gone"):
        registry.restore_all()
    assert log == ["a"]


def test_handlers_installed_while_registered_and_removed_after(registry):
    """Signal handlers are fbgfx's only while something is registered; the previous ones come back."""

    def mine(signum, frame):
        pass

    signal.signal(signal.SIGTERM, mine)
    owner = Owner([], "x")
    registry.register(owner, owner.restore)
    assert signal.getsignal(signal.SIGTERM) is not mine
    registry.unregister(owner)
    assert signal.getsignal(signal.SIGTERM) is mine


def test_ignored_signal_stays_ignored(registry):
    """A signal the application ignores (nohup) is not taken over."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    owner = Owner([], "x")
    registry.register(owner, owner.restore)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    registry.unregister(owner)


def test_sigint_in_process_restores_then_raises(registry):
    """Ctrl-C with Python's default handler restores registered devices, then raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    log = []
    owner = Owner(log, "screen")
    registry.register(owner, owner.restore)
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # let the handler run here
    assert log == ["screen"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_framebuffer_registers_on_first_change_and_leaves_on_close(registry):
    """A framebuffer is registered once it changes something, and forgotten when closed."""
    fb = fbgfx.open("virtual:16x8:C8")
    assert fb not in registry.registered()
    fb.set_palette([[1, 2, 3]])
    assert fb in registry.registered()
    fb.close()
    assert fb not in registry.registered()


def test_restore_all_puts_framebuffer_and_screen_back(registry):
    """What a signal or exit runs restores a Screen's pan, virtual size and palette, screen first."""
    fb = fbgfx.open("virtual:16x8:C8:memory=4096")
    palette = fb.get_palette()
    screen = fb.screen(console=False)
    with screen.frame() as s:
        s.clear("white")
    assert fb.var.yres_virtual == 16 and fb.var.yoffset == 8
    assert registry.registered()[-1] is screen._changes  # the Screen's changes, newest
    registry.restore_all()
    assert screen.closed
    assert (fb.var.yres_virtual, fb.var.yoffset) == (8, 0)
    assert (fb.get_palette() == palette).all()
    fb.close()


def test_forked_child_does_not_restore_parent_devices(registry, tmp_path):
    """A forked child's exit leaves the parent's registered devices alone."""
    marker = tmp_path / "restored"

    class FileOwner:
        def restore(self):
            marker.write_text("child restored")

    owner = FileOwner()
    registry.register(owner, owner.restore)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            _restore.restore_all()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert not marker.exists()
    assert owner in registry.registered()
