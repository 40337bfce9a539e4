"""Choosing a V4L2 hardware decoder (issue 29): asked of the kernel with VIDIOC_QUERYCAP
and VIDIOC_ENUM_FMT, never guessed from /dev/video*. The devices are test doubles at
the ioctl boundary, modelled on a Raspberry Pi 4, a Pi 5, and a machine with a camera."""

from __future__ import annotations

import os
import struct
from typing import Any

import pytest

from fbgfx.video import _v4l2

M2M_MPLANE, M2M, CAPTURE, DEVICE_CAPS = 0x4000, 0x8000, 0x1, 0x80000000
OUTPUT, OUTPUT_MPLANE = 2, 10


class FakeV4L2:
    """Device nodes answering VIDIOC_QUERYCAP / VIDIOC_ENUM_FMT as the kernel does:
    ``nodes`` maps a path to (card, capabilities, {buffer type: [fourcc, ...]})."""

    def __init__(self, nodes: dict[str, tuple[str, int, dict[int, list[str]]]]) -> None:
        self.nodes = nodes
        self.fds: dict[int, str] = {}
        self.calls: list[tuple[str, int]] = []
        self._open = os.open  # the real one, taken before the test replaces it

    def open(self, path: str, flags: int, mode: int = 0o777) -> int:
        if path not in self.nodes:  # os.open is the process's: other threads open real files meanwhile
            return self._open(path, flags, mode)
        fd = self._open(os.devnull, os.O_RDONLY)  # a real descriptor, so os.close works
        self.fds[fd] = path
        return fd

    def ioctl(self, fd: int, request: int, arg: Any) -> bytes:
        card, caps, queues = self.nodes[self.fds[fd]]
        self.calls.append((self.fds[fd], request))
        if request == _v4l2.VIDIOC_QUERYCAP:
            return struct.pack("=16s32s32sIII12x", b"drv", card.encode(), b"platform:x", 0, caps | DEVICE_CAPS, caps)
        if request == _v4l2.VIDIOC_ENUM_FMT:
            index, kind = struct.unpack_from("=II", arg)
            formats = queues.get(kind, [])
            if index >= len(formats):
                raise OSError(22, "Invalid argument")
            fourcc = int.from_bytes(formats[index].encode(), "little")
            return struct.pack("=III32sII12x", index, kind, 0, b"", fourcc, 0)
        raise OSError(25, "Inappropriate ioctl for device")


PI4 = {
    "/dev/video10": ("bcm2835-codec-decode", M2M, {OUTPUT: ["H264", "MJPG", "MPG2"]}),
    "/dev/video11": ("bcm2835-codec-encode", M2M, {OUTPUT: ["YU12", "NV12"]}),
    "/dev/video19": ("rpivid", M2M_MPLANE, {OUTPUT_MPLANE: ["S265"]}),  # stateless HEVC
}
PI5 = {"/dev/video19": ("rpi-hevc-dec", M2M_MPLANE, {OUTPUT_MPLANE: ["S265"]})}  # and no H.264 at all
CAMERA = {"/dev/video0": ("USB Camera", CAPTURE, {1: ["MJPG", "H264"]})}  # captures H.264: no decoder
ALL = ("h264_v4l2m2m", "hevc_v4l2m2m", "mpeg2_v4l2m2m", "vp9_v4l2m2m")


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Installs a FakeV4L2 with the given nodes."""

    def install(nodes: dict[str, tuple[str, int, dict[int, list[str]]]]) -> FakeV4L2:
        fake = FakeV4L2(nodes)
        monkeypatch.setattr(_v4l2, "IOCTL", fake.ioctl)
        monkeypatch.setattr(_v4l2, "DEVICES", lambda: sorted(nodes))
        monkeypatch.setattr(_v4l2.os, "open", fake.open)
        return fake

    return install


@pytest.mark.parametrize(
    "nodes, codec, expected, why",
    [
        (PI4, "h264", "h264_v4l2m2m", "/dev/video10 (bcm2835-codec-decode) decodes H264"),
        (PI4, "mpeg2video", "mpeg2_v4l2m2m", "/dev/video10"),
        (PI4, "hevc", None, "no V4L2 memory-to-memory device decodes HEVC"),  # /dev/video19 is stateless
        (PI5, "h264", None, "no V4L2 memory-to-memory device decodes H264"),
        (PI5, "hevc", None, "decodes HEVC"),
        (CAMERA, "h264", None, "no V4L2 memory-to-memory device decodes H264"),
        ({}, "h264", None, "no V4L2 memory-to-memory device"),
        (PI4, "av1", None, "no V4L2 decoder handles av1"),
    ],
    ids=["pi4-h264", "pi4-mpeg2", "pi4-hevc-stateless", "pi5-h264", "pi5-hevc", "camera", "none", "av1"],
)
def test_a_decoder_is_chosen_only_where_a_device_lists_the_codec(machine: Any, nodes, codec, expected, why) -> None:
    """hwdec=auto picks a *_v4l2m2m decoder only when a memory-to-memory device takes that codec on its OUTPUT queue."""
    fake = machine(nodes)
    name, reason = _v4l2.choose(codec, ALL)
    assert name == expected
    assert why in reason
    if nodes and codec in _v4l2.CODECS:
        assert any(request == _v4l2.VIDIOC_QUERYCAP for _, request in fake.calls)


def test_a_decoder_this_ffmpeg_lacks_is_not_chosen(machine: Any) -> None:
    """A device that decodes H.264 is no use to an FFmpeg built without h264_v4l2m2m: said so."""
    machine(PI4)
    assert _v4l2.choose("h264", ("hevc_v4l2m2m",)) == (None, "this FFmpeg has no h264_v4l2m2m")


def test_ioctl_numbers_are_the_kernels() -> None:
    """The request numbers are linux/videodev2.h's (_IOR('V', 0, 104 bytes), _IOWR('V', 2, 64 bytes))."""
    assert _v4l2.VIDIOC_QUERYCAP == 0x80685600
    assert _v4l2.VIDIOC_ENUM_FMT == 0xC0405602


def test_play_verbose_says_which_decoder_and_why(machine: Any, tmp_path, capsys) -> None:
    """fbgfx play --verbose names the decoder of each file and why it was chosen."""
    pytest.importorskip("av")
    from support.video_media import make_video

    from fbgfx.cli import main

    machine(PI5)
    clip = make_video(tmp_path / "one.mkv", seconds=0.3, fps=10)
    code = main(["play", str(clip), "--fps", "0", "--verbose", "-d", "virtual:32x24"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"{clip}: decoder h264 (no V4L2 memory-to-memory device decodes H264)" in err
