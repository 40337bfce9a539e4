"""Shared boots: each kernel configuration boots once and runs every guest script that needs it.

A **configuration** (``CONFIGS``) is what a boot is made of: qemu's devices, the kernel
command line and the guest shell lines that load drivers and wait for their devices.
A **guest** (``Guest``, declared by the test module that checks it, through
``guest_fixture``) is one script run as root inside a boot of its configuration, with
its own directory for its requests and results. A boot runs its guests one after the
other, each under its own time limit, so a guest that hangs leaves the others' results.

When pytest has collected the tests (``start_boots``, called by conftest.py), every
configuration that a selected test needs is started in the background, the longest
first, ``FBGFX_VM_JOBS`` at a time (default 2) over the whole run: with pytest-xdist,
the workers claim boots through files in ``FBGFX_BOOTS_DIR`` (one directory per run,
made by tests/conftest.py), so each configuration boots once whichever worker asks.
The host tests run meanwhile; kernel tests are moved to the end of the run and their
fixtures wait for their boot's results.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _vm import (
    REPO,
    Handler,
    answer_screendump,
    guest_python,
    kernel_image,
    run_vm,
    vm_tools_missing,
)

# A guest's time limit inside the VM (seconds): the bochs/vfb display suite, about 90 s on
# idle cores, took 484 s at load 24 (8 engineers on 2 cores); a hang guard, not a pace.
# The VM's own limit is the boot's allowance plus its guests' limits.
GUEST_TIMEOUT = float(os.environ.get("FBGFX_VM_TIMEOUT", "900"))
BOOT_ALLOWANCE = 600.0  # the boot and prepare took 180 s at load 24


def wait_for(path: str, seconds: float = 10) -> str:
    """A guest shell line waiting up to ``seconds`` for ``path`` (a shell word: globs work)."""
    return f"for i in $(seq {int(seconds * 10)}); do ls {path} >/dev/null 2>&1 && break; sleep 0.1; done"


def vkms_module() -> Path:
    """Where .ci/vkms.sh (run by .ci/vm-deps.sh) caches vkms.ko built for the test kernel."""
    release = os.path.basename(kernel_image())[len("vmlinuz-") :]
    cache = os.environ.get("FBGFX_VM_CACHE", "/var/cache/fbgfx-vm")
    return Path(cache) / f"vkms-{release}" / "vkms.ko"


def vkms_missing() -> str | None:
    """Why the vkms guest cannot run here (no vkms.ko built), or None."""
    ko = vkms_module()
    return None if ko.exists() else f"no {ko} (Debian's kernel has no vkms): run `sudo bash .ci/vm-deps.sh`"


def load_drm_cards(modules: Sequence[str]) -> list[str]:
    """Guest shell lines loading each DRM driver in turn, each waiting up to 10 s for one
    more /dev/dri/card*, so that the cards are numbered in this order."""
    return [
        f"modprobe {mod} >>{{outdir}}/modprobe.txt 2>&1; "
        f"for i in $(seq 100); do [ $(ls /dev/dri/card* 2>/dev/null | wc -l) -ge {i} ] && break; sleep 0.1; done"
        for i, mod in enumerate(modules, 1)
    ]


@dataclass(frozen=True)
class Config:
    """One kernel configuration: a boot shared by every guest that needs it.

    ``qemu`` and the ``prepare`` lines may name the boot's directory as ``{outdir}``
    (qemu's recording of the sound goes there, say).
    """

    qemu: str
    append: tuple[str, ...] = ()
    prepare: tuple[str, ...] = ()
    # Why this machine cannot boot it (a module not built yet, say), or None.
    missing: Callable[[], str | None] | None = None
    # Seconds alone on an idle machine, boot included (about its CPU seconds: one vCPU),
    # so that the longest boots start first.
    estimate: float = 120.0


# Every configuration. A guest names one; a configuration nobody selected does not boot.
CONFIGS: dict[str, Config] = {
    # bochs (DRM fbdev emulation with two pages, /dev/fb0, card0, the text console on
    # it), vfb (/dev/fb1), qemu's virtio tablet and an Intel HDA sound card recorded into
    # sound.wav.
    "std": Config(
        qemu="-vga std -device virtio-tablet-pci,id=tablet0 "
        "-audiodev wav,id=snd0,path={outdir}/sound.wav -device intel-hda -device hda-duplex,audiodev=snd0",
        append=("drm_kms_helper.drm_fbdev_overalloc=200",),
        prepare=(
            # the next framebuffer must not take bochs' number
            *load_drm_cards(["bochs"]),
            wait_for("/dev/fb0"),
            "modprobe vfb vfb_enable=1 videomemorysize=16777216 >>{outdir}/modprobe.txt 2>&1",
            "modprobe -a virtio_input evdev uinput snd-hda-intel >>{outdir}/modprobe.txt 2>&1",
            wait_for("/dev/fb1"),
            wait_for("/dev/input/event*"),
            wait_for("/dev/snd/pcmC0D0p"),
            wait_for("/dev/tty1", 5),
            # a new card's outputs start muted (alsactl or a sound server would unmute them)
            "amixer -c 0 scontrols >{outdir}/mixer.txt 2>&1",
            "amixer -c 0 scontrols | sed -n \"s/^Simple mixer control '\\(.*\\)',.*/\\1/p\" | "
            'while read -r c; do amixer -q -c 0 sset "$c" 100% unmute 2>/dev/null; done',
        ),
        estimate=430,
    ),
    # cirrus' DRM driver with fbdev emulation: 1024x768 RGB565; then the legacy cirrusfb
    # driver in its place (cirrus unloaded, tests/kernel/conftest.py): 8 bpp palette, real
    # mode switching.
    "cirrus": Config(
        qemu="-vga cirrus",
        prepare=("modprobe cirrus >>{outdir}/modprobe.txt 2>&1", wait_for("/dev/fb0")),
        estimate=230,
    ),
    # Three DRM cards without fbdev: cirrus, bochs and virtio-gpu, numbered in that order
    # (the layers' guest loads vkms as a fourth after the others: test_layers_vm.py).
    "drm": Config(
        qemu="-vga none -device cirrus-vga,id=cirrusvga -device bochs-display,id=bochsdisp "
        "-device virtio-gpu-pci,id=virtiogpu",
        append=("drm_kms_helper.fbdev_emulation=0",),
        prepare=tuple(load_drm_cards(["cirrus", "bochs", "virtio_gpu"])),
        estimate=320,
    ),
    # Two monitors on virtio-gpu (max_outputs=2) and bochs-display, a second card.
    "monitors": Config(
        qemu="-vga none -device virtio-gpu-pci,max_outputs=2,id=gpu0 -device bochs-display,id=bochs0",
        append=("drm_kms_helper.fbdev_emulation=0",),
        # virtio-gpu first where the kernel has not bound a driver already (the guest asks
        # which card is which)
        prepare=tuple(load_drm_cards(["virtio_gpu", "bochs"])),
        estimate=140,
    ),
}


# What every guest imports (the modules a guest's forked `fbgfx` commands import are
# named by the guest: Guest(preload=PRELOAD + (...))).
PRELOAD = ("fbgfx", "fbgfx.drm", "fbgfx.cli", "PIL.Image", "_host_link", "_forked")
# PyAV and fbgfx's video player (the guests that play files: their import is the most
# costly, and each forked `fbgfx play` would import them again).
VIDEO = ("av", "fbgfx.video", "fbgfx.cli.play")
KIOSK = ("fbgfx.kiosk.mirror", "fbgfx.kiosk.idle", "fbgfx.cli.idle", "fbgfx.cli.mirror", "fbgfx.touch")
TOUCH = ("fbgfx.touch", "fbgfx.cli.touch")


@dataclass(frozen=True)
class Guest:
    """A script run as root in a boot of ``config``, from this checkout.

    By default it runs as ``python tests/kernel/SCRIPT GUESTDIR ARGS...`` would, forked
    from the boot's one Python (``_guest_runner.py``, which has imported ``preload``
    already); the script asks the host for things by writing ``PREFIX-N`` files into
    GUESTDIR, which ``handle`` carries out (``_host_link.HostLink`` is the guest's
    side), and records its results in GUESTDIR/results.json.
    """

    name: str  # unique over all guests; also the name of its fixture (guest_fixture)
    config: str
    script: str = ""
    args: tuple[str, ...] = ()
    handle: Handler = answer_screendump
    prefix: str = "cmd-"
    # Guest shell lines run just before this guest (GUESTDIR is {gdir}, the boot's {outdir}).
    prepare: tuple[str, ...] = ()
    # Host side before the boot, given GUESTDIR (make a video file the guest plays, say).
    before: Callable[[Path], None] | None = None
    # The whole command instead of ``script``: given GUESTDIR, the arguments of ``python``
    # (a script's path or ``-m MODULE``, then its own) and the environment it adds.
    command: Callable[[Path], tuple[list[str], dict[str, str]]] | None = None
    # Modules the boot's Python imports before it forks the guests (imported once per
    # boot, not once per guest, nor again in the programs a guest forks: fbgfx.cli's
    # commands, say).
    preload: tuple[str, ...] = PRELOAD
    # Lower runs earlier in the boot (a guest that unplugs a device the others use: last).
    order: int = 50
    # Why this machine cannot run it (a module not built, say), or None: it is then
    # skipped with the reason, and its boot runs the others.
    missing: Callable[[], str | None] | None = None
    timeout: float = GUEST_TIMEOUT
    # Lines for the run's summary, given GUESTDIR after the boot (counts of its results).
    report: Callable[[Path], list[str]] | None = None

    def plan(self, gdir: Path, outdir: Path) -> dict[str, Any]:
        """What _guest_runner.py runs for this guest in the boot whose directory is ``outdir``."""
        if self.command is not None:
            argv, env = self.command(gdir)
        else:
            argv, env = [f"tests/kernel/{self.script}", str(gdir), *self.args], {}
        return {
            "name": self.name,
            "dir": str(gdir),
            "argv": argv,
            "env": env,
            "prepare": [line.format(outdir=outdir, gdir=gdir) for line in self.prepare],
            "timeout": self.timeout,
        }


GUESTS: dict[str, Guest] = {}


@dataclass
class GuestRun:
    """How one guest of a boot ended: its directory, exit status (None when it did not
    finish), seconds, and its boot."""

    guest: str
    dir: Path
    returncode: int | None
    seconds: float | None
    boot: BootRun


@dataclass
class BootRun:
    """How one boot ended (read back from FBGFX_BOOTS_DIR, whichever process booted it)."""

    config: str
    outdir: Path
    returncode: int | None
    seconds: float
    timed_out: bool
    served: int
    errors: list[str]
    guests: list[str]
    started: float = 0.0  # seconds after the run began
    skipped: str = ""
    report: list[str] = field(default_factory=list)  # the run's summary lines
    cpu_seconds: float = 0.0

    def guest(self, name: str) -> GuestRun:
        gdir = self.outdir / name
        rc_file = gdir / "guest-rc"
        rc = int(rc_file.read_text()) if rc_file.exists() and rc_file.read_text().strip() else None
        marks = (gdir / "uptime.txt").read_text().split() if (gdir / "uptime.txt").exists() else []
        seconds = float(marks[1]) - float(marks[0]) if len(marks) >= 2 else None
        return GuestRun(name, gdir, rc, seconds, self)

    def tail(self, name: str, lines: int = 25) -> str:
        """The last lines of one of the boot's logs (vng-stderr.txt, say)."""
        path = self.outdir / name
        if not path.exists():
            return f"({name} missing)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def register(guest: Guest) -> Guest:
    """Add ``guest`` to GUESTS (a second declaration must be the same guest)."""
    if guest.config not in CONFIGS:
        raise ValueError(f"guest {guest.name}: no configuration {guest.config!r} in CONFIGS")
    known = GUESTS.setdefault(guest.name, guest)
    if known != guest:
        raise ValueError(f"two guests are named {guest.name}")
    return guest


def guest_fixture(guest: Guest) -> Any:
    """Register ``guest`` and return a session fixture named after it: its results.json as a
    dict (``_vm.guest_results``: with "_outdir", the guest's directory, and "_boot_dir"),
    waiting for its boot. Skips, with the reason, where the machine cannot boot it."""
    register(guest)

    @pytest.fixture(scope="session", name=guest.name)
    def results() -> dict[str, Any]:
        return guest_results(guest_run(guest.name))

    return results


def skip_reason(config: str) -> str | None:
    """Why this machine cannot boot ``config``, or None."""
    if config in os.environ.get("FBGFX_VM_SKIP", "").split():
        return f"{config}: left out by FBGFX_VM_SKIP"
    check = CONFIGS[config].missing
    return vm_tools_missing() or (check() if check else None)


def guest_run(name: str) -> GuestRun:
    """Wait for the boot that runs guest ``name``; skip where it cannot boot, fail (with
    the logs' ends) where the boot timed out or the guest did not finish."""
    guest = GUESTS[name]
    reason = skip_reason(guest.config) or (guest.missing() if guest.missing else None)
    if reason:
        pytest.skip(reason)
    boot = scheduler().wait(guest.config, [guest])
    if boot.skipped:
        pytest.skip(boot.skipped)
    if name not in boot.guests:
        pytest.fail(f"the {guest.config} boot did not run guest {name} (it ran {boot.guests})")
    run = boot.guest(name)
    if boot.timed_out or run.returncode is None:
        why = "timed out" if boot.timed_out else f"ended (exit {boot.returncode})"
        pytest.fail(
            f"{name}: the {guest.config} boot {why} after {boot.seconds:.0f} s before the guest finished "
            f"(logs in {run.dir})\nguest stderr:\n{_tail(run.dir / 'guest-stderr.txt')}\n"
            f"vng stderr:\n{boot.tail('vng-stderr.txt')}"
        )
    return run


def _tail(path: Path, lines: int = 25) -> str:
    if not path.exists():
        return f"({path.name} missing)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def guest_results(run: GuestRun) -> dict[str, Any]:
    """The guest's results.json with "_outdir" (its directory), "_boot_dir", "_seconds"
    and "_host_errors" added; fails the test with the logs' ends when it wrote none."""
    results_file = run.dir / "results.json"
    if not results_file.exists():
        pytest.fail(
            f"{run.guest} wrote no results (exit {run.returncode}, logs in {run.dir}):\n"
            f"{_tail(run.dir / 'guest-stderr.txt', 40)}\nvng stderr:\n{run.boot.tail('vng-stderr.txt')}"
        )
    results: dict[str, Any] = json.loads(results_file.read_text())
    results["_outdir"] = str(run.dir)
    results["_boot_dir"] = str(run.boot.outdir)
    results["_seconds"] = run.seconds
    results["_returncode"] = run.returncode  # 124: stopped at its time limit
    results["_host_errors"] = run.boot.errors
    return results


# -- the boot itself -------------------------------------------------------------------------------------


def boot_script(outdir: Path, config: Config, guests: Sequence[Guest]) -> list[str]:
    """The guest's shell script: the configuration's ``prepare``, then one Python
    (``_guest_runner.py``) that runs each guest in turn under its time limit, its
    output, exit status and uptimes in its directory; the plan it follows goes into
    ``outdir/guests.json``."""
    up = "cut -d' ' -f1 /proc/uptime"
    plan = {
        "preload": list(dict.fromkeys(m for g in guests for m in g.preload)),
        "guests": [g.plan(outdir / g.name, outdir) for g in guests],
    }
    (outdir / "guests.json").write_text(json.dumps(plan, indent=1))
    lines = [f"{up} >>{outdir}/uptime.txt"]
    lines += [line.format(outdir=outdir) for line in config.prepare]
    lines += [f"{up} >>{outdir}/uptime.txt", f"cd {shlex.quote(str(REPO))}"]
    lines.append(
        f"{guest_python('tests/kernel/_guest_runner.py', outdir / 'guests.json')} "
        f">{outdir}/runner-stdout.txt 2>{outdir}/runner-stderr.txt"
    )
    lines += [f"{up} >>{outdir}/uptime.txt", f"dmesg >{outdir}/dmesg.txt"]
    return lines


def boot(config_name: str, guests: Sequence[Guest], outdir: Path) -> BootRun:
    """Boot ``config_name`` once with ``guests`` (in their order), answering each one's
    requests in its own directory; return how it went."""
    config = CONFIGS[config_name]
    guests = sorted(guests, key=lambda g: (g.order, g.name))
    outdir.mkdir(parents=True, exist_ok=True)
    channels: list[tuple[Path, str, Handler]] = []
    for guest in guests:
        gdir = outdir / guest.name
        gdir.mkdir()
        if guest.before is not None:
            guest.before(gdir)
        channels.append((gdir, guest.prefix, guest.handle))
    timeout = BOOT_ALLOWANCE + sum(g.timeout + 10 for g in guests)
    run = run_vm(
        outdir,
        boot_script(outdir, config, guests),
        config.qemu.format(outdir=outdir),
        channels,
        append=config.append,
        timeout=timeout,
    )
    return BootRun(
        config_name,
        outdir,
        run.returncode,
        run.seconds,
        run.timed_out,
        run.served,
        run.errors,
        [g.name for g in guests],
        cpu_seconds=run.cpu_seconds,
    )


# -- sharing boots over a run (and over pytest-xdist's workers) ------------------------------------------


def boots_dir() -> Path:
    """This run's directory for claims and results: FBGFX_BOOTS_DIR, made by
    tests/conftest.py for the run (and inherited by xdist's workers)."""
    given = os.environ.get("FBGFX_BOOTS_DIR")
    if not given:  # tests/kernel run without tests/conftest.py: this process alone
        given = f"/tmp/fbgfx-boots-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        os.environ["FBGFX_BOOTS_DIR"] = given
    path = Path(given)
    path.mkdir(parents=True, exist_ok=True)
    return path


def boot_outdir(config: str) -> Path:
    """Where a boot's logs go: FBGFX_VM_RESULTS/CONFIG when that is set (kept), else in
    this run's boots directory."""
    keep = os.environ.get("FBGFX_VM_RESULTS")
    return Path(keep) / config if keep else boots_dir() / config


def read_boot(root: Path, config: str) -> BootRun | None:
    """The finished boot of ``config`` recorded in ``root``, or None."""
    done = root / f"{config}.json"
    if not done.exists():
        return None
    d = json.loads(done.read_text())
    d["outdir"] = Path(d["outdir"])
    return BootRun(**d)


class Scheduler:
    """Runs this process's share of the run's boots in background threads.

    Runner threads take a slot (``slot-K.lock``, K < FBGFX_VM_JOBS, locked with flock
    across processes), then claim the next configuration not yet claimed by anyone
    (``CONFIG.claim``, made with O_EXCL), boot it and write ``CONFIG.json``.
    """

    def __init__(self) -> None:
        self.root = boots_dir()
        self.jobs = max(1, int(os.environ.get("FBGFX_VM_JOBS", "2")))
        self.wanted: dict[str, list[Guest]] = {}
        self.threads: list[threading.Thread] = []
        self.stopping = threading.Event()
        self.t0 = float(os.environ.get("FBGFX_RUN_START", time.time()))
        self._lock = threading.Lock()

    def start(self, wanted: dict[str, list[Guest]]) -> None:
        """Boot ``wanted`` (configuration -> its guests) in the background, longest first."""
        with self._lock:
            for config, guests in wanted.items():
                have = self.wanted.setdefault(config, [])
                have += [g for g in guests if g not in have]
            while len(self.threads) < self.jobs:
                t = threading.Thread(target=self._runner, name=f"fbgfx-boots-{len(self.threads)}", daemon=True)
                self.threads.append(t)
                t.start()

    def _order(self) -> list[str]:
        with self._lock:
            return sorted(self.wanted, key=lambda c: -CONFIGS[c].estimate)

    def _claim(self, config: str) -> bool:
        try:
            fd = os.open(self.root / f"{config}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True

    @contextlib.contextmanager
    def _slot(self) -> Iterator[bool]:
        """Hold one of the run's FBGFX_VM_JOBS slots (False: told to stop meanwhile)."""
        while not self.stopping.is_set():
            for k in range(self.jobs):
                fd = os.open(self.root / f"slot-{k}.lock", os.O_CREAT | os.O_RDWR)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                try:
                    yield True
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                return
            self.stopping.wait(0.5)
        yield False

    def _runner(self) -> None:
        while not self.stopping.is_set():
            if not any(not (self.root / f"{c}.claim").exists() for c in self._order()):
                return
            with self._slot() as held:
                if not held:
                    return
                config = next((c for c in self._order() if self._claim(c)), None)
                if config is None:
                    return
                self._boot(config)

    def _boot(self, config: str) -> None:
        started = time.time() - self.t0
        reason = skip_reason(config)
        outdir = boot_outdir(config)
        with self._lock:
            guests = list(self.wanted.get(config, []))
        if reason:
            run = BootRun(config, outdir, None, 0.0, False, 0, [], [g.name for g in guests], started, reason)
            run.report = [f"{config:9} skipped: {reason}"]
        else:
            try:
                if outdir.exists() and os.environ.get("FBGFX_VM_RESULTS"):
                    import shutil  # only for kept logs of an earlier run

                    shutil.rmtree(outdir)
                run = boot(config, guests, outdir)
            except Exception as exc:  # recorded: the tests waiting on it fail with it
                run = BootRun(config, outdir, None, 0.0, False, 0, [f"{type(exc).__name__}: {exc}"], [], started)
            run.started = started
        run.report = report_lines(run)
        record = json.dumps({k: (str(v) if isinstance(v, Path) else v) for k, v in run.__dict__.items()})
        if outdir.is_dir():  # kept with the logs (.ci/run sums the boots' times from them)
            (outdir / "boot.json").write_text(record)
        tmp = self.root / f".{config}.json"
        tmp.write_text(record)
        tmp.rename(self.root / f"{config}.json")

    def wait(self, config: str, guests: Sequence[Guest]) -> BootRun:
        """The boot of ``config``: started here (with ``guests``) if nobody wanted it yet,
        then waited for."""
        if not (self.root / f"{config}.claim").exists() and config not in self.wanted:
            self.start({config: list(guests)})
        claim = self.root / f"{config}.claim"
        while True:
            run = read_boot(self.root, config)
            if run is not None:
                return run
            if claim.exists():
                owner = int(claim.read_text() or 0)
                if owner and not _alive(owner):
                    pytest.fail(f"process {owner}, which booted {config}, ended before its results")
            time.sleep(0.5)

    def finish(self, interrupted: bool) -> None:
        """At the end of this process's tests: stop claiming; let the boots it runs finish
        for the other workers (or kill them when the run was interrupted)."""
        self.stopping.set()
        if interrupted:
            from _vm import kill_vms

            kill_vms()
        for t in self.threads:
            t.join()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_SCHEDULER: Scheduler | None = None


def scheduler() -> Scheduler:
    global _SCHEDULER
    if _SCHEDULER is None:
        _SCHEDULER = Scheduler()
    return _SCHEDULER


def wanted_by(items: Sequence[pytest.Item]) -> dict[str, list[Guest]]:
    """The configurations (and their guests) that the selected ``items`` need: the
    guests whose fixtures they use."""
    wanted: dict[str, list[Guest]] = {}
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            guest = GUESTS.get(name)
            if guest is None or (guest.missing and guest.missing()):
                continue  # its tests skip (guest_run): no boot for it
            if guest not in wanted.setdefault(guest.config, []):
                wanted[guest.config].append(guest)
    return {c: g for c, g in wanted.items() if g}


def start_boots(items: Sequence[pytest.Item], extra: Sequence[Guest] = ()) -> None:
    """Start, in the background, every boot the selected ``items`` need (and the boots
    of ``extra`` guests)."""
    wanted = wanted_by(items)
    for guest in extra:
        if guest not in wanted.setdefault(guest.config, []):
            wanted[guest.config].append(guest)
    if wanted and not vm_tools_missing():
        scheduler().start(wanted)


def finish_boots(interrupted: bool) -> None:
    """This process's tests are done: wait for the boots it runs (others may wait on them),
    or kill them when the run was interrupted."""
    if _SCHEDULER is not None:
        _SCHEDULER.finish(interrupted)


def report_lines(run: BootRun) -> list[str]:
    """The run's summary of one boot: its time and each guest's, and the guests' reports."""
    state = "timed out" if run.timed_out else f"exit {run.returncode}"
    parts, more = [], []
    for name in run.guests:
        g = run.guest(name)
        secs = f"{g.seconds:.0f} s" if g.seconds is not None else "did not finish"
        parts.append(f"{name} {secs}" + (f" (exit {g.returncode})" if g.returncode else ""))
        guest = GUESTS.get(name)
        if guest is not None and guest.report is not None:
            with contextlib.suppress(OSError, ValueError):
                more += [f"    {line}" for line in guest.report(g.dir)]
    lines = [
        f"{run.config:9} {run.seconds:4.0f} s ({run.cpu_seconds:.0f} s CPU, started at {run.started:.0f} s), {state}, "
        f"{run.served} requests, "
        f"logs in {run.outdir}",
        f"    {', '.join(parts)}",
        *more,
    ]
    return lines + [f"    host error: {e}" for e in run.errors[:5]]
