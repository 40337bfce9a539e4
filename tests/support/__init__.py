"""Helpers shared by test files (of one room or several), and where the tests' files are.

Test modules import them as ``from support.fake_drm import FakeCard`` (``tests/`` is on
``sys.path``: pytest puts the folder of the root ``conftest.py`` there).
"""

from __future__ import annotations

import os
from pathlib import Path

#: The tests' folder and the repository's root (str: subprocess arguments and PYTHONPATH).
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
#: evemu recordings of real touch devices, replayed by the touch and CLI tests.
RECORDINGS = Path(__file__).parent / "recordings"
#: Python source for a child process's peak memory in KB: its own VmHWM. Not
#: ``ru_maxrss``, which after fork and exec starts at the parent's peak (a pytest worker
#: that already drew large pictures made a 60 MB child read as 670 MB).
PEAK_KB = "int(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')))"
