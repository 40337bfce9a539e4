"""Run a piece of a test in a forked child (what fbgfx objects do after fork)."""

from __future__ import annotations

import json
import os


def in_child(body):
    """Run ``body()`` in a forked child; returns what it returned (JSON) or raises its error."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            out = {"ok": body()}
        except BaseException as e:
            out = {"error": f"{type(e).__name__}: {e}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    result = json.loads(data)
    assert "error" not in result, result["error"]
    return result["ok"]
