"""The README's API tour runs as printed (on a virtual framebuffer)."""

import pathlib
import re

from PIL import Image

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


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
