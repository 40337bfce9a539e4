"""Shared fixtures and helpers for fbgfx's hardware-free tests.

Fixtures:
    open_virtual: opens virtual framebuffers and closes them when the test ends.
        ``fb = open_virtual("64x48:RGB565:pan=0")`` is ``fbgfx.open("virtual:64x48:RGB565:pan=0")``
        (options as in :func:`fbgfx.virtual.parse_spec`; a spec that already starts
        with ``virtual:``, such as a module's constant also given to the CLI, is
        taken as it is; ``readonly=True`` passes through). Tests that check what
        opening or closing itself does (file-backed devices shared between openers or
        with the CLI, read-only opens, errors from bad specs, state after ``close()``)
        open their devices explicitly instead.

Helpers (in ``tests/support/pillow_compare.py``, imported as ``from support.pillow_compare import ...``):
    assert_like_pillow: runs one drawing on a Surface and on Pillow's ImageDraw and
        compares every pixel (exactly, or within a tolerance); fails when nothing was
        drawn unless told ``must_draw=False``.
    RandomDrawings: the same for many random drawings, some of which may miss the
        picture; fails unless at least half of them drew something.
    assert_same_pixels: the comparison alone, for pictures made another way.

Fake DRM cards for the DRM backend's tests live in ``tests/support/fake_drm.py``; the
real-kernel tests under qemu in ``tests/kernel/`` (see ``tests/kernel/README.md``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fbgfx
from fbgfx.device import Framebuffer

# Before any test imports support.pillow_compare, so its asserts explain themselves as a test's do.
pytest.register_assert_rewrite("support")


def _plugin_installed() -> bool:
    """Whether pytest loads fbgfx's plugin by itself (its pytest11 entry point is installed)."""
    from importlib.metadata import entry_points

    found = entry_points()
    group = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    return any(ep.name == "fbgfx" for ep in group)


IN_GUEST = os.environ.get("FBGFX_IN_GUEST") == "1"

# pytester for the plugin's tests; the fbgfx_display fixture for the examples' tests, also from a checkout installed
# before the plugin existed (whose metadata has no entry point for it). Neither in a kernel guest (tests/kernel/guest):
# scanning every distribution's entry points costs seconds under TCG.
pytest_plugins = [] if IN_GUEST else ["pytester"] + ([] if _plugin_installed() else ["pytest_fbgfx"])

# A suite started in the background by a non-interactive shell (`pytest &`) ignores SIGINT, and one started by
# nohup ignores SIGHUP; children inherit what is ignored, and the tests that send a child of fbgfx Ctrl-C or a
# hang-up would wait for a child that never hears it. The suite puts the usual dispositions back for itself and
# its children.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
for _sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM):
    if signal.getsignal(_sig) is signal.SIG_IGN:
        signal.signal(_sig, signal.SIG_DFL)

# Hypothesis judges by the clock by default (a 200 ms deadline per example, a health check on slow generation):
# a busy machine or qemu-user fails those without a defect. The suite's properties are judged by their results alone.
with contextlib.suppress(ImportError):
    from hypothesis import HealthCheck
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("fbgfx", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    _hypothesis_settings.load_profile("fbgfx")

OpenVirtual = Callable[..., Framebuffer]
_PASSED = pytest.StashKey[bool]()


def _xdist_usable(config: pytest.Config) -> bool:
    return config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The whole suite (``pytest`` with no paths) runs on every core with pytest-xdist
    where it is installed; ``-n N`` says otherwise, ``-n 0`` runs it in one process.
    A run of named tests stays in one process unless told ``-n``."""
    if IN_GUEST or not _xdist_usable(config) or config.option.numprocesses is not None:
        return
    source = getattr(config, "args_source", None)  # pytest >= 7.2
    if source is None or source.name != "TESTPATHS":
        return
    if config.option.collectonly or config.option.usepdb or config.option.dist != "no":
        return
    config.option.numprocesses = len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    """One directory per run for the kernel boots' claims and results, which xdist's
    workers inherit (tests/kernel/_boots.py)."""
    if IN_GUEST or hasattr(config, "workerinput"):
        return
    os.environ["FBGFX_BOOTS_DIR"] = tempfile.mkdtemp(prefix="fbgfx-boots-")
    os.environ["FBGFX_RUN_START"] = str(time.time())


def pytest_unconfigure(config: pytest.Config) -> None:
    """A run that passed leaves no boot logs behind (FBGFX_VM_RESULTS=DIR keeps them)."""
    root = os.environ.get("FBGFX_BOOTS_DIR")
    if IN_GUEST or hasattr(config, "workerinput") or not root:
        return
    if config.stash.get(_PASSED, False):
        shutil.rmtree(root, ignore_errors=True)
    del os.environ["FBGFX_BOOTS_DIR"]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_PASSED] = exitstatus == pytest.ExitCode.OK


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The kernel boots of this run: each one's time, its guests' and their results."""
    root = os.environ.get("FBGFX_BOOTS_DIR")
    if IN_GUEST or not root:
        return
    boots = sorted(Path(root).glob("*.json"))
    if not boots:
        return
    terminalreporter.section("kernel boots")
    for done in boots:
        for line in json.loads(done.read_text()).get("report", []):
            terminalreporter.write_line(line)
    if not os.environ.get("FBGFX_VM_RESULTS"):
        terminalreporter.write_line("(the logs are removed when the run passes; FBGFX_VM_RESULTS=DIR keeps them)")


@pytest.fixture
def open_virtual() -> Iterator[OpenVirtual]:
    """Open ``virtual:SPEC`` framebuffers for one test; all are closed when it ends, newest first."""
    with contextlib.ExitStack() as opened:

        def open_(spec: str, *, readonly: bool = False) -> Framebuffer:
            if not spec.startswith("virtual:"):
                spec = f"virtual:{spec}"
            return opened.enter_context(fbgfx.open(spec, readonly=readonly))

        yield open_
