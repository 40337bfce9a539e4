"""`fbgfx serve` in a real browser (headless Chromium through Selenium): the page's canvas read back."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile

import numpy as np
import pytest
from support.serve_helpers import CHROMEDRIVER, CHROMIUM, CliServer, chromium, wait_until

import fbgfx
from fbgfx.serve import Server

pytest.importorskip("websockets", minversion="13", reason="fbgfx[serve] needs websockets >= 13")
webdriver = pytest.importorskip("selenium.webdriver", reason="browser tests need selenium (pip install selenium)")

if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("browser tests need Debian's chromium and chromium-driver", allow_module_level=True)

TOKEN = "browser-token-42"
# The page's canvas as base64 RGBA bytes (a JSON array of numbers would be slow to hand over).
READ_CANVAS = """
const c = document.getElementById("display");
const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
let s = ""; for (let i = 0; i < d.length; i += 8192) s += String.fromCharCode.apply(null, d.subarray(i, i + 8192));
return [c.width, c.height, btoa(s), Number(c.dataset.frames)];
"""


def _new_browser():
    driver, profile = chromium()
    driver.set_script_timeout(20)
    return driver, profile


@pytest.fixture(scope="module")
def browser():
    driver, profile = _new_browser()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def canvas(browser):
    """(pixels as (h, w, 3) uint8, frames drawn) of the page's canvas."""
    w, h, data, frames = browser.execute_script(READ_CANVAS)
    return np.frombuffer(base64.b64decode(data), np.uint8).reshape(h, w, 4)[..., :3], frames


def shows(browser, fb):
    """Wait until the canvas equals fb.snapshot(); return the frames count then."""
    want = np.asarray(fb.snapshot())

    def same():
        got, frames = canvas(browser)
        return frames if got.shape == want.shape and np.array_equal(got, want) else 0

    return wait_until(same, what="the canvas to equal fb.snapshot()")


def _fill(fb, seed):
    rng = np.random.default_rng(seed)
    px = fb.pixels
    px[...] = rng.integers(0, np.iinfo(px.dtype).max, px.shape, dtype=px.dtype, endpoint=True)


@pytest.mark.parametrize("fmt", ["XRGB8888", "RGB565", "C8"])
def test_canvas_equals_the_snapshot(browser, fmt):
    """Random pixels of XRGB8888, RGB565 and a C8 palette reach the canvas exactly, and so does a change."""
    with fbgfx.open(f"virtual:120x80:{fmt}") as fb, Server(fb, port=0) as server:
        _fill(fb, 1)
        browser.get(server.url)
        first = shows(browser, fb)
        assert browser.execute_script("return document.body.dataset.state") == "live"
        with fb.screen().frame() as s:
            s.rectangle((30, 20, 70, 50), fill=(250, 128, 3))
        assert shows(browser, fb) > first


def test_an_animation_is_followed_by_two_browsers(browser):
    """A square moving over a file-backed display drawn by this process, served by `fbgfx serve`, is
    followed step by step in two windows at once, each canvas counting the updates it drew."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:160x100:RGB565:file={tmp}/fb"
        with fbgfx.open(spec) as fb, CliServer("-d", spec, "--port", "0") as server:
            first = browser.current_window_handle
            browser.get(server.url)
            browser.switch_to.new_window("window")
            second = browser.current_window_handle
            browser.get(server.url)
            screen = fb.screen()
            counts = {first: 0, second: 0}
            try:
                for step in range(6):
                    with screen.frame() as s:
                        s.clear("navy")
                        s.rectangle((step * 20, 30, step * 20 + 30, 60), fill="yellow")
                    for handle in (first, second):
                        browser.switch_to.window(handle)
                        frames = shows(browser, fb)
                        assert frames > counts[handle]
                        counts[handle] = frames
            finally:
                browser.switch_to.window(second)
                browser.close()
                browser.switch_to.window(first)
            assert min(counts.values()) >= 6


def test_the_page_reconnects_to_a_restarted_server(browser):
    """After the server stops, the page says it is disconnected; once it is back, the page shows the new picture."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:64x48:XRGB8888:file={tmp}/fb"
        with fbgfx.open(spec) as fb:
            fb.pixels[:] = 0x00FF0000
            server = CliServer("-d", spec, "--port", "0", "--token", TOKEN)
            try:
                browser.get(server.url)
                shows(browser, fb)
            finally:
                server.stop()
            wait_until(
                lambda: browser.execute_script("return document.body.dataset.state") == "disconnected",
                what="the page to show it lost the server",
            )
            fb.pixels[:] = 0x0000FF00
            with CliServer("-d", spec, "--port", str(server.port), "--token", TOKEN):
                shows(browser, fb)
                assert browser.execute_script("return document.body.dataset.state") == "live"


def test_the_page_needs_the_token(browser):
    """Opened without its token the browser gets 401 and no canvas; with it, the picture."""
    with fbgfx.open("virtual:32x24:RGB565") as fb, Server(fb, port=0, token=TOKEN) as server:
        fb.pixels[:] = 0x07E0
        browser.get(f"http://127.0.0.1:{server.port}/")
        assert browser.find_elements("id", "display") == []
        assert "token" in browser.page_source
        browser.get(server.url)
        shows(browser, fb)


def _click(browser, x, y):
    """Press and release the mouse over canvas pixel (x, y), wherever CSS scaled the canvas to."""
    from selenium.webdriver.common.action_chains import ActionChains

    element = browser.find_element("id", "display")
    width, height, css_w, css_h = browser.execute_script(
        "const c = arguments[0], r = c.getBoundingClientRect(); return [c.width, c.height, r.width, r.height];",
        element,
    )
    # Selenium's offsets count from the element's centre, in CSS pixels.
    dx = (x + 0.5) * css_w / width - css_w / 2
    dy = (y + 0.5) * css_h / height - css_h / 2
    ActionChains(browser).move_to_element_with_offset(element, round(dx), round(dy)).click().perform()


@pytest.mark.parametrize("rotate", [0, 90])
def test_a_click_touches_what_it_clicked(browser, rotate):
    """With --input, a click on the canvas reaches an app reading the display's touchscreen at the pixel
    the app drew under the pointer, also on a screen turned 90 degrees."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:120x80:RGB565:file={tmp}/fb"
        with fbgfx.open(spec) as fb, CliServer("-d", spec, "--port", "0", "--input") as server:
            screen = fb.screen(rotate=rotate)
            spot = (17, 29)  # logical pixel the app marks and expects the touch at
            with screen.frame() as s:
                s.clear("black")
                s.point(spot, fill="white")
            with fbgfx.touch.open(screen=screen) as ts:
                browser.get(server.url)
                shows(browser, fb)
                ys, xs = np.nonzero(canvas(browser)[0].any(axis=2))
                assert len(xs) == 1  # the one white pixel, where the panel shows it
                panel = (int(xs[0]), int(ys[0]))
                assert rotate == 0 or panel != spot  # turned, the panel pixel is another one
                _click(browser, *panel)
                events = []
                wait_until(lambda: events.extend(ts.read(timeout=0.1)) or any(e.type == "up" for e in events))
            downs = [e for e in events if e.type == "down"]
            assert [(e.x, e.y) for e in downs] == [spot]


def test_no_touches_without_input(browser):
    """Without --input the page does not send presses and the app's touchscreen stays quiet."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = f"virtual:120x80:RGB565:file={tmp}/fb"
        with fbgfx.open(spec) as fb, CliServer("-d", spec, "--port", "0") as server:
            fb.pixels[:] = 0x1234
            with fbgfx.touch.open(spec) as ts:
                browser.get(server.url)
                shows(browser, fb)
                _click(browser, 60, 40)
                _click(browser, 10, 10)
                # Once the page has drawn a later picture, its clicks were long handled.
                fb.pixels[:] = 0x4321
                shows(browser, fb)
                assert ts.read(timeout=0.5) == []
