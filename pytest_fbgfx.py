"""The fbgfx pytest plugin: test a screen app headlessly (registered as ``fbgfx``).

Loaded by every pytest run where fbgfx is installed, so it imports nothing but pytest
until a test asks for the ``fbgfx_display`` fixture; the work is in
:mod:`fbgfx.testing`. ``-p no:fbgfx`` turns it off.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

import pytest

if TYPE_CHECKING:
    from fbgfx.testing import DisplayUnderTest

# What the terminal summary says, once a test has used a display.
_SUMMARY = pytest.StashKey[Callable[[Any, pytest.Config], None]]()
# The report folder and the run's id, the same in every pytest-xdist worker.
_FOLDER = pytest.StashKey[str]()
_SESSION = pytest.StashKey[str]()
#: The file in the report folder that says a display test reported something.
RECORDS = ".fbgfx-records.jsonl"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fbgfx", "fbgfx screen tests")
    group.addoption(
        "--fbgfx-update",
        action="store_true",
        default=False,
        help="write (or rewrite) the baseline pictures fbgfx_display.assert_matches() compares with, and pass",
    )
    group.addoption(
        "--fbgfx-report",
        metavar="DIR",
        default=None,
        help="where screens that did not match go: expected, actual and diff PNGs and index.html "
        "(default: fbgfx-report in pytest's base temporary folder)",
    )
    group.addoption(
        "--fbgfx-timeout",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="how long wait_for_frame() and touches wait for the app by default (its frames, its "
        "touchscreen); they return as soon as it is there (default 30)",
    )
    group.addoption(
        "--fbgfx-device",
        metavar="DEV",
        default=None,
        help="run fbgfx_display tests on this real display (/dev/fbN or drm:) instead of a virtual one; "
        "touches go through a uinput touchscreen (root, or write access to /dev/uinput)",
    )


def report_place(config: pytest.Config) -> tuple[str, str]:
    """(the report folder, the run's id): the controller's in every pytest-xdist worker,
    so that one report lists every worker's mismatches."""
    workerinput = getattr(config, "workerinput", {})
    if _SESSION not in config.stash:
        config.stash[_SESSION] = workerinput.get("fbgfx_session") or uuid.uuid4().hex
    if _FOLDER not in config.stash:
        given = workerinput.get("fbgfx_report") or config.getoption("fbgfx_report")
        if given:
            folder = os.path.abspath(given)
        else:
            # pytest's own basetemp (no public hook hands it to a plugin outside a fixture)
            factory = config._tmp_path_factory  # type: ignore[attr-defined]  # noqa: SLF001
            folder = str(factory.getbasetemp() / "fbgfx-report")
        config.stash[_FOLDER] = folder
    return config.stash[_FOLDER], config.stash[_SESSION]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    # pytest-xdist, in the controller: each worker reports into this run's one folder
    folder, session = report_place(node.config)
    node.workerinput["fbgfx_report"], node.workerinput["fbgfx_session"] = folder, session


def pytest_configure(config: pytest.Config) -> None:
    timeout = config.getoption("fbgfx_timeout", 30.0)
    if not timeout >= 0:  # NaN too: a wait that never ends
        raise pytest.UsageError(f"--fbgfx-timeout takes seconds, 0 or more, not {timeout!r}")
    config.addinivalue_line(
        "markers",
        "fbgfx_display(width=320, height=240, format='XRGB8888', rotate=None, device=None, **options): the "
        "virtual display the fbgfx_display fixture makes (options as in a virtual: spec, e.g. pan=0, "
        "modes='refuse'), or device='/dev/fbN' or 'drm:' for a real one",
    )


@pytest.fixture
def fbgfx_display(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DisplayUnderTest]:
    """A fresh file-backed virtual display named by ``$FRAMEBUFFER`` for this test, with
    a touchscreen: ``snapshot()``, ``tap()``/``press()``/``move()``/``release()``,
    ``wait_for_frame()``, ``assert_matches()`` (see :class:`fbgfx.testing.DisplayUnderTest`)."""
    from fbgfx import testing  # noqa: PLC0415 (the display, Pillow and NumPy: only for tests that use it)

    request.config.stash[_SUMMARY] = testing.summary
    yield from testing.fixture(request, tmp_path_factory, monkeypatch)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    # pluggy passes a hook only the arguments it names: exitstatus is not needed here
    summary = config.stash.get(_SUMMARY, None)
    folder = config.stash.get(_FOLDER, None)  # known once a display test or an xdist worker started
    if summary is None and folder is not None and os.path.exists(os.path.join(folder, RECORDS)):
        from fbgfx import testing  # noqa: PLC0415 (workers reported: the controller sums them up)

        summary = testing.summary
    if summary is not None:  # else no test used a display: nothing to say
        summary(terminalreporter, config)
