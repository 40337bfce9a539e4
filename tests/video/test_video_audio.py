"""The sound writer of fbgfx.video (``_audio.AudioOut``) against a test double of
libasound at the cffi boundary: silence before a late sound is written in pieces, and
a writer that dies ends the sound, never the play (issue 29)."""

from __future__ import annotations

import threading
import time
import tracemalloc
from typing import Any

import numpy as np
import pytest

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from fbgfx.video import _audio  # noqa: E402


class FastCard:
    """A sound card that takes every sample at once (no pacing); ``fail_after`` samples
    written, writes fail for good (a device unplugged), or raise when ``explode``."""

    def __init__(self, fail_after: int | None = None, explode: bool = False) -> None:
        self.written, self.calls, self.largest = 0, 0, 0
        self.fail_after, self.explode = fail_after, explode

    def snd_pcm_writei(self, pcm: Any, buffer: Any, frames: int) -> int:
        self.calls += 1
        self.largest = max(self.largest, frames)
        if self.fail_after is not None and self.written >= self.fail_after:
            if self.explode:
                raise RuntimeError("the card went away")
            return -19  # -ENODEV
        self.written += frames
        return frames

    def snd_pcm_recover(self, pcm: Any, err: int, silent: int) -> int:
        return err  # cannot recover

    def snd_pcm_delay(self, pcm: Any, delayp: Any) -> int:
        delayp[0] = 0
        return 0

    def snd_pcm_open(self, pcm: Any, name: Any, stream: int, mode: int) -> int:
        return 0

    def snd_pcm_set_params(self, *args: Any) -> int:
        return 0

    def snd_pcm_drop(self, pcm: Any) -> int:
        return 0

    def snd_pcm_close(self, pcm: Any) -> int:
        return 0

    def snd_lib_error_set_handler(self, handler: Any) -> int:
        return 0


@pytest.fixture
def card(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Installs a FastCard (or the one a test makes with ``card(...)``) as libasound."""
    from fbgfx import _foreign

    ffi, _ = _foreign.load("alsa")

    def install(fake: FastCard) -> FastCard:
        monkeypatch.setattr(_audio, "_alsa", lambda: (ffi, fake))
        return fake

    return install


def tone(seconds: float, rate: int = 48000) -> Any:
    """A mono float audio frame of ``seconds``."""
    n = int(seconds * rate)
    samples = (0.2 * np.sin(np.arange(n) / 10)).astype(np.float32).reshape(1, n)
    frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
    frame.sample_rate = rate
    return frame


def wait_for(condition: Any, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_sound_an_hour_late_is_silence_in_pieces(card: Any) -> None:
    """Sound starting at 600 s on the timeline: its silence is written in small pieces, not one 115 MB buffer."""
    fake = card(FastCard())
    out = _audio.AudioOut("default", 48000)
    try:
        out.start()
        tracemalloc.start()
        out.put(tone(0.1), 600.0)
        assert wait_for(lambda: fake.written >= int(600.1 * 48000) - 48)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        out.close()
    assert peak < 8 << 20, peak  # one buffer of the silence would be 115 MB
    assert fake.largest <= _audio._CHUNK


@pytest.mark.filterwarnings("ignore:the sound stopped")
@pytest.mark.parametrize("explode", [False, True], ids=["device-gone", "writer-raises"])
def test_a_dead_writer_ends_the_sound_not_the_play(card: Any, explode: bool) -> None:
    """After the writer dies, put() returns at once (the decoder never stalls) and position() is None."""
    card(FastCard(fail_after=4800, explode=explode))
    out = _audio.AudioOut("default", 48000)
    out.start()
    try:
        out.put(tone(0.2), 0.0)
        assert wait_for(lambda: out._dead)
        assert out.position() is None
        done = threading.Event()

        def feed() -> None:
            for k in range(40):  # 20 s of sound, more than the 8 s put() queues ahead
                out.put(tone(0.5), 0.2 + k * 0.5)
            done.set()

        threading.Thread(target=feed, daemon=True).start()
        assert done.wait(30), "put() blocked on a dead writer"
    finally:
        out.close()
