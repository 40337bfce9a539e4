#!/usr/bin/env python3
"""How fast `fbgfx play` plays a video file, against FFmpeg doing the same work into nothing.

A 1080p H.264 file (made here with PyAV: a moving plasma, so every macroblock changes)
is played as fast as it decodes (``--fps 0 --no-audio``):

1. into a 1920x1080 XRGB8888 display, against
   ``ffmpeg -i FILE -pix_fmt bgra -f rawvideo /dev/null``;
2. scaled into an 800x480 RGB565 display (``--stretch``), against
   ``ffmpeg -i FILE -pix_fmt rgb565le -s 800x480 -f rawvideo /dev/null``;
3. into a 1080x1920 XRGB8888 panel turned 90 degrees (``--rotate 90``: libswscale
   writes the upright frame, the flip turns it with fbgfx's C rotation kernel), against 1.

Both sides decode with FFmpeg's frame threads and convert with libswscale; fbgfx also
flips each frame into the (virtual) display. fbgfx's figure is its own
``--stats`` summary (frames over the time from the first frame shown); FFmpeg's is
frames over its ``-benchmark`` real time. Each is also given as CPU time a frame (all
threads; fbgfx's start, measured alone, taken off), which a busy shared machine
disturbs far less than wall time. The target: at most 1.10x FFmpeg. A third line is
PyAV alone decoding and converting into nothing (``reformat``), in-process: the same
FFmpeg libraries as fbgfx. The two may link different FFmpeg releases (PyAV's wheel
bundles its own; the ``ffmpeg`` program is the system's), which the output names.
The machine's memcpy of one 1080p XRGB8888 frame is printed beside the figures.

    python benchmarks/bench_video.py [--seconds 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _timing import median

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUMMARY = re.compile(r"played (\d+) frames, ([\d.]+) fps, (\d+) dropped, ([\d.]+) s")
BENCH = re.compile(r"utime=([\d.]+)s stime=([\d.]+)s rtime=([\d.]+)s")


def make_clip(path: str, seconds: float, fps: int = 30, width: int = 1920, height: int = 1080) -> int:
    """A moving plasma in H.264 (x264 "veryfast", yuv420p); returns the frame count."""
    import av

    y, x = np.mgrid[0 : height // 4, 0 : width // 4].astype(np.float32)
    frames = int(seconds * fps)
    with av.open(path, "w") as out:
        stream = out.add_stream("libx264", rate=fps, options={"preset": "veryfast", "crf": "20"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i in range(frames):
            t = i / fps * 3
            v = np.sin(x / 19 + t) + np.sin(y / 13 - t * 1.3) + np.sin((x + y) / 27 + t * 0.7)
            small = np.empty((height // 4, width // 4, 3), np.uint8)
            for c, phase in enumerate((0.0, 2.1, 4.2)):
                small[..., c] = 127 + 127 * np.sin(v * 1.5 + phase)
            rgb = small.repeat(4, 0).repeat(4, 1)
            rgb ^= np.random.default_rng(i).integers(0, 8, rgb.shape, np.uint8)  # texture: real work for the decoder
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return frames


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fbgfx_run(path: str, device: str, *extra: str) -> tuple[float, float, int]:
    """(fps, CPU seconds of the whole process, dropped) of `fbgfx play --fps 0 --stats`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    before = _child_cpu()
    out = subprocess.run(
        [sys.executable, "-m", "fbgfx", "play", path, "-d", device, "--fps", "0", "--no-audio", "--stats", *extra],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    cpu = _child_cpu() - before
    m = SUMMARY.search(out.stderr)
    if m is None:
        raise RuntimeError(f"no summary from fbgfx play: {out.stderr}")
    return float(m.group(1)) / float(m.group(4)), cpu, int(m.group(3))


def ffmpeg_run(path: str, frames: int, *args: str) -> tuple[float, float]:
    """(fps, CPU seconds) of ``ffmpeg -i FILE ARGS -f rawvideo /dev/null`` from its -benchmark line."""
    out = subprocess.run(
        ["ffmpeg", "-hide_banner", "-nostdin", "-benchmark", "-i", path, *args, "-f", "rawvideo", "-y", "/dev/null"],
        capture_output=True,
        text=True,
        check=True,
    )
    m = BENCH.search(out.stderr)
    if m is None:
        raise RuntimeError(f"no -benchmark line from ffmpeg: {out.stderr[-500:]}")
    return frames / float(m.group(3)), float(m.group(1)) + float(m.group(2))


def pyav_run(path: str, frames: int, pix_fmt: str, size: tuple[int, int] | None) -> tuple[float, float]:
    """(fps, CPU seconds) of decoding and converting with PyAV alone (the libraries fbgfx uses), into
    nothing: frame threads, ``reformat`` into a new frame each time."""
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        width, height = size or (stream.codec_context.width, stream.codec_context.height)
        start, cpu = time.perf_counter(), time.process_time()
        for frame in container.decode(stream):
            frame.reformat(width=width, height=height, format=pix_fmt, interpolation="BICUBIC")
        return frames / (time.perf_counter() - start), time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the 1080p clip (30 fps)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("ffmpeg") is None:
        sys.exit("bench_video.py: needs the ffmpeg program (apt-get install ffmpeg)")
    import av

    frame = np.zeros((1080, 1920), np.uint32)
    target = np.empty_like(frame)
    memcpy = median(lambda: np.copyto(target, frame), 20)
    version = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.split("\n")[0]
    print(f"PyAV {av.__version__} (libavcodec {av.library_versions['libavcodec']}); {version}")
    print(f"cores: {os.cpu_count()}; memcpy of a 1080p XRGB8888 frame: {memcpy * 1e3:.2f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "clip.mp4")
        t0 = time.monotonic()
        frames = make_clip(path, args.seconds)
        print(f"clip: {frames} frames of 1920x1080 H.264, made in {time.monotonic() - t0:.0f} s")
        small = (800, 480)
        cases = [
            ("1080p into XRGB8888 1920x1080", ("virtual:1920x1080:XRGB8888",), ("-pix_fmt", "bgra"), ("bgra", None)),
            ("1080p into RGB565 800x480", ("virtual:800x480:RGB565", "--stretch"),
             ("-pix_fmt", "rgb565le", "-s", "800x480"), ("rgb565le", small)),
            ("1080p, panel turned 90", ("virtual:1080x1920:XRGB8888", "--rotate", "90"),
             ("-pix_fmt", "bgra"), ("bgra", None)),
        ]  # fmt: skip
        # fbgfx's start (Python, imports, opening the file and the display), measured
        # alone, comes off its CPU time: what is left is the frames' work
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        starts = []
        for _ in range(args.repeats):
            before = _child_cpu()
            subprocess.run(
                [sys.executable, "-m", "fbgfx", "play", path, "-d", "virtual:1920x1080:XRGB8888", "--duration", "0"],
                capture_output=True,
                env=env,
                check=True,
            )
            starts.append(_child_cpu() - before)
        start_cpu = statistics.median(starts)
        print(f"fbgfx play's start alone: {start_cpu:.2f} s CPU")
        for name, (device, *extra), ffargs, (pix_fmt, size) in cases:
            ours, ours_cpu, theirs, theirs_cpu, pyav, pyav_cpu, drops = [], [], [], [], [], [], 0
            for _ in range(args.repeats):  # interleaved: all see the same machine load
                fps, cpu, dropped = fbgfx_run(path, device, *extra)
                ours.append(fps)
                ours_cpu.append(cpu - start_cpu)
                drops += dropped
                fps, cpu = ffmpeg_run(path, frames, *ffargs)
                theirs.append(fps)
                theirs_cpu.append(cpu)
                fps, cpu = pyav_run(path, frames, pix_fmt, size)
                pyav.append(fps)
                pyav_cpu.append(cpu)
            a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(pyav)
            ca, cb = statistics.median(ours_cpu) / frames * 1e3, statistics.median(theirs_cpu) / frames * 1e3
            cc = statistics.median(pyav_cpu) / frames * 1e3
            print(
                f"{name}: fbgfx play {a:.1f} fps, {ca:.1f} ms CPU a frame; ffmpeg {b:.1f} fps, {cb:.1f} ms CPU a frame "
                f"-> {b / a:.2f}x its time, {ca / cb:.2f}x its CPU; PyAV decode+reformat {c:.1f} fps, {cc:.1f} ms CPU "
                f"-> {c / a:.2f}x, {ca / cc:.2f}x; drops {drops}"
            )


if __name__ == "__main__":
    main()
