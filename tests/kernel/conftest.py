"""Host side of the real-kernel tests: boot a Debian kernel under qemu with virtme-ng.

Three boots (see BOOTS) cover four driver setups: bochs and vfb share one, cirrus and
cirrusfb have one each. Inside the guest the tests under ``guest/`` run as root on each
setup's real device; they write a JUnit report into a shared read/write directory,
which the host reads back. A thread on the host answers the guest's screendump
requests through qemu's QMP socket, so the guest can compare what it drew with what the
emulated monitor shows. ``test_kernel.py`` has one test per setup.

The guest tests are not collected by a normal host run: they only run when
``FBGFX_IN_GUEST=1`` is set, which the boot script does.
"""

import concurrent.futures
import os
import shlex
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from _vm import REPO, Qmp, guest_script, run_vm, vm_tools_missing  # tests/kernel is on sys.path

IN_GUEST = os.environ.get("FBGFX_IN_GUEST") == "1"

if not IN_GUEST:
    collect_ignore = ["guest"]

# The boots: qemu display adapter, kernel command line, and the driver setups loaded
# in the guest, in order, each as (module load command, the device it creates).
# vfb needs no display, so it shares the bochs boot as fb1: one boot less.
BOOTS: dict[str, dict] = {
    "std": {
        "vga": "std",
        "append": [],
        "setups": {
            "bochs": ("modprobe bochs", "/dev/fb0"),
            "vfb": ("modprobe vfb vfb_enable=1 videomemorysize=16777216", "/dev/fb1"),
        },
    },
    "cirrus": {"vga": "cirrus", "append": [], "setups": {"cirrus": ("modprobe cirrus", "/dev/fb0")}},
    "cirrusfb": {
        "vga": "cirrus",
        "append": ["modprobe.blacklist=cirrus"],
        "setups": {"cirrusfb": ("modprobe cirrusfb", "/dev/fb0")},
    },
}
SETUP_BOOT = {setup: boot for boot, spec in BOOTS.items() for setup in spec["setups"]}


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
    boot: str
    outdir: Path
    returncode: Optional[int]
    seconds: float
    results: list[GuestResult] = field(default_factory=list)
    screendumps: int = 0
    timed_out: bool = False

    def tail(self, name: str, lines: int = 25) -> str:
        path = self.outdir / name
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


def boot_and_test(boot: str, outdir: Path, pytest_args: list[str] = ()) -> BootResult:
    """Boot the kernel for ``boot``, load its drivers, run the guest tests on each
    device, and collect their results."""
    spec = BOOTS[boot]
    outdir.mkdir(parents=True, exist_ok=True)
    warm_guest_bytecode()
    guest_env = {
        "FBGFX_IN_GUEST": "1",
        "FBGFX_SETUPS": ",".join(f"{name}={dev}" for name, (_, dev) in spec["setups"].items()),
        "FBGFX_RWDIR": str(outdir),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # Scanning every installed distribution for plugins costs seconds under TCG.
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    guest_pytest = [
        sys.executable,
        "-m",
        "pytest",
        "tests/kernel/guest",
        "-m",
        "kernel",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rA",
        f"--junitxml={outdir}/junit.xml",
        "-o",
        "junit_family=xunit1",
        *pytest_args,
    ]
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in guest_env.items())
    loads = [
        f"{load} >>{outdir}/modprobe.txt 2>&1; "
        # the next driver must not take this one's device number
        f"for i in $(seq 100); do [ -e {dev} ] && break; sleep 0.1; done"
        for load, dev in spec["setups"].values()
    ]
    run = run_vm(
        outdir,
        guest_script(outdir, loads, f"env {env} {shlex.join(guest_pytest)}"),
        f"-vga {spec['vga']}",
        screendump_shot,
        prefix="req-",
        append=spec["append"],
    )
    result = BootResult(boot, outdir, run.returncode, run.seconds, screendumps=run.served, timed_out=run.timed_out)
    junit = outdir / "junit.xml"
    if junit.exists():
        result.results = parse_junit(junit)
    return result


_BOOTS: list[BootResult] = []


@pytest.fixture(scope="session")
def kernel_vms(request, tmp_path_factory):
    """Boot every VM this session's setups need, FBGFX_VM_JOBS (default 1) at a time.

    Returns ``get(setup) -> BootResult``, which waits for the VM holding that setup.
    The guests are CPU-bound under TCG, so VMs side by side finish no sooner; one at a
    time is as fast and keeps each well inside its timeout. Skips when the VM tools are
    missing.
    """
    reason = vm_tools_missing()
    if reason:
        pytest.skip(reason)
    wanted = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        boot = SETUP_BOOT.get(callspec.params.get("setup")) if callspec else None
        if boot and boot not in wanted:
            wanted.append(boot)
    keep = os.environ.get("FBGFX_VM_RESULTS")
    extra = shlex.split(os.environ.get("FBGFX_GUEST_PYTEST_ARGS", ""))

    def run(boot: str) -> BootResult:
        outdir = Path(keep) / boot if keep else tmp_path_factory.mktemp(f"vm-{boot}")
        if keep and outdir.exists():
            shutil.rmtree(outdir)
        result = boot_and_test(boot, outdir, extra)
        _BOOTS.append(result)
        return result

    jobs = max(1, int(os.environ.get("FBGFX_VM_JOBS", "1")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {boot: pool.submit(run, boot) for boot in wanted}

        def get(setup: str) -> BootResult:
            boot = SETUP_BOOT[setup]
            if boot not in futures:
                futures[boot] = pool.submit(run, boot)
            return futures[boot].result()

        yield get


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel: needs a real kernel framebuffer under qemu")
    config.addinivalue_line("markers", "setups(*names): guest test runs only under these setups")


def pytest_terminal_summary(terminalreporter):
    """List every guest test per setup, so passes and skips inside the VMs are visible."""
    if not _BOOTS:
        return
    tr = terminalreporter
    tr.section("real-kernel guest tests")
    for boot in sorted(_BOOTS, key=lambda b: b.boot):
        tr.write_line(
            f"boot {boot.boot} ({', '.join(BOOTS[boot.boot]['setups'])}): {boot.seconds:.0f} s, "
            f"{boot.screendumps} screendumps, logs in {boot.outdir}"
        )
        for setup in BOOTS[boot.boot]["setups"]:
            counts = ", ".join(f"{n} {k}" for k, n in sorted(boot.counts(setup).items()))
            tr.write_line(f"  {setup}: {counts or 'no results'}")
            for r in boot.results_for(setup):
                if r.outcome != "passed" or tr.verbosity > 0:
                    first = r.message.splitlines()[0] if r.message else ""
                    tr.write_line(f"    {r.outcome.upper():8} {r.nodeid}  {first}")
