"""The boot's one Python (_guest_runner.py) runs each guest as ``python ARGV`` would: a
script or ``-m MODULE`` with its argv, sys.path[0] and environment, its output in its
files, its exit status (124 at its time limit) and uptimes recorded. Host-side: no VM."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _vm import REPO

SCRIPT = """
import os, sys, time
print(sys.argv[1:], sys.path[0], os.environ.get("FBGFX_RUNNER_TEST"), os.getpgid(0) == os.getpid())
print("to stderr", file=sys.stderr)
if sys.argv[1] == "hang":
    time.sleep(600)
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else 0)
"""


def test_each_guest_runs_as_its_own_python(tmp_path: Path) -> None:
    script = tmp_path / "guest.py"
    script.write_text(SCRIPT)
    dirs = {name: tmp_path / name for name in ("ok", "fails", "hangs", "module")}
    for d in dirs.values():
        d.mkdir()

    def guest(name: str, argv: list[str], timeout: float = 120, **env: str) -> dict[str, object]:
        prepare = [f"echo prepared >{dirs[name]}/prepared.txt"]
        return {"name": name, "dir": str(dirs[name]), "argv": argv, "env": env, "prepare": prepare, "timeout": timeout}

    plan = {
        "preload": ["json"],
        "guests": [
            guest("ok", [str(script), "go"], FBGFX_RUNNER_TEST="set"),
            guest("fails", [str(script), "3"]),
            guest("hangs", [str(script), "hang"], timeout=2),
            guest("module", ["-m", "json.tool", "--version"]),
        ],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    subprocess.run(
        [sys.executable, str(REPO / "tests/kernel/_guest_runner.py"), str(tmp_path / "plan.json")],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
    )

    def read(name: str, file: str) -> str:
        return (dirs[name] / file).read_text()

    assert read("ok", "guest-stdout.txt") == f"['go'] {tmp_path} set True\n"
    assert read("ok", "guest-stderr.txt") == "to stderr\n"
    assert [read(name, "guest-rc") for name in dirs] == ["0\n", "3\n", "124\n", "2\n"]
    assert "FBGFX_RUNNER_TEST" not in read("fails", "guest-stdout.txt")  # each guest its own environment
    # python -m json.tool --version: the module's own argparse error
    assert read("module", "guest-stderr.txt").endswith("error: unrecognized arguments: --version\n")
    for name in dirs:
        assert read(name, "prepared.txt") == "prepared\n"
        marks = [float(v) for v in read(name, "uptime.txt").split()]
        assert len(marks) == 2 and marks[0] <= marks[1]
