"""Host side of a VM: boot a kernel under qemu with virtme-ng and answer the guests.

``run_vm`` boots Debian's kernel under TCG with some qemu devices and runs a shell script
from this checkout as root; meanwhile a thread (``Responder``) answers the guests'
requests: a guest writes a request file into its directory (shared read/write with the
VM), the thread carries it out through qemu's QMP socket (a screendump, a tap) and
answers ``done-N``. Which boots run which guests is _boots.py's; here are also the
helpers the harnesses share to read a guest's results (``guest_step``,
``assert_shown``, ``answer_screendump``).
"""

from __future__ import annotations

import contextlib
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
ENABLE_HINT = "run `sudo bash .ci/test-deps.sh` to install qemu and a kernel (virtme-ng comes with the test extra)"


def vng() -> str | None:
    """virtme-ng's ``vng``: on PATH, or beside this Python (the test extra installs it into a
    venv that need not be activated)."""
    beside = Path(sys.executable).parent / "vng"
    return shutil.which("vng") or (str(beside) if beside.exists() else None)


def vm_tools_missing() -> str | None:
    """Say which VM tool is missing, or None when a kernel can be booted."""
    missing = ["vng"] if vng() is None else []
    missing += [tool for tool in ("qemu-system-x86_64",) if shutil.which(tool) is None]
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


# A guest's request channel: its directory, the prefix of its request files, and how
# a request is carried out.
Channel = tuple[Path, str, Handler]


class Responder:
    """A thread answering the guests' ``PREFIX-N`` request files through QMP.

    Each channel is a guest's directory with the prefix of its requests and how to carry
    one out. Per request it calls the handler and then writes ``done-N`` beside it,
    holding "ok" or the error, which the guest reports (the host's errors are also kept
    in ``errors``). It connects to qemu on the first request: the socket exists only
    once qemu runs.
    """

    def __init__(self, sock_path: str, channels: Sequence[Channel]) -> None:
        self.sock_path = sock_path
        self.channels = list(channels)
        self.stop = threading.Event()
        self.served = 0
        self.errors: list[str] = []
        self._qmp: Qmp | None = None
        self._thread = threading.Thread(target=self._run, name="qemu-qmp", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self._thread.join(timeout=10)

    def _answer(self, rwdir: Path, prefix: str, handle: Handler) -> None:
        # By length first, so that "cmd-10" comes after "cmd-9".
        for req in sorted(rwdir.glob(f"{prefix}*"), key=lambda p: (len(p.name), p.name)):
            n = req.name[len(prefix) :]
            try:
                if self._qmp is None:
                    self._qmp = Qmp(self.sock_path)
                handle(self._qmp, req)
                status = "ok"
            except Exception as exc:  # told to the guest, which records it
                status = f"error: {exc}"[:500]
                self.errors.append(status)
            req.unlink()
            # Written aside and renamed, so the guest never reads a half-written answer.
            tmp = rwdir / f".done-{n}"
            tmp.write_text(status)
            tmp.rename(rwdir / f"done-{n}")
            self.served += 1

    def _run(self) -> None:
        while not self.stop.is_set():
            for channel in self.channels:
                self._answer(*channel)
            self.stop.wait(0.05)
        if self._qmp is not None:
            self._qmp.close()


def guest_python(*args: object) -> str:
    """A command line running this Python in the guest (which must not write bytecode
    into the read-only checkout)."""
    return "env PYTHONDONTWRITEBYTECODE=1 " + shlex.join([sys.executable, *map(str, args)])


@dataclass
class VmRun:
    """How one VM ended."""

    outdir: Path
    returncode: int | None
    seconds: float
    timed_out: bool
    served: int = 0
    errors: list[str] = field(default_factory=list)
    cpu_seconds: float = 0.0  # the VM's CPU time (vng and qemu): what a boot costs a loaded machine


def _wait(proc: subprocess.Popen[bytes], timeout: float, started: Path | None = None) -> tuple[str, float]:
    """Wait for ``proc``, killing its process group after ``timeout`` seconds, or after
    :data:`START_LIMIT` seconds when the file ``started`` has not appeared by then (the
    guest never ran). Return how it ended ("exited", "timed out" or "stalled") and the
    CPU seconds it and the children it waited for used."""
    begun = time.monotonic()
    ended = "exited"
    while True:
        pid, status, usage = os.wait4(proc.pid, 0 if ended != "exited" else os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return ended, usage.ru_utime + usage.ru_stime
        waited = time.monotonic() - begun
        if waited > timeout:
            ended = "timed out"
        elif started is not None and waited > START_LIMIT and not started.exists():
            ended = "stalled"
        if ended != "exited":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            time.sleep(0.2)


#: Modules udev would load at boot for qemu's q35 chipset, vng's watchdog and the TCG CPU's
#: features (kvm for its SVM, the SIMD crypto), which no test uses: loading them from the
#: host's filesystem under TCG took half of the time from the kernel's start to the
#: script (72 -> 44 s of CPU per boot at load 2-4). ``modprobe.blacklist`` stops udev's
#: loads by alias only; a guest's ``modprobe NAME`` still loads a module by its name.
UNUSED_MODULES = (
    *("kvm_amd", "kvm_intel", "kvm", "irqbypass", "ccp", "powernow_k8"),
    *("aesni_intel", "crypto_simd", "cryptd", "ghash_clmulni_intel", "crc32_pclmul", "crc32c_intel"),
    *("crct10dif_pclmul", "sha1_ssse3", "sha256_ssse3", "sha512_ssse3", "intel_rapl_msr", "intel_rapl_common"),
    *("ahci", "libahci", "ata_piix", "ata_generic", "libata", "scsi_mod", "sr_mod", "cdrom", "sg"),
    *("lpc_ich", "i2c_i801", "i2c_smbus", "iTCO_wdt", "iTCO_vendor_support", "intel_pmc_bxt", "i6300esb"),
    *("psmouse", "serio_raw", "pcspkr", "joydev", "mousedev", "button", "qemu_fw_cfg", "virtio_rng", "rng_core"),
)


#: Seconds a boot may take to run the first line of its script (it took 20-180 s, at load
#: 24 for the longest); a VM that has not by then is killed and booted once more. One
#: vkms boot of a full run sat 25 minutes without reaching it (cause unknown: its kernel
#: log is now kept, in vng-stdout.txt).
START_LIMIT = 420.0


def run_vm(
    outdir: Path,
    script: Sequence[str],
    qemu_opts: str,
    channels: Sequence[Channel],
    *,
    append: Sequence[str] = (),
    timeout: float,
) -> VmRun:
    """Boot the kernel under TCG with ``qemu_opts`` and ``append`` on its command line,
    run ``script`` as root, answer the guests' requests on ``channels``, and wait
    (killing the VM after ``timeout`` seconds; booting it once more when it has not
    started the script after :data:`START_LIMIT` seconds). Logs go into ``outdir``:
    guest.sh, vng-command.txt, vng-stdout.txt (with the kernel's log), vng-stderr.txt."""
    sockdir = tempfile.mkdtemp(prefix="fbgfx-qmp-")  # unix socket paths must stay short
    sock = os.path.join(sockdir, "qmp.sock")
    guest_sh = outdir / "guest.sh"
    guest_sh.write_text("\n".join([*script, ""]))
    cmd = [
        vng() or "vng",
        "--run",
        kernel_image(),
        "--user",
        "root",
        "--disable-kvm",
        "--verbose",  # the kernel's log in vng-stdout.txt: what a VM that hangs was doing
        # One vCPU: a second one cost a third more of the host's CPU (the guests'
        # Python is one thread; a vCPU waiting on the other spins while the host runs
        # something else): 106 -> 69 s for a boot and the guests' imports at load 5-6.
        "--cpus",
        os.environ.get("FBGFX_VM_CPUS", "1"),
        "--memory",
        "1G",
        "--rwdir",
        str(outdir),
        f"--qemu-opts={qemu_opts} -qmp unix:{sock},server=on,wait=off",
    ]
    for arg in (*append, f"modprobe.blacklist={','.join(UNUSED_MODULES)}"):
        cmd += ["--append", arg]
    cmd += ["--", f"sh {guest_sh}"]
    (outdir / "vng-command.txt").write_text(shlex.join(cmd) + "\n")

    responder = Responder(sock, channels)
    responder.start()
    start = time.monotonic()
    errors: list[str] = []
    cpu = 0.0
    for attempt in (1, 2):
        with open(outdir / "vng-stdout.txt", "wb") as out, open(outdir / "vng-stderr.txt", "wb") as err:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=REPO, start_new_session=True
            )
            _RUNNING.add(proc)
            reaper = _reaper(proc)
            try:
                ended, used = _wait(proc, timeout, started=outdir / "uptime.txt")
            finally:
                _RUNNING.discard(proc)
                reaper.kill()
                reaper.wait()
        cpu += used
        if ended != "stalled" or attempt == 2:
            break
        for log in ("vng-stdout.txt", "vng-stderr.txt"):  # the stalled boot's, for a look
            os.replace(outdir / log, outdir / f"stalled-{log}")
        errors.append(f"the VM had not started its script after {START_LIMIT:.0f} s: booted again")
    seconds = time.monotonic() - start
    responder.close()
    shutil.rmtree(sockdir, ignore_errors=True)
    if ended == "stalled":
        errors.append(f"the VM had not started its script after {START_LIMIT:.0f} s, twice")
    return VmRun(outdir, proc.returncode, seconds, ended != "exited", responder.served, responder.errors + errors, cpu)


_RUNNING: set[subprocess.Popen[bytes]] = set()


def _reaper(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """A watcher that kills ``proc``'s process group (vng and its qemu) once this process
    is gone, however it went: a pytest killed by SIGTERM or SIGKILL runs none of its own
    clean-up, and the VM would run on to its time limit."""
    watch = f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 2; done; kill -9 -{proc.pid} 2>/dev/null"
    return subprocess.Popen(
        ["sh", "-c", watch],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill_vms() -> None:
    """Kill every VM this process runs (an interrupted run)."""
    for proc in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


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
    if not isinstance(result, dict):
        why = " before it was stopped at its time limit (FBGFX_VM_TIMEOUT)" if results.get("_returncode") == 124 else ""
        pytest.fail(f"the guest did not reach {name}{why} (logs in {results['_outdir']}); it has {sorted(results)}")
    if "error" in result:
        pytest.fail(f"{name} in the guest: {result['error']}\n{result.get('traceback', '')}")
    return result


def assert_shown(compared: dict[str, Any], what: str) -> None:
    """A guest's comparison of a screendump with the picture it drew
    (``drm_guest.compare``) found every pixel equal."""
    assert compared["diff"] == 0, f"{what}: {compared}"
