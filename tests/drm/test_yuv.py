"""YUV pictures for video planes (fbgfx.drm.yuv, fbgfx.video._scale.YuvWriter) on the fake
card: which format a plane gets, the NV12 / YU12 framebuffer of one dumb buffer, and
decoded frames written into its planes without an RGB step."""

from __future__ import annotations

import numpy as np
import pytest
from support.fake_drm import FakeCard

from fbgfx.drm.yuv import YuvBuffer, choose_yuv
from fbgfx.errors import FramebufferError

av = pytest.importorskip("av")
from fbgfx.video._scale import YuvWriter  # noqa: E402  (needs PyAV)

PLANE_WITH_YUV = ("XR24", "AR24", "NV12", "YU12")


@pytest.mark.parametrize(
    ("formats", "decoded", "chosen"),
    [
        (PLANE_WITH_YUV, "yuv420p", "YU12"),  # the decoder's own layout first
        (PLANE_WITH_YUV, "nv12", "NV12"),
        (("XR24", "NV12"), "yuv420p", "NV12"),  # another 4:2:0 layout: chroma moved, still YUV
        (("XR24", "YU12"), "nv12", "YU12"),
        (("XR24", "NV12"), "yuvj420p", "NV12"),  # full range: brought to the video range on the way
    ],
)
def test_a_plane_listing_yuv_gets_the_decoders_format(formats, decoded, chosen):
    """A plane listing NV12 or YU12, a decoder giving 8-bit 4:2:0 YUV: a YUV picture, the decoder's layout first."""
    assert choose_yuv(formats, decoded) == (chosen, "")


@pytest.mark.parametrize(
    ("formats", "decoded", "why"),
    [
        (("XR24", "AR24", "RG16"), "yuv420p", "the plane lists no NV12 or YUV420 (YU12)"),  # vkms on 6.1
        (PLANE_WITH_YUV, "yuv422p", "the decoder gives yuv422p, not 8-bit 4:2:0 YUV"),
        (PLANE_WITH_YUV, "yuv420p10le", "the decoder gives yuv420p10le, not 8-bit 4:2:0 YUV"),
        (PLANE_WITH_YUV, "rgb24", "the decoder gives rgb24, not 8-bit 4:2:0 YUV"),
    ],
)
def test_otherwise_rgb_and_why(formats, decoded, why):
    """No YUV format on the plane, or frames that are not 8-bit 4:2:0: RGB, with the reason."""
    assert choose_yuv(formats, decoded) == (None, why)


@pytest.mark.parametrize("code", ["NV12", "YU12"])
def test_one_dumb_buffer_holds_every_plane(code):
    """ADDFB2 gets one buffer with each plane's pitch and offset: Y, then CbCr (NV12) or Cb and Cr (YU12)."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    picture = YuvBuffer(card, 320, 240, code)
    (handle,) = card.dumbs
    pitch = card.dumbs[handle][2]
    y_end = pitch * 240
    want = (
        [(pitch, 0), (pitch, y_end)]
        if code == "NV12"
        else [(pitch, 0), (pitch // 2, y_end), (pitch // 2, y_end + pitch // 2 * 120)]
    )
    assert card.planar[picture.fb_id] == tuple(want)
    assert card.fbs[picture.fb_id][:4] == (320, 240, code, handle)
    shapes = [p.shape for p in picture.planes()]
    assert shapes == ([(240, 320), (120, 320)] if code == "NV12" else [(240, 320), (120, 160), (120, 160)])
    picture.black()
    assert all((p == (16 if i == 0 else 128)).all() for i, p in enumerate(picture.planes()))
    picture.free()
    picture.free()
    assert card.dumbs == {} and picture.fb_id not in card.fbs


def test_a_format_the_driver_refuses_frees_the_buffer():
    """A driver that takes no NV12 framebuffer: the error, and no buffer left behind."""
    card = FakeCard()  # XR24 AR24 RG16 only
    with pytest.raises(FramebufferError):
        YuvBuffer(card, 64, 48, "NV12")
    assert card.dumbs == {}


@pytest.mark.parametrize(("size", "code"), [((63, 48), "NV12"), ((64, 47), "YU12"), ((64, 48), "XR24")])
def test_odd_sizes_and_other_formats_are_refused(size, code):
    """An odd size (4:2:0 halves both) or a format that is not NV12/YU12: ValueError, nothing made."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    with pytest.raises(ValueError):
        YuvBuffer(card, *size, code)
    assert card.dumbs == {}


def _yuv420p(w: int, h: int, seed: int = 1) -> object:
    rng = np.random.default_rng(seed)
    data = rng.integers(16, 236, (h * 3 // 2, w), np.uint8)
    return av.VideoFrame.from_ndarray(data, format="yuv420p")


def _reference(frame: object, code: str, w: int, h: int) -> list[np.ndarray]:
    """PyAV's own conversion of ``frame`` to the picture's format and size, plane by plane."""
    out = frame.reformat(width=w, height=h, format="nv12" if code == "NV12" else "yuv420p", interpolation="BICUBIC")
    planes = []
    for i, plane in enumerate(out.planes):
        rows = h if i == 0 else h // 2
        width = w if i == 0 or code == "NV12" else w // 2
        planes.append(np.frombuffer(plane, np.uint8).reshape(rows, plane.line_size)[:, :width])
    return planes


@pytest.mark.parametrize("code", ["NV12", "YU12"])
def test_frames_go_into_the_planes_as_yuv(code):
    """A yuv420p frame of the picture's size lands in the dumb buffer's planes as the same
    samples (YU12: copied; NV12: Cb and Cr interleaved), with no RGB step."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    picture = YuvBuffer(card, 64, 48, code)
    frame = _yuv420p(64, 48)
    writer = YuvWriter(picture.planes(), "nv12" if code == "NV12" else "yuv420p")
    writer(frame)
    source = frame.to_ndarray()
    y, u, v = source[:48], source[48:60].reshape(24, 32), source[60:].reshape(24, 32)
    planes = picture.planes()
    assert (planes[0] == y).all()
    if code == "NV12":
        assert (planes[1][:, 0::2] == u).all() and (planes[1][:, 1::2] == v).all()
    else:
        assert (planes[1] == u).all() and (planes[2] == v).all()
    # what the card holds, read through its own mapping: the same bytes
    raw = np.frombuffer(card.read_buffer(picture.handle, picture.size), np.uint8)
    assert (raw[: 48 * picture.pitch].reshape(48, picture.pitch)[:, :64] == y).all()
    writer.close()
    picture.free()


@pytest.mark.parametrize("code", ["NV12", "YU12"])
def test_frames_are_scaled_to_the_picture_like_ffmpeg(code):
    """A larger frame is scaled into the picture as FFmpeg scales it (PyAV's reformat): within 1 level."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    picture = YuvBuffer(card, 160, 90, code)
    frame = _yuv420p(320, 180, seed=2)
    writer = YuvWriter(picture.planes(), "nv12" if code == "NV12" else "yuv420p")
    writer(frame)
    for got, want in zip(picture.planes(), _reference(frame, code, 160, 90)):
        assert np.abs(got.astype(int) - want).max() <= 1
    writer.close()


def test_full_range_frames_come_out_in_the_video_range():
    """yuvj420p (full range, 0-255) frames are written in the video range planes assume: black 16, white 235."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    picture = YuvBuffer(card, 32, 16, "NV12")
    data = np.full((24, 32), 128, np.uint8)
    data[:16, :16], data[:16, 16:] = 0, 255
    writer = YuvWriter(picture.planes(), "nv12")
    writer(av.VideoFrame.from_ndarray(data, format="yuvj420p"))
    y = picture.planes()[0]
    assert abs(int(y[8, 4]) - 16) <= 1 and abs(int(y[8, 28]) - 235) <= 1
    writer.close()


def test_writer_refuses_planes_that_are_not_the_format():
    """Planes of the wrong count or shape, or another format: ValueError before any conversion."""
    card = FakeCard(formats=PLANE_WITH_YUV)
    picture = YuvBuffer(card, 32, 16, "YU12")
    with pytest.raises(ValueError, match="nv12 has 2 planes"):
        YuvWriter(picture.planes(), "nv12")
    with pytest.raises(ValueError, match="not 'rgb24'"):
        YuvWriter(picture.planes(), "rgb24")
