"""A Video's life: closed, shared by two plays, played again, and the one-line errors of
what a program hands to play (issue 29). The crashes are checked in a child process, so
a regression fails the test instead of killing the suite."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import support

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from support.video_media import make_video  # noqa: E402

import fbgfx.video as video  # noqa: E402

ROOT = Path(support.ROOT)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 s, 10-frame video."""
    return make_video(tmp_path_factory.mktemp("life") / "one.mkv", seconds=1, fps=10)


def in_child(code: str, clip: Path) -> str:
    """Run ``code`` (with ``v`` an open Video of ``clip``) in a new interpreter; its stdout.
    A crash (SIGSEGV, SIGABRT) fails with the signal in the message."""
    prelude = f"import threading, fbgfx, fbgfx.video as video\nv = video.open({str(clip)!r})\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout


@pytest.mark.parametrize(
    "use",
    [
        "list(v)",
        "next(iter(v))",
        "list(v.frames())",
        "fbgfx.open('virtual:32x24').screen().play(v, fps=0, audio=False)",
    ],
)
@pytest.mark.parametrize("how", ["close", "with"])
def test_a_closed_video_raises_value_error(clip: Path, use: str, how: str) -> None:
    """A closed Video (close(), or after its with block) raises ValueError when iterated or played: no segfault."""
    closing = "v.close()\n" if how == "close" else "with v: pass\n"
    out = in_child(f"{closing}try:\n    {use}\nexcept ValueError as e:\n    print('ValueError', e)\n", clip)
    assert out.startswith("ValueError") and "closed" in out


def test_closing_a_video_while_it_plays(clip: Path) -> None:
    """Closing a Video from another thread while a Screen plays it ends the play with ValueError, no crash."""
    # closed once the third frame is shown (a timer could fire before a busy machine began the play)
    out = in_child(
        "fb = fbgfx.open('virtual:32x24'); s = fb.screen()\n"
        "playing = threading.Event()\n"
        "threading.Thread(target=lambda: (playing.wait(60), v.close())).start()\n"
        "try:\n    s.play(v, loop=True, duration=10, audio=False, on_frame=lambda _, t: t >= 0.2 and playing.set())\n"
        "except ValueError as e:\n    print('ValueError', e)\n",
        clip,
    )
    assert out.startswith("ValueError")


def test_one_video_on_two_screens_at_once(clip: Path) -> None:
    """One Video played by two Screens at the same time: each play reads the file on its own, both whole."""
    out = in_child(
        "a, b = fbgfx.open('virtual:32x24:RGB565').screen(), fbgfx.open('virtual:48x32').screen()\n"
        "played = []\n"
        "ts = [threading.Thread(target=lambda s=s: played.append(s.play(v, fps=50, audio=False))) for s in (a, b)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "print(sorted(p.shown + p.dropped for p in played))\n",
        clip,
    )
    assert out.strip() == "[10, 10]"


def test_a_played_video_plays_again(clip: Path, open_virtual) -> None:
    """play([v, v, v]) plays it three times; a second play and a second iteration see every frame again."""
    fb = open_virtual("32x24:RGB565")
    with video.open(str(clip)) as v, fb.screen() as screen:
        assert screen.play([v, v, v], fps=0, audio=False).shown == 30
        assert screen.play(v, fps=0, audio=False).shown == 10
        first, second = list(v), list(v)
        assert len(first) == len(second) == 10
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(first, second))
        assert not v.closed


def test_iterating_in_two_threads(clip: Path) -> None:
    """Two threads iterating one Video each get all its frames."""
    counts: list[int] = []
    with video.open(str(clip)) as v:
        threads = [threading.Thread(target=lambda: counts.append(len(list(v)))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert counts == [10, 10]


# -- what play is given ---------------------------------------------------------------------------


@pytest.mark.parametrize("source", [b"movie.mp4", bytearray(b"x"), 42])
def test_a_bytes_source_is_one_type_error(source: object, open_virtual) -> None:
    """play(b"...") or video.open(b"...") says it wants a path, not the bytes' first int."""
    with open_virtual("32x24").screen() as screen, pytest.raises(TypeError, match=r"not (bytes|bytearray|int)"):
        screen.play(source, audio=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="path"):
        video.open(source)  # type: ignore[arg-type]


@pytest.mark.parametrize("name, value", [("duration", "5"), ("fps", "30"), ("duration", [1])])
def test_a_string_duration_is_one_type_error(clip: Path, name: str, value: object, open_virtual) -> None:
    """duration="5" (or fps="30") is a TypeError naming the option, not a bare comparison error."""
    with open_virtual("32x24").screen() as screen, pytest.raises(TypeError, match=f"{name} must be"):
        screen.play(str(clip), audio=False, **{name: value})  # type: ignore[arg-type]


def test_a_local_path_that_looks_like_a_url_is_a_file(clip: Path, tmp_path: Path, monkeypatch) -> None:
    """A file at http:/host:8080 (a folder named 'http:') opens as that local file, never over the network."""
    folder = tmp_path / "http:"
    folder.mkdir()
    (folder / "host:8080").write_bytes(clip.read_bytes())
    monkeypatch.chdir(tmp_path)
    opened: list[str] = []
    real_open = av.open

    def recording_open(location, *args, **kwargs):
        opened.append(str(location))
        return real_open(location, *args, **kwargs)

    monkeypatch.setattr(av, "open", recording_open)
    with video.open("http:/host:8080") as v:
        assert len(list(v)) == 10
    assert opened and all(o == "file:" + str(folder / "host:8080") for o in opened)
    assert video.is_url("http://example.com/a.mp4") and not video.is_url("http:/host:8080")


class _StuckPass:
    """A pass whose second frame takes until ``release`` is set (a decode step that
    outlasts the player's wait for its thread)."""

    video = None
    live = False

    def __init__(self) -> None:
        self.release, self.closed = threading.Event(), threading.Event()
        self.reading = threading.Event()

    def frames(self):
        yield video.Frame("rgb", np.zeros((8, 8, 3), np.uint8), 0.0, 0.04)
        self.reading.set()
        self.release.wait(120)
        yield video.Frame("rgb", np.zeros((8, 8, 3), np.uint8), 0.04, 0.04)

    def close(self) -> None:
        self.closed.set()


class _StuckSource:
    name = "stuck"

    def __init__(self) -> None:
        self.pass_ = _StuckPass()

    def open(self, cancel: threading.Event) -> _StuckPass:
        return self.pass_


def test_a_pass_whose_step_outlasts_the_end_is_closed_when_the_step_ends(open_virtual) -> None:
    """A play that ends while its decoding thread is stuck in a step longer than the end's
    2 s wait: the pass is closed by that thread as the step ends, not left open."""
    source = _StuckSource()
    fb = open_virtual("32x24:RGB565")
    with fb.screen() as screen:
        played = screen.play(source, duration=0.3, audio=False)
    assert played.shown == 1 and source.pass_.reading.is_set()
    assert not source.pass_.closed.is_set()  # its thread is still in the step
    source.pass_.release.set()
    assert source.pass_.closed.wait(120)
