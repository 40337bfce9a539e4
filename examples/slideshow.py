#!/usr/bin/env python3
"""slideshow.py: pictures with cross-fades, upright whatever the camera's EXIF says.

Without pictures it makes a few (gradients) so it runs anywhere.

    python examples/slideshow.py ~/Pictures/*.jpg --delay 4
    python examples/slideshow.py --device virtual:800x480:RGB565 --seconds 2 --out slideshow.png
"""

import argparse
import itertools
import time

import numpy as np
from PIL import Image, ImageOps

import fbgfx


def fitted(path_or_image, size):
    """The picture scaled to fit the screen, centred on black, as an RGB array."""
    im = path_or_image if isinstance(path_or_image, Image.Image) else Image.open(path_or_image)
    im = ImageOps.exif_transpose(im).convert("RGB")
    return np.asarray(ImageOps.pad(im, size, color="black"))


def generated(size, n=3):
    """A few gradient pictures, so the example needs no files."""
    w, h = size
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    for i in range(n):
        a = np.sin(x / w * (3 + i) + i) * 0.5 + 0.5
        b = np.cos(y / h * (2 + i) - i) * 0.5 + 0.5
        rgb = np.dstack([a * 255, b * 255, (1 - a * b) * 255]).astype(np.uint8)
        yield Image.fromarray(rgb)


def main() -> None:
    parser = argparse.ArgumentParser(description="A slideshow with cross-fades.")
    parser.add_argument("images", nargs="*", help="image files (default: generated pictures)")
    parser.add_argument("-d", "--device", help="/dev/fbN, N or virtual:WxH[:FORMAT] (default: $FRAMEBUFFER, /dev/fb0)")
    parser.add_argument("--out", help="save the screen to this PNG before exiting")
    parser.add_argument("--delay", type=float, default=3, help="seconds per picture (default 3)")
    parser.add_argument("--fade", type=float, default=0.5, help="cross-fade seconds (default 0.5)")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    args = parser.parse_args()

    with fbgfx.open(args.device) as fb:
        size = (fb.width, fb.height)
        sources = args.images or list(generated(size))
        end = None if args.seconds is None else time.monotonic() + args.seconds
        with fb.screen() as screen:
            current = None
            for source in itertools.cycle(sources):
                picture = fitted(source, size)
                if current is None:
                    screen.present(picture)
                else:
                    start = time.monotonic()
                    while (t := (time.monotonic() - start) / max(args.fade, 1e-6)) < 1:
                        mix = current * (1 - t) + picture * t  # float blend in NumPy; present converts
                        screen.present(mix.astype(np.uint8))
                    screen.present(picture)
                current = picture.astype(np.float32)
                if end is not None and time.monotonic() + args.delay >= end:
                    time.sleep(max(0.0, end - time.monotonic()))
                    break
                time.sleep(args.delay)
            if args.out:
                fb.snapshot().save(args.out)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the screen was restored on the way out
        raise SystemExit(130) from None
