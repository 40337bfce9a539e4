"""Refusing to open one path, for the tests of what fbgfx says when a device cannot be opened."""

from __future__ import annotations

import os
from typing import Any

import pytest


def refuse_open(monkeypatch: pytest.MonkeyPatch, path: str, error: type[OSError], code: int, text: str) -> None:
    """Make ``os.open(path)`` raise ``error(code, text, path)``; every other open goes through.

    ``os.open`` is the whole process's: a worker's other threads (the kernel boots' runner
    among them) open files while the test runs, and must not see the refusal.
    """
    real_open = os.open

    def refusing(p: Any, *args: Any, **kwargs: Any) -> int:
        if os.fspath(p) == path:
            raise error(code, text, path)
        return real_open(p, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
