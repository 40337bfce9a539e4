"""A process's resident memory, as the leak tests compare it before and after.

``malloc_trim(0)`` first gives back what the C allocator holds free: memory that was freed
but kept in the heap's pools, more or less of it by where earlier tests left the heap's
holes. Without it a pytest worker late in a run read 48 MB of "growth" over 200 displays
opened and dropped, none of them alive; with it, what stays is what is still held.
"""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None)
#: glibc's; another C library keeps its own pools and is read as it is.
_trim = getattr(_libc, "malloc_trim", None)


def rss_mb() -> float:
    """This process's resident memory in MB, once the allocator has given back its free pools."""
    if _trim is not None:
        _trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
