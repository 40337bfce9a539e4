"""Mappings that survive their file being truncated: a framebuffer file's video memory.

Another program may truncate a framebuffer file while fbgfx has it mapped; touching a
page past the file's new end would kill the process with SIGBUS. A :class:`Guard`
registers the mapping with ``native/sigbus.c``, whose SIGBUS handler puts zero pages
over the whole mapping instead and marks it :attr:`~Guard.lost`: the access completes,
and fbgfx raises :class:`~fbgfx.errors.FramebufferError` where the frame, grab or
snapshot ends. This closes the window between checking the file's size and writing
(or reading) it, for every writer: C kernels, NumPy, other threads.
"""

from __future__ import annotations

from typing import Any

from .._ffi import ffi, lib

__all__ = ["Guard"]


class Guard:
    """One guarded mapping (a page-aligned ``mmap``), until :meth:`close`.

    Args:
        memory: The mapping (an object with the buffer protocol over all of it).
        writable: Whether it is mapped for writing (the zero pages get the same access).
    """

    def __init__(self, memory: Any, writable: bool) -> None:
        with memoryview(memory) as view:
            length = view.nbytes
        with ffi.from_buffer(memory) as base:  # released at once: the mmap can still close
            slot = lib.fbgfx_guard_add(base, length, int(writable))
        # No slot (thousands of mappings at once): unguarded, the size checks alone remain.
        self._slot = slot if slot >= 0 else -1
        self._lost = False

    @property
    def guarded(self) -> bool:
        """Whether the mapping is registered."""
        return self._slot >= 0

    @property
    def lost(self) -> bool:
        """True once an access found the file shorter than the mapping: the mapping now
        holds private zero pages, and the device is gone."""
        if not self._lost and self._slot >= 0 and lib.fbgfx_guard_lost(self._slot) == 1:
            self._lost = True
        return self._lost

    def close(self) -> bool:
        """Stop guarding (before the mapping is unmapped); safe twice. Returns :attr:`lost`."""
        slot, self._slot = self._slot, -1
        if slot >= 0 and lib.fbgfx_guard_remove(slot) == 1:
            self._lost = True
        return self._lost
