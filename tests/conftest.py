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

Helpers (in ``tests/pillow_compare.py``, imported as ``from pillow_compare import ...``):
    assert_like_pillow: runs one drawing on a Surface and on Pillow's ImageDraw and
        compares every pixel (exactly, or within a tolerance); fails when nothing was
        drawn unless told ``must_draw=False``.
    RandomDrawings: the same for many random drawings, some of which may miss the
        picture; fails unless at least half of them drew something.
    assert_same_pixels: the comparison alone, for pictures made another way.

Fake DRM cards for the DRM backend's tests live in ``tests/fake_drm.py``; the
real-kernel tests under qemu in ``tests/kernel/`` (see ``tests/kernel/README.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

import fbgfx
from fbgfx.device import Framebuffer

# Before any test imports pillow_compare, so its asserts explain themselves as a test's do.
pytest.register_assert_rewrite("pillow_compare")


def _plugin_installed() -> bool:
    """Whether pytest loads fbgfx's plugin by itself (its pytest11 entry point is installed)."""
    from importlib.metadata import entry_points

    found = entry_points()
    group = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    return any(ep.name == "fbgfx" for ep in group)


# pytester for the plugin's tests; the fbgfx_display fixture for the examples' tests, also from a checkout installed
# before the plugin existed (whose metadata has no entry point for it).
pytest_plugins = ["pytester"] + ([] if _plugin_installed() else ["pytest_fbgfx"])

OpenVirtual = Callable[..., Framebuffer]


@pytest.fixture
def open_virtual() -> Iterator[OpenVirtual]:
    """Open ``virtual:SPEC`` framebuffers for one test; all are closed when it ends, newest first."""
    with contextlib.ExitStack() as opened:

        def open_(spec: str, *, readonly: bool = False) -> Framebuffer:
            if not spec.startswith("virtual:"):
                spec = f"virtual:{spec}"
            return opened.enter_context(fbgfx.open(spec, readonly=readonly))

        yield open_
