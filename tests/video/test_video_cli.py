"""`fbgfx play` of video files at the edges (issue 29): FIFOs in a playlist, Ctrl-C
there, and the one-line errors a user can act on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import support

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from support.video_media import make_video  # noqa: E402

import fbgfx.video as video  # noqa: E402
from fbgfx.cli import main  # noqa: E402

ROOT = Path(support.ROOT)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 s, 10-frame video."""
    return make_video(tmp_path_factory.mktemp("cli") / "one.mkv", seconds=1, fps=10)


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    """main() in this process: (exit status, stderr)."""
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("fbgfx: error: "), err
    return lines[0]


@pytest.mark.parametrize("order", ["file-then-fifo", "fifo-first"])
def test_a_quiet_fifo_in_a_playlist_ends_at_duration(clip: Path, tmp_path: Path, capsys, order: str) -> None:
    """play A FIFO --duration 1 (nobody writes to the FIFO): it returns at --duration, it does not hang."""
    fifo = tmp_path / "quiet.fifo"
    os.mkfifo(fifo)
    files = [clip, fifo] if order == "file-then-fifo" else [fifo, clip]
    start = time.monotonic()
    code, err = run(capsys, "play", *files, "--no-audio", "--duration", "1", "-d", "virtual:32x24")
    assert time.monotonic() - start < 15
    assert code == 0, err


def test_a_fifo_in_a_playlist_plays(clip: Path, tmp_path: Path, capsys) -> None:
    """A video written into a FIFO of a playlist plays when its turn comes (it is not probed first)."""
    fifo = tmp_path / "movie.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(clip.read_bytes())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    code, err = run(capsys, "play", clip, fifo, "--no-audio", "--fps", "0", "--stats", "-d", "virtual:32x24")
    writer.join(10)
    assert code == 0, err
    assert "played 20 frames" in err


def test_video_open_of_a_fifo_can_be_cancelled(tmp_path: Path) -> None:
    """video.open(FIFO, cancel=event): setting the event ends the wait for a writer with TimeoutError."""
    fifo = tmp_path / "q.fifo"
    os.mkfifo(fifo)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    with pytest.raises(TimeoutError):
        video.open(str(fifo), cancel=cancel)


def holds_open(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (it is waiting on that FIFO)."""
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(os.path.join(folder, name)) == str(path):
                return True
        except OSError:
            continue
    return False


@pytest.mark.parametrize("first", [False, True], ids=["fifo-second", "fifo-first"])
def test_ctrl_c_while_a_fifo_waits_exits_130(clip: Path, tmp_path: Path, first: bool) -> None:
    """Ctrl-C while play waits for a FIFO's writer (first in the playlist or later) exits 130, no traceback."""
    fifo = tmp_path / "quiet.fifo"
    os.mkfifo(fifo)
    files = [str(fifo), str(clip)] if first else [str(clip), str(fifo)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fbgfx", "play", *files, "--no-audio", "-d", "virtual:32x24"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not holds_open(proc.pid, fifo) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert holds_open(proc.pid, fifo), "play never opened the FIFO"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err


# -- errors a user can act on -----------------------------------------------------------------------


def test_out_into_a_missing_folder_is_refused_before_playing(clip: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """--out into a folder that does not exist is one line naming it, before anything plays."""
    monkeypatch.setattr(video.Player, "run", lambda *a, **k: pytest.fail("played before checking --out"))
    out = tmp_path / "no-such-folder" / "o.png"
    code, err = run(capsys, "play", clip, "--out", out, "-d", "virtual:32x24")
    assert code == 2
    assert "does not exist" in one_error_line(err) and "no-such-folder" in err


def test_pix_fmt_for_a_file_is_refused(clip: Path, capsys) -> None:
    """--pix-fmt with a video file is one line saying it is for raw frames, not silently ignored."""
    code, err = run(capsys, "play", clip, "--pix-fmt", "bgra", "-d", "virtual:32x24")
    assert code == 2
    assert "--pix-fmt is for raw frames on stdin" in one_error_line(err)


@pytest.mark.parametrize("size", ["W0 H0", "W100000 H100000"])
def test_a_y4m_of_a_bad_size_names_the_size(tmp_path: Path, capsys, size: str) -> None:
    """A YUV4MPEG2 file with a size FFmpeg refuses says so, not 'Device or resource busy'."""
    bad = tmp_path / "bad.y4m"
    bad.write_bytes(f"YUV4MPEG2 {size} F25:1 Ip A1:1 C420jpeg\nFRAME\n".encode() + bytes(100))
    code, err = run(capsys, "play", bad, "-d", "virtual:32x24")
    assert code == 2
    line = one_error_line(err)
    assert "busy" not in line and "picture size" in line and size.replace(" H", "x").lstrip("W") in line
