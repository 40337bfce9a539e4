"""Testing an fbgfx app headlessly: the display behind the ``fbgfx_display`` pytest fixture.

The pytest plugin (module ``pytest_fbgfx``, registered as ``fbgfx``) gives each test
that asks for ``fbgfx_display`` a fresh file-backed virtual display, named by
``$FRAMEBUFFER`` while the test runs, so the app under test opens it with
``fbgfx.open()`` unchanged, in the test's process or in a subprocess. The
:class:`DisplayUnderTest` it yields looks at the panel and touches it::

    def test_paint(fbgfx_display):
        app = subprocess.Popen([sys.executable, "paint.py"])
        fbgfx_display.wait_for_frame()        # the app's first frame
        fbgfx_display.tap(100, 80)            # panel pixels
        fbgfx_display.wait_for_frame()        # the frame that shows the dot
        fbgfx_display.assert_matches("dot")   # tests/screens/test_app/test_paint/dot.png

Configure it with ``@pytest.mark.fbgfx_display(width=480, height=320,
format="RGB565", rotate=90, pan=0, ...)`` (the options of a ``virtual:`` spec).
"""

from __future__ import annotations

import errno
import math
import os
import re
import subprocess
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from pytest_fbgfx import report_place

from .._open import VirtualFramebuffer
from .._open import open as fbgfx_open
from .._screen import frames as _frames
from ..drm import is_drm_spec
from ..errors import FramebufferError, TouchError
from ..pixelformat import PixelFormat
from ..touch._finger import Finger
from ..touch.uinput import UinputTouch
from ..touch.virtual import VirtualTouch
from ..virtual import parse_spec
from . import _baselines, _golden

__all__ = ["DEFAULTS", "DisplayUnderTest", "FrameTimeout"]

#: The display a test gets when its marker does not say otherwise.
DEFAULTS = {"width": 320, "height": 240, "format": "XRGB8888"}

#: Environment variables the fixture clears so the app reads the test's display as it is:
#: no touch device or calibration from the machine running the tests, no rotation.
_CLEARED = ("FBGFX_TOUCH", "FBGFX_TOUCH_CALIBRATION", "FBGFX_ROTATE", "FBGFX_FRAMES")
#: How long wait_for_frame() and a touch wait for the app by default (``--fbgfx-timeout``):
#: an app's first frame under emulation or on a small board can take many seconds to come.
DEFAULT_TIMEOUT = 30.0

_REPORT = pytest.StashKey["_golden.Report"]()


def __getattr__(name: str) -> Any:
    if name == "Display":  # the old name, for one release (fbgfx.Display lists displays)
        warnings.warn("fbgfx.testing.Display is now fbgfx.testing.DisplayUnderTest", DeprecationWarning, stacklevel=2)
        return DisplayUnderTest
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class FrameTimeout(TimeoutError):
    """:meth:`DisplayUnderTest.wait_for_frame` saw no new frame in time."""


class DisplayUnderTest:
    """A display a test runs an app on: look at it, touch it, wait for its frames.

    Made by the ``fbgfx_display`` fixture (and :meth:`add_display`); closed when the
    test ends. A virtual display's framebuffer file lives in a folder of pytest's
    temporary directory; a real one (``device=``, ``--fbgfx-device``) is only looked at,
    and touched through a uinput touchscreen.

    Attributes:
        spec: What the app opens (``$FRAMEBUFFER``): a ``virtual:...:file=...`` spec,
            ``/dev/fbN`` or ``drm:...``.
        path: The framebuffer file (the device for a real display).
        extra_env: What a real display's apps need besides ``$FRAMEBUFFER``
            (``$FBGFX_FRAMES``, ``$FBGFX_TOUCH``); in :attr:`env`, and set while the test runs.
    """

    def __init__(self, spec: str, test: _Test) -> None:
        self.spec = spec
        self._test = test
        self._fb: Any = None
        self._panel: _DrmPanel | None = None
        self._finger: Finger | None = None
        self._touch_error: TouchError | None = None
        self._others: list[DisplayUnderTest] = []
        self._apps: list[tuple[subprocess.Popen[Any], Any]] = []  # each with its stderr file
        self.extra_env: dict[str, str] = {}
        try:
            if spec.startswith("virtual:"):
                self.path = os.fspath(parse_spec(spec)[3].file or "")
                VirtualFramebuffer.from_spec(spec).close()  # created now, as the spec describes it
                self._fb = VirtualFramebuffer.from_spec(spec, readonly=True)
                self._finger = VirtualTouch(self._fb)
                counter = self.path + _frames.SUFFIX
            else:
                # A real display: looked at read-only, touched through uinput, its frames
                # counted into a file the test's apps are told of.
                self.path = spec
                if is_drm_spec(spec):
                    self._panel = _DrmPanel(spec)
                else:
                    self._fb = fbgfx_open(spec, readonly=True)
                counter = str(test.folder / "frames")
                self.extra_env["FBGFX_FRAMES"] = counter
                try:
                    self._finger = UinputTouch(self._fb if self._fb is not None else self._panel.size)  # type: ignore[union-attr]
                    self.extra_env["FBGFX_TOUCH"] = self._finger.device.path
                except TouchError as e:
                    self._touch_error = e  # raised by the first touch: a test that only looks needs no uinput
            self._frames = _frames.FrameCounter(counter)
            self._seen = self._frames.read()
        except BaseException:
            self.close()
            raise

    # -- what it is ----------------------------------------------------------------------

    @property
    def width(self) -> int:
        """The panel's width in pixels now."""
        return self.snapshot().width if self._fb is None else self._refreshed().width

    @property
    def height(self) -> int:
        """The panel's height in pixels now."""
        return self.snapshot().height if self._fb is None else self._refreshed().height

    @property
    def format(self) -> str:
        """The pixel format's name now (``"XRGB8888"``, ``"RGB565"``, ``"C8"``...)."""
        if self._panel is not None:
            return self._panel.format()
        return str(self._refreshed().format.name)

    @property
    def env(self) -> dict[str, str]:
        """The environment for an app started on this display: this process's (the
        fixture's changes included), with ``$FRAMEBUFFER`` naming this display."""
        return dict(os.environ, **self.extra_env, FRAMEBUFFER=self.spec)

    @property
    def frames(self) -> int:
        """How many frames apps have shown on the display so far."""
        return self._frames.read()

    # -- looking ----------------------------------------------------------------------------

    def snapshot(self) -> Image.Image:
        """What the panel shows now, as a PIL RGB image (unrotated: the panel's pixels)."""
        if self._panel is not None:
            return self._panel.snapshot()
        image: Image.Image = self._refreshed().snapshot()
        return image

    def wait_for_frame(self, timeout: float | None = None, *, frames: int = 1) -> int:
        """Return once an app has shown a frame no earlier call returned for.

        A frame is shown by a :class:`~fbgfx.Screen`'s ``flip()``, ``present()`` or the
        end of a ``frame()`` block, in any process. Frames shown since the last call
        returned (or since the display was made) count, so a frame shown before this
        call returns at once; returning takes all of them.

        Args:
            timeout: Seconds to wait (default: ``--fbgfx-timeout``, 30).
            frames: How many new frames to wait for: an app that shows two frames for
                one touch (a frame for the touch, then a redrawn screen) is waited for
                with ``frames=2``, however fast it shows them.

        Returns:
            The number of frames shown so far.

        Raises:
            FrameTimeout: Fewer new frames within ``timeout`` seconds (the message says
                how many were shown, and how a started app ended if it did).
        """
        __tracebackhide__ = True
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise ValueError(f"wait_for_frame(frames=...) takes a whole number of 1 or more, not {frames!r}")
        timeout = self._test.timeout if timeout is None else _check_timeout("wait_for_frame(timeout=...)", timeout)
        count = self._frames.wait_beyond(self._seen + frames - 1, timeout)
        if count is None:
            shown = self._frames.read()
            new = shown - self._seen
            if new:
                what = f"{new} came"
            elif shown:
                what = (
                    f"{shown} frame{'s' if shown != 1 else ''} shown so far, all returned by earlier wait_for_frame()"
                )
            else:
                what = (
                    "no frame shown yet: does the app draw through fbgfx.Screen (flip(), present() or a "
                    "frame() block) on $FRAMEBUFFER?"
                )
            wanted = "a new frame" if frames == 1 else f"{frames} new frames"
            raise FrameTimeout(
                errno.ETIMEDOUT, f"waited {timeout:g} s for {wanted} on {self.spec}: {what}{self._ended()}"
            )
        self._seen = count
        return count

    # -- touching -----------------------------------------------------------------------------

    def tap(self, x: float, y: float, *, timeout: float | None = None) -> None:
        """Touch panel pixel ``(x, y)`` and lift the finger (the app reads both at once).

        Waits up to ``timeout`` seconds (default ``--fbgfx-timeout``, 30) for an app to
        open the display's touchscreen first: touches nobody reads are lost, as on a real panel.

        Raises:
            ValueError: ``(x, y)`` is outside the panel.
            TouchError: No app opened the touchscreen in time (``ETIMEDOUT``).
        """
        __tracebackhide__ = True
        self._reader(timeout).tap(x, y)

    def press(self, x: float, y: float, *, timeout: float | None = None) -> None:
        """Put a finger down on panel pixel ``(x, y)`` (see :meth:`tap`).

        Raises:
            RuntimeError: The finger is down already (:meth:`release` it first).
            ValueError: ``(x, y)`` is outside the panel.
            TouchError: No app opened the touchscreen in time (``ETIMEDOUT``).
        """
        __tracebackhide__ = True
        if self._finger is not None and self._finger.down:
            raise RuntimeError("press(): the finger is down already; release() it first")
        self._reader(timeout).press(x, y)

    def move(self, x: float, y: float) -> None:
        """Slide the finger that is down to panel pixel ``(x, y)``.

        Raises:
            RuntimeError: No finger is down (:meth:`press` first).
            ValueError: ``(x, y)`` is outside the panel.
        """
        __tracebackhide__ = True
        if self._finger is None or not self._finger.down:
            raise RuntimeError("move(): no finger is down; press() first")
        self._reader(0).move(x, y)

    def release(self) -> None:
        """Lift the finger that is down.

        Raises:
            RuntimeError: No finger is down (:meth:`press` first).
        """
        __tracebackhide__ = True
        if self._finger is None or not self._finger.down:
            raise RuntimeError("release(): no finger is down; press() first")
        self._finger.release()

    # -- comparing --------------------------------------------------------------------------

    def assert_matches(
        self,
        name: str,
        tolerance: int = 0,
        max_pixels: int = 0,
        ignore: Sequence[Any] = (),
        *,
        allow_blank: bool = False,
    ) -> None:
        """Assert that the panel shows the baseline picture ``name``.

        The baseline is ``screens/<module>/<Class>/<function>[<parameter id>]/<name>.png``
        in the test file's folder (``screens/test_app/test_paint/dot.png``: every test
        has its own); ``pytest --fbgfx-update`` writes it atomically (or rewrites it where
        pixels outside ``ignore`` changed) and passes, and fails where one run would write
        one baseline with two different pictures. A baseline from before fbgfx named the
        whole test (``screens/<function>/<name>.png``) is read until an update writes the
        new one. A mismatch saves the expected, actual and diff
        pictures in the report folder (``--fbgfx-report DIR``) and its ``index.html``.

        Args:
            name: The picture's name (a file name without ``.png``).
            tolerance: How much a channel (0..255) may differ before the pixel counts
                as different.
            max_pixels: How many pixels may differ.
            ignore: Boxes ``(left, top, right, bottom)`` (right and bottom exclusive, in
                panel pixels) not compared: a clock, a changing reading. One box or several.
            allow_blank: Accept a screen of one colour (outside ``ignore``): by default
                that fails, as an app that drew nothing would otherwise match a blank
                baseline.

        Raises:
            AssertionError: No baseline (the message says to run ``pytest
                --fbgfx-update``), an unreadable one, a blank screen, another size, or
                more than ``max_pixels`` pixels differing by more than ``tolerance``.
        """
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        name = _check_name(name)
        tolerance, max_pixels = _check_int("tolerance", tolerance, 255), _check_int("max_pixels", max_pixels, None)
        boxes = _golden.parse_boxes(ignore)
        image = self.snapshot()
        actual = np.asarray(image)
        ignored = _golden.ignore_mask(image.size, boxes) if boxes else None
        test = self._test
        baseline = test.baselines / f"{name}.png"
        legacy = test.legacy / f"{name}.png"
        if not test.update and not baseline.exists() and legacy.is_file():
            baseline = legacy  # written before baselines named the whole test: read until updated
        shown = test.show(baseline)
        if not allow_blank and _golden.is_blank(actual, ignored):
            r, g, b = (int(v) for v in actual.reshape(-1, 3)[0]) if actual.size else (0, 0, 0)
            raise AssertionError(
                f"{shown}: the screen is one colour (#{r:02x}{g:02x}{b:02x}) everywhere"
                f"{' outside the ignored boxes' if boxes else ''}: has the app drawn yet? (wait_for_frame() first; "
                "allow_blank=True if a blank screen is what the test expects)"
            )
        try:
            expected = _baselines.load(baseline)
        except _baselines.Unreadable as e:
            if not test.update:  # (an update writes it anew)
                raise AssertionError(
                    f"the baseline {shown} is unreadable ({e}): `pytest --fbgfx-update` writes it anew"
                ) from None
            expected = None
        if test.update:
            write = None
            stale = expected is None or expected.shape != actual.shape
            if stale or _golden.compare(actual, expected, 0, ignored).pixels:  # type: ignore[arg-type]

                def write() -> None:  # (under the report's lock: one writer of a baseline at a time)
                    try:
                        _baselines.write(test.screens, test.parts, f"{name}.png", image)
                    except OSError as e:
                        raise AssertionError(f"cannot write the baseline {shown}: {e}") from None

            why = test.report().baseline(test.id, str(baseline), _baselines.digest(actual, ignored), write)
            if why is not None:
                raise AssertionError(
                    f"--fbgfx-update would write the baseline {shown} twice with different pixels: {why}; "
                    "give the pictures different names"
                )
            return
        report = test.report()
        if expected is None:
            files = report.add(self._test.id, name, f"no baseline {shown}", {"actual": image})
            raise AssertionError(
                f"no baseline {shown}: run `pytest --fbgfx-update` to write it from this run's screen "
                f"(look at it first: {files['actual']})"
            )
        if expected.shape != actual.shape:
            eh, ew = expected.shape[:2]
            message = f"the screen is {image.width}x{image.height}, the baseline {shown} is {ew}x{eh}"
            files = report.add(self._test.id, name, message, {"expected": Image.fromarray(expected), "actual": image})
            raise AssertionError(f"{message}; actual: {files['actual']}; every mismatch: {report.index}")
        diff = _golden.compare(actual, expected, tolerance, ignored)
        if diff.pixels <= max_pixels:
            return
        assert diff.box is not None
        message = (
            f"the screen differs from {shown}: {diff.pixels} pixel{'s' if diff.pixels != 1 else ''} differ "
            f"(max_pixels={max_pixels}) by up to {diff.worst} in a channel (tolerance={tolerance}), "
            f"within the box {diff.box}" + (f", ignoring {_golden.describe_boxes(boxes)}" if boxes else "")
        )
        files = report.add(
            self._test.id,
            name,
            message,
            {
                "expected": Image.fromarray(expected),
                "actual": image,
                "diff": _golden.diff_image(actual, diff.mask, ignored),
            },
        )
        stem = files["diff"][: -len("-diff.png")]
        raise AssertionError(f"{message}; expected, actual and diff: {stem}-*.png; every mismatch: {report.index}")

    # -- more displays, apps --------------------------------------------------------------------

    def add_display(self, **options: Any) -> DisplayUnderTest:
        """Another virtual display for this test (same options as the marker's); its
        :attr:`spec` or :attr:`env` tells an app to open it. Closed with this one.

        Raises:
            pytest.UsageError: ``device=`` was given: it makes virtual displays only (a
                real display is the marker's ``device=``).
        """
        if "device" in options:
            raise pytest.UsageError("add_display() makes virtual displays; a real one is the marker's device=")
        other = _make(self._test, {**DEFAULTS, **options}, f"display{len(self._others) + 1}")
        self._others.append(other)
        return other

    def start_app(self, args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
        """Start an app on this display (``subprocess.Popen(args, env=self.env, ...)``).

        It is stopped when the test ends. Its stderr goes to a file (unless ``stderr=``
        is given) whose end :meth:`wait_for_frame` and the touches quote if the app has
        exited, instead of only timing out.
        """
        popen.setdefault("env", self.env)
        log = None
        if "stderr" not in popen:
            log = popen["stderr"] = open(
                self._test.folder / f"app{len(self._apps)}.stderr", "w+b"
            )  # closed with the app
        try:
            app = subprocess.Popen(list(args), **popen)
        except BaseException:
            if log is not None:
                log.close()
            raise
        self._apps.append((app, log))
        return app

    def close(self) -> None:
        """Stop started apps, close the display and the ones added; safe twice."""
        apps, self._apps = self._apps, []
        for app, log in apps:
            if app.poll() is None:
                app.terminate()
                try:
                    app.wait(10)
                except subprocess.TimeoutExpired:
                    app.kill()
                    app.wait()
            if log is not None:
                log.close()
        others, self._others = self._others, []
        for other in others:
            other.close()
        finger, self._finger = self._finger, None
        if finger is not None:
            finger.close()  # type: ignore[attr-defined]
        frames = getattr(self, "_frames", None)
        if frames is not None:
            frames.close()
        if self._fb is not None:
            self._fb.close()

    def __repr__(self) -> str:
        return f"<fbgfx test display {self.spec}>"

    # -- internals ----------------------------------------------------------------------------

    def _refreshed(self) -> Any:
        self._fb.refresh()  # an app may have panned (page flips) or changed the mode or palette
        return self._fb

    def _reader(self, timeout: float | None) -> Finger:
        """The finger, once an app reads the touchscreen."""
        if self._finger is None:
            assert self._touch_error is not None
            raise self._touch_error
        if self._fb is not None:
            self._fb.refresh()  # the panel's size as it is now
        if timeout is not None:
            timeout = _check_timeout("timeout=", timeout)
        if self._finger.readers:
            return self._finger
        try:
            self._finger.wait_for_reader(self._test.timeout if timeout is None else timeout)
        except FramebufferError as e:
            raise type(e)(e.errno or errno.ETIMEDOUT, f"{e.strerror}{self._ended()}", e.filename) from None
        return self._finger

    def _ended(self) -> str:
        """What the apps started here said when they exited, for messages."""
        out = []
        for app, log in self._apps:
            code = app.poll()
            if code is None:
                continue
            tail = ""
            if log is not None:
                log.seek(0)
                lines = log.read().decode("utf-8", "replace").strip().splitlines()[-6:]
                tail = (", its stderr ending:\n" + "\n".join(lines)) if lines else ""
            command = " ".join(map(str, app.args)) if isinstance(app.args, (list, tuple)) else str(app.args)
            out.append(f"; the app {command!r} exited with {code}{tail}")
        return "".join(out)


class _DrmPanel:
    """A ``drm:`` display seen from outside: its size from the connector's mode, its
    picture from what the card scans out (``GETFB2``: root or the DRM master)."""

    def __init__(self, spec: str) -> None:
        from ..drm import find_display, parse_spec, probe  # noqa: PLC0415 (the DRM layer only for a drm: panel)

        card, options = parse_spec(spec)
        self.card = card or find_display() or "/dev/dri/card0"
        if card is not None and not card.startswith("/"):
            self.card = f"/dev/dri/{card}"
        self.connector = options.get("connector")
        mode = options.get("mode")
        if mode:
            w, h = (int(v) for v in mode.split("@")[0].split("x"))
        else:
            found = [c for c in probe(self.card).connectors if c.connected and c.modes]
            found = [c for c in found if self.connector in (None, c.name)]
            if not found:
                raise FramebufferError(errno.ENODEV, "no connected display to test on", self.card)
            preferred = [m for m in found[0].modes if m.preferred] or list(found[0].modes)
            w, h = preferred[0].width, preferred[0].height
        self.size = (w, h)

    def _scanout(self) -> tuple[str, np.ndarray]:
        from ..drm import read_scanout  # noqa: PLC0415 (the DRM layer only for a drm: panel)

        return read_scanout(self.card, self.connector)

    def snapshot(self) -> Image.Image:
        name, native = self._scanout()
        return Image.fromarray(PixelFormat.from_name(name).unpack(native))

    def format(self) -> str:
        return self._scanout()[0]


# -- the fixture's plumbing (pytest_fbgfx calls these) ---------------------------------------------


class _Test:
    """What a display needs to know of the test using it."""

    def __init__(
        self, request: pytest.FixtureRequest, factory: pytest.TempPathFactory, folder: Path, rotate: int | None
    ) -> None:
        node = request.node
        self.config = request.config
        self.factory = factory
        self.id: str = node.nodeid
        self.folder = folder
        self.rotate = rotate
        # screens/<module>/<Class>/<function>[<parameter id>]: the whole test (fbgfx.testing._baselines)
        function = getattr(node, "originalname", node.name)
        classes = [n.name for n in node.listchain() if isinstance(n, pytest.Class)]
        callspec = getattr(node, "callspec", None)
        self.screens = Path(node.path).parent / "screens"
        self.parts = _baselines.baseline_parts(
            Path(node.path).stem, classes, function, None if callspec is None else str(callspec.id)
        )
        self.baselines = self.screens.joinpath(*self.parts)
        self.legacy = self.screens / _baselines.part(function)  # where baselines were before
        self.update = bool(self.config.getoption("fbgfx_update"))
        self.timeout = float(self.config.getoption("fbgfx_timeout", DEFAULT_TIMEOUT))

    def report(self) -> _golden.Report:
        return _report(self.config)

    def show(self, path: Path) -> str:
        """A baseline's path as messages show it: from the rootdir."""
        try:
            return str(path.relative_to(self.config.rootpath))
        except ValueError:
            return str(path)


def fixture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DisplayUnderTest]:
    """The ``fbgfx_display`` fixture's body: a display named by ``$FRAMEBUFFER``."""
    marker = request.node.get_closest_marker("fbgfx_display")
    options = dict(DEFAULTS)
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(
                "@pytest.mark.fbgfx_display takes keyword arguments: fbgfx_display(width=..., height=..., format=...)"
            )
        options.update(marker.kwargs)
    rotate = options.pop("rotate", None)
    if rotate is not None and rotate not in (0, 90, 180, 270):
        raise pytest.UsageError(f"fbgfx_display(rotate=...) takes 0, 90, 180 or 270, not {rotate!r}")
    device = options.pop("device", None) or request.config.getoption("fbgfx_device")
    folder = tmp_path_factory.mktemp("fbgfx")
    test = _Test(request, tmp_path_factory, folder, rotate)
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    if rotate is not None:
        monkeypatch.setenv("FBGFX_ROTATE", str(rotate))
    display = DisplayUnderTest(str(device), test) if device else _make(test, options, "display")
    try:
        monkeypatch.setenv("FRAMEBUFFER", display.spec)
        for name, value in display.extra_env.items():
            monkeypatch.setenv(name, value)
        yield display
    finally:
        display.close()


def _make(test: _Test, options: dict[str, Any], stem: str) -> DisplayUnderTest:
    options = dict(options)
    if "rotate" in options:
        raise pytest.UsageError("rotate= is for the marker (it sets $FBGFX_ROTATE for the test's apps)")
    if "file" in options:
        raise pytest.UsageError("fbgfx_display makes its own file; do not give file=")
    width, height, fmt = options.pop("width"), options.pop("height"), options.pop("format")
    file = test.folder / f"{stem}.raw"
    if ":" in str(file):
        raise pytest.UsageError(
            f"pytest's temporary folder {test.folder} has a ':' in it, which a virtual: spec cannot hold"
        )
    parts = [f"virtual:{width}x{height}", str(fmt)]
    for key, value in options.items():
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, (list, tuple)):
            value = ",".join(map(str, value))
        parts.append(f"{key}={value}")
    parts.append(f"file={file}")
    spec = ":".join(parts)
    try:
        parse_spec(spec)
    except ValueError as e:
        raise pytest.UsageError(f"@pytest.mark.fbgfx_display: {e}") from None
    return DisplayUnderTest(spec, test)


def _report(config: pytest.Config) -> _golden.Report:
    """This run's report (one folder for every pytest-xdist worker)."""
    report = config.stash.get(_REPORT, None)
    if report is None:
        report = config.stash[_REPORT] = _golden.Report(*report_place(config))
    return report


def summary(terminal: Any, config: pytest.Config) -> None:
    """The terminal summary's lines: where the report is, which baselines were written
    (every worker's, under pytest-xdist)."""
    report = _report(config)
    updated, entries = report.updated, report.entries
    if updated:
        terminal.write_sep("-", "fbgfx: baselines written")
        for path in updated:
            terminal.write_line(f"  {path}")
    if entries:
        terminal.write_sep("-", f"fbgfx: {len(entries)} screen mismatch{'es' if len(entries) != 1 else ''}")
        for entry in entries:
            terminal.write_line(f"  {entry.test}: {entry.name}")
        terminal.write_line(f"  {report.index}")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"assert_matches(name): a picture name (a string), not {name!r}")
    if name.endswith(".png"):
        name = name[:-4]
    if not re.fullmatch(r"[\w.-]{1,100}", name) or name.startswith("."):
        raise ValueError(
            f"assert_matches(name): up to 100 letters, digits, '_', '-' and '.' make a picture name, not {name!r}"
        )
    return name


def _check_timeout(what: str, value: Any) -> float:
    """``value`` as seconds to wait: a number of 0 or more (infinity waits for ever); NaN,
    which would never time out, and negative numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} takes seconds (a number), not {value!r}")
    seconds = float(value)
    if math.isnan(seconds) or seconds < 0:
        raise ValueError(f"{what} takes seconds, 0 or more, not {value!r}")
    return seconds


def _check_int(what: str, value: Any, top: int | None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 0
        or (top is not None and value > top)
    ):
        upto = f"0..{top}" if top is not None else "0 or more"
        raise ValueError(f"assert_matches({what}=...) takes an integer {upto}, not {value!r}")
    return int(value)
