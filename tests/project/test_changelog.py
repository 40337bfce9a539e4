"""CHANGELOG.md keeps the Keep a Changelog shape: dated releases, entries under a section,
one or two lines each."""

from __future__ import annotations

import re
from pathlib import Path

from support import ROOT

SECTIONS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def _lines() -> list[str]:
    return (Path(ROOT) / "CHANGELOG.md").read_text().splitlines()


def test_releases_are_dated_and_entries_sit_under_a_section():
    """Each release after Unreleased has an ISO date; each entry is under a Keep a Changelog section."""
    releases = [line for line in _lines() if line.startswith("## ")]
    assert releases[0] == "## [Unreleased]" and len(releases) > 1, releases
    for release in releases[1:]:
        assert re.fullmatch(r"## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", release), release
    section = None
    for number, line in enumerate(_lines(), 1):
        if line.startswith("## "):
            section = None
        elif line.startswith("### "):
            assert line[4:] in SECTIONS, f"line {number}: {line}"
            section = line
        elif line.startswith("- "):
            assert section is not None, f"line {number}: an entry outside a section: {line}"


def test_entries_are_one_or_two_lines():
    """An entry is one or two lines a user reads (figures and internals go to the docs)."""
    long = []
    entry: list[str] = []
    for line in [*_lines(), ""]:
        if line.startswith("  ") and entry:
            entry.append(line)
            continue
        if len(entry) > 2:
            long.append(entry[0])
        entry = [line] if line.startswith("- ") else []
    assert long == []
