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
import glob
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

IN_GUEST = os.environ.get("FBGFX_IN_GUEST") == "1"

if not IN_GUEST:
    collect_ignore = ["guest"]

REPO = Path(__file__).resolve().parents[2]
ENABLE_HINT = "run `bash .ci/vm-deps.sh` to install qemu, a kernel and virtme-ng"

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

BOOT_TIMEOUT = float(os.environ.get("FBGFX_VM_TIMEOUT", "420"))


def vm_tools_missing() -> Optional[str]:
    """Say which VM tool is missing, or None when a kernel can be booted."""
    missing = [tool for tool in ("vng", "qemu-system-x86_64") if shutil.which(tool) is None]
    if not glob.glob("/boot/vmlinuz-*"):
        missing.append("/boot/vmlinuz-*")
    if missing:
        return f"real-kernel tests need {', '.join(missing)}: {ENABLE_HINT}"
    kernel = _kernel_image()
    release = os.path.basename(kernel)[len("vmlinuz-") :]
    if not os.path.isdir(f"/lib/modules/{release}"):
        return f"no modules for {kernel} in /lib/modules/{release}: {ENABLE_HINT}"
    return None


def _kernel_image() -> str:
    images = sorted(glob.glob("/boot/vmlinuz-*"))
    return os.environ.get("FBGFX_VM_KERNEL", images[-1] if images else "")


class Monitor:
    """Answers screendump requests from the guest through qemu's QMP socket.

    The guest writes ``req-N`` into the shared directory; this thread asks qemu for
    ``screendump`` into ``shot-N.ppm`` and then writes ``done-N`` (holding "ok" or the
    error). QMP rather than the human monitor: its replies are JSON, not echoed
    keystrokes.
    """

    def __init__(self, sock_path: str, rwdir: Path) -> None:
        self.sock_path = sock_path
        self.rwdir = rwdir
        self.stop = threading.Event()
        self.served = 0
        self.errors: list[str] = []
        self._sock: Optional[socket.socket] = None
        self._buf = b""
        self._thread = threading.Thread(target=self._run, name="qemu-qmp", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()

    def _connect(self) -> socket.socket:
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(60)
            sock.connect(self.sock_path)
            self._sock = sock
            self._message()  # the greeting
            self.execute("qmp_capabilities")
        return self._sock

    def _message(self) -> dict:
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("qemu closed the QMP socket")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command: str, **arguments) -> dict:
        """Run one QMP command; return its "return" value or raise with its error."""
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self._sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._message()
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(f"{command}: {reply['error'].get('desc', reply['error'])}")
            return reply.get("return", {})

    def _run(self) -> None:
        while not self.stop.is_set():
            for req in sorted(self.rwdir.glob("req-*")):
                n = req.name[len("req-") :]
                try:
                    self._connect()
                    shot = self.rwdir / f"shot-{n}.ppm"
                    self.execute("screendump", filename=str(shot))
                    status = "ok" if shot.exists() else f"error: qemu wrote no {shot.name}"
                except Exception as exc:  # reported to the guest, which fails its test
                    status = f"error: {exc}"[:500]
                    self.errors.append(status)
                req.unlink()
                tmp = self.rwdir / f".done-{n}"
                tmp.write_text(status)
                tmp.rename(self.rwdir / f"done-{n}")
                self.served += 1
            self.stop.wait(0.05)


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
    sockdir = tempfile.mkdtemp(prefix="fbgfx-vm-")  # unix socket paths must stay short
    sock = os.path.join(sockdir, "qmp.sock")
    qemu_opts = f"-vga {spec['vga']} -qmp unix:{sock},server=on,wait=off"
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
    # The guest runs this script; uptime.txt records when it reached each step.
    up = f"cut -d' ' -f1 /proc/uptime >>{outdir}/uptime.txt"
    script = outdir / "guest.sh"
    script.write_text(
        "\n".join(
            [
                up,
                f"cd {shlex.quote(str(REPO))}",
                *[
                    f"{load} >>{outdir}/modprobe.txt 2>&1; "
                    # the next driver must not take this one's device number
                    f"for i in $(seq 100); do [ -e {dev} ] && break; sleep 0.1; done"
                    for load, dev in spec["setups"].values()
                ],
                up,
                f"env {env} {shlex.join(guest_pytest)} >{outdir}/guest-stdout.txt 2>{outdir}/guest-stderr.txt",
                f"echo $? >{outdir}/guest-rc",
                up,
                f"dmesg >{outdir}/dmesg.txt",
                "",
            ]
        )
    )
    cmd = [
        "vng",
        "--run",
        _kernel_image(),
        "--user",
        "root",
        "--disable-kvm",
        "--cpus",
        "2",
        "--memory",
        "1G",
        "--rwdir",
        str(outdir),
        f"--qemu-opts={qemu_opts}",
    ]
    for arg in spec["append"]:
        cmd += ["--append", arg]
    cmd += ["--", f"sh {script}"]
    (outdir / "vng-command.txt").write_text(shlex.join(cmd) + "\n")

    monitor = Monitor(sock, outdir)
    monitor.start()
    start = time.monotonic()
    timed_out = False
    with open(outdir / "vng-stdout.txt", "wb") as out, open(outdir / "vng-stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=REPO,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=BOOT_TIMEOUT)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - start
    monitor.close()
    shutil.rmtree(sockdir, ignore_errors=True)

    result = BootResult(boot, outdir, proc.returncode, seconds, screendumps=monitor.served, timed_out=timed_out)
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
