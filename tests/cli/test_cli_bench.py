"""fbgfx bench: standard scenes timed on a display, as a table or JSON."""

from __future__ import annotations

import json
from typing import Any

from fbgfx.cli import main
from fbgfx.cli.bench import SCENES


def test_every_scene_runs_and_reports_its_figures_as_json(capsys: Any) -> None:
    """--json: one record per scene with fps, render, flush and CPU; the display and machine named."""
    assert main(["bench", "-d", "virtual:160x120:RGB565", "--seconds", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["display"].endswith("160x120 RGB565")
    assert out["machine"]
    assert out["memcpy_ms"] > 0 and out["load_average"] >= 0
    assert [r["scene"] for r in out["scenes"]] == list(SCENES)
    for r in out["scenes"]:
        assert r["frames"] >= 2 and r["fps"] > 0, r
        assert r["render_ms"] >= 0 and r["flush_ms"] > 0 and r["cpu_percent"] >= 0, r
    assert out["mean_fps"] > 0


def test_chosen_scenes_print_a_table_and_a_summary(capsys: Any) -> None:
    """--scenes picks scenes; the table names the display and ends with a summary line."""
    assert main(["bench", "-d", "virtual:64x48:XRGB8888", "--seconds", "0.02", "--scenes", "fill,dirty"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("fbgfx bench: virtual") and "64x48 XRGB8888" in lines[0]
    assert "memcpy of a frame" in lines[0] and "load average" in lines[0]
    assert [line.split()[0] for line in lines[2:-1]] == ["fill", "dirty"]
    assert lines[-1].startswith("summary: 2 scenes")


def test_an_unknown_scene_is_one_error_line(capsys: Any) -> None:
    """A scene that does not exist: exit status 2 and one line naming it."""
    assert main(["bench", "-d", "virtual:64x48", "--scenes", "fill,nosuch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "nosuch" in err and "\n" not in err
