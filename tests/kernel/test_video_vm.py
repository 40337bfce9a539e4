"""Video on real kernels: in the ``std`` boot, the guest plays a file onto bochs' /dev/fb0 (the command line)
and onto ``drm:`` (``screen.play`` with sound), checked on qemu's screendumps, with
the sound recorded by qemu (``-audiodev wav``, an Intel HDA card, snd-hda-intel in the
guest; see _boots.CONFIGS) and the recording checked for the file's 440 Hz tone.

The video is made here on the host (tests/support/video_media.py) into the shared directory;
the guest is video_guest.py. Set FBGFX_VM_RESULTS=DIR to keep the logs and screendumps
in DIR/std/video_vm and the recording in DIR/std.
"""

from __future__ import annotations

import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _boots import PRELOAD, VIDEO, Guest, guest_fixture
from _vm import guest_step

pytestmark = pytest.mark.kernel

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from support.video_media import TONE_HZ, make_video, quadrant_colors  # noqa: E402

SECONDS = 3


def _make_movies(gdir: Path) -> None:
    """movie.mp4 for drm: (real time, every frame shown or dropped); movie-fb0.mp4, the
    same seconds at 2 frames a second, for /dev/fb0 (played twice as fast as it decodes:
    each frame is scaled to 1067x800 under TCG, the last second is what is checked)."""
    make_video(gdir / "movie.mp4", seconds=SECONDS, fps=10, size=(320, 240), tone=True)
    make_video(gdir / "movie-fb0.mp4", seconds=SECONDS, fps=2, size=(320, 240), tone=True)


video_vm = guest_fixture(
    Guest("video_vm", config="std", script="video_guest.py", before=_make_movies, preload=PRELOAD + VIDEO)
)


def _wav(video_vm: dict[str, Any]) -> Path:
    """qemu's recording of the std boot's sound card (_boots.CONFIGS)."""
    return Path(video_vm["_boot_dir"]) / "sound.wav"


def _shows_last_second(r: dict[str, Any]) -> None:
    """The screendump shows the file's last second: its four quadrant colours, black bars."""
    expected = quadrant_colors(SECONDS - 1)
    colors = r["colors"]
    for (name, got), want in zip(
        ((k, colors[k]) for k in ("top-left", "top-right", "bottom-left", "bottom-right")), expected
    ):
        assert max(abs(g - w) for g, w in zip(got, want)) <= 8, (name, got, want, r)
    assert colors["bar"] == [0, 0, 0], r


def test_play_onto_bochs_fb0(video_vm):
    """`fbgfx play movie.mp4 -d /dev/fb0`: the monitor shows the last frame, fitted, exactly
    what fbgfx wrote into the framebuffer."""
    assert video_vm["fb0"] and video_vm["sound_card"], video_vm
    r = guest_step(video_vm, "fb0")
    assert r["returncode"] == 0, r["stderr"]
    assert r["size"] == [1280, 800]
    _shows_last_second(r)
    assert r["diff"] == 0, r


def test_play_onto_drm_with_sound(video_vm):
    """screen.play onto drm: in real time: every frame shown or dropped, the last one on
    the monitor."""
    r = guest_step(video_vm, "drm")
    assert r["path"].startswith("drm:") and r["size"] == [1280, 800], r
    assert r["shown"] + r["dropped"] == SECONDS * 10 and r["shown"] > 0, r
    assert not r["warnings"], r  # the sound card played
    assert r["diff"] == 0, r
    _shows_last_second(r)


def test_sound_holds_the_tone(video_vm):
    """What the guest played through snd-hda-intel, recorded by qemu, is the file's 440 Hz tone."""
    guest_step(video_vm, "drm")
    with wave.open(str(_wav(video_vm))) as w:
        rate, channels, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
        data = w.readframes(w.getnframes())
    assert width == 2
    samples = np.frombuffer(data, np.int16).reshape(-1, channels)[:, 0].astype(np.float64)
    loud = np.flatnonzero(np.abs(samples) > 2000)
    assert loud.size > rate, f"less than a second of sound recorded ({loud.size} loud samples at {rate} Hz)"
    part = samples[loud[0] : loud[-1]]
    spectrum = np.abs(np.fft.rfft(part * np.hanning(part.size)))
    peak = np.fft.rfftfreq(part.size, 1 / rate)[int(np.argmax(spectrum))]
    assert abs(peak - TONE_HZ) < 5, peak
