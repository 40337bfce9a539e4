"""A console holder killed with SIGKILL: the next opener restores the true original mode.

The VT is a fake whose KD mode lives in a file (as the kernel keeps it across
processes); the holder is a child process killed with SIGKILL while the VT is in
graphics mode. Records go to a folder of this test (``console.RECORD_DIRS``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import fbgfx
from fbgfx import console
from fbgfx.console import KD_GRAPHICS, KD_TEXT, Console

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}

FILE_VT = '''
import json
class FileVT:
    """A VT whose KD mode is kept in a file, like the kernel's, seen by every process."""
    record_key = "tty-test"
    def __init__(self, path):
        self.path = path
    def get_mode(self):
        with open(self.path) as f:
            return json.load(f)
    def set_mode(self, mode):
        with open(self.path, "w") as f:
            json.dump(mode, f)
'''
namespace: dict = {}
exec(FILE_VT, namespace)
FileVT = namespace["FileVT"]

HOLDER = (
    textwrap.dedent(
        """
    import sys, time
    from fbgfx import console
    console.RECORD_DIRS = (sys.argv[2],)
    """
    )
    + FILE_VT
    + textwrap.dedent(
        """
    c = console.Console(FileVT(sys.argv[1]))
    assert c.graphics()
    print("READY", flush=True)
    time.sleep(60)
    """
    )
)


@pytest.fixture
def records(tmp_path, monkeypatch):
    """Holder records in a private folder of this test."""
    folder = tmp_path / "records"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(console, "RECORD_DIRS", (str(folder),))
    return folder


def kill_a_holder(tmp_path, records, vt_path) -> None:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(vt_path), str(records)], stdout=subprocess.PIPE, text=True, env=ENV
    )
    try:
        assert proc.stdout.readline().strip() == "READY"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)


def test_next_opener_restores_text_after_a_holder_was_killed(tmp_path, records):
    """Holder found KD_TEXT, switched to graphics and was SIGKILLed: the next Console restores KD_TEXT, not graphics."""
    vt_path = tmp_path / "vt"
    vt = FileVT(str(vt_path))
    vt.set_mode(KD_TEXT)
    kill_a_holder(tmp_path, records, vt_path)
    assert vt.get_mode() == KD_GRAPHICS  # left so by the dead holder
    record = json.loads((records / "console-tty-test.json").read_text())
    assert record["mode"] == KD_TEXT and record["pid"] != os.getpid()
    c = Console(vt)
    assert c.graphics() and c.active
    c.restore()
    assert vt.get_mode() == KD_TEXT
    assert os.listdir(records) == []  # the record is gone with the holder's mode put back


def test_a_live_holder_keeps_the_console(tmp_path, records):
    """While the recorded holder runs, another opener finding graphics leaves it alone (as a display server's)."""
    vt = FileVT(str(tmp_path / "vt"))
    vt.set_mode(KD_TEXT)
    first = Console(vt)
    assert first.graphics()
    second = Console(vt)
    assert second.graphics() and not second.active
    second.restore()
    assert vt.get_mode() == KD_GRAPHICS
    first.restore()
    assert vt.get_mode() == KD_TEXT and os.listdir(records) == []


def test_graphics_without_a_record_stays_someone_elses(tmp_path, records):
    """KD_GRAPHICS with no record (a display server set it): nothing is changed or restored."""
    vt = FileVT(str(tmp_path / "vt"))
    vt.set_mode(KD_GRAPHICS)
    c = Console(vt)
    assert c.graphics() and not c.active
    c.restore()
    assert vt.get_mode() == KD_GRAPHICS


def test_record_of_another_user_is_not_believed(tmp_path, records):
    """A record file not owned by this user (or root) is ignored: nobody can plant a mode to restore."""
    if os.getuid() != 0:
        pytest.skip("needs root to make a file owned by another user")
    vt = FileVT(str(tmp_path / "vt"))
    vt.set_mode(KD_GRAPHICS)
    planted = records / "console-tty-test.json"
    planted.write_text(json.dumps({"pid": 999999, "start": "1", "mode": KD_TEXT}))
    os.chown(planted, 12345, 12345)
    c = Console(vt)
    assert c.graphics() and not c.active
    assert vt.get_mode() == KD_GRAPHICS
