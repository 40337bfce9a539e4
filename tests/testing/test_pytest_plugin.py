"""The fbgfx pytest plugin, run the way users run it: test files in pytester's folder,
apps in the test's process and in subprocesses, baselines, the report and --fbgfx-update."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from support import ROOT

# An app as users write one: opens $FRAMEBUFFER and its touchscreen, shows a first frame,
# then a dot per touch (in the app's logical coordinates), one frame per batch of events.
APP = r"""
import sys, fbgfx, fbgfx.touch
colour = sys.argv[1] if len(sys.argv) > 1 else "yellow"
with fbgfx.open() as fb, fb.screen() as screen:
    with screen.frame() as s:
        s.clear("navy")
        s.rectangle((0, 0, screen.width - 1, 9), fill="white")
    with fbgfx.touch.open(screen=screen) as ts:
        while True:
            events = ts.read()
            with screen.frame() as s:
                for e in events:
                    if e.type in ("down", "move"):
                        s.rectangle((e.x - 2, e.y - 2, e.x + 2, e.y + 2), fill=colour)
"""


@pytest.fixture
def run(pytester, request):
    """Run pytest on pytester's files with the plugin loaded (as its entry point does once installed)."""
    plugin = [] if request.config.pluginmanager.has_plugin("fbgfx") else ["-p", "pytest_fbgfx"]
    pytester.makefile(".py", app=APP)
    os.environ.setdefault("PYTHONPATH", ROOT)

    def run_(*args: str) -> pytest.RunResult:
        # Hypothesis's plugin imports its internals anew in each inner run's summary: seconds, for nothing here.
        quiet = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest"]
        return pytester.runpytest_inprocess(*plugin, "--strict-markers", *quiet, *args)

    return run_


def update_then_match(run) -> None:
    """Write the test's baselines (``--fbgfx-update``), then match them in a second run: one pass each."""
    run("--fbgfx-update").assert_outcomes(passed=1)
    run().assert_outcomes(passed=1)


def test_default_display_is_framebuffer(pytester, run):
    """A test gets a fresh 320x240 XRGB8888 file-backed display that fbgfx.open() opens through $FRAMEBUFFER."""
    pytester.makepyfile(
        """
        import os, fbgfx
        def test_it(fbgfx_display):
            assert os.environ["FRAMEBUFFER"] == fbgfx_display.spec
            with fbgfx.open() as fb:
                assert (fb.width, fb.height, fb.format.name) == (320, 240, "XRGB8888")
                assert fb.path.startswith("virtual:")
            assert fbgfx_display.snapshot().size == (320, 240)
            assert (fbgfx_display.width, fbgfx_display.height, fbgfx_display.format) == (320, 240, "XRGB8888")
        def test_fresh(fbgfx_display):
            assert fbgfx_display.snapshot().getextrema() == ((0, 0), (0, 0), (0, 0))
        def test_gone_after(fbgfx_display):
            pass
        def test_env_restored():
            assert "fbgfx0" not in os.environ.get("FRAMEBUFFER", "")
        """
    )
    run().assert_outcomes(passed=4)


def test_subprocess_app_taps_frames_and_baselines(pytester, run):
    """A subprocess app driven by taps: a run without a baseline fails, --fbgfx-update writes it, then it passes."""
    pytester.makepyfile(
        """
        import sys
        def test_paint(fbgfx_display):
            fbgfx_display.start_app([sys.executable, "app.py"])
            fbgfx_display.wait_for_frame(60)
            fbgfx_display.tap(100, 50)
            fbgfx_display.wait_for_frame(60)
            fbgfx_display.assert_matches("dot")
        """
    )
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no baseline screens/test_subprocess_app_taps_frames_and_baselines/test_paint/dot.png: "
            "run `pytest --fbgfx-update`*"
        ]
    )
    baseline = pytester.path / "screens" / "test_subprocess_app_taps_frames_and_baselines" / "test_paint" / "dot.png"
    assert not baseline.exists()
    result = run("--fbgfx-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*fbgfx: baselines written*", f"*{baseline}"])
    with Image.open(baseline) as im:
        picture = np.asarray(im.convert("RGB"))
    assert tuple(picture[50, 100]) == (255, 255, 0)  # the dot, under the tap
    assert tuple(picture[50, 97]) == (0, 0, 128)  # 3 pixels left: navy
    assert tuple(picture[5, 5]) == (255, 255, 255)  # the first frame's bar
    run().assert_outcomes(passed=1)


def test_in_process_app_and_touch(pytester, run):
    """An in-process app reads press/move/release; wait_for_frame counts flip, present, frame blocks, not a raise."""
    pytester.makepyfile(
        """
        import fbgfx, fbgfx.touch, pytest
        from fbgfx.testing import FrameTimeout
        def test_it(fbgfx_display):
            with fbgfx.open() as fb, fb.screen() as screen, fbgfx.touch.open(screen=screen) as ts:
                fbgfx_display.press(10, 20)
                fbgfx_display.move(30, 40)
                fbgfx_display.release()
                assert [e[:3] for e in ts.read(0)] == [("down", 10, 20), ("move", 30, 40), ("up", 30, 40)]
                with pytest.raises(FrameTimeout, match="no frame shown yet"):
                    fbgfx_display.wait_for_frame(0.01)
                with screen.frame() as s:
                    s.clear("red")
                assert fbgfx_display.wait_for_frame(0) == 1
                with pytest.raises(FrameTimeout, match="1 frame shown so far"):
                    fbgfx_display.wait_for_frame(0.01)
                screen.present(fbgfx_display.snapshot())
                screen.surface.clear("blue")
                screen.flip()
                assert fbgfx_display.wait_for_frame(0) == 3
                with pytest.raises(ZeroDivisionError):
                    with screen.frame() as s:
                        s.clear("green")
                        1 / 0
                with pytest.raises(FrameTimeout):
                    fbgfx_display.wait_for_frame(0.01)
                assert fbgfx_display.frames == 3
                screen.flip()
                with pytest.raises(FrameTimeout, match="for 2 new frames on .*: 1 came"):
                    fbgfx_display.wait_for_frame(0.01, frames=2)
                screen.flip()
                assert fbgfx_display.wait_for_frame(0, frames=2) == 5
                fbgfx_display.assert_matches("blue", allow_blank=True)
        """
    )
    run("--fbgfx-update").assert_outcomes(passed=1)
    with Image.open(pytester.path / "screens" / "test_in_process_app_and_touch" / "test_it" / "blue.png") as im:
        assert im.getcolors() == [(320 * 240, (0, 0, 255))]


def test_rotated_app(pytester, run):
    """rotate=90 in the marker turns the app; a tap lands under the finger; snapshots are panel pixels."""
    pytester.makepyfile(
        """
        import sys, pytest
        import numpy as np
        @pytest.mark.fbgfx_display(width=320, height=240, rotate=90)
        def test_turned(fbgfx_display):
            fbgfx_display.start_app([sys.executable, "app.py", "lime"])
            fbgfx_display.wait_for_frame(60)
            picture = np.asarray(fbgfx_display.snapshot())
            assert (picture[:, 310:] == (255, 255, 255)).all()   # the app's top bar is the panel's right edge
            fbgfx_display.tap(200, 100)
            fbgfx_display.wait_for_frame(60)
            picture = np.asarray(fbgfx_display.snapshot())
            assert tuple(picture[100, 200]) == (0, 255, 0)
            ys, xs = np.nonzero((picture == (0, 255, 0)).all(axis=2))
            assert (xs.min(), xs.max(), ys.min(), ys.max()) == (198, 202, 98, 102)
        """
    )
    run().assert_outcomes(passed=1)


@pytest.mark.parametrize("fmt", ["RGB565", "C8"])
def test_rgb565_and_c8_displays(pytester, run, fmt):
    """On RGB565 and palette (C8) displays snapshots show the app's colours and baselines round-trip."""
    pytester.makepyfile(
        f"""
        import fbgfx, pytest
        @pytest.mark.fbgfx_display(width=64, height=48, format="{fmt}")
        def test_colours(fbgfx_display):
            assert fbgfx_display.format == "{fmt}"
            with fbgfx.open() as fb, fb.screen() as screen:
                with screen.frame() as s:
                    s.clear("black")
                    s.rectangle((0, 0, 31, 47), fill=(255, 0, 0))
                    s.rectangle((32, 0, 63, 47), fill=(0, 0, 255))
                picture = fbgfx_display.snapshot()
                assert picture.getpixel((5, 5)) == (255, 0, 0)
                assert picture.getpixel((40, 5)) == (0, 0, 255)
                fbgfx_display.assert_matches("halves")
        """
    )
    update_then_match(run)


def test_two_displays_in_one_test(pytester, run):
    """add_display() gives a second display with its own touchscreen and frames; each app sees only its own taps."""
    pytester.makepyfile(
        """
        import sys
        import numpy as np
        def test_two(fbgfx_display):
            other = fbgfx_display.add_display(width=160, height=120, format="RGB565")
            assert other.spec != fbgfx_display.spec and "160x120" in other.spec
            fbgfx_display.start_app([sys.executable, "app.py", "red"])
            other.start_app([sys.executable, "app.py", "lime"])
            fbgfx_display.wait_for_frame(60)
            other.wait_for_frame(60)
            fbgfx_display.tap(20, 30)
            other.tap(100, 100)
            fbgfx_display.wait_for_frame(60)
            other.wait_for_frame(60)
            a, b = np.asarray(fbgfx_display.snapshot()), np.asarray(other.snapshot())
            assert a.shape == (240, 320, 3) and b.shape == (120, 160, 3)
            navy565 = (0, 0, 132)  # navy as RGB565 holds it
            assert tuple(a[30, 20]) == (255, 0, 0) and tuple(a[100, 100]) == (0, 0, 128)
            assert tuple(b[100, 100]) == (0, 255, 0) and tuple(b[30, 20]) == navy565
        """
    )
    run().assert_outcomes(passed=1)


def test_mismatch_report(pytester, run, tmp_path):
    """A mismatch says count, worst difference and box; expected/actual/diff PNGs and index.html list all."""
    pytester.makepyfile(
        test_box="""
        import fbgfx, pytest
        @pytest.mark.parametrize("size", [4, 6])
        def test_box(fbgfx_display, size):
            with fbgfx.open() as fb, fb.screen() as screen:
                with screen.frame() as s:
                    s.clear((10, 10, 10))
                    s.rectangle((100, 50, 100 + size - 1, 50 + size - 1), fill=(200, 10, 10))
                fbgfx_display.assert_matches(f"box{size}")
        """
    )
    run("--fbgfx-update").assert_outcomes(passed=2)
    pytester.makepyfile(
        test_box="""
        import fbgfx, pytest
        @pytest.mark.parametrize("size", [4, 6])
        def test_box(fbgfx_display, size):
            with fbgfx.open() as fb, fb.screen() as screen:
                with screen.frame() as s:
                    s.clear((10, 10, 10))
                    s.rectangle((100, 50, 100 + size, 50 + size), fill=(230, 10, 10))
                fbgfx_display.assert_matches(f"box{size}")
        """
    )
    report = tmp_path / "report"
    result = run("--fbgfx-report", str(report))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*the screen differs from screens/test_box/test_box[[]4]/box4.png: 25 pixels differ (max_pixels=0) "
            "by up to 220 in a channel (tolerance=0), within the box (100, 50, 105, 55)*",
            "*fbgfx: 2 screen mismatches*",
            f"*{report / 'index.html'}",
        ]
    )
    files = sorted(str(p.relative_to(report)) for p in report.rglob("*.png"))
    stems = [f"test_box.py_test_box_{n}/box{n}" for n in (4, 6)]
    assert files == sorted(f"{stem}-{kind}.png" for stem in stems for kind in ("actual", "diff", "expected"))
    page = (report / "index.html").read_text()
    assert "2 screen mismatches" in page
    for stem in stems:
        for kind in ("expected", "actual", "diff"):
            assert f'src="{stem}-{kind}.png"' in page
    with Image.open(report / f"{stems[0]}-diff.png") as im:
        diff = np.asarray(im.convert("RGB"))
    red = (diff == (255, 0, 0)).all(axis=2)
    assert red.sum() == 25 and red[50:55, 100:105].all()  # 16 pixels changed colour, 9 were added


@pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"),
    reason="its pixel counts are x86's text rendering; on ARM they differ (seen under qemu-user, not yet pinned)",
)
def test_tolerance_max_pixels_and_ignore(pytester, run):
    """tolerance, max_pixels and ignore= each allow exactly what they say; one beyond fails."""
    pytester.makepyfile(
        """
        import fbgfx, pytest
        def draw(fbgfx_display, shade, clock):
            with fbgfx.open() as fb, fb.screen() as screen:
                with screen.frame() as s:
                    s.clear((100, 100, 100))
                    s.rectangle((10, 10, 19, 19), fill=(shade, 100, 100))
                    s.text((200, 5), clock, fill="white")
        def test_it(fbgfx_display, request):
            draw(fbgfx_display, 100, "12:00")
            fbgfx_display.assert_matches("base")
            if request.config.getoption("fbgfx_update"):
                return
            clock = (190, 0, 320, 20)
            draw(fbgfx_display, 103, "12:01")
            fbgfx_display.assert_matches("base", tolerance=3, ignore=[clock])
            with pytest.raises(AssertionError, match="100 pixels differ .* by up to 3 in a channel .tolerance=2."):
                fbgfx_display.assert_matches("base", tolerance=2, ignore=clock)
            fbgfx_display.assert_matches("base", max_pixels=100, ignore=clock)
            with pytest.raises(AssertionError, match="100 pixels differ .max_pixels=99."):
                fbgfx_display.assert_matches("base", max_pixels=99, ignore=clock)
            with pytest.raises(AssertionError, match="ignoring .190, 0, 320, 20."):
                fbgfx_display.assert_matches("base", max_pixels=99, ignore=[clock])
            # the text's pixel count and box differ between Pillow versions (9.4 draws it otherwise)
            text_box = r"[1-9][0-9]* pixels .* within the box \\(2[0-9][0-9], [0-9]+, 2[0-9][0-9], [0-9]+\\)"
            with pytest.raises(AssertionError, match=text_box):
                fbgfx_display.assert_matches("base", tolerance=3)
            with pytest.raises(TypeError, match="ignore="):
                fbgfx_display.assert_matches("base", ignore=[(1, 2, 3)])
            with pytest.raises(ValueError, match="tolerance"):
                fbgfx_display.assert_matches("base", tolerance=256)
            with pytest.raises(ValueError, match="picture name"):
                fbgfx_display.assert_matches("../escape")
        """
    )
    update_then_match(run)


def test_update_rewrites_only_what_changed(pytester, run):
    """--fbgfx-update rewrites a baseline whose pixels changed and leaves an unchanged one's bytes alone."""
    pytester.makepyfile(
        """
        import os, fbgfx
        def test_it(fbgfx_display):
            with fbgfx.open() as fb, fb.screen() as screen:
                with screen.frame() as s:
                    s.clear("gray")
                    s.rectangle((0, 0, 9, 9), fill=os.environ.get("COLOUR", "red"))
                fbgfx_display.assert_matches("same")
        """
    )
    run("--fbgfx-update").assert_outcomes(passed=1)
    baseline = pytester.path / "screens" / "test_update_rewrites_only_what_changed" / "test_it" / "same.png"
    baseline.write_bytes(baseline.read_bytes() + b"")  # the same picture, a new mtime below
    os.utime(baseline, (0, 0))
    run("--fbgfx-update").assert_outcomes(passed=1)
    assert baseline.stat().st_mtime == 0  # not rewritten
    os.environ["COLOUR"] = "green"
    try:
        run().assert_outcomes(failed=1)
        result = run("--fbgfx-update")
        result.assert_outcomes(passed=1)
        assert baseline.stat().st_mtime > 0
        run().assert_outcomes(passed=1)
    finally:
        del os.environ["COLOUR"]
    with Image.open(baseline) as im:
        assert im.convert("RGB").getpixel((5, 5)) == (0, 128, 0)


def test_blank_screen_is_refused_unless_allowed(pytester, run):
    """A one-colour screen fails assert_matches (update runs too) unless allow_blank=True."""
    pytester.makepyfile(
        """
        import pytest
        def test_blank(fbgfx_display):
            with pytest.raises(AssertionError, match=r"one colour \\(#000000\\) everywhere: has the app drawn yet"):
                fbgfx_display.assert_matches("blank")
            fbgfx_display.assert_matches("allowed", allow_blank=True)
        """
    )
    run("--fbgfx-update").assert_outcomes(passed=1)
    assert sorted(
        p.name
        for p in (pytester.path / "screens" / "test_blank_screen_is_refused_unless_allowed" / "test_blank").iterdir()
    ) == ["allowed.png"]


def test_app_that_dies_is_quoted(pytester, run):
    """When an app started with start_app() exits, wait_for_frame and tap say how, with the end of its stderr."""
    pytester.makepyfile(
        """
        import sys, pytest
        from fbgfx.testing import FrameTimeout
        import fbgfx
        def test_dies(fbgfx_display):
            app = fbgfx_display.start_app([sys.executable, "-c", "raise SystemExit('app: no config file')"])
            app.wait(60)
            with pytest.raises(FrameTimeout, match=r"(?s)exited with 1.*app: no config file"):
                fbgfx_display.wait_for_frame(0.01)
            with pytest.raises(fbgfx.TouchError, match=r"(?s)touch.open\\(\\)\\) within 0.01 s.*exited with 1"):
                fbgfx_display.tap(1, 1, timeout=0.01)
        """
    )
    run().assert_outcomes(passed=1)


def test_bad_marker_options_are_usage_errors(pytester, run):
    """A marker option a virtual display does not have, positional arguments or file= are clear errors."""
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.fbgfx_display(width=10, height=10, colour="red")
        def test_unknown(fbgfx_display):
            pass
        @pytest.mark.fbgfx_display(10, 10)
        def test_positional(fbgfx_display):
            pass
        @pytest.mark.fbgfx_display(file="/tmp/mine")
        def test_file(fbgfx_display):
            pass
        """
    )
    result = run()
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(
        [
            "*unknown virtual framebuffer option 'colour'*",
            "*takes keyword arguments*",
            "*makes its own file; do not give file=*",
        ]
    )


def test_marker_is_registered_and_the_plugin_can_be_turned_off(pytester, run):
    """--markers lists fbgfx_display (so --strict-markers accepts it); --help lists both options."""
    result = run("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.fbgfx_display(width=320, height=240, format='XRGB8888'*"])
    result = run("--help")
    result.stdout.fnmatch_lines(["*--fbgfx-update*", "*--fbgfx-report=DIR*"])


def test_loading_the_plugin_imports_nothing_heavy():
    """Importing the plugin (what every pytest run does) loads neither fbgfx nor NumPy nor Pillow."""
    code = "import sys, pytest_fbgfx; print(sorted(m for m in ('fbgfx', 'numpy', 'PIL') if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == "[]"


def test_plugin_off_when_entry_point_installed(pytester, request):
    """-p no:fbgfx turns the installed plugin off: the fixture is gone."""
    if not request.config.pluginmanager.has_plugin("fbgfx"):
        pytest.skip("the fbgfx pytest11 entry point is not installed here (pip install -e . installs it)")
    pytester.makepyfile("def test_it(fbgfx_display):\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:fbgfx")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'fbgfx_display' not found*"])
    assert re.search(r"fbgfx_display", result.stdout.str())


def test_fbgfx_timeout_sets_how_long_waits_last(pytester, run):
    """--fbgfx-timeout is what wait_for_frame() and a touch wait when the test gives no timeout."""
    pytester.makepyfile(
        """
        import pytest
        from fbgfx import TouchError
        from fbgfx.testing import FrameTimeout
        def test_it(fbgfx_display):
            with pytest.raises(FrameTimeout, match=r"waited 0.2 s for a new frame"):
                fbgfx_display.wait_for_frame()
            with pytest.raises(TouchError, match=r"within 0.2 s"):
                fbgfx_display.tap(1, 1)
            with pytest.raises(FrameTimeout, match=r"waited 0.1 s"):
                fbgfx_display.wait_for_frame(0.1)
        """
    )
    run("--fbgfx-timeout", "0.2").assert_outcomes(passed=1)


def test_nan_and_negative_timeouts_are_refused(pytester, run):
    """A NaN timeout (it never ends) and a negative one are refused: wait_for_frame(), touches, --fbgfx-timeout."""
    pytester.makepyfile(
        """
        import math, pytest
        @pytest.mark.parametrize("bad", [math.nan, -1, -0.5, "1"])
        def test_it(fbgfx_display, bad):
            error = TypeError if isinstance(bad, str) else ValueError
            with pytest.raises(error, match="seconds"):
                fbgfx_display.wait_for_frame(bad)
            with pytest.raises(error, match="seconds"):
                fbgfx_display.tap(1, 1, timeout=bad)
        """
    )
    run().assert_outcomes(passed=4)
    for value in ("nan", "-1"):
        result = run("--fbgfx-timeout", value)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "--fbgfx-timeout takes seconds" in result.stderr.str()


DRAW = """
import fbgfx
def draw(colour):
    with fbgfx.open() as fb, fb.screen() as screen:
        with screen.frame() as s:
            s.clear("black")
            s.rectangle((10, 10, 60, 40), fill=colour)
"""


def red_picture_test(pytester, name: str) -> None:
    """Write ``DRAW`` and a test module ``name`` whose one test draws red and matches baseline "pic"."""
    pytester.makepyfile(draw=DRAW)
    test = """
        from draw import draw
        def test_it(fbgfx_display):
            draw("red")
            fbgfx_display.assert_matches("pic")
        """
    pytester.makepyfile(**{name: test})


def test_baselines_of_different_tests_never_collide(pytester, run):
    """Parametrized tests, same-named methods of two classes and same-named tests of two files get their own PNGs."""
    pytester.makepyfile(draw=DRAW)
    body = """
        import pytest
        from draw import draw
        @pytest.mark.parametrize("colour", ["red", "lime", "a/../../../x"], ids=["red", "lime", "../../../x"])
        def test_param(fbgfx_display, colour):
            draw(colour if "/" not in colour else "blue")
            fbgfx_display.assert_matches("pic")
        class TestA:
            def test_same(self, fbgfx_display):
                draw("{a}")
                fbgfx_display.assert_matches("pic")
        class TestB:
            def test_same(self, fbgfx_display):
                draw("{b}")
                fbgfx_display.assert_matches("pic")
        def test_file(fbgfx_display):
            draw("{a}")
            fbgfx_display.assert_matches("pic")
    """
    pytester.makepyfile(test_one=body.format(a="yellow", b="white"), test_two=body.format(a="navy", b="teal"))
    run("--fbgfx-update").assert_outcomes(passed=12)
    screens = pytester.path / "screens"
    pictures = sorted(str(p.relative_to(screens)) for p in screens.rglob("*.png"))
    assert len(pictures) == 12 and len({p.rsplit("/", 1)[0] for p in pictures}) == 12, pictures
    assert "test_one/TestA/test_same/pic.png" in pictures and "test_two/test_param[red]/pic.png" in pictures
    assert [p.name for p in pytester.path.rglob("*.png") if screens not in p.parents] == []  # nothing outside
    run().assert_outcomes(passed=12)  # each test is compared with its own picture


def test_update_writing_one_baseline_twice_with_other_pixels_fails(pytester, run):
    """--fbgfx-update fails where one run would write one baseline with two different pictures."""
    pytester.makepyfile(draw=DRAW)
    pytester.makepyfile(
        test_twice="""
        from draw import draw
        def test_twice(fbgfx_display):
            draw("red")
            fbgfx_display.assert_matches("pic")
            draw("red")
            fbgfx_display.assert_matches("pic")  # the same picture again: fine
            draw("blue")
            fbgfx_display.assert_matches("pic")
        """
    )
    result = run("--fbgfx-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*would write the baseline screens/test_twice/test_twice/pic.png twice*"])
    with Image.open(pytester.path / "screens" / "test_twice" / "test_twice" / "pic.png") as im:
        assert im.convert("RGB").getpixel((20, 20)) == (255, 0, 0)  # the first picture stays


def test_damaged_baseline_is_one_line_and_update_replaces_it(pytester, run):
    """An unreadable baseline is an assertion naming the file (no Pillow traceback); --fbgfx-update rewrites it."""
    red_picture_test(pytester, "test_damaged")
    run("--fbgfx-update").assert_outcomes(passed=1)
    baseline = pytester.path / "screens" / "test_damaged" / "test_it" / "pic.png"
    baseline.write_bytes(baseline.read_bytes()[:60])  # cut short, as a killed writer leaves it
    result = run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * the baseline screens/test_damaged/test_it/pic.png is unreadable (*): "
            "`pytest --fbgfx-update` writes it anew"
        ]
    )
    assert "PIL" not in result.stdout.str()
    update_then_match(run)
    assert [p.name for p in baseline.parent.iterdir()] == ["pic.png"]  # no temporary file left


@pytest.mark.parametrize("where", ["folder", "file"])
def test_baseline_writes_never_follow_a_symlink_out(pytester, run, tmp_path, where):
    """A symlink in the baseline folder (a folder or the picture itself) never makes --fbgfx-update write outside it."""
    red_picture_test(pytester, "test_link")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pic.png").write_bytes(b"precious")
    screens = pytester.path / "screens"
    (screens / "test_link").mkdir(parents=True)
    if where == "folder":
        (screens / "test_link" / "test_it").symlink_to(outside)
        result = run("--fbgfx-update")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*cannot write the baseline screens/test_link/test_it/pic.png*symbolic link*"])
    else:
        (screens / "test_link" / "test_it").mkdir()
        (screens / "test_link" / "test_it" / "pic.png").symlink_to(outside / "pic.png")
        run("--fbgfx-update").assert_outcomes(passed=1)
        assert not (screens / "test_link" / "test_it" / "pic.png").is_symlink()  # the link was replaced
    assert sorted(p.name for p in outside.iterdir()) == ["pic.png"]
    assert (outside / "pic.png").read_bytes() == b"precious"


def test_baselines_from_before_are_read_until_updated(pytester, run):
    """A baseline in the old place (screens/<function>/) still passes; --fbgfx-update writes the new place."""
    red_picture_test(pytester, "test_old")
    run("--fbgfx-update").assert_outcomes(passed=1)
    screens = pytester.path / "screens"
    (screens / "test_old" / "test_it").rename(screens / "test_it")
    (screens / "test_old").rmdir()
    run().assert_outcomes(passed=1)
    run("--fbgfx-update").assert_outcomes(passed=1)
    assert (screens / "test_old" / "test_it" / "pic.png").is_file()


def test_xdist_report_and_summary_list_every_workers_mismatches(pytester, run):
    """Under pytest-xdist (-n 2) the report's index.html and the terminal summary list every worker's mismatches."""
    pytest.importorskip("xdist")
    pytester.makepyfile(draw=DRAW)
    tests = "\n".join(
        f"def test_{i}(fbgfx_display):\n    draw('{c}')\n    fbgfx_display.assert_matches('pic')\n"
        for i, c in enumerate(["red", "lime", "blue", "white"])
    )
    pytester.makepyfile(test_many="from draw import draw\n" + tests)
    run("-n", "2", "--fbgfx-update").assert_outcomes(passed=4)
    pytester.makepyfile(
        test_many="from draw import draw\n"
        + tests.replace("'red'", "'navy'")
        .replace("'blue'", "'teal'")
        .replace("'lime'", "'olive'")
        .replace("'white'", "'gray'")
    )
    result = run("-n", "2")
    result.assert_outcomes(failed=4)
    text = result.stdout.str()
    assert "fbgfx: 4 screen mismatches" in text, text
    index = re.search(r"(\S+index\.html)", text.split("fbgfx: 4 screen mismatches")[1]).group(1)
    page = open(index, encoding="utf-8").read()
    assert "4 screen mismatches" in page
    for i in range(4):
        assert f"test_many.py::test_{i}" in page and f"test_many.py::test_{i}: pic" in text


def test_docs_example_runs(pytester, run):
    """The testing guide's app and tests (docs/examples/) run: --fbgfx-update writes pictures, then they pass."""
    examples = os.path.join(ROOT, "docs", "examples")
    app, tests = (open(os.path.join(examples, f), encoding="utf-8").read() for f in ("counter.py", "test_counter.py"))
    pytester.makepyfile(counter=app, test_counter=tests)
    result = run("--fbgfx-update")
    result.assert_outcomes(passed=2)
    screens = pytester.path / "screens"
    assert sorted(str(p.relative_to(screens)) for p in screens.rglob("*.png")) == [
        "test_counter/test_counts_taps/one.png",
        "test_counter/test_counts_taps/zero.png",
        "test_counter/test_status_bar/status.png",
    ]
    with (
        Image.open(screens / "test_counter" / "test_counts_taps" / "zero.png") as zero,
        Image.open(screens / "test_counter" / "test_counts_taps" / "one.png") as one,
    ):
        changed = np.nonzero((np.asarray(zero) != np.asarray(one)).any(axis=2))
    assert changed[0].size and 80 <= changed[0].min() and changed[0].max() <= 159  # only the digit changed
    run().assert_outcomes(passed=2)


def test_real_display_counts_frames_through_the_environment(pytester, run):
    """device= (a stand-in for /dev/fb7): $FBGFX_FRAMES counts, snapshots read it, no uinput is said."""
    if os.access("/dev/uinput", os.W_OK):
        pytest.skip("this machine can make uinput devices: the missing-uinput message cannot be seen here")
    expected = "modprobe uinput" if not os.path.exists("/dev/uinput") else "needs root"
    pytester.makepyfile(
        f"""
        import os, fbgfx, fbgfx.testing, pytest
        @pytest.fixture(autouse=True)
        def stand_in(monkeypatch):
            fb = fbgfx.open("virtual:64x48:RGB565")  # what fbgfx.open("/dev/fb7") would give
            monkeypatch.setattr(fbgfx.testing, "fbgfx_open", lambda spec, readonly=False: fb)
            return fb
        @pytest.mark.fbgfx_display(device="/dev/fb7")
        def test_real(fbgfx_display, stand_in):
            assert os.environ["FRAMEBUFFER"] == "/dev/fb7" == fbgfx_display.spec
            assert fbgfx_display.env["FBGFX_FRAMES"] == os.environ["FBGFX_FRAMES"]
            with stand_in.screen() as screen:
                with screen.frame() as s:
                    s.clear("red")
                assert fbgfx_display.wait_for_frame(0) == 1
                assert fbgfx_display.snapshot().getpixel((3, 3)) == (255, 0, 0)
                assert (fbgfx_display.width, fbgfx_display.height, fbgfx_display.format) == (64, 48, "RGB565")
            with pytest.raises(fbgfx.TouchError, match="{expected}"):
                fbgfx_display.tap(1, 1)
            with pytest.raises(pytest.UsageError, match="device="):
                fbgfx_display.add_display(device="/dev/fb8")
        """
    )
    run().assert_outcomes(passed=1)


def test_drm_panel_size_and_picture(monkeypatch):
    """A drm: display's panel: size from the preferred mode (or mode=), picture and format from what it scans out."""
    from types import SimpleNamespace

    import fbgfx.drm
    from fbgfx.testing import _DrmPanel

    def mode(w, h, preferred=False):
        return SimpleNamespace(width=w, height=h, preferred=preferred)

    connectors = [
        SimpleNamespace(name="DP-1", connected=False, modes=[mode(640, 480)]),
        SimpleNamespace(name="HDMI-A-1", connected=True, modes=[mode(1920, 1080), mode(1280, 720, preferred=True)]),
    ]
    monkeypatch.setattr(fbgfx.drm, "probe", lambda path: SimpleNamespace(connectors=connectors))
    native = np.full((720, 1280), 0xF800, np.uint16)  # RGB565 red
    monkeypatch.setattr(fbgfx.drm, "read_scanout", lambda path, connector=None: ("RGB565", native))
    panel = _DrmPanel("drm:card1")
    assert (panel.card, panel.size) == ("/dev/dri/card1", (1280, 720))
    assert panel.format() == "RGB565"
    picture = panel.snapshot()
    assert picture.size == (1280, 720) and picture.getpixel((5, 5)) == (255, 0, 0)
    assert _DrmPanel("drm:/dev/dri/card0:mode=800x480@60").size == (800, 480)
    with pytest.raises(fbgfx.FramebufferError, match="no connected display"):
        _DrmPanel("drm:card1:connector=DP-1")
