"""Guest side of tests/kernel/test_layers_vm.py: layers on vkms (planes) and bochs
(software), run as root inside the VM.

Usage: python layers_guest.py RWDIR vkms|bochs

``vkms`` (the vkms boot: built out of tree, ``enable_overlay=1``: a primary, 8 overlay
planes and a cursor) checks layers on planes; ``bochs`` (the drm boot's bochs-display,
one primary plane) checks the software composition on qemu's screendump.
What the display engine shows is read without fbgfx's layer code: the kernel's atomic
state from ``/sys/kernel/debug/dri/N/state`` (each plane's fb id and ``crtc-pos``),
each plane's framebuffer by id through ``GETFB2`` + ``MAP_DUMB`` on a descriptor of
its own, composed here in floating point (premultiplied "over"); bochs' picture is
qemu's screendump. Each step's findings go into ``RWDIR/results.json``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests"))

import numpy as np  # noqa: E402
from _forked import fork  # noqa: E402  (beside this file)
from _host_link import HostLink  # noqa: E402
from PIL import Image  # noqa: E402

import fbgfx  # noqa: E402
import fbgfx.drm  # noqa: E402
import fbgfx.video  # noqa: E402
from fbgfx.cli import main as cli  # noqa: E402
from fbgfx.drm import Card, read_scanout  # noqa: E402

LINK = HostLink(Path("."))  # main() points it at RWDIR
BLUE, RED, GREEN_HALF = (0, 0, 255), (255, 0, 0), (0, 255, 0, 128)
OPAQUE_BOX, ALPHA_BOX = (100, 100, 400, 300), (300, 200, 700, 500)


# -- reading what the display engine shows, without fbgfx's layers --------------------------------


def card_of(driver: str) -> str:
    """The /dev/dri/cardN whose driver is ``driver``."""
    for path in sorted(Path("/dev/dri").glob("card*")):
        c = Card(str(path))
        try:
            if c.driver() == driver:
                return str(path)
        finally:
            c.close()
    raise FileNotFoundError(f"no {driver} card")


def debugfs_state(card: str) -> dict[int, dict[str, Any]]:
    """Each plane of the kernel's atomic state: {id: {"fb": id, "crtc": name, "pos": (w, h, x, y)}}."""
    minor = card.rsplit("card", 1)[1]
    text = Path(f"/sys/kernel/debug/dri/{minor}/state").read_text()
    planes: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        m = re.match(r"plane\[(\d+)\]", line)
        if m:
            current = planes[int(m.group(1))] = {"fb": 0, "crtc": "", "pos": None}
            continue
        if re.match(r"\S", line):
            current = None  # a crtc[...] or connector[...] block
            continue
        if current is None:
            continue
        line = line.strip()
        if line.startswith("fb="):
            current["fb"] = int(line[3:])
        elif line.startswith("crtc="):
            current["crtc"] = line[5:]
        elif line.startswith("crtc-pos="):
            w, h, x, y = re.match(r"crtc-pos=(\d+)x(\d+)([+-]\d+)([+-]\d+)", line).groups()  # type: ignore[union-attr]
            current["pos"] = (int(w), int(h), int(x), int(y))
    return planes


def read_plane_fb(card: str, fb_id: int) -> tuple[str, np.ndarray]:
    """A framebuffer's fourcc and pixels as (h, w, 4) floats (r, g, b, a), read by id
    through GETFB2 + MAP_DUMB on a descriptor of our own."""
    c = Card(card)
    try:
        info = c.get_fb(fb_id)
        try:
            data = c.read_buffer(info.handle, info.offset + info.pitch * info.height)
        finally:
            c.gem_close(info.handle)
    finally:
        c.close()
    bpp = 16 if info.fourcc in ("RG16", "BG16") else 32
    rows = np.frombuffer(data, np.uint8, count=info.pitch * info.height, offset=info.offset)
    px = rows.reshape(info.height, info.pitch)[:, : info.width * bpp // 8].copy()
    if bpp == 32:
        v = px.view("<u4").astype(np.int64)
        r, g, b, a = (v >> 16) & 255, (v >> 8) & 255, v & 255, (v >> 24) & 255
        if info.fourcc != "AR24":
            a = np.full_like(v, 255)
    else:
        v = px.view("<u2").astype(np.int64)
        r, g, b = ((v >> 11) & 31) * 255 // 31, ((v >> 5) & 63) * 255 // 63, (v & 31) * 255 // 31
        a = np.full_like(v, 255)
    return info.fourcc, np.stack([r, g, b, a], -1).astype(float)


def engine_picture(card: str, size: tuple[int, int]) -> tuple[np.ndarray, dict[int, dict[str, Any]]]:
    """What the display engine composes on crtc-0: every plane with an fb, by
    normalized zpos (= plane order on vkms), premultiplied over, in floating point."""
    state = debugfs_state(card)
    w, h = size
    out = np.zeros((h, w, 3), float)
    for _pid, p in sorted(state.items()):
        if not p["fb"] or not p["pos"]:
            continue
        fourcc, px = read_plane_fb(card, p["fb"])
        pw, ph, x, y = p["pos"]
        src = px[:ph, :pw]
        dst = out[y : y + ph, x : x + pw]
        alpha = src[..., 3:4] / 255
        dst[...] = src[..., :3] + dst * (1 - alpha)  # premultiplied (AR24) or opaque (a = 1)
    return np.round(out), state


def expected_scene(w: int, h: int) -> np.ndarray:
    """The scene: blue Screen, opaque red layer, half green alpha layer above both."""
    img = np.zeros((h, w, 3), float)
    img[...] = BLUE
    x0, y0, x1, y1 = OPAQUE_BOX
    img[y0:y1, x0:x1] = RED
    x0, y0, x1, y1 = ALPHA_BOX
    r, g, b, a = GREEN_HALF
    img[y0:y1, x0:x1] = np.round(np.round(np.array([r, g, b]) * a / 255) + img[y0:y1, x0:x1] * (255 - a) / 255)
    return img


def diff(got: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    """Largest difference per channel and how many pixels differ by more than 1."""
    if got.shape != want.shape:
        return {"max": -1, "shape": [list(got.shape), list(want.shape)]}
    d = np.abs(got.astype(np.int16) - want.astype(np.int16))
    most = int(d.max())
    over1 = int((d > 1).any(-1).sum()) if most > 1 else 0  # counted only when there are any
    return {"max": float(most), "over1": over1, "blank": bool((want == want[0, 0]).all())}


def draw_scene(fb: Any) -> tuple[Any, Any, Any]:
    screen = fb.screen()
    with screen.frame() as s:
        s.clear(BLUE)
    opaque = fb.layer(OPAQUE_BOX)
    with opaque.frame() as s:
        s.clear(RED)
    alpha = fb.layer(ALPHA_BOX, alpha=True)
    with alpha.frame() as s:
        s.clear(GREEN_HALF)
    return screen, opaque, alpha


def grab(card: str, name: str) -> np.ndarray:
    """What ``fbgfx grab`` reads (:func:`fbgfx.drm.read_scanout`, on a descriptor of its
    own: every active plane composed), as RGB; kept as NAME.png. In this process: a
    Python start takes a minute and more under TCG on a busy machine."""
    fmt_name, native = read_scanout(card)
    rgb = fbgfx.PixelFormat.from_name(fmt_name).unpack(native)
    Image.fromarray(rgb).save(Path(LINK.rwdir) / f"{name}.png")
    return rgb


def planes_on(state: dict[int, dict[str, Any]]) -> dict[int, int]:
    """Plane id -> fb id of the planes showing something."""
    return {pid: p["fb"] for pid, p in state.items() if p["fb"]}


# -- the steps -----------------------------------------------------------------------------------------


def run_vkms(card: str) -> None:
    before = planes_on(debugfs_state(card))

    @LINK.step("vkms_planes")
    def _planes() -> dict[str, Any]:
        with fbgfx.open(f"drm:{card}") as fb:
            planes = fb.planes
            return {
                "atomic": fb.drm.atomic,
                "types": [p.type for p in planes],
                "formats": {p.type: list(p.formats) for p in planes},
                "in_use": [p.in_use for p in planes],
                "size": list(fb.size),
            }

    @LINK.step("vkms_info")
    def _info() -> dict[str, Any]:
        # what `fbgfx info -d drm:CARD` prints (in this process: a Python start is slow here)
        return {"stdout": "\n".join(fbgfx.drm.describe(fbgfx.drm.probe(card))) + "\n", "rc": 0}

    @LINK.step("vkms_scene")
    def _scene() -> dict[str, Any]:
        with fbgfx.open(f"drm:{card}") as fb:
            screen, opaque, alpha = draw_scene(fb)
            time.sleep(0.1)
            want = expected_scene(*fb.size)
            engine, state = engine_picture(card, fb.size)
            grabbed = grab(card, "vkms-scene")
            result = {
                "hardware": [opaque.hardware, alpha.hardware],
                "reasons": [opaque.reason, alpha.reason],
                "plane_ids": [opaque.plane_id, alpha.plane_id],
                "positions": {str(k): v["pos"] for k, v in state.items() if v["fb"]},
                "engine": diff(engine, want),
                "grab": diff(grabbed, want),
            }
            # 100 updates of the alpha layer: the other planes keep their framebuffers
            on_before = planes_on(debugfs_state(card))
            seen_alpha = set()
            others_changed = 0
            for i in range(100):
                with alpha.frame() as s:
                    s.point((i, 0), fill=(255, 255, 255, 255))
                if i % 10 in (0, 5):  # an even and an odd update: both of its buffers
                    now = planes_on(debugfs_state(card))
                    seen_alpha.add(now.get(alpha.plane_id))
                    others_changed += sum(
                        1 for pid, fid in now.items() if pid != alpha.plane_id and on_before.get(pid) != fid
                    )
            result["others_changed"] = others_changed
            result["alpha_fbs"] = len(seen_alpha)
            result["flips"] = fb.drm.flips
            # a Screen frame flips the primary alone
            on_before = planes_on(debugfs_state(card))
            with screen.frame() as s:
                s.point((5, 5), fill="white")
            fb.wait_flip()
            after = planes_on(debugfs_state(card))
            result["screen_flip_changed"] = sorted(pid for pid, fid in after.items() if on_before.get(pid) != fid)
            result["primary"] = fb.drm.plane_id
            # move, hide, show
            alpha.move(10, 10)
            result["moved_pos"] = debugfs_state(card)[alpha.plane_id]["pos"]
            alpha.hide()
            result["hidden_fb"] = debugfs_state(card)[alpha.plane_id]["fb"]
            alpha.show()
            result["shown_fb"] = debugfs_state(card)[alpha.plane_id]["fb"]
            opaque.close()
            result["closed_fb"] = debugfs_state(card)[result["plane_ids"][0]]["fb"]
        result["after_close"] = planes_on(debugfs_state(card))
        result["before_open"] = before
        return result

    @LINK.step("vkms_more_layers_than_planes")
    def _many() -> dict[str, Any]:
        with fbgfx.open(f"drm:{card}") as fb:
            screen = fb.screen()
            with screen.frame() as s:
                s.clear(BLUE)
            layers = []
            for i in range(11):
                layer = fb.layer((i * 60, 600, i * 60 + 50, 650), alpha=i % 2 == 1)
                with layer.frame() as s:
                    s.clear((255, 0, 0, 255) if i % 2 == 0 else GREEN_HALF)
                layers.append(layer)
            want = np.zeros((*fb.size[::-1], 3), float)
            want[...] = BLUE
            for i in range(11):
                x0 = i * 60
                if i % 2 == 0:
                    want[600:650, x0 : x0 + 50] = RED
                else:
                    under = want[600:650, x0 : x0 + 50]
                    want[600:650, x0 : x0 + 50] = np.round(np.array([0, 128, 0]) + under * 127 / 255)
            grabbed = grab(card, "vkms-many")
            return {
                "hardware": [layer.hardware for layer in layers],
                "reasons": [layer.reason for layer in layers],
                "grab": diff(grabbed, want),
            }

    @LINK.step("vkms_sigterm")
    def _sigterm() -> dict[str, Any]:
        before = planes_on(debugfs_state(card))
        holder = fork(hold, card, new_session=True)
        line = holder.stdout.readline()
        during = planes_on(debugfs_state(card))
        holder.send_signal(signal.SIGTERM)
        rc = holder.wait(60)
        after = planes_on(debugfs_state(card))
        return {"ready": line.strip(), "during": len(during), "before": before, "after": after, "rc": rc}

    @LINK.step("vkms_legacy")
    def _legacy() -> dict[str, Any]:
        os.environ["FBGFX_DRM_ATOMIC"] = "0"
        try:
            with fbgfx.open(f"drm:{card}") as fb:
                _, opaque, alpha = draw_scene(fb)
                want = expected_scene(*fb.size)
                return {
                    "atomic": fb.drm.atomic,
                    "hardware": [opaque.hardware, alpha.hardware],
                    "reason": alpha.reason,
                    "grab": diff(grab(card, "vkms-legacy"), want),
                    "planes_on": len(planes_on(debugfs_state(card))),
                }
        finally:
            del os.environ["FBGFX_DRM_ATOMIC"]

    @LINK.step("vkms_video")
    def _video() -> dict[str, Any]:
        from support.video_media import make_video  # tests/support/video_media.py

        clip = make_video(Path(LINK.rwdir) / "clip.mp4", seconds=1.0, fps=10, size=(160, 120), codec="mpeg4")
        with fbgfx.open(f"drm:{card}") as fb:
            screen = fb.screen()
            with screen.frame() as s:
                s.clear(BLUE)
            primary_before = planes_on(debugfs_state(card)).get(fb.drm.plane_id)
            flips_before = fb.drm.flips
            layer = fb.layer((200, 100, 520, 340))
            player = layer.player(clip, fbgfx.video.PlayOptions(audio=False, fps=0))
            played = player.run()
            return {
                "hardware": layer.hardware,
                "yuv": [player.yuv_code, player.yuv_reason],
                "shown": played.shown,
                "primary_same": planes_on(debugfs_state(card)).get(fb.drm.plane_id) == primary_before,
                "screen_flips": fb.drm.flips - flips_before,
            }

    @LINK.step("vkms_play_box")
    def _play_box() -> dict[str, Any]:
        # `fbgfx play --box` in this process (a Python start is slow here): its stderr line
        from support.video_media import make_video  # tests/support/video_media.py

        clip = make_video(Path(LINK.rwdir) / "clip-box.mp4", seconds=0.5, fps=10, size=(160, 120), codec="mpeg4")
        return play_box(card, clip)

    @LINK.step("vkms_bench")
    def _bench() -> dict[str, Any]:
        import bench_layers

        # Two frames each way: what is checked is where the video goes (a plane, or
        # composed by fbgfx); times under TCG are no figures (60 frames each took 14 s).
        planes = bench_layers.run(f"drm:{card}", frames=2, size=(480, 270))
        os.environ["FBGFX_DRM_ATOMIC"] = "0"
        try:
            software = bench_layers.run(f"drm:{card}", frames=2, size=(480, 270))
        finally:
            del os.environ["FBGFX_DRM_ATOMIC"]
        return {"planes": planes, "software": software}


def play_box(card: str, clip: Path) -> dict[str, Any]:
    """Run ``fbgfx play CLIP --box ...`` on ``card``: its exit status and its lines on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli(["play", str(clip), "--box", "200,100,520,340", "--no-audio", "--fps", "0", "-d", f"drm:{card}"])
    return {"rc": rc, "lines": [line for line in err.getvalue().splitlines() if line.startswith("fbgfx: play: ")]}


def run_bochs(card: str) -> None:
    @LINK.step("bochs_scene")
    def _scene() -> dict[str, Any]:
        with fbgfx.open(f"drm:{card}") as fb:
            _, opaque, alpha = draw_scene(fb)
            want = expected_scene(*fb.size)
            time.sleep(0.3)
            shot = LINK.screendump("bochs-scene", "bochsdisp")
            return {
                "atomic": fb.drm.atomic,
                "hardware": [opaque.hardware, alpha.hardware],
                "reason": alpha.reason,
                "screendump": diff(shot, want),
                "grab": diff(grab(card, "bochs-scene"), want),
            }

    @LINK.step("bochs_play_box")
    def _play_box() -> dict[str, Any]:
        from support.video_media import make_video  # tests/support/video_media.py

        clip = make_video(Path(LINK.rwdir) / "clip-box.mp4", seconds=0.5, fps=10, size=(160, 120), codec="mpeg4")
        return play_box(card, clip)


def hold(card: str) -> None:
    """Show a scene with layers until SIGTERM (fbgfx restores the display on it)."""
    with fbgfx.open(f"drm:{card}") as fb:
        draw_scene(fb)
        print("ready", flush=True)
        while True:
            time.sleep(0.1)


def main() -> None:
    global LINK
    LINK = HostLink(Path(sys.argv[1]))
    which = sys.argv[2] if len(sys.argv) > 2 else "both"
    try:
        if which in ("vkms", "both"):
            subprocess.run(["mount", "-t", "debugfs", "none", "/sys/kernel/debug"], check=False, capture_output=True)
            run_vkms(card_of("vkms"))
        if which in ("bochs", "both"):
            run_bochs(card_of("bochs-drm"))
    except Exception as e:
        LINK.record_fatal(e)
    LINK.save()


if __name__ == "__main__":
    main()
