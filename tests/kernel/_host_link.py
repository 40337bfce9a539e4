"""Guest side shared by the *_guest.py scripts: talking to the host and recording each
step's result.

The guest asks the host (the test_*_vm.py harnesses; the answering thread is
_vm.Responder) to do something by writing ``cmd-N`` (JSON) into the shared read/write
directory, and waits for ``done-N``. Each step's result (or its error) goes into
``results.json`` there at once, for the host's assertions: one failure does not hide
the others, and a guest that dies still leaves what it found.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PIL import Image

Step = Callable[[], Any]


class HostLink:
    """The shared directory ``rwdir`` as seen from the guest: requests and results."""

    def __init__(self, rwdir: Path) -> None:
        self.rwdir = rwdir
        self.results: dict[str, Any] = {}
        self._n = 0

    def ask(self, **command: Any) -> None:
        """Have the host do ``command`` (a tap, a screendump, ...); wait for its answer.

        Raises:
            TimeoutError: no answer within 120 s.
            RuntimeError: the host could not do it (its error).
        """
        self._n += 1
        n = self._n
        # Written aside and renamed, so the host never reads a half-written request.
        tmp = self.rwdir / f".cmd-{n}"
        tmp.write_text(json.dumps(command))
        tmp.rename(self.rwdir / f"cmd-{n}")
        done = self.rwdir / f"done-{n}"
        deadline = time.monotonic() + 120
        while not done.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the host did not answer {command}")
            time.sleep(0.05)
        answer = done.read_text()
        done.unlink()
        if answer != "ok":
            raise RuntimeError(f"host: {answer}")

    def screendump(self, name: str, device: str | None = None, head: int | None = None) -> np.ndarray:
        """What qemu shows now on ``device`` (a qemu device id; qemu's first display if
        None) and its ``head``, as (h, w, 3) RGB; kept as NAME.ppm (_vm.answer_screendump)."""
        command: dict[str, Any] = {"do": "screendump", "file": f"{name}.ppm"}
        if device:
            command["device"] = device
        if head is not None:
            command["head"] = head
        self.ask(**command)
        with Image.open(self.rwdir / f"{name}.ppm") as im:
            return np.asarray(im.convert("RGB"))

    def record(self, name: str, fn: Step) -> None:
        """Run one step; record its result (with "seconds" it took, unless it reports
        "seconds" of its own) or its error, and write the results so far."""
        start = time.monotonic()
        try:
            self.results[name] = fn()
        except Exception as e:
            self.results[name] = _error(e)
        if isinstance(self.results[name], dict):
            self.results[name].setdefault("seconds", round(time.monotonic() - start, 1))
        self.save()

    def step(self, name: str) -> Callable[[Step], Step]:
        """``@link.step(name)`` runs the function below at once, as ``record`` does."""

        def wrap(fn: Step) -> Step:
            self.record(name, fn)
            return fn

        return wrap

    def record_fatal(self, exc: Exception) -> None:
        """Record ``exc``, which stopped the guest between steps, as "fatal" (the host then
        fails every test with it), and write the results."""
        self.results["fatal"] = _error(exc)
        self.save()

    def save(self) -> None:
        """Write the results so far into ``results.json``."""
        (self.rwdir / "results.json").write_text(json.dumps(self.results, indent=1))


def _error(exc: Exception) -> dict[str, str]:
    """An exception as the host reads it: its type and message, and the traceback."""
    return {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
