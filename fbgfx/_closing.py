"""What every fbgfx object that holds a device or a file does in a ``with`` block."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["ClosesOnExit"]

_Self = TypeVar("_Self", bound="ClosesOnExit")


class ClosesOnExit:
    """``with obj:`` gives ``obj`` and calls ``obj.close()`` at the end of the block,
    also when it ends by an exception (which goes on)."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds; the classes that mix this in say what."""
        raise NotImplementedError

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
