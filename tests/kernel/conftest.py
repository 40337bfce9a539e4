"""Host side of the real-kernel tests: boot Debian's kernel under qemu with virtme-ng.

The boots and their sharing are _boots.py's: here are the pytest hooks that start every
boot the selected tests need as soon as they are collected (in the background, while
the host tests run) and move the kernel tests to the end of the run, and the display
suites: ``tests/kernel/guest/`` run by pytest inside the ``std`` boot (bochs as
/dev/fb0 and vfb as /dev/fb1), the ``cirrus`` boot and the ``cirrusfb`` boot, on each
setup's real device. They write a JUnit report into the guest's directory, which the
host reads back; the guest asks the host for screendumps with ``req-N`` files.
``test_kernel.py`` has one test per setup.

The guest tests are not collected by a normal host run: they only run when
``FBGFX_IN_GUEST=1`` is set, which the guest's command does.
"""

import os
import shlex
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

# tests/kernel is on sys.path (pytest puts a conftest's folder there)
from _boots import GUESTS, Guest, finish_boots, guest_run, register, start_boots, wait_for
from _vm import REPO, Qmp

IN_GUEST = os.environ.get("FBGFX_IN_GUEST") == "1"

if not IN_GUEST:
    collect_ignore = ["guest"]

# The display suites (guest display_NAME) and the driver setups each holds, by the device
# the setup's driver makes there.
DISPLAY_BOOTS: dict[str, dict[str, str]] = {
    "std": {"bochs": "/dev/fb0", "vfb": "/dev/fb1"},
    "cirrus": {"cirrus": "/dev/fb0"},
    "cirrusfb": {"cirrusfb": "/dev/fb0"},
}
SETUP_BOOT = {setup: boot for boot, setups in DISPLAY_BOOTS.items() for setup in setups}
# Which boot (configuration of _boots.CONFIGS) runs each suite, in which order, after which
# guest shell lines: the legacy cirrusfb takes the Cirrus card over in the cirrus boot once
# the DRM driver's suite is done (one boot for both, not one each).
DISPLAY_CONFIG = {"std": "std", "cirrus": "cirrus", "cirrusfb": "cirrus"}
DISPLAY_ORDER = {"cirrusfb": 20}
DISPLAY_PREPARE: dict[str, tuple[str, ...]] = {
    "cirrusfb": (
        "rmmod cirrus >>{outdir}/modprobe.txt 2>&1",
        "modprobe cirrusfb >>{outdir}/modprobe.txt 2>&1",
        wait_for("/dev/fb0"),
    ),
}


def screendump_shot(qmp: Qmp, req: Path) -> None:
    """Answer the guest's ``req-N`` (Kernel.screendump in guest/conftest.py): qemu's
    ``screendump`` into ``shot-N.ppm`` beside it."""
    shot = req.with_name(f"shot-{req.name[len('req-') :]}.ppm")
    qmp.execute("screendump", filename=str(shot))
    if not shot.exists():
        raise RuntimeError(f"qemu wrote no {shot.name}")


@dataclass
class GuestResult:
    """One guest test case as the guest's JUnit report recorded it."""

    nodeid: str
    outcome: str  # passed, failed, error, skipped
    message: str = ""
    time: float = 0.0
    setup: str = ""


@dataclass
class BootResult:
    """A display suite's run in its boot, as test_kernel.py reads it."""

    boot: str
    outdir: Path
    returncode: Optional[int]
    seconds: float
    results: list[GuestResult] = field(default_factory=list)
    timed_out: bool = False
    vng_dir: Optional[Path] = None

    def tail(self, name: str, lines: int = 25) -> str:
        path = self.outdir / name
        if not path.exists() and self.vng_dir is not None:
            path = self.vng_dir / name
        if not path.exists():
            return f"({name} missing)"
        text = path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def results_for(self, setup: str) -> list[GuestResult]:
        return [r for r in self.results if r.setup == setup]

    def counts(self, setup: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results_for(setup):
            out[r.outcome] = out.get(r.outcome, 0) + 1
        return out


def parse_junit(path: Path) -> list[GuestResult]:
    """Read pytest's JUnit XML into one GuestResult per test case."""
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        module = classname.replace("tests.kernel.guest.", "", 1)
        nodeid = f"{module}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = el.get("message") or ""
                if tag != "skipped" and el.text:
                    # The last line of the traceback names the assertion that failed.
                    detail = [ln for ln in el.text.splitlines() if ln.startswith("E ")]
                    if detail:
                        message = "\n".join(detail[:12])
                break
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        results.append(GuestResult(nodeid, outcome, message, float(case.get("time") or 0), props.get("setup", "")))
    return results


_warm_lock = threading.Lock()
_warmed = False


def warm_guest_bytecode() -> None:
    """Collect the guest tests once on the host, so pytest's assertion-rewritten
    bytecode is cached in __pycache__: the guest (read-only, ~100x slower under TCG)
    then reads it instead of rewriting every module itself."""
    global _warmed
    with _warm_lock:
        if _warmed:
            return
        _warmed = True
        env = dict(os.environ, FBGFX_IN_GUEST="1", FBGFX_SETUPS="", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [sys.executable, "-m", "pytest", "tests/kernel/guest", "--collect-only", "-q", "-p", "no:cacheprovider"],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )


def display_command(boot: str) -> Callable[[Path], tuple[list[str], dict[str, str]]]:
    """The display suite's guest command for ``boot``: pytest over tests/kernel/guest on
    the boot's setups, its JUnit report into the guest's directory (``python`` arguments
    and environment, for _guest_runner.py)."""

    def command(gdir: Path) -> tuple[list[str], dict[str, str]]:
        guest_env = {
            "FBGFX_IN_GUEST": "1",
            "FBGFX_SETUPS": ",".join(f"{name}={dev}" for name, dev in DISPLAY_BOOTS[boot].items()),
            "FBGFX_RWDIR": str(gdir),
            "PYTHONUNBUFFERED": "1",
            # Scanning every installed distribution for plugins costs seconds under TCG.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        guest_pytest = [
            "-m",
            "pytest",
            "tests/kernel/guest",
            "-m",
            "kernel",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            f"--junitxml={gdir}/junit.xml",
            "-o",
            "junit_family=xunit1",
            *shlex.split(os.environ.get("FBGFX_GUEST_PYTEST_ARGS", "")),
        ]
        return guest_pytest, guest_env

    return command


def _display_report(boot: str) -> Callable[[Path], list[str]]:
    def report(gdir: Path) -> list[str]:
        junit = gdir / "junit.xml"
        results = parse_junit(junit) if junit.exists() else []
        lines = []
        for setup in DISPLAY_BOOTS[boot]:
            got: dict[str, int] = {}
            for r in results:
                if r.setup == setup:
                    got[r.outcome] = got.get(r.outcome, 0) + 1
            lines.append(f"{setup}: {', '.join(f'{n} {k}' for k, n in sorted(got.items())) or 'no results'}")
            lines += [
                f"  {r.outcome.upper():8} {r.nodeid}" for r in results if r.setup == setup and r.outcome != "passed"
            ]
        return lines

    return report


for _boot in DISPLAY_BOOTS:
    register(
        Guest(
            f"display_{_boot}",
            config=DISPLAY_CONFIG[_boot],
            prepare=DISPLAY_PREPARE.get(_boot, ()),
            command=display_command(_boot),
            handle=screendump_shot,
            prefix="req-",
            before=lambda _gdir: warm_guest_bytecode(),
            report=_display_report(_boot),
            order=DISPLAY_ORDER.get(_boot, 10),
            preload=("pytest", "fbgfx", "numpy"),
        )
    )


@pytest.fixture(scope="session")
def kernel_vms() -> Callable[[str], BootResult]:
    """``get(setup) -> BootResult``: the display suite's results of the boot holding
    that setup (waiting for it; started in the background when the tests were collected)."""

    def get(setup: str) -> BootResult:
        boot = SETUP_BOOT[setup]
        run = guest_run(f"display_{boot}")
        result = BootResult(
            boot, run.dir, run.returncode, run.seconds or 0.0, timed_out=run.boot.timed_out, vng_dir=run.boot.outdir
        )
        junit = run.dir / "junit.xml"
        if junit.exists():
            result.results = parse_junit(junit)
        return result

    return get


def _uses_a_guest(item: pytest.Item) -> bool:
    return any(name in GUESTS or name == "kernel_vms" for name in getattr(item, "fixturenames", ()))


if not IN_GUEST:

    def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
        """Kernel tests last: they wait for boots that run meanwhile, beside the host tests."""
        items.sort(key=_uses_a_guest)  # stable: the order within each part stays

    def pytest_collection_finish(session: pytest.Session) -> None:
        """Start every boot the selected tests need, in the background."""
        if session.config.option.collectonly:
            return
        items = list(session.items)
        # kernel_vms asks for the display boots by setup: the guests of the selected setups
        display = {
            f"display_{SETUP_BOOT[item.callspec.params['setup']]}"
            for item in items
            if "kernel_vms" in getattr(item, "fixturenames", ()) and hasattr(item, "callspec")
        }
        start_boots(items, extra=[GUESTS[name] for name in sorted(display)])

    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        """Let this process's boots finish for the other workers (killed if interrupted)."""
        finish_boots(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel: needs a real kernel framebuffer under qemu")
    config.addinivalue_line("markers", "setups(*names): guest test runs only under these setups")
