"""Host side shared by the real-kernel harnesses: boot a kernel under qemu with virtme-ng.

conftest.py (the display boots) and the test_*_vm.py harnesses each boot a VM
that runs a shell script from this checkout as root, and answer the guest's requests
(screendumps, taps) meanwhile: the guest writes a request file into the shared
read/write directory, a thread here does it through qemu's QMP socket and answers
``done-N``. What differs between them is the qemu devices, the script and how a
request is carried out; the rest is here, with what the harnesses whose guest records
its steps in results.json (_host_link.HostLink) share: the boot (``boot_dir``,
``boot_guest``), the screendump answer, a step's result and a picture's comparison.
"""

from __future__ import annotations

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

REPO = Path(__file__).resolve().parents[2]
ENABLE_HINT = "run `bash .ci/vm-deps.sh` to install qemu, a kernel and virtme-ng"
# The touch boot, the longest, took 394 s on a loaded machine: room above it.
BOOT_TIMEOUT = float(os.environ.get("FBGFX_VM_TIMEOUT", "600"))


def vm_tools_missing() -> str | None:
    """Say which VM tool is missing, or None when a kernel can be booted."""
    missing = [tool for tool in ("vng", "qemu-system-x86_64") if shutil.which(tool) is None]
    if not glob.glob("/boot/vmlinuz-*"):
        missing.append("/boot/vmlinuz-*")
    if missing:
        return f"real-kernel tests need {', '.join(missing)}: {ENABLE_HINT}"
    kernel = kernel_image()
    release = os.path.basename(kernel)[len("vmlinuz-") :]
    if not os.path.isdir(f"/lib/modules/{release}"):
        return f"no modules for {kernel} in /lib/modules/{release}: {ENABLE_HINT}"
    return None


def kernel_image() -> str:
    """The kernel to boot: FBGFX_VM_KERNEL, else the newest /boot/vmlinuz-*."""
    images = sorted(glob.glob("/boot/vmlinuz-*"))
    return os.environ.get("FBGFX_VM_KERNEL") or (images[-1] if images else "")


class Qmp:
    """A minimal QMP client. QMP rather than the human monitor: its replies are JSON,
    not echoed keystrokes."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.buf = b""
        self._message()  # greeting
        self.execute("qmp_capabilities")

    def _message(self) -> dict[str, Any]:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("qemu closed the QMP socket")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    def execute(self, command: str, **arguments: Any) -> Any:
        """Run one QMP command; return its "return" value or raise with its error."""
        msg: dict[str, Any] = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._message()
            if "event" in reply:
                continue
            if "error" in reply:
                raise RuntimeError(f"{command}: {reply['error'].get('desc', reply['error'])}")
            return reply.get("return")

    def close(self) -> None:
        self.sock.close()


# How a request is carried out: handle(qmp, the request file) raises if it failed.
Handler = Callable[[Qmp, Path], None]


class Responder:
    """A thread answering the guest's ``PREFIX-N`` request files through QMP.

    Per request it calls ``handle`` and then writes ``done-N`` holding "ok" or the
    error, which the guest reports (the host's errors are also kept in ``errors``).
    It connects to qemu on the first request: the socket exists only once qemu runs.
    """

    def __init__(self, sock_path: str, rwdir: Path, prefix: str, handle: Handler) -> None:
        self.sock_path = sock_path
        self.rwdir = rwdir
        self.prefix = prefix
        self.handle = handle
        self.stop = threading.Event()
        self.served = 0
        self.errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name="qemu-qmp", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        qmp: Qmp | None = None
        while not self.stop.is_set():
            # By length first, so that "cmd-10" comes after "cmd-9".
            for req in sorted(self.rwdir.glob(f"{self.prefix}*"), key=lambda p: (len(p.name), p.name)):
                n = req.name[len(self.prefix) :]
                try:
                    if qmp is None:
                        qmp = Qmp(self.sock_path)
                    self.handle(qmp, req)
                    status = "ok"
                except Exception as exc:  # told to the guest, which records it
                    status = f"error: {exc}"[:500]
                    self.errors.append(status)
                req.unlink()
                # Written aside and renamed, so the guest never reads a half-written answer.
                tmp = self.rwdir / f".done-{n}"
                tmp.write_text(status)
                tmp.rename(self.rwdir / f"done-{n}")
                self.served += 1
            self.stop.wait(0.05)
        if qmp is not None:
            qmp.close()


def guest_script(outdir: Path, prepare: Sequence[str], command: str) -> list[str]:
    """The guest's shell script: ``prepare`` (load drivers, wait for devices), then
    ``command`` from this checkout with its output, exit status and the kernel log in
    ``outdir``; uptime.txt records when the guest reached each step."""
    up = f"cut -d' ' -f1 /proc/uptime >>{outdir}/uptime.txt"
    return [
        up,
        *prepare,
        f"cd {shlex.quote(str(REPO))}",
        up,
        f"{command} >{outdir}/guest-stdout.txt 2>{outdir}/guest-stderr.txt",
        f"echo $? >{outdir}/guest-rc",
        up,
        f"dmesg >{outdir}/dmesg.txt",
    ]


def guest_python(*args: object) -> str:
    """A command line running this Python in the guest (which must not write bytecode
    into the read-only checkout)."""
    return "PYTHONDONTWRITEBYTECODE=1 " + shlex.join([sys.executable, *map(str, args)])


@dataclass
class VmRun:
    """How one VM ended."""

    outdir: Path
    returncode: int | None
    seconds: float
    timed_out: bool
    served: int = 0
    errors: list[str] = field(default_factory=list)


def run_vm(
    outdir: Path,
    script: Sequence[str],
    qemu_opts: str,
    handle: Handler,
    *,
    prefix: str = "cmd-",
    append: Sequence[str] = (),
    timeout: float = BOOT_TIMEOUT,
) -> VmRun:
    """Boot the kernel under TCG with ``qemu_opts`` and ``append`` on its command line,
    run ``script`` as root, answer its ``prefix``-N requests with ``handle``, and wait
    (killing the VM after ``timeout`` seconds). Logs go into ``outdir``: guest.sh,
    vng-command.txt, vng-stdout.txt, vng-stderr.txt."""
    sockdir = tempfile.mkdtemp(prefix="fbgfx-qmp-")  # unix socket paths must stay short
    sock = os.path.join(sockdir, "qmp.sock")
    guest_sh = outdir / "guest.sh"
    guest_sh.write_text("\n".join([*script, ""]))
    cmd = [
        "vng",
        "--run",
        kernel_image(),
        "--user",
        "root",
        "--disable-kvm",
        "--cpus",
        "2",
        "--memory",
        "1G",
        "--rwdir",
        str(outdir),
        f"--qemu-opts={qemu_opts} -qmp unix:{sock},server=on,wait=off",
    ]
    for arg in append:
        cmd += ["--append", arg]
    cmd += ["--", f"sh {guest_sh}"]
    (outdir / "vng-command.txt").write_text(shlex.join(cmd) + "\n")

    responder = Responder(sock, outdir, prefix, handle)
    responder.start()
    start = time.monotonic()
    timed_out = False
    with open(outdir / "vng-stdout.txt", "wb") as out, open(outdir / "vng-stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=REPO, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - start
    responder.close()
    shutil.rmtree(sockdir, ignore_errors=True)
    return VmRun(outdir, proc.returncode, seconds, timed_out, responder.served, responder.errors)


def results_dir(name: str) -> Path:
    """An empty directory for one boot's logs: FBGFX_VM_RESULTS/NAME when that is set
    (kept after the run), else a new temporary one."""
    keep = os.environ.get("FBGFX_VM_RESULTS")
    outdir = Path(keep) / name if keep else Path(tempfile.mkdtemp(prefix=f"fbgfx-{name}-"))
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    return outdir


def guest_results(run: VmRun, what: str) -> dict[str, Any]:
    """The guest's results.json with "_outdir", "_seconds" and "_host_errors" added;
    fails the test with the logs' ends when the guest wrote none."""
    outdir = run.outdir
    results_file = outdir / "results.json"
    if not results_file.exists():
        stderr = (outdir / "guest-stderr.txt").read_text()[-3000:] if (outdir / "guest-stderr.txt").exists() else ""
        pytest.fail(
            f"{what} wrote no results in {run.seconds:.0f} s (logs in {outdir}):\n"
            f"{stderr}\n{(outdir / 'vng-stderr.txt').read_text()[-2000:]}"
        )
    results: dict[str, Any] = json.loads(results_file.read_text())
    results["_outdir"] = str(outdir)
    results["_seconds"] = run.seconds
    results["_host_errors"] = run.errors
    return results


def boot_dir(name: str) -> Path:
    """A boot fixture's ``results_dir(name)``; skips the test, with the reason, when no
    VM can be booted."""
    reason = vm_tools_missing()
    if reason:
        pytest.skip(reason)
    return results_dir(name)


def load_drm_cards(outdir: Path, modules: Sequence[str]) -> list[str]:
    """Guest shell lines loading each DRM driver in turn (modprobe's output into
    modprobe.txt), each waiting up to 10 s for one more /dev/dri/card*, so that the
    cards are numbered in this order."""
    return [
        f"modprobe {mod} >>{outdir}/modprobe.txt 2>&1; "
        f"for i in $(seq 100); do [ $(ls /dev/dri/card* 2>/dev/null | wc -l) -ge {i} ] && break; sleep 0.1; done"
        for i, mod in enumerate(modules, 1)
    ]


def boot_guest(
    outdir: Path,
    guest: str,
    qemu_opts: str,
    handle: Handler,
    prepare: Sequence[str],
    *args: object,
    append: Sequence[str] = (),
) -> dict[str, Any]:
    """Boot with ``qemu_opts`` (and ``append`` on the kernel command line), run
    ``prepare`` and then ``tests/kernel/GUEST OUTDIR ARGS...`` as root, answering its
    cmd-N requests with ``handle``; return its results.json (``guest_results``)."""
    script = guest_script(outdir, prepare, guest_python(f"tests/kernel/{guest}", outdir, *args))
    run = run_vm(outdir, script, qemu_opts, handle, append=append)
    return guest_results(run, shlex.join([guest, *map(str, args)]))


def answer_screendump(qmp: Qmp, cmd: Path) -> None:
    """Carry out the guest's cmd-N screendump (``HostLink.screendump``): into the file it
    names beside it, of the display device and head it names (qemu's first if none)."""
    request = json.loads(cmd.read_text())
    args: dict[str, Any] = {"filename": str(cmd.parent / request["file"])}
    if request.get("device"):
        args["device"] = request["device"]
    if request.get("head") is not None:
        args["head"] = request["head"]
    qmp.execute("screendump", **args)


def guest_step(results: dict[str, Any], name: str) -> dict[str, Any]:
    """The result the guest recorded for step ``name``; fails the test with the guest's
    error and traceback when the guest stopped, did not reach the step or the step raised."""
    if "fatal" in results:
        pytest.fail(f"the guest stopped: {results['fatal']['error']}\n{results['fatal'].get('traceback', '')}")
    result = results.get(name)
    if result is None:
        pytest.fail(f"the guest did not reach {name} (logs in {results['_outdir']}); it has {sorted(results)}")
    if "error" in result:
        pytest.fail(f"{name} in the guest: {result['error']}\n{result.get('traceback', '')}")
    return result


def assert_shown(compared: dict[str, Any], what: str) -> None:
    """A guest's comparison of a screendump with the picture it drew
    (``drm_guest.compare``) found every pixel equal."""
    assert compared["diff"] == 0, f"{what}: {compared}"
