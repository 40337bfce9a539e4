"""Framebuffer files on a full filesystem and files truncated under a running Screen.

Both used to kill the process with SIGBUS, so each case runs in a child process: the
full disk on a small tmpfs mounted in a private mount namespace (``unshare -rm``;
skipped with the reason where that is not allowed), truncation on a normal file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from PIL import Image

import fbgfx

ENV = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))}


def run_script(tmp_path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``text`` as a script in a child process with ``args``; its output, in text."""
    script = tmp_path / "child.py"
    script.write_text(text)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=ENV, timeout=120)


def in_small_tmpfs(tmp_path, script: str, size: str = "256k") -> subprocess.CompletedProcess[str]:
    """Run ``script`` with ``$MNT`` a fresh tmpfs of ``size``, in a private mount namespace."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) (util-linux) to mount a small tmpfs")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size={size} tmpfs {mnt}"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {probe.stderr.strip()}")
    return subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            f'mount -t tmpfs -o size={size} tmpfs "$MNT" && {script}; echo "files: $(ls -A "$MNT")"',
        ],
        capture_output=True,
        text=True,
        env={**ENV, "MNT": str(mnt)},
        timeout=120,
    )


def test_show_on_a_full_filesystem_is_one_line_and_leaves_nothing(tmp_path):
    """`fbgfx show` to a file= device bigger than its filesystem: exit 2, one ENOSPC line, no files left."""
    Image.new("RGB", (800, 480), "red").save(tmp_path / "red.png")
    out = in_small_tmpfs(
        tmp_path,
        f'{sys.executable} -m fbgfx show {tmp_path / "red.png"} -d "virtual:800x480:XRGB8888:file=$MNT/a.raw"; '
        'echo "rc=$?"',
    )
    assert "rc=2" in out.stdout, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: ") and "a.raw" in lines[0], out.stderr
    assert "no room" in lines[0] and "No space left on device" in lines[0]
    assert out.stdout.strip().endswith("files:"), out.stdout  # neither a.raw nor its state file


def test_open_on_a_full_filesystem_raises_enospc(tmp_path):
    """fbgfx.open(file=...) where the filesystem cannot hold the memory: FramebufferError ENOSPC, nothing created."""
    script = textwrap.dedent(
        """
        import errno, os, fbgfx
        try:
            fbgfx.open(f"virtual:800x480:XRGB8888:file={os.environ['MNT']}/a.raw")
        except fbgfx.FramebufferError as e:
            print("errno", e.errno == errno.ENOSPC)
        with fbgfx.open(f"virtual:64x48:XRGB8888:file={os.environ['MNT']}/small.raw") as fb:
            fb.pixels[:] = 0xFF0000  # fits: written without a fault
            print("small", fb.pixels[0, 0] == 0xFF0000)
        """
    )
    (tmp_path / "s.py").write_text(script)
    out = in_small_tmpfs(tmp_path, f"{sys.executable} {tmp_path / 's.py'}")
    assert "errno True" in out.stdout and "small True" in out.stdout, (out.stdout, out.stderr)
    files = out.stdout.split("files:")[1].split()
    assert sorted(files) == ["small.raw", "small.raw.state.json"]


TRUNCATE = textwrap.dedent(
    r"""
    import errno, json, os, sys, warnings
    import numpy as np
    import fbgfx

    path, size, buffering = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    warnings.simplefilter("ignore")
    fb = fbgfx.open(f"virtual:64x48:XRGB8888:file={path}")
    screen = fb.screen(buffering=buffering, console=False)
    screen.present(np.full((48, 64, 3), 200, np.uint8))
    os.truncate(path, size)  # another program shrinks the file
    seen = []
    for step in (
        lambda: screen.present(np.zeros((48, 64, 3), np.uint8)),
        lambda: screen.flip(),
        lambda: screen.frame().__enter__(),
        lambda: fb.snapshot(),
    ):
        try:
            step()
            seen.append("no error")
        except fbgfx.FramebufferError as e:
            seen.append([e.errno == errno.ENODEV, "truncated" in str(e), path in str(e)])
    screen.close()
    fb.close()
    print(json.dumps(seen))
    """
)


@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
@pytest.mark.parametrize("size", [0, 4096])
def test_truncated_file_is_an_error_not_sigbus(tmp_path, buffering, size):
    """A file truncated under a Screen: present/flip/frame/snapshot raise ENODEV naming it; close is clean."""
    out = run_script(tmp_path, TRUNCATE, str(tmp_path / "fb.raw"), str(size), buffering)
    assert out.returncode == 0, (out.returncode, out.stderr)  # -7 was SIGBUS
    assert json.loads(out.stdout) == [[True, True, True]] * 4


WINDOW = textwrap.dedent(
    r"""
    import errno, json, os, subprocess, sys, warnings
    import numpy as np
    import fbgfx

    path, size, buffering, step = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    warnings.simplefilter("ignore")
    fb = fbgfx.open(f"virtual:64x48:XRGB8888:file={path}")
    screen = fb.screen(buffering=buffering, console=False)
    screen.present(np.full((48, 64, 3), 200, np.uint8))
    screen.surface.rectangle((0, 0, 63, 47), fill="red")  # a frame to flip
    check = fb.check

    def check_then_truncate():
        # the frame's check passes, then another program shrinks the file before the write
        check()
        fb.check = check
        subprocess.run(["truncate", "-s", size, path], check=True)

    fb.check = check_then_truncate

    def frame():
        with screen.frame() as s:
            s.rectangle((0, 0, 63, 47), fill="blue")

    steps = {
        "flip": screen.flip,
        "frame": frame,
        "present": lambda: screen.present(np.zeros((48, 64, 3), np.uint8)),
        "present_part": lambda: screen.present(np.zeros((20, 30, 3), np.uint8), fit="center"),
        "snapshot": fb.snapshot,
    }
    seen = []
    for run in (steps[step], frame):  # the step that meets the truncation, then the next frame
        try:
            run()
            seen.append("no error")
        except fbgfx.FramebufferError as e:
            seen.append([e.errno == errno.ENODEV, "truncated" in str(e), path in str(e)])
    screen.close()
    fb.close()
    print(json.dumps(seen))
    """
)


@pytest.mark.parametrize("step", ["flip", "frame", "present", "present_part", "snapshot"])
@pytest.mark.parametrize("buffering", ["flip", "copy", "single"])
@pytest.mark.parametrize("size", ["0", "4096"])
def test_truncation_between_check_and_write_is_an_error_not_sigbus(tmp_path, step, buffering, size):
    """A file truncated right after a frame's check: the write raises ENODEV (no SIGBUS), so does the next frame."""
    if shutil.which("truncate") is None:
        pytest.skip("needs truncate(1) (coreutils) as the other program")
    out = run_script(tmp_path, WINDOW, str(tmp_path / "fb.raw"), size, buffering, step)
    assert out.returncode == 0, (out.returncode, out.stderr)  # -7 was SIGBUS
    assert json.loads(out.stdout) == [[True, True, True]] * 2


OTHER_FAULTS = textwrap.dedent(
    r"""
    import faulthandler, mmap, os, signal, sys
    import fbgfx

    path, how = sys.argv[1], sys.argv[2]
    fb = fbgfx.open(f"virtual:64x48:XRGB8888:file={path}")
    screen = fb.screen(console=False)
    if how == "faulthandler":
        faulthandler.enable()  # after fbgfx's guard: the next frame puts the guard first again
        screen.flip()
        os.truncate(path, 0)
        try:
            screen.present(__import__("numpy").zeros((48, 64, 3), "uint8"))
        except fbgfx.FramebufferError:
            print("guarded")
        sys.exit(0)
    print("ready", flush=True)
    if how == "kill":
        os.kill(os.getpid(), signal.SIGBUS)
    else:  # a mapping of some other file, truncated: not fbgfx's to excuse
        with open(path + ".other", "w+b") as f:
            f.truncate(8192)
            m = mmap.mmap(f.fileno(), 8192)
            f.truncate(0)
            m[4096] = 1
    print("survived")
    """
)


@pytest.mark.parametrize("how", ["kill", "other-mapping", "faulthandler"])
def test_sigbus_guard_excuses_only_framebuffer_files(tmp_path, how):
    """The guard turns only a framebuffer file's faults into errors: other SIGBUS still end the process."""
    out = run_script(tmp_path, OTHER_FAULTS, str(tmp_path / "fb.raw"), how)
    if how == "faulthandler":
        assert (out.returncode, out.stdout) == (0, "guarded\n"), out.stderr
    else:
        assert (out.returncode, out.stdout) == (-7, "ready\n"), out.stderr


def test_reopening_an_existing_file_needs_no_free_space(tmp_path):
    """An existing framebuffer file opens (and draws) on a full filesystem: opening reserves nothing."""
    script = textwrap.dedent(
        """
        import os, fbgfx
        spec = f"virtual:64x48:XRGB8888:file={os.environ['MNT']}/a.raw"
        with fbgfx.open(spec) as fb:
            fb.pixels[:] = 0x00FF00
        fd = os.open(os.environ["MNT"] + "/filler", os.O_WRONLY | os.O_CREAT)  # the rest of the filesystem
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError as e:
            print("full", e.strerror)
        os.close(fd)
        with fbgfx.open(spec) as fb:
            print("green", bool((fb.pixels == 0x00FF00).all()))
            with fb.screen(console=False).frame() as s:
                s.rectangle((0, 0, 9, 9), fill="red")
            print("drawn", fb.snapshot().getpixel((0, 0)))
        """
    )
    (tmp_path / "s.py").write_text(script)
    out = in_small_tmpfs(tmp_path, f"{sys.executable} {tmp_path / 's.py'}", size="128k")
    assert "full No space left on device" in out.stdout, (out.stdout, out.stderr)
    assert "green True" in out.stdout and "drawn (255, 0, 0)" in out.stdout, (out.stdout, out.stderr)
