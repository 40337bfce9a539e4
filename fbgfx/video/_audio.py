"""A video's sound through ALSA, and the clock the pictures follow.

The output is ALSA's own library, ``libasound.so.2`` (on every Linux system with
sound, Raspberry Pi OS included), called through cffi in ABI mode: nothing to build or
install beyond what fbgfx needs already, and ``snd_pcm_delay`` says exactly how much
sound is queued ahead of the speaker, which is what an audio clock needs (see the
README's "Video" section for why not pyalsaaudio, sounddevice or FFmpeg's own ALSA
output).

:class:`AudioOut` takes decoded audio frames with their times (seconds on the play's
timeline), converts them to 16-bit stereo, and a writer thread feeds the device:
silence fills a gap before a frame, sound that overlaps what was already written is
cut, so playlists and loops stay on one timeline. :meth:`AudioOut.position` is the
time of the sample the listener hears now.
"""

from __future__ import annotations

import collections
import threading
import time
import warnings
from typing import Any

from .._foreign import load

__all__ = ["AudioOut", "open_audio"]

_SND_PCM_STREAM_PLAYBACK = 0
_SND_PCM_FORMAT_S16_LE = 2
_SND_PCM_ACCESS_RW_INTERLEAVED = 3
_EPIPE, _ESTRPIPE = 32, 86
# Sound queued in the device: enough to ride over a busy moment, little enough to follow.
_LATENCY_US = 120_000
# Sound held in fbgfx ahead of the device (a file's interleaving puts audio ahead of video).
_AHEAD = 8.0
_CHANNELS = 2
_BYTES = 2 * _CHANNELS  # one stereo s16 frame
# Written to the device at a time, so the clock is refreshed often.
_CHUNK = 1024
# Silence written at a time before a sound that starts late (4 KB).
_SILENCE_FRAMES = _CHUNK

_ALSA: Any = None
_ALSA_LOCK = threading.Lock()


def _alsa() -> tuple[Any, Any]:
    """(ffi, lib) for libasound, loaded on first use.

    Raises:
        OSError: No libasound.so.2.
    """
    global _ALSA
    with _ALSA_LOCK:
        if _ALSA is None:
            ffi, (lib,) = load("alsa", "libasound.so.2")
            _ALSA = ffi, lib
        return _ALSA  # type: ignore[no-any-return]


def open_audio(device: str, rate: int) -> AudioOut | None:
    """The ALSA output ``device`` at ``rate`` Hz, or None (and one warning) when it cannot
    be opened: no sound card, or no libasound."""
    try:
        return AudioOut(device, rate)
    except OSError as e:
        warnings.warn(f"no sound: {e.strerror or e}; playing without it", RuntimeWarning, stacklevel=3)
        return None


class AudioOut:
    """16-bit stereo to an ALSA device, fed by a thread, on the play's timeline.

    Args:
        device: The ALSA device name (``"default"``, ``"hw:1,0"``, ``"plughw:0"``...).
        rate: Samples per second (ALSA converts where the card needs another rate).

    Raises:
        OSError: The device cannot be opened or set up.
    """

    def __init__(self, device: str, rate: int) -> None:
        ffi, lib = _alsa()
        self._ffi, self._lib = ffi, lib
        self.rate = int(rate)
        pcm = ffi.new("snd_pcm_t **")
        # ALSA prints its own lines on stderr for a missing card; the one warning is ours.
        quiet = ffi.callback("void(const char *, int, const char *, int, const char *)", lambda *_: None)
        lib.snd_lib_error_set_handler(ffi.cast("void *", quiet))
        try:
            err = lib.snd_pcm_open(pcm, device.encode(), _SND_PCM_STREAM_PLAYBACK, 0)
            if err < 0:
                raise OSError(-err, f"ALSA device {device!r}: {ffi.string(lib.snd_strerror(err)).decode()}")
            self._pcm = pcm[0]
            err = lib.snd_pcm_set_params(
                self._pcm, _SND_PCM_FORMAT_S16_LE, _SND_PCM_ACCESS_RW_INTERLEAVED, _CHANNELS, self.rate, 1, _LATENCY_US
            )
            if err < 0:
                lib.snd_pcm_close(self._pcm)
                raise OSError(-err, f"ALSA device {device!r}: {ffi.string(lib.snd_strerror(err)).decode()}")
        finally:
            lib.snd_lib_error_set_handler(ffi.NULL)
        self._resampler: Any = None
        self._queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self._queued = 0.0  # seconds in the queue
        self._cond = threading.Condition()
        self._started = threading.Event()
        self._stop = False
        self._written = 0.0  # timeline time of the next sample to write
        self._heard: tuple[float, float] | None = None  # (position, monotonic time) after the last write
        self._busy = False
        self._dead = False  # the writer thread ended (device gone, or an error)
        self._silence = memoryview(bytes(_SILENCE_FRAMES * _BYTES))
        self._thread = threading.Thread(target=self._run, name="fbgfx-audio", daemon=True)
        self._thread.start()

    # -- the producer side ----------------------------------------------------------------------

    def put(self, frame: Any, t: float) -> None:
        """Queue a decoded ``av.AudioFrame`` that starts at ``t`` on the timeline; waits
        while more than a few seconds are queued."""
        if self._resampler is None:
            import av  # noqa: PLC0415 (PyAV, the video extra, only when sound plays)

            self._resampler = av.AudioResampler(format="s16", layout="stereo", rate=self.rate)
        out = self._resampler.resample(frame)
        for piece in out if isinstance(out, list) else [out]:
            if piece is None or not piece.samples:
                continue
            data = bytes(piece.planes[0])[: piece.samples * _BYTES]
            with self._cond:
                while self._queued > _AHEAD and not (self._stop or self._dead):
                    self._cond.wait(0.1)
                if self._stop or self._dead:
                    return
                self._queue.append((t, data))
                self._queued += piece.samples / self.rate
                self._cond.notify_all()
            t += piece.samples / self.rate

    def new_source(self) -> None:
        """The next frames come from another file (its own sample format and rate)."""
        self._resampler = None

    def start(self) -> None:
        """Start sounding (the first picture is on screen)."""
        self._started.set()

    def position(self) -> float | None:
        """The timeline time the listener hears now, or None when the device is idle
        (the sound ended or ran dry): then the pictures keep their own time."""
        with self._cond:
            heard, busy = self._heard, self._busy
        if heard is None or not busy:
            return None
        position, stamp = heard
        now = time.monotonic()
        return min(position + (now - stamp), self._written)

    def close(self) -> None:
        """Stop at once (what is queued is dropped) and close the device; safe twice."""
        with self._cond:
            if self._stop:
                return
            self._stop = True
            self._cond.notify_all()
        self._started.set()
        self._thread.join(timeout=2.0)
        if not self._thread.is_alive():
            self._lib.snd_pcm_drop(self._pcm)
            self._lib.snd_pcm_close(self._pcm)

    # -- the writer thread ------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._started.wait()
            delay = self._ffi.new("long *")
            while True:
                item = self._take(delay)
                if item is None or not self._write_at(*item, delay):
                    return
        except Exception as e:  # noqa: BLE001 - a dead writer ends the sound, never the play
            warnings.warn(f"the sound stopped: {e}", RuntimeWarning, stacklevel=2)
        finally:
            with self._cond:
                self._dead = True  # put() drops from here on; position() says None
                self._busy = False
                self._queue.clear()
                self._queued = 0.0
                self._cond.notify_all()

    def _take(self, delay: Any) -> tuple[float, bytes] | None:
        """The next queued (time, samples), or None when the output is closing."""
        with self._cond:
            while not self._queue and not self._stop:
                self._busy = self._heard is not None and self._heard[0] < self._written - 0.005
                self._cond.wait(0.02)
                if self._heard is not None:
                    self._refresh(delay)
            if self._stop:
                return None
            t, data = self._queue.popleft()
            self._queued -= len(data) / _BYTES / self.rate
            self._cond.notify_all()
            return t, data

    def _write_at(self, t: float, data: bytes, delay: Any) -> bool:
        """Write ``data`` (starting at ``t``) fitted to what was written: silence before a
        gap, written a piece at a time (a sound starting an hour late is an hour of
        silence, never one buffer of it), overlap cut. False when the output ends."""
        gap = int(round((t - self._written) * self.rate))
        if gap > self.rate // 100:  # more than 10 ms missing: fill with silence
            while gap > 0:
                n = min(gap, _SILENCE_FRAMES)
                if not self._write(self._silence[: n * _BYTES], delay):
                    return False
                gap -= n
        elif gap < -(self.rate // 100):
            data = data[min(-gap * _BYTES, len(data)) :]
        return self._write(memoryview(data), delay)

    def _write(self, view: memoryview, delay: Any) -> bool:
        """Write ``view`` to the device; False when the device is gone or the output closes."""
        lib, ffi = self._lib, self._ffi
        while view:
            frames = min(len(view) // _BYTES, _CHUNK)
            n = lib.snd_pcm_writei(self._pcm, ffi.from_buffer(view[: frames * _BYTES]), frames)
            if n < 0:
                if lib.snd_pcm_recover(self._pcm, n, 1) < 0:
                    return False  # the device is gone: the pictures keep their own time
                continue
            view = view[n * _BYTES :]
            with self._cond:
                self._written += n / self.rate
                self._busy = True
                self._refresh(delay)
            if self._stop:
                return False
        return True

    def _refresh(self, delay: Any) -> None:
        """Read how much is queued in the device: the position heard now (lock held)."""
        if self._lib.snd_pcm_delay(self._pcm, delay) == 0:
            queued = max(delay[0], 0) / self.rate
            self._heard = (self._written - queued, time.monotonic())
            if queued <= 0:
                self._busy = bool(self._queue)
