"""Guest side: one Python per boot runs every guest of the boot, each in a forked child.

A new Python costs about 10 s of the VM's CPU under TCG before its first line, and its
imports (numpy, Pillow, fbgfx, pytest, PyAV) as much again; a minute or more when the
host is busy. So the boot's script (``_boots.boot_script``) starts this one Python,
which imports what the boot's guests share once and then runs each guest, one after the
other, in a child forked from itself (``_forked.fork``), as ``python ARGV`` would run
it: a script by its path (``runpy.run_path``) or ``-m MODULE`` (``runpy.run_module``,
pytest for the display suites), with ``sys.argv`` and ``sys.path[0]`` set as the
interpreter sets them, the guest's environment, stdout and stderr into its files and
this Python's stdin. Each guest is still its own process: it starts from the state
this one had after its imports, never from another guest's.

``python _guest_runner.py PLAN.json``: PLAN (written by the host, ``_boots.boot``) is
``{"preload": [module, ...], "guests": [{"name", "dir", "argv", "env", "prepare",
"timeout"}, ...]}``. Per guest, as the shell's lines did before: its ``prepare`` shell
lines, then the guest under its time limit (SIGTERM to its process group, SIGKILL 10 s
later, exit status 124, as ``timeout -k 10`` gives), its exit status into ``guest-rc``
(128 + N after signal N, as a shell says) and the uptimes before and after it into
``uptime.txt``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _forked  # beside this file


def uptime() -> str:
    return Path("/proc/uptime").read_text().split()[0]


def run_argv(argv: list[str], unbuffered: bool) -> None:
    """In the child: run ``python ARGV`` (a script's path, or ``-m MODULE``)."""
    os.setpgid(0, 0)  # its own process group, for its time limit (as `timeout` makes one)
    if unbuffered:  # PYTHONUNBUFFERED=1 acts at a new Python's start, not on a fork's streams
        sys.stdout.reconfigure(write_through=True)  # type: ignore[union-attr]
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


def wait(child: _forked.Child, timeout: float) -> int:
    """The child's exit status as a shell gives it, 124 when stopped at ``timeout``."""
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        for signum, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signum)
            try:
                child.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        return 124
    return 128 - code if code < 0 else code


def run_guest(guest: dict[str, Any]) -> None:
    gdir = Path(guest["dir"])
    with open(gdir / "uptime.txt", "w") as marks:
        print(uptime(), file=marks, flush=True)
        for line in guest["prepare"]:
            subprocess.run(line, shell=True, check=False)
        env: dict[str, str] = guest["env"]
        child = _forked.fork(
            run_argv,
            guest["argv"],
            env.get("PYTHONUNBUFFERED") == "1",
            stdin=None,
            stdout=gdir / "guest-stdout.txt",
            stderr=gdir / "guest-stderr.txt",
            env=env,
        )
        (gdir / "guest-rc").write_text(f"{wait(child, guest['timeout'])}\n")
        print(uptime(), file=marks, flush=True)


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    start = time.monotonic()
    for module in plan["preload"]:
        try:
            importlib.import_module(module)
        except Exception as exc:  # the guest that needs it says so itself
            print(f"runner: could not import {module}: {exc}", file=sys.stderr)
    print(f"runner: imported {', '.join(plan['preload'])} in {time.monotonic() - start:.1f} s", file=sys.stderr)
    for guest in plan["guests"]:
        run_guest(guest)


if __name__ == "__main__":
    main()
