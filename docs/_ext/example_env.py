"""Where the docs' examples run: a scratch folder with the pictures they open, on a
virtual display. The doctest builder (``doctest_global_setup`` in ``conf.py``) and
``tests/project/test_docs.py`` use the same two functions; this module needs no Sphinx.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

import numpy as np
from PIL import Image

#: The display the examples' ``fbgfx.open()`` gets (``$FRAMEBUFFER``).
EXAMPLE_DISPLAY = "virtual:800x480:XRGB8888"

#: A recording of two fingers on the Raspberry Pi 7-inch display (800x480, FT5406), which
#: the examples' ``fbgfx.touch.open()`` replays (``$FBGFX_TOUCH``).
RECORDING = pathlib.Path(__file__).resolve().parents[2] / "tests" / "support" / "recordings" / "ft5406-multitouch.evemu"
#: What the examples find in their environment; every other fbgfx variable is cleared.
_ENV = ("FRAMEBUFFER", "FBGFX_TOUCH", "FBGFX_TOUCH_CALIBRATION", "FBGFX_ROTATE", "FBGFX_FRAMES")

_saved: list[tuple[str, dict[str, str | None], pathlib.Path]] = []
_clip: list[bytes] = []


def has_video() -> bool:
    """Whether PyAV is there to play (and make, with its H.264 encoder) the examples' ``movie.mp4``."""
    try:
        import av  # the video extra: only asked whether it is there

        av.codec.Codec("libx264", "w")
    except (ImportError, ValueError):  # no PyAV, or one built without the encoder (UnknownCodecError)
        return False
    return True


def _movie() -> bytes:
    """Two seconds of a moving gradient (320x180, 25 fps, H.264 in MP4), made once."""
    if not _clip:
        import av  # the video extra: only when has_video()

        folder = pathlib.Path(tempfile.mkdtemp(prefix="fbgfx-clip-"))
        path = folder / "movie.mp4"
        y, x = np.mgrid[0:180, 0:320]
        with av.open(str(path), "w") as out:
            stream = out.add_stream("libx264", rate=25, options={"preset": "ultrafast"})
            stream.width, stream.height, stream.pix_fmt = 320, 180, "yuv420p"
            for i in range(50):
                rgb = np.stack([(x + 4 * i) % 256, (y * 2 + i) % 256, np.full_like(x, 128)], axis=-1)
                for packet in stream.encode(av.VideoFrame.from_ndarray(rgb.astype(np.uint8), format="rgb24")):
                    out.mux(packet)
            for packet in stream.encode(None):
                out.mux(packet)
        _clip.append(path.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)
    return _clip[0]


def example_setup() -> pathlib.Path:
    """Put the docs' examples in a scratch folder, on a virtual display.

    The folder holds what the examples open: ``cat.png``, ``photo.jpg``, ``portrait.jpg``,
    ``movie.mp4`` (where PyAV is installed) and ``panel.evemu`` (:data:`RECORDING`).
    ``$FRAMEBUFFER`` names :data:`EXAMPLE_DISPLAY` and ``$FBGFX_TOUCH`` the recording.
    """
    folder = pathlib.Path(tempfile.mkdtemp(prefix="fbgfx-docs-"))
    Image.new("RGB", (64, 48), "orange").save(folder / "cat.png")
    Image.radial_gradient("L").convert("RGB").resize((1024, 768)).save(folder / "photo.jpg")
    Image.new("RGB", (480, 800), "teal").save(folder / "portrait.jpg")
    shutil.copyfile(RECORDING, folder / "panel.evemu")
    if has_video():
        (folder / "movie.mp4").write_bytes(_movie())
    _saved.append((os.getcwd(), {k: os.environ.get(k) for k in _ENV}, folder))
    for key in _ENV:
        os.environ.pop(key, None)
    os.environ["FRAMEBUFFER"] = EXAMPLE_DISPLAY
    os.environ["FBGFX_TOUCH"] = str(folder / "panel.evemu")
    os.chdir(folder)
    return folder


def example_cleanup() -> None:
    """Undo :func:`example_setup`: back to the old folder and environment."""
    cwd, env, folder = _saved.pop()
    os.chdir(cwd)
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(folder, ignore_errors=True)
