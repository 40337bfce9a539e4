"""The built documentation opens cleanly in a real browser (headless Chromium).

Needs the site built first (``python -m sphinx -b html docs docs/_build/html``, as
.ci/docs.sh does), Debian's chromium and chromium-driver and selenium; without them the
tests skip and say which is missing. With ``FBGFX_DOCS_REQUIRE_BROWSER=1`` (set by
.ci/docs.sh, right after building) a missing piece fails instead.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

import pytest
import support

SITE = pathlib.Path(support.ROOT) / "docs" / "_build" / "html"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Pages opened: the front page and a guide with pictures.
PAGES = ("index.html", "guides/lcd.html", "drawing.html")


def _missing() -> str | None:
    if not (SITE / "index.html").is_file():
        return f"no built site at {SITE} (python -m sphinx -b html docs docs/_build/html)"
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        return "needs Debian's chromium and chromium-driver (bash .ci/browser-deps.sh)"
    try:
        import selenium  # noqa: F401  (only asked whether it is there)
    except ImportError:
        return "needs selenium (pip install selenium)"
    return None


@pytest.fixture(scope="module")
def browser():
    missing = _missing()
    if missing:
        if os.environ.get("FBGFX_DOCS_REQUIRE_BROWSER") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1200,900"):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="fbgfx-docs-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(browser, page: str) -> None:
    """Open ``page`` and wait for its load event: ``get`` may return while it is still loading."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((SITE / page).as_uri())
    WebDriverWait(browser, 60).until(lambda b: b.execute_script("return document.readyState") == "complete")


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_without_console_errors(browser, page):
    """The page loads from the built site with no error in the browser's console."""
    _open(browser, page)
    assert browser.title, "the page has no title"
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors


@pytest.mark.parametrize("page", PAGES)
def test_page_pictures_load(browser, page):
    """Every picture on the page loaded (complete, with a size), and the page has some."""
    _open(browser, page)
    pictures = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
    )
    assert pictures, f"{page} shows no picture"
    broken = [src for src, complete, width in pictures if not (complete and width > 0)]
    assert not broken, f"pictures that did not load on {page}: {broken}"
