"""Many processes and threads on one framebuffer file: nothing crashes, nothing outside is touched.

Bounded: a few hundred operations per thread, and every worker stops after 20 seconds
whatever it has done, so the test ends well within a minute on a busy machine.
"""

import json
import os
import stat
import subprocess
import sys
import textwrap
import time

import fbgfx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fbgfx.__file__)))

WORKER = textwrap.dedent(
    """
    import random, sys, threading, time, traceback
    import numpy as np
    import fbgfx

    spec, seed = sys.argv[1], int(sys.argv[2])
    deadline = time.monotonic() + 20
    errors = []

    def guarded(fn):
        def run(*args):
            try:
                fn(*args)
            except BaseException:
                errors.append(traceback.format_exc())
        return run

    @guarded
    def draw(rng):
        with fbgfx.open(spec) as fb:
            screen = fb.screen(buffering=rng.choice(["flip", "copy"]), console=False)
            for i in range(120):
                if time.monotonic() > deadline:
                    break
                if i % 3:
                    with screen.frame() as s:
                        s.clear((i * 7 % 256, 0, 0))
                        x = rng.randrange(fb.width)
                        s.rectangle((x, 2, x + 9, 20), fill="yellow", outline="white")
                        s.line((0, 0, fb.width - 1, fb.height - 1), fill="cyan", width=2)
                        s.text((2, 2), str(i), fill="white")
                else:
                    image = np.random.default_rng(i).integers(0, 256, (fb.height, fb.width, 3), np.uint8)
                    screen.present(image)
            screen.close()

    @guarded
    def pan_and_grab(rng):
        with fbgfx.open(spec) as fb:
            pages = fb.var.yres_virtual // fb.height
            for i in range(300):
                if time.monotonic() > deadline:
                    break
                fb.pan(0, rng.randrange(pages) * fb.height)
                if i % 10 == 0:
                    assert fb.snapshot().size == fb.size
                if i % 25 == 0:
                    with fbgfx.open(spec, readonly=True) as reader:
                        reader.snapshot()

    @guarded
    def reopen(rng):
        for i in range(40):
            if time.monotonic() > deadline:
                break
            other = rng.choice(["virtual:8x8:C8", "virtual:300x200:XRGB8888", "virtual:64x48:RGB565:vh=96"])
            with fbgfx.open(other + spec[spec.index(":file="):]) as fb:
                assert fb.size == (64, 48) and fb.format.name == "RGB565"
                fb.pixels[rng.randrange(48), :8] = 0xFFFF

    rng = random.Random(seed)
    threads = [threading.Thread(target=job, args=(random.Random(rng.random()),))
               for job in (draw, pan_and_grab, reopen)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print(e, file=sys.stderr)
    print("done", len(errors), flush=True)
    sys.exit(1 if errors else 0)
    """
)


def snapshot(directory, skip=()):
    """name -> (size, mtime_ns, mode) for every entry directly in ``directory``, except ``skip``."""
    found = {}
    for name in os.listdir(directory):
        if name in skip:
            continue
        st = os.lstat(os.path.join(directory, name))
        found[name] = (st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode))
    return found


def test_processes_and_threads_share_one_device_safely(tmp_path):
    """4 processes x 3 threads draw, present, pan, grab and reopen one file-backed device; plus CLI grabs.

    Afterwards: no process died of a signal or reported an error, nothing outside the
    test directory changed, and the state file is valid JSON describing the device.
    """
    dev = tmp_path / "dev"
    outside = tmp_path / "outside"
    grabs = tmp_path / "grabs"
    for d in (dev, outside, grabs):
        d.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious\n" * 1000)
    os.symlink(victim, dev / "planted-link")  # a link beside the device is never written through
    parent = tmp_path.parent
    before_parent = snapshot(parent, skip={tmp_path.name})
    before_outside = snapshot(outside)

    path = dev / "fb.raw"
    spec = f"virtual:64x48:RGB565:vh=96:file={path}"
    env = {**os.environ, "PYTHONPATH": ROOT}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, spec, str(seed)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(4)
    ]
    grab_codes = []
    try:
        # the grabs read the device the workers make: wait until one has made it (a busy
        # machine starts them slowly), for as long as the workers' own time limit
        deadline = time.monotonic() + 120
        while not path.exists() and time.monotonic() < deadline and all(w.poll() is None for w in workers):
            time.sleep(0.05)
        for i in range(3):
            out = grabs / f"grab{i}.png"
            res = subprocess.run(
                [sys.executable, "-m", "fbgfx", "grab", str(out), "-d", spec],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            grab_codes.append((res.returncode, res.stderr))
        results = [(w.wait(timeout=120), *w.communicate()) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()

    for code, out, err in results:
        assert code == 0, f"exit {code}\n{out}\n{err}"  # a negative code is a signal death (SIGBUS, SIGSEGV)
    for code, err in grab_codes:
        assert code == 0, err
    assert victim.read_text() == "precious\n" * 1000
    assert snapshot(outside) == before_outside
    assert snapshot(parent, skip={tmp_path.name}) == before_parent
    assert sorted(os.listdir(dev)) == ["fb.raw", "fb.raw.state.json", "planted-link"]  # no temporary files left

    state = json.loads((dev / "fb.raw.state.json").read_text())
    assert state["format"] == "RGB565" and state["var"]["xres"] == 64 and state["var"]["yres_virtual"] == 96
    assert path.stat().st_size == state["device"]["memory"]
    with fbgfx.open(spec, readonly=True) as fb:
        assert (fb.size, fb.format.name, fb.var.yres_virtual) == ((64, 48), "RGB565", 96)
