"""The README's API tour runs as printed (on a virtual framebuffer)."""

import re
from pathlib import Path

from PIL import Image
from support import ROOT

README = Path(ROOT) / "README.md"


def test_api_tour_runs(tmp_path, monkeypatch):
    """The first Python block of README.md runs and draws what it says."""
    block = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    Image.new("RGB", (64, 48), "orange").save(tmp_path / "cat.png")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FRAMEBUFFER", "virtual:800x480:XRGB8888")
    exec(compile(block, str(README), "exec"), {})
    shown = Image.open(tmp_path / "screen.png")
    assert shown.size == (800, 480)
    r, g, b = shown.getpixel((400, 240))
    assert r > 240 and 150 < g < 180 and b < 10  # orange, through RGB565
    assert shown.getpixel((10, 10)) == (0, 0, 0)


def test_readme_is_short():
    """README.md stays an introduction (at most 250 lines); the rest is in docs/."""
    assert len(README.read_text().splitlines()) <= 250


def test_readme_links_lead_somewhere():
    """Every relative link and picture of README.md names a file of the repository (anchors aside)."""
    targets = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    local = [t.split("#")[0] for t in targets if "://" not in t]
    assert local, "README.md links to nothing in the repository"
    missing = [t for t in local if not (README.parent / t).exists()]
    assert not missing, missing
