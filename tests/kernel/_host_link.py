"""Guest side shared by drm_guest.py and touch_guest.py: talking to the host and
recording each step's result.

The guest asks the host (test_drm_vm.py, test_touch_vm.py; the answering thread is
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

    def record(self, name: str, fn: Step) -> None:
        """Run one step; record its result (with "seconds" it took, unless it reports
        "seconds" of its own) or its error, and write the results so far."""
        start = time.monotonic()
        try:
            self.results[name] = fn()
        except Exception as e:
            self.results[name] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        if isinstance(self.results[name], dict):
            self.results[name].setdefault("seconds", round(time.monotonic() - start, 1))
        self.save()

    def step(self, name: str) -> Callable[[Step], Step]:
        """``@link.step(name)`` runs the function below at once, as ``record`` does."""

        def wrap(fn: Step) -> Step:
            self.record(name, fn)
            return fn

        return wrap

    def save(self) -> None:
        """Write the results so far into ``results.json``."""
        (self.rwdir / "results.json").write_text(json.dumps(self.results, indent=1))
