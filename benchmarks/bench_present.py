"""Screen speed: present() of a 1080p frame, and what a small change costs in copy mode.

Prints ratios from one run (median of several repeats), each against a baseline
measured in the same run on the same machine:

- present() of a 1920x1080 RGB uint8 array into XRGB8888 / RGB565, against a memcpy of
  the destination frame (targets: at most 2x and, issue 34, 1.6x), like with like: both
  warm (the same frame again and again, against a memcpy of the same frame: both
  sources in the cache) and both cold (each call's source the next of a pool of copies
  twice the L3's size: both read from memory, as a new video frame is). The memcpy
  writes as many pages by turns as present() does (two when it flips): a memcpy into
  one buffer again and again keeps its destination in the cache (4 MiB of a 32 MiB L3
  here) and never pays for writing the frame out to memory, which present() always
  does; that memcpy is timed in the same rounds and shown on the row below. The RGB
  source has 1.5x an RGB565 frame's bytes (0.75x an XRGB8888 frame's);
- the same present() into RGB565 against luma.core's ``linux_framebuffer.display()``
  (target: at least 100x faster). luma.core only talks to ``/dev/fbN`` and
  ``/sys/class/graphics/fbN``; here its ``open`` is pointed at a regular file standing
  in for the device and a temporary sysfs-like directory, so it does all of its work
  except the final write into real video memory;
- a copy-mode flip after drawing one 32x32 rectangle, against a full-frame flip
  (target: at most 5%);
- present() of a 1080p picture on a screen turned 90 and 270 degrees (the logical
  picture is 1080x1920, the panel 1920x1080), against a memcpy of the destination
  frame (targets: at most 3x into XRGB8888, 4x into RGB565); turned 180 degrees
  against no turn (at most 1.3x: the same bytes, only in another order), as the median
  of each round's own ratio, with the memcpy of the same rounds beside it. These four
  turns and the memcpy are timed in turn within each round (the order shifting from
  round to round), so that a change of the machine's load reaches them all alike;
  each call presents another picture (warm: two pictures by turns, both in the
  cache; cold: a pool twice the L3's size). And the turned copy-mode flip after one
  32x32 rectangle against a full-frame one.

The load average is printed first: on a shared machine, read the ratios beside it.

Run: python benchmarks/bench_present.py [--repeats N] [--no-luma] [--cpu] [--unturned | --half]
"""

from __future__ import annotations

import argparse
import builtins
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
from _timing import median

import fbgfx

W, H = 1920, 1080
# What paired() times with: wall time, or with --cpu the CPU time of this thread (present()
# converts on the calling thread); on a loaded machine wall time mostly measures the
# scheduler, as bench_draw's antialiasing rows say.
CLOCK = time.perf_counter


def paired(fn, baselines, repeats: int, warmup: int = 2):
    """Medians of ``fn`` and of each of ``baselines`` timed in turn, so all see the same
    load, and the ratios of ``fn``'s best time to theirs (what the machine can do when
    nothing else runs: on a shared, loaded machine the longer call is interrupted more
    often)."""
    calls = [fn, *baselines]
    for _ in range(warmup):
        for call in calls:
            call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, t in zip(calls, times):
            t0 = CLOCK()
            call()
            t.append(CLOCK() - t0)
    t_fn, *t_bases = times
    return statistics.median(t_fn), [(statistics.median(t), min(t_fn) / min(t)) for t in t_bases]


#: "cold": sources taken in turn from a pool of at least this many bytes, twice this
#: machine's 32 MB L3, so that each call reads its source from memory (as a new video
#: frame is), while the program itself stays in the caches
COLD_POOL = 64 << 20


def pool(frame: np.ndarray, cold: bool) -> list[np.ndarray]:
    """``frame`` alone (warm: read again and again from the cache), or copies of it in
    memory of their own filling COLD_POOL (cold)."""
    return [frame.copy() for _ in range(-(-COLD_POOL // frame.nbytes))] if cold else [frame]


def pages_of(mode: str) -> int:
    """How many pages of video memory a Screen in ``mode`` writes by turns."""
    return 2 if mode == "flip" else 1


def _pages(mode: str) -> str:
    pages = pages_of(mode)
    return f"{pages} page{'s' * (pages > 1)}"


def memcpy_of_frame(fmt_name: str, cold: bool = False, pages: int = 1):
    """A memcpy of one destination frame (the baseline the targets are given in), its
    source warm or cold as ``pool`` makes it, into ``pages`` destinations by turns: as
    many as present() writes (two when it flips), so that neither keeps its destination
    in the cache when the other cannot."""
    fmt = fbgfx.PixelFormat.from_name(fmt_name)
    sources = pool(np.ones(fmt.array_shape(H, W), fmt.dtype), cold)
    targets = [np.zeros_like(sources[0]) for _ in range(pages)]
    i = [0]

    def copy():
        np.copyto(targets[i[0] % pages], sources[i[0] % len(sources)])
        i[0] += 1

    return copy


def bench_present(fmt_name: str, frames, repeats: int, buffering: str = "auto", rotate: int = 0, cold: bool = False):
    """present() of ``frames`` in turn (with ``cold``, of a pool of copies of the first)
    against a memcpy of the destination frame whose source is as warm or cold: into as
    many pages as present() writes (the baseline), and into one buffer again and again.
    Returns present()'s median, the buffering mode and [(memcpy median, best ratio)]
    for the two."""
    fb = fbgfx.open(f"virtual:{W}x{H}:{fmt_name}")
    screen = fb.screen(buffering, console=False, vsync=False, rotate=rotate)
    frames = pool(frames[0], True) if cold else frames
    i = [0]

    def step():
        screen.present(frames[i[0] % len(frames)])
        i[0] += 1

    mode = screen.buffering
    baselines = [memcpy_of_frame(fmt_name, cold, pages) for pages in (pages_of(mode), 1)]
    t, memcpys = paired(step, baselines, repeats)
    screen.close()
    fb.close()
    return t, mode, memcpys


def bench_turns(
    fmt_name: str,
    frames: list[np.ndarray],
    repeats: int,
    cold: bool,
    warmup: int = 2,
    rotations: tuple[int, ...] = (0, 90, 180, 270),
):
    """present() turned by ``rotations`` degrees (``frames`` are the unturned pictures;
    90 and 270 get them as 1080 wide, 1920 tall) and a memcpy of the destination frame
    (into as many pages as present() writes),
    timed in turn within each round, the order shifting by one each round. Returns
    {rotate: (median, median memcpy, best ratio)}, the ratios of rotate=180 to rotate=0
    round by round (empty without both), and the buffering mode.
    With ``cold`` every call takes the next source of its pool (twice the L3's size),
    else the pictures of ``frames`` and two memcpy sources take turns (all in the cache)."""
    upright = pool(frames[0], True) if cold else frames
    turned = [np.ascontiguousarray(np.swapaxes(f, 0, 1)) for f in (pool(frames[0], True) if cold else frames)]
    fmt = fbgfx.PixelFormat.from_name(fmt_name)
    sources = (
        pool(np.ones(fmt.array_shape(H, W), fmt.dtype), True)
        if cold
        else [np.full(fmt.array_shape(H, W), v, fmt.dtype) for v in (1, 2)]
    )
    opened, calls = [], {}
    n = [0]  # one count for all: consecutive calls take different sources
    for rotate in rotations:
        fb = fbgfx.open(f"virtual:{W}x{H}:{fmt_name}")
        screen = fb.screen("auto", console=False, vsync=False, rotate=rotate)
        opened.append((screen, fb))
        pictures = turned if rotate % 180 else upright

        def call(screen=screen, pictures=pictures):
            screen.present(pictures[n[0] % len(pictures)])
            n[0] += 1

        calls[rotate] = call

    # into as many pages by turns as present() writes (see memcpy_of_frame)
    targets = [np.zeros_like(sources[0]) for _ in range(pages_of(opened[0][0].buffering))]
    turn = [0]

    def copy():
        np.copyto(targets[turn[0] % len(targets)], sources[n[0] % len(sources)])
        n[0] += 1
        turn[0] += 1

    calls["memcpy"] = copy
    order = list(calls)
    times: dict[object, list[float]] = {key: [] for key in order}
    for round_ in range(warmup + repeats):
        shift = round_ % len(order)
        for key in order[shift:] + order[:shift]:
            t0 = CLOCK()
            calls[key]()
            t1 = CLOCK()
            if round_ >= warmup:
                times[key].append(t1 - t0)
    mode = opened[0][0].buffering
    for screen, fb in opened:
        screen.close()
        fb.close()
    memcpy = times.pop("memcpy")
    t_memcpy = statistics.median(memcpy)
    # the half turn against no turn of the same round: load that moves between rounds
    # reaches both sides of each ratio alike
    rounds = [a / b for a, b in zip(times[180], times[0])] if 0 in times and 180 in times else []
    summary = {key: (statistics.median(t), t_memcpy, min(t) / min(memcpy)) for key, t in times.items()}
    return summary, rounds, mode


def half_row(fmt_name: str, cache: str, mode: str, turns, rounds: list[float]) -> list[tuple[object, ...]]:
    """rotate=180 against rotate=0: the median of the rounds' own ratios, their range, and
    the two (180/0) as multiples of the memcpy of the same rounds; then that memcpy's row."""
    (t_half, t_memcpy, _), (t_none, _, _) = turns[180], turns[0]
    ratio = statistics.median(rounds)
    return [
        (
            f"present rotate=180 1080p -> {fmt_name} ({mode}, both {cache})",
            t_half,
            f"{ratio:.2f}x rotate=0 (rounds {min(rounds):.2f}-{max(rounds):.2f}), "
            f"{t_half / t_memcpy:.2f}x/{t_none / t_memcpy:.2f}x memcpy",
            "<= 1.3x",
            ratio <= 1.3,
        ),
        (f"  memcpy of a 1080p {fmt_name} frame, {_pages(mode)} ({cache})", t_memcpy, "1.00x", "", None),
    ]


def bench_copy_flip(fmt_name: str, repeats: int, rotate: int = 0):
    """Copy-mode flip after one 32x32 rectangle vs after a full-frame change, timed alternately.

    Only flip() is timed in both; the drawing before it is not.
    """
    fb = fbgfx.open(f"virtual:{W}x{H}:{fmt_name}:pan=0")
    screen = fb.screen("copy", console=False, vsync=False, rotate=rotate)
    s = screen.surface
    colors = ["red", "blue"]
    full, small = [], []
    for n in range(repeats + 2):
        s.clear(colors[n % 2])
        t0 = time.perf_counter()
        screen.flip()
        t1 = time.perf_counter()
        x = (n * 37) % (screen.width - 32)
        s.rectangle((x, 100, x + 31, 131), fill=colors[(n + 1) % 2])
        t2 = time.perf_counter()
        screen.flip()
        t3 = time.perf_counter()
        if n >= 2:
            full.append(t1 - t0)
            small.append(t3 - t2)
    screen.close()
    fb.close()
    return statistics.median(full), statistics.median(small)


def bench_luma(image_rgb: np.ndarray, repeats: int):
    """luma.core's linux_framebuffer.display() at 16 bpp, against a file and a fake sysfs."""
    try:
        import luma.core.device as luma_device
        from luma.core.framebuffer import full_frame
    except ImportError:
        return None
    from PIL import Image

    tmp = tempfile.mkdtemp(prefix="fbgfx-luma-")
    sysfs = os.path.join(tmp, "sys", "fb9")
    os.makedirs(sysfs)
    with open(os.path.join(sysfs, "virtual_size"), "w") as f:
        f.write(f"{W},{H}\n")
    with open(os.path.join(sysfs, "bits_per_pixel"), "w") as f:
        f.write("16\n")
    dev = os.path.join(tmp, "fb9")
    with open(dev, "wb") as f:
        f.truncate(W * H * 2)

    def redirected_open(path, *args, **kwargs):
        path = os.fspath(path)
        if path.startswith("/sys/class/graphics/fb9/"):
            path = os.path.join(sysfs, os.path.basename(path))
        elif path == "/dev/fb9":
            path = dev
        return builtins.open(path, *args, **kwargs)

    luma_device.open = redirected_open  # luma.core reads these two paths only
    try:
        device = luma_device.linux_framebuffer("/dev/fb9", framebuffer=full_frame())
        image = Image.fromarray(image_rgb)
        t = median(lambda: device.display(image), repeats, warmup=1)
        # Check it really wrote the picture: first pixel as RGB565 little-endian.
        with open(dev, "rb") as f:
            first = int.from_bytes(f.read(2), "little")
        r, g, b = (int(c) for c in image_rgb[0, 0])
        assert first == ((r >> 3) << 11 | (g >> 2) << 5 | b >> 3), "luma.core did not write the frame"
        device.persist = True  # no clearing the "screen" at cleanup
        device.cleanup()
    finally:
        del luma_device.open
        shutil.rmtree(tmp, ignore_errors=True)
    return t


def against_memcpy(
    label: str, times: tuple[float, float, float], limit: float, shown_limit: str, frame: str
) -> list[tuple[object, ...]]:
    """A present row as a multiple of the memcpy timed in the same rounds, and the memcpy's
    own row: ``times`` is (present, memcpy, best ratio)."""
    t, t_memcpy, best = times
    return [
        (label, t, f"{t / t_memcpy:.2f}x memcpy (best {best:.2f}x)", f"<= {shown_limit}x", t / t_memcpy <= limit),
        (f"  memcpy of a 1080p {frame}", t_memcpy, "1.00x", "", None),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-luma", action="store_true", help="skip the (slow) luma.core comparison")
    parser.add_argument("--cpu", action="store_true", help="time present() and memcpy in CPU time of the thread")
    only = parser.add_mutually_exclusive_group()
    only.add_argument(
        "--unturned", action="store_true", help="only the unturned present() rows (no turns, luma.core or copy flips)"
    )
    only.add_argument(
        "--half", action="store_true", help="only rotate=180 against rotate=0 (and the memcpy), timed in turn"
    )
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.cpu else time.perf_counter

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (H, W, 3), dtype=np.uint8) for _ in range(2)]
    rows = []

    if args.half:
        halves = {}  # {(format, cache): (median ratio, memcpy)}
        for fmt_name in ("XRGB8888", "RGB565"):
            for cache in ("warm", "cold"):
                turns, rounds, mode = bench_turns(
                    fmt_name, frames, args.repeats, cold=cache == "cold", rotations=(0, 180)
                )
                rows += half_row(fmt_name, cache, mode, turns, rounds)
                halves[(fmt_name, cache)] = (statistics.median(rounds), turns[0][1])
        return report(rows, args.cpu, halves=halves)

    limits = {"XRGB8888": 2.0, "RGB565": 1.6}
    present = {}
    cold_ratio = {}  # {format: (present / memcpy, memcpy, present / memcpy into one buffer)}, both cold
    # Like with like: "warm", one frame presented again and again against a memcpy of one
    # frame again and again (both sources in the cache); "cold", both take their sources
    # in turn from pools twice the L3's size (both read from memory, as a new video frame is).
    # The memcpy writes as many pages by turns as present() does (two when it flips): one
    # buffer written again and again stays in the L3, and that memcpy never pays for
    # writing its frame out to memory, which present() always does. Its figure is shown
    # on the row below.
    for fmt_name in ("XRGB8888", "RGB565"):
        for buffering, cache in (("auto", "warm"), ("auto", "cold"), ("copy", "warm")):
            cold = cache == "cold"
            t, mode, ((t_memcpy, best), (t_one, _)) = bench_present(
                fmt_name, frames[:1], args.repeats, buffering, cold=cold
            )
            if not cold:
                present[(fmt_name, buffering)] = t
            else:
                cold_ratio[fmt_name] = (t / t_memcpy, t_memcpy, t / t_one)
            rows += against_memcpy(
                f"present 1080p RGB -> {fmt_name} ({mode}, both {cache})",
                (t, t_memcpy, best),
                limits[fmt_name],
                f"{limits[fmt_name]:.1f}",
                f"{fmt_name} frame, {_pages(mode)} ({cache})",
            )
            if pages_of(mode) > 1:
                rows.append((f"  memcpy into one buffer (present: {t / t_one:.2f}x)", t_one, "", "", None))

    if args.unturned:
        return report(rows, args.cpu, cold_ratio)

    turned_limits = {"XRGB8888": 3.0, "RGB565": 4.0}
    for fmt_name in ("XRGB8888", "RGB565"):
        for cache in ("warm", "cold"):
            turns, rounds, mode = bench_turns(fmt_name, frames, args.repeats, cold=cache == "cold")
            for rotate in (90, 270):
                rows += against_memcpy(
                    f"present rotate={rotate} 1080p -> {fmt_name} ({mode}, both {cache})",
                    turns[rotate],
                    turned_limits[fmt_name],
                    f"{turned_limits[fmt_name]:.0f}",
                    f"{fmt_name} frame (same rounds, {cache})",
                )[:1]
            # a half turn reads and writes what no turn does, only in another order
            rows += half_row(fmt_name, cache, mode, turns, rounds)

    if not args.no_luma:
        t_luma = bench_luma(frames[0], repeats=3)
        if t_luma is None:
            rows.append(
                (
                    "luma.core linux_framebuffer.display() 16 bpp",
                    float("nan"),
                    "not installed (pip install luma.core)",
                    "",
                    None,
                )
            )
        else:
            speedup = t_luma / present[("RGB565", "auto")]
            rows.append(
                (
                    "luma.core linux_framebuffer.display() 16 bpp",
                    t_luma,
                    f"present is {speedup:.0f}x faster",
                    ">= 100x",
                    speedup >= 100,
                )
            )

    for fmt_name in ("XRGB8888", "RGB565"):
        t_full, t_small = bench_copy_flip(fmt_name, max(args.repeats, 30))
        rows.append((f"copy flip, whole frame changed, {fmt_name}", t_full, "1.00x", "", None))
        rows.append(
            (
                f"copy flip after one 32x32 rect, {fmt_name}",
                t_small,
                f"{100 * t_small / t_full:.2f}% of full",
                "<= 5%",
                t_small / t_full <= 0.05,
            )
        )
    for fmt_name in ("XRGB8888", "RGB565"):
        t_full, t_small = bench_copy_flip(fmt_name, max(args.repeats, 30), rotate=90)
        rows.append((f"copy flip rotate=90, whole frame, {fmt_name}", t_full, "1.00x", "", None))
        rows.append(
            (
                f"copy flip rotate=90, one 32x32 rect, {fmt_name}",
                t_small,
                f"{100 * t_small / t_full:.2f}% of full",
                "<= 5%",
                t_small / t_full <= 0.05,
            )
        )

    return report(rows, args.cpu, cold_ratio)


def report(
    rows: list[tuple[object, ...]],
    cpu: bool,
    cold_ratio: dict[str, tuple[float, float, float]] | None = None,
    halves: dict[tuple[str, str], tuple[float, float]] | None = None,
) -> int:
    """Print the rows, then issue 34's figure on a line of its own: unturned RGB565, both
    cold (or with ``halves``, rotate=180 against rotate=0), with the memcpy and the load it
    was measured beside. 0 when every target is met."""
    clock = "CPU time of the thread" if cpu else "wall time"
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load}; timed in {clock}")
    print(f"{'what':<56} {'median':>10}  {'ratio':<28} {'target':<8} ok")
    for what, t, ratio, target, ok in rows:
        mark = "" if ok is None else ("yes" if ok else "NO")
        print(f"{what:<56} {t * 1e3:>8.3f}ms  {ratio:<28} {target:<8} {mark}")
    if cold_ratio is not None:
        ratio, t_memcpy, to_one = cold_ratio["RGB565"]
        print(
            f"unturned RGB565, both cold: {ratio:.2f}x memcpy (target <= 1.6x), "
            f"memcpy {t_memcpy * 1e3:.3f} ms; {to_one:.2f}x a memcpy into one buffer; load {load}, {clock}"
        )
    if halves is not None:
        figures = ", ".join(
            f"{fmt_name} {cache} {ratio:.2f}x (memcpy {t_memcpy * 1e3:.3f} ms)"
            for (fmt_name, cache), (ratio, t_memcpy) in halves.items()
        )
        print(f"rotate=180 vs rotate=0 (target <= 1.3x): {figures}; load {load}, {clock}")
    return 0 if all(ok is not False for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
