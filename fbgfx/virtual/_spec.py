"""What a virtual framebuffer may be: its options (:class:`VirtualOptions`), their limits,
and the ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]`` spec that names them.

:mod:`fbgfx.virtual` builds the device from these; the framebuffer file keeps the
options a device was created with in its state file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np

from ..pixelformat import FORMATS, PixelFormat

__all__ = ["MAX_MEMORY", "MAX_SIDE", "MODE_POLICIES", "VirtualOptions", "parse_spec"]

#: How a virtual device answers a mode change: apply it (legacy fbdev such as vfb),
#: refuse it with EINVAL (DRM fbdev emulation), or accept it into var without
#: showing it (what bochs DRM does for smaller modes).
MODE_POLICIES = ("allow", "refuse", "ignore")

#: The largest width or height, visible or virtual, of a virtual framebuffer.
MAX_SIDE = 1 << 16
#: The most video memory a virtual framebuffer may have (bytes).
MAX_MEMORY = 1 << 31

PathArg = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class VirtualOptions:
    """How a virtual device behaves beyond its size and format.

    Attributes:
        virtual_width, virtual_height: Virtual size (default: the visible size).
        memory: Bytes of video memory (default: room for two visible pages, at most
            :data:`MAX_MEMORY`).
        stride_align: ``line_length`` is rounded up to this many bytes (4, as vfb).
        line_length: A fixed stride instead, e.g. to imitate a padded DRM buffer; at
            least one row of the virtual width.
        can_pan: Whether panning works (``ypanstep`` 1, else 0).
        modes: ``"allow"``, ``"refuse"`` or ``"ignore"`` mode changes (see
            :data:`MODE_POLICIES`).
        can_vsync: Whether ``FBIO_WAITFORVSYNC`` works (sleeps to the next 60 Hz tick).
        can_blank: Whether ``FBIOBLANK`` works.
        file: Keep video memory in this framebuffer file, so other processes can open
            the same device (see :mod:`fbgfx.virtual._file`): created when nothing
            exists there, taken as it is (with its own size, format and options) when
            it is a framebuffer file, refused otherwise.
        id: The driver name in ``fix.id``.
        mode_list: The modes :meth:`fbgfx.Framebuffer.modes` lists, as mode strings (a
            list, or one string separated by commas); default: the starting mode.
    """

    virtual_width: int | None = None
    virtual_height: int | None = None
    memory: int | None = None
    stride_align: int = 4
    line_length: int | None = None
    can_pan: bool = True
    modes: str = "allow"
    can_vsync: bool = False
    can_blank: bool = False
    file: PathArg | None = None
    id: str = "fbgfx virtual"
    mode_list: str | Sequence[str] | None = None

    def check(self, width: Any, height: Any, fmt: PixelFormat, label: Callable[[str], str] = str) -> None:
        """Refuse values no driver would have.

        Args:
            width, height: The visible size the options go with.
            fmt: The pixel format they go with.
            label: The option's name as the caller gave it (a spec's ``vh`` for
                ``virtual_height``), for the message.

        Raises:
            ValueError: A value out of range; the message names the option.
        """

        def positive(name: str, value: Any, limit: int) -> int:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 < value <= limit:
                raise ValueError(f"{label(name)} must be an integer from 1 to {limit}, not {value!r}")
            return int(value)

        width = positive("width", width, MAX_SIDE)
        height = positive("height", height, MAX_SIDE)
        vw, vh = self.virtual_width, self.virtual_height
        if vw is not None and positive("virtual_width", vw, MAX_SIDE) < width:
            raise ValueError(f"{label('virtual_width')}={vw} is below the visible width {width}")
        if vh is not None and positive("virtual_height", vh, MAX_SIDE) < height:
            raise ValueError(f"{label('virtual_height')}={vh} is below the visible height {height}")
        if self.stride_align is not None:
            positive("stride_align", self.stride_align, MAX_SIDE)
        line = self.line_length
        if line is not None:
            row = fmt.row_bytes(int(vw or width))
            if positive("line_length", line, MAX_MEMORY) < row:
                raise ValueError(
                    f"{label('line_length')}={line} is smaller than one row of {vw or width} {fmt.name} "
                    f"pixels ({row} bytes)"
                )
        if self.memory is not None:
            positive("memory", self.memory, MAX_MEMORY)
        if self.modes not in MODE_POLICIES:
            raise ValueError(f"{label('modes')} must be one of {', '.join(MODE_POLICIES)}, not {self.modes!r}")
        file = self.file
        if file is not None and (not isinstance(file, (str, os.PathLike)) or not os.fspath(file)):
            raise ValueError(f"{label('file')} must be a path, not {file!r}")

    def replace(self, **changes: Any) -> VirtualOptions:
        """Return a copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def kept(self, width: int, height: int, fmt: PixelFormat) -> VirtualOptions:
        """The options as a device of this size and format keeps them (and its state
        file): the values in their types, the mode list a list (default: the starting
        mode), without the sizes and file it was made with. ``memory`` stays as given."""
        modes = self.mode_list
        if isinstance(modes, str):
            modes = [m for m in modes.split(",") if m]
        return VirtualOptions(
            memory=self.memory,
            stride_align=int(self.stride_align),
            line_length=None if self.line_length is None else int(self.line_length),
            can_pan=bool(self.can_pan),
            modes=self.modes,
            can_vsync=bool(self.can_vsync),
            can_blank=bool(self.can_blank),
            id=str(self.id),
            mode_list=list(modes) if modes else [f"{width}x{height}-{fmt.bpp}"],
        )


_OPTION_TYPES: dict[str, type] = {
    "virtual_width": int,
    "virtual_height": int,
    "memory": int,
    "stride_align": int,
    "line_length": int,
    "can_pan": bool,
    "can_vsync": bool,
    "can_blank": bool,
    "modes": str,
    "file": str,
    "id": str,
    "mode_list": str,
}
_OPTION_ALIASES = {
    "vw": "virtual_width",
    "vh": "virtual_height",
    "stride": "line_length",
    "align": "stride_align",
    "pan": "can_pan",
    "vsync": "can_vsync",
    "blank": "can_blank",
    "modelist": "mode_list",
}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def parse_spec(spec: str) -> tuple[int, int, str, VirtualOptions]:
    """Parse ``virtual:WIDTHxHEIGHT[:FORMAT][:key=value...]``.

    Keys are :class:`VirtualOptions` fields (``pan=0``, ``modes=refuse``,
    ``vh=960``, ``stride=1664``, ``memory=4194304``, ``file=/tmp/fb.raw`` ...), each
    given at most once; yes/no options take 1/0, true/false, yes/no or on/off.

    Returns:
        (width, height, format name, options).

    Raises:
        ValueError: The spec cannot be parsed, or a value is out of range; the
            message names the key.
    """
    parts = _split(spec)
    if parts[0] != "virtual":
        raise ValueError(f"not a virtual framebuffer spec: {spec!r}")
    size = parts[1] if len(parts) > 1 and parts[1] else "800x480"
    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError:
        raise ValueError(f"bad size {size!r} in {spec!r}: expected WIDTHxHEIGHT, e.g. virtual:800x480:RGB565") from None
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ValueError(f"bad size {size!r} in {spec!r}: width and height must be 1..{MAX_SIDE}")
    fmt: str | None = None
    options: dict[str, Any] = {}
    given: dict[str, str] = {}  # option -> the key the spec used for it
    for part in parts[2:]:
        if "=" not in part:
            name = PixelFormat.from_name(part).name
            if fmt is not None:
                raise ValueError(f"two pixel formats ({fmt} and {name}) in {spec!r}: give one")
            fmt = name
            continue
        key, value = part.split("=", 1)
        option = _OPTION_ALIASES.get(key, key)
        kind = _OPTION_TYPES.get(option)
        if kind is None:
            raise ValueError(f"unknown virtual framebuffer option {key!r} in {spec!r}")
        if option in given:
            first = given[option]
            raise ValueError(
                f"option {key!r} given twice in {spec!r}"
                if first == key
                else f"options {first!r} and {key!r} both set {option} in {spec!r}: give one"
            )
        given[option] = key
        options[option] = _value(kind, key, value, spec)
    fmt = fmt or "XRGB8888"
    result = VirtualOptions(**options)
    try:
        result.check(width, height, FORMATS[fmt], lambda option: given.get(option, option))
    except ValueError as e:
        raise ValueError(f"{e} in {spec!r}") from None
    return width, height, fmt, result


def _value(kind: type, key: str, value: str, spec: str) -> Any:
    """One spec value as its option's type."""
    if kind is bool:
        if value.lower() not in _TRUE + _FALSE:
            raise ValueError(f"bad value {value!r} for {key!r} in {spec!r}: use 1 or 0")
        return value.lower() in _TRUE
    if kind is int:
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"bad value {value!r} for {key!r} in {spec!r}: expected an integer") from None
    return value


def _split(spec: str) -> list[str]:
    """``spec``'s ``:``-separated parts, where ``\\:`` is a ``:`` inside a part (a
    ``file=`` path holding one) and ``\\\\`` a backslash."""
    parts, part, chars = [], [], iter(spec)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            if nxt in (":", "\\"):
                part.append(nxt)
                continue
            part.append(ch + nxt)
        elif ch == ":":
            parts.append("".join(part))
            part = []
        else:
            part.append(ch)
    parts.append("".join(part))
    return parts
