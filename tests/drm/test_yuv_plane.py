"""A layer's plane showing video in YUV (fbgfx.drm.planes.YuvVideo) on the fake card, with
an atomic stand-in that records the commits: the NV12/YU12 framebuffers are tried with
TEST_ONLY, flipped in turn on this plane alone, and the plane goes back to the layer's
RGB picture with no YUV buffer left."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from support.fake_drm import CRTC, FakeCard

from fbgfx.drm.atomic import PlaneInfo
from fbgfx.drm.planes import HardwarePlane, YuvVideo
from fbgfx.drm.shared import SharedCard

PLANE = 60
BT709, BT601, LIMITED = 11, 10, 21


class FakeAtomic:
    """What HardwarePlane asks of fbgfx.drm.atomic.Atomic; commits are recorded, and a
    non-blocking one sends its page-flip event through the fake card."""

    def __init__(self, card: FakeCard, *, refuse: str = "", colors: bool = True) -> None:
        self.card, self.refuse, self.colors = card, refuse, colors
        self.tests: list[dict[str, int]] = []
        self.commits: list[dict[str, int]] = []

    def values(self, obj_id: int, obj_type: int) -> dict[str, int]:
        return {}

    def enum_value(self, obj_id: int, obj_type: int, name: str, choice: str) -> int | None:
        table = {"ITU-R BT.709 YCbCr": BT709, "ITU-R BT.601 YCbCr": BT601, "YCbCr limited range": LIMITED}
        return table.get(choice) if self.colors and name in ("COLOR_ENCODING", "COLOR_RANGE") else None

    def refusal(self, changes: Any, *, modeset: bool = False, doing: str = "") -> str:
        self.tests.append(dict(changes[0][1]))
        return self.refuse

    def commit(self, changes: Any, *, event: int | None = None, doing: str = "", **_: Any) -> None:
        props = dict(changes[0][1])
        assert changes[0][0] == PLANE and (props.get("FB_ID", 0) == 0 or props["FB_ID"] in self.card.fbs), props
        self.commits.append(props)
        if event is not None:
            self.card.events.append((2, event, len(self.commits), CRTC))


def _plane(formats: tuple[str, ...] = ("XR24", "NV12", "YU12"), size: tuple[int, int] = (64, 48), **atomic: Any):
    card = FakeCard(formats=formats)
    fake = FakeAtomic(card, **atomic)
    pool = SimpleNamespace(
        atomic=fake, card=card, crtc_id=CRTC, shared=SharedCard(card, None), device=SimpleNamespace(path=card.path)
    )
    info = PlaneInfo(PLANE, "overlay", formats, False)
    plane = HardwarePlane(pool, info, (100, 50, 100 + size[0], 50 + size[1]), "XR24")  # type: ignore[arg-type]
    plane.show(np.full((size[1], size[0]), 0x00FF0000, np.uint32))
    return card, fake, plane


@pytest.mark.parametrize(("code", "bt709", "encoding"), [("NV12", True, BT709), ("YU12", False, BT601)])
def test_yuv_pictures_are_tried_then_flipped_on_this_plane(code, bt709, encoding):
    """begin() tries a black YUV picture in TEST_ONLY with the video's matrix and the
    limited range, shows it; flips alternate two YUV framebuffers; end() shows the RGB
    picture again and frees every YUV buffer."""
    card, fake, plane = _plane()
    rgb_fb = plane.bufs.fb_ids[plane.bufs.front]
    yuv = YuvVideo(plane)
    assert yuv.begin(code, bt709) == ""
    (tried,) = fake.tests
    yuv_fbs = [buf.fb_id for buf in yuv.bufs]
    assert tried["FB_ID"] == yuv_fbs[0] and tried["COLOR_ENCODING"] == encoding and tried["COLOR_RANGE"] == LIMITED
    assert (tried["CRTC_X"], tried["CRTC_Y"], tried["CRTC_W"], tried["CRTC_H"]) == (100, 50, 64, 48)
    assert all(card.fbs[fb][2] == code for fb in yuv_fbs)
    assert fake.commits[-1]["FB_ID"] == yuv_fbs[0]
    first = yuv.bufs[0].planes()[0]
    assert (first == 16).all()  # black in the video range until the first frame
    shown = []
    for _ in range(4):
        index, planes = yuv.back()
        planes[0][...] = 200 + index
        yuv.flip()
        shown.append(fake.commits[-1]["FB_ID"])
        assert set(fake.commits[-1]) == {"FB_ID"}  # this plane's framebuffer alone
    assert shown == [yuv_fbs[1], yuv_fbs[0], yuv_fbs[1], yuv_fbs[0]]
    yuv.end()
    assert fake.commits[-1] == {"FB_ID": rgb_fb}
    assert not any(card.fbs[fb][2] == code for fb in card.fbs) and card.planar == {}
    assert len(card.dumbs) == plane.bufs.pages  # the layer's own RGB buffers only
    plane.free()
    assert card.dumbs == {}


def test_a_refused_format_leaves_the_plane_on_rgb():
    """A TEST_ONLY refusal: the reason, nothing committed, no YUV buffer left."""
    card, fake, plane = _plane(refuse="the driver refused (EINVAL) in a TEST_ONLY commit")
    before = list(fake.commits)
    why = YuvVideo(plane).begin("NV12", False)
    assert why == "NV12: the driver refused (EINVAL) in a TEST_ONLY commit"
    assert fake.commits == before and card.planar == {}
    assert plane.yuv is None


def test_an_odd_layer_and_a_card_without_the_format_say_why():
    """A layer of odd size (4:2:0 halves it) and a card that takes no NV12 framebuffer: RGB, with the reason."""
    _, fake, plane = _plane(size=(63, 48))
    assert "63x48: 4:2:0 YUV needs even sizes" in YuvVideo(plane).begin("NV12", False) and fake.tests == []
    card, fake, plane = _plane(formats=("XR24", "AR24"))
    assert YuvVideo(plane).begin("NV12", False).startswith("no NV12 buffers") and card.planar == {}


def test_planes_without_colour_properties_take_yuv_as_it_is():
    """A plane without COLOR_ENCODING / COLOR_RANGE (as vkms'): the commit sets neither."""
    _, fake, plane = _plane(colors=False)
    assert YuvVideo(plane).begin("NV12", True) == ""
    assert "COLOR_ENCODING" not in fake.tests[0] and "COLOR_RANGE" not in fake.tests[0]


def test_freeing_the_plane_mid_play_frees_the_yuv_pictures():
    """The layer closed while a play has YUV pictures on its plane: the plane off, every buffer freed."""
    card, fake, plane = _plane()
    yuv = YuvVideo(plane)
    assert yuv.begin("YU12", False) == ""
    plane.free()
    assert fake.commits[-1] == {"FB_ID": 0, "CRTC_ID": 0} and card.dumbs == {} and card.planar == {}
