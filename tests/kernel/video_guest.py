"""Guest side of test_video_vm.py: play a video onto bochs' /dev/fb0 and onto drm:, with
its sound through snd-hda-intel, and ask the host for a screendump after each.

Run as root inside the VM: ``python video_guest.py RWDIR``. RWDIR holds the video the
host made (``movie.mp4``: quadrants changing every second and a 440 Hz tone, and
``movie-fb0.mp4``, the same at 2 frames a second for /dev/fb0) and gets
``results.json`` (see _host_link.HostLink) and the screendumps.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import _forked
import numpy as np
from _host_link import HostLink

import fbgfx

# Where the quadrants' centres land on a 1280x800 screen for a 320x240 video, fitted:
# 1067x800 in the middle (x 106..1173).
POINTS = {"top-left": (373, 200), "top-right": (906, 200), "bottom-left": (373, 600), "bottom-right": (906, 600)}


def colors_at(picture: np.ndarray) -> dict[str, list[int]]:
    """The picture's RGB at the quadrants' centres, and in the bar on the left."""
    found = {name: [int(c) for c in picture[y, x]] for name, (x, y) in POINTS.items()}
    found["bar"] = [int(c) for c in picture[400, 40]]
    return found


def run(link: HostLink) -> None:
    """Play the video both ways, each a step in results.json."""
    movie = str(link.rwdir / "movie.mp4")
    movie_fb0 = str(link.rwdir / "movie-fb0.mp4")
    link.results["sound_card"] = os.path.exists("/dev/snd/pcmC0D0p")
    link.results["fb0"] = os.path.exists("/dev/fb0")
    link.save()

    @link.step("fb0")
    def _fb0() -> dict[str, object]:
        """The command line onto /dev/fb0 (bochs' fbdev emulation) as fast as it decodes;
        then screen.play there, and the screendump while the Screen is open."""
        start = time.monotonic()
        cli = _forked.cli("play", movie_fb0, "-d", "/dev/fb0", "--fps", "0", "--no-audio", "--stats")
        _, stderr = cli.communicate(timeout=300)
        seconds = time.monotonic() - start
        with fbgfx.open("/dev/fb0") as fb, fb.screen() as screen:
            played = screen.play(movie_fb0, fps=0, audio=False)
            picture = link.screendump("fb0")
            memory = np.asarray(fb.snapshot().convert("RGB"))
            size = fb.width, fb.height
        return {
            "returncode": cli.returncode,
            "stderr": stderr,
            "cli_seconds": round(seconds, 1),
            "shown": played.shown,
            "size": size,
            "colors": colors_at(picture),
            "diff": int(np.abs(picture.astype(int) - memory.astype(int)).max()),
        }

    @link.step("drm")
    def _drm() -> dict[str, object]:
        """screen.play onto drm: in real time with the sound; the screendump while it shows."""
        with fbgfx.open("drm:") as fb, fb.screen() as screen, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.monotonic()
            played = screen.play(movie)
            seconds = time.monotonic() - start
            picture = link.screendump("drm")
            memory = np.asarray(fb.snapshot().convert("RGB"))
            return {
                "path": fb.path,
                "size": (fb.width, fb.height),
                "shown": played.shown,
                "dropped": played.dropped,
                "seconds": round(seconds, 2),
                "colors": colors_at(picture),
                "diff": int(np.abs(picture.astype(int) - memory.astype(int)).max()),
                "warnings": [str(w.message) for w in caught],
            }


def main() -> None:
    link = HostLink(Path(sys.argv[1]))
    try:
        run(link)
    except Exception as e:  # recorded for the host: a guest that stops still says why
        link.record_fatal(e)
        raise


if __name__ == "__main__":
    main()
