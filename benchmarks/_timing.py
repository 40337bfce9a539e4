"""Timing shared by the benchmark scripts (imported from beside them: run the scripts
as ``python benchmarks/bench_*.py``, which puts this folder on ``sys.path``)."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def median(fn: Callable[[], Any], repeats: int, warmup: int = 2) -> float:
    """Median seconds of ``repeats`` hot calls of ``fn``, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
