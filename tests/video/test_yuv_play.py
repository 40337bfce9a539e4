"""Video frames in YUV on a display plane (fbgfx.video._yuv): a play whose plane lists NV12
or YUV420 writes the decoded frames into the plane's YUV buffers with no RGB step, on
the fake card's dumb buffers; everything else goes through RGB, saying why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.fake_drm import FakeCard

import fbgfx
from fbgfx.drm.yuv import YuvBuffer

av = pytest.importorskip("av", reason="PyAV (the video extra) is not installed: pip install -e '.[test]'")

from support.video_media import make_video  # noqa: E402

import fbgfx.video as video  # noqa: E402
from fbgfx.video import _scale  # noqa: E402

FRAMES = 6


class FakeYuvPlane:
    """A plane that lists ``formats``, with YUV buffers on the fake card (as
    fbgfx.drm.planes.YuvVideo has them on a real one); ``refuse`` answers begin()."""

    def __init__(self, size: tuple[int, int], formats: tuple[str, ...] = ("XR24", "NV12", "YU12"), refuse: str = ""):
        self.card = FakeCard(formats=formats)
        self.formats = formats
        self.size, self.refuse = size, refuse
        self.bufs: list[YuvBuffer] = []
        self.front = 0
        self.flips: list[int] = []
        self.begun: list[tuple[str, bool]] = []
        self.ended = 0

    def begin(self, code: str, bt709: bool) -> str:
        self.begun.append((code, bt709))
        if self.refuse:
            return self.refuse
        self.bufs = [YuvBuffer(self.card, *self.size, code) for _ in range(2)]
        return ""

    def back(self) -> tuple[int, list[np.ndarray]]:
        return 1 - self.front, self.bufs[1 - self.front].planes()

    def flip(self) -> None:
        self.front = 1 - self.front
        self.flips.append(self.bufs[self.front].fb_id)

    def end(self) -> None:
        self.ended += 1
        for buf in self.bufs:
            buf.free()


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_video(tmp_path_factory.mktemp("yuv") / "clip.mp4", seconds=FRAMES / 10, fps=10, size=(64, 48))


def _last_frame(path: Path) -> object:
    with av.open(str(path)) as container:
        return list(container.decode(video=0))[-1]


def _conversions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the frames converted to the display's RGB format (Converter calls)."""
    seen: list[str] = []
    call = _scale.Converter.__call__

    def counted(self: object, frame: object) -> None:
        seen.append(frame.format.name)  # type: ignore[attr-defined]
        call(self, frame)  # type: ignore[arg-type]

    monkeypatch.setattr(_scale.Converter, "__call__", counted)
    return seen


def _play(
    clip: Path, plane: FakeYuvPlane, size: tuple[int, int], fit: str = "fit"
) -> tuple[video.Played, tuple[fbgfx.Framebuffer, fbgfx.Screen], video.Player]:
    """Play ``clip`` on a virtual screen of ``size`` with ``plane`` standing for the layer's plane."""
    fb = fbgfx.open(f"virtual:{size[0]}x{size[1]}:XRGB8888")
    screen = fb.screen()
    player = video.Player(screen, clip, video.PlayOptions(audio=False, fps=0, fit=fit), yuv=plane)
    return player.run(), (fb, screen), player


@pytest.mark.parametrize("code", ["NV12", "YU12"])
def test_frames_go_to_the_plane_in_yuv_without_rgb(clip, monkeypatch, code):
    """A plane listing NV12 or YUV420 and yuv420p frames: every frame is flipped in as YUV
    (the last one equal to FFmpeg's own conversion), none is converted to RGB but the
    last, once, into the layer's picture when the play ends."""
    conversions = _conversions(monkeypatch)
    plane = FakeYuvPlane((64, 48), formats=("XR24", code))
    played, (fb, screen), player = _play(clip, plane, (64, 48))
    assert player.yuv_code == code and player.yuv_reason == ""
    assert played.shown == FRAMES and len(plane.flips) == FRAMES
    assert plane.begun == [(code, False)] and plane.ended == 1
    assert conversions == ["yuv420p"]  # the last frame, into RGB at the end
    shown_rgb = np.asarray(fb.snapshot())
    ref_rgb = _last_frame(clip).to_ndarray(format="rgb24")
    assert np.abs(shown_rgb.astype(int) - ref_rgb).max() <= 2  # the layer holds what the plane showed
    screen.close()
    fb.close()


def test_the_yuv_buffer_holds_the_frame(clip):
    """The picture flipped in holds FFmpeg's own samples of the frame (Y exactly)."""
    plane = FakeYuvPlane((64, 48), formats=("XR24", "YU12"))
    ends = plane.end
    held: list[np.ndarray] = []

    def end() -> None:  # read the picture on screen before it is freed
        held.append(plane.bufs[plane.front].planes()[0].copy())
        ends()

    plane.end = end  # type: ignore[method-assign]
    _, (fb, screen), _ = _play(clip, plane, (64, 48))
    y = _last_frame(clip).to_ndarray()[:48]
    assert (held[0] == y).all()
    screen.close()
    fb.close()


def test_a_narrower_video_is_centred_with_black_yuv_bars(clip):
    """A 64x48 video in an 80x48 layer: in the middle at its size, black (Y 16, CbCr 128) on both sides."""
    plane = FakeYuvPlane((80, 48), formats=("XR24", "NV12"))
    held: list[list[np.ndarray]] = []
    ends = plane.end

    def end() -> None:
        held.append([p.copy() for p in plane.bufs[plane.front].planes()])
        ends()

    plane.end = end  # type: ignore[method-assign]
    _, (fb, screen), _ = _play(clip, plane, (80, 48))
    y, cbcr = held[0]
    assert (y[:, :8] == 16).all() and (y[:, 72:] == 16).all() and (cbcr[:, :8] == 128).all()
    assert (y[:, 8:72] == _last_frame(clip).to_ndarray()[:48]).all()
    screen.close()
    fb.close()


@pytest.mark.parametrize(
    ("formats", "refuse", "size", "fit", "why"),
    [
        (("XR24", "AR24", "RG16"), "", (64, 48), "fit", "the plane lists no NV12 or YUV420 (YU12)"),
        (("XR24", "NV12"), "NV12: the driver refused (EINVAL)", (64, 48), "fit", "NV12: the driver refused"),
        (("XR24", "NV12"), "", (64, 32), "fill", "fit='fill' cuts the picture"),
        (("XR24", "NV12"), "", (96, 64), "fit", "edges fall on odd pixels"),  # 85x64 at x 5
    ],
)
def test_otherwise_frames_go_through_rgb_and_say_why(clip, monkeypatch, formats, refuse, size, fit, why):
    """No YUV format, a TEST_ONLY refusal, a cut picture, odd edges: all frames through RGB, with the reason."""
    conversions = _conversions(monkeypatch)
    plane = FakeYuvPlane(size, formats=formats, refuse=refuse)
    played, (fb, screen), player = _play(clip, plane, size, fit)
    assert played.shown == FRAMES and plane.flips == [] and len(conversions) == FRAMES
    assert player.yuv_code is None and why in player.yuv_reason, player.yuv_reason
    screen.close()
    fb.close()


def test_a_box_within_the_layer_stays_rgb(clip, monkeypatch):
    """play(box=...) in part of a layer: the YUV picture would be the plane's whole size, so RGB."""
    conversions = _conversions(monkeypatch)
    plane = FakeYuvPlane((64, 48), formats=("XR24", "NV12"))
    fb = fbgfx.open("virtual:64x48:XRGB8888")
    screen = fb.screen()
    player = video.Player(screen, clip, video.PlayOptions(audio=False, fps=0, box=(0, 0, 32, 24)), yuv=plane)
    player.run()
    assert plane.begun == [] and len(conversions) == FRAMES
    screen.close()
    fb.close()
