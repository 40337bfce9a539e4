"""Test videos made on the spot with PyAV: solid-colour quadrants that change every
second, an optional 440 Hz tone, an optional display matrix (as phones record).

Nothing here is stored in the repository; each test writes what it plays into tmp_path.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

#: The quadrant colours of second 0 (top-left, top-right, bottom-left, bottom-right);
#: second k shows them shifted by k.
COLORS = ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255))
TONE_HZ = 440


def quadrant_colors(second: int) -> tuple[tuple[int, int, int], ...]:
    """The four colours shown during ``second`` (top-left, top-right, bottom-left, bottom-right)."""
    k = second % 4
    return COLORS[k:] + COLORS[:k]


def quadrants(width: int, height: int, second: int) -> np.ndarray:
    """The RGB picture of ``second``: four solid quadrants."""
    rgb = np.empty((height, width, 3), np.uint8)
    tl, tr, bl, br = quadrant_colors(second)
    h2, w2 = height // 2, width // 2
    rgb[:h2, :w2], rgb[:h2, w2:], rgb[h2:, :w2], rgb[h2:, w2:] = tl, tr, bl, br
    return rgb


def make_video(
    path: Path,
    *,
    seconds: float = 2.0,
    fps: int = 10,
    size: tuple[int, int] = (64, 48),
    tone: bool = False,
    codec: str = "libx264",
    rotate: int = 0,
) -> Path:
    """Write a quadrant video; ``rotate``: degrees clockwise its display matrix turns it
    (mp4/mov only). Returns ``path``."""
    import av

    width, height = size
    with av.open(str(path), "w") as out:
        options = {"preset": "ultrafast", "qp": "0"} if codec == "libx264" else {}
        video = out.add_stream(codec, rate=fps, options=options)
        video.width, video.height = width, height
        video.pix_fmt = "yuv420p" if codec != "mjpeg" else "yuvj420p"
        audio: Any = None
        if tone:
            audio = out.add_stream("aac", rate=48000)
            audio.layout = "mono"
        frames = int(round(seconds * fps))
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(quadrants(width, height, i // fps), format="rgb24")
            frame.pts = i
            for packet in video.encode(frame):
                out.mux(packet)
        for packet in video.encode(None):
            out.mux(packet)
        if audio is not None:
            rate, block = 48000, 1024
            total = int(seconds * rate)
            for start in range(0, total, block):
                n = min(block, total - start)
                t = (np.arange(start, start + n) / rate).astype(np.float64)
                samples = (0.5 * np.sin(2 * math.pi * TONE_HZ * t)).astype(np.float32).reshape(1, n)
                frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
                frame.sample_rate = rate
                frame.pts = start
                for packet in audio.encode(frame):
                    out.mux(packet)
            for packet in audio.encode(None):
                out.mux(packet)
    if rotate:
        set_rotation(path, rotate)
    return path


def set_rotation(path: Path, degrees: int) -> None:
    """Give an mp4's first track a display matrix turning it ``degrees`` clockwise (as a
    phone held upright records)."""
    data = bytearray(path.read_bytes())
    at = data.index(b"tkhd")
    version = data[at + 4]
    matrix_at = at + 4 + 4 + (32 if version == 1 else 20) + 16
    one, unit = 0x10000, 0x40000000
    a, b, c, d = {90: (0, one, -one, 0), 180: (-one, 0, 0, -one), 270: (0, -one, one, 0)}[degrees]
    data[matrix_at : matrix_at + 36] = struct.pack(">9i", a, b, 0, c, d, 0, 0, 0, unit)
    path.write_bytes(bytes(data))
