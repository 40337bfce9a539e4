"""Choosing what a ``drm:`` display drives: its connectors, a mode they all offer, a CRTC
for each. Pure decisions over what the card listed; nothing here changes the card.
"""

from __future__ import annotations

import errno
from collections.abc import Collection, Sequence
from dataclasses import replace

from ..errors import FramebufferError, ModeError
from .card import CardLike, Connector, DrmMode
from .discovery import parse_mode_option

__all__ = [
    "common_sizes",
    "encoder_crtc",
    "mode_for_size",
    "mode_listing",
    "pick_connectors",
    "pick_crtc",
    "pick_modes",
    "shared_modes",
    "without_sizeless_modes",
]


def pick_connectors(
    connectors: Sequence[Connector], names: Sequence[str], busy: Collection[str], path: str
) -> list[Connector]:
    """The connectors named (``HDMI-A-1``; several: a mirror), else the first connected
    one this program does not show on yet.

    Raises:
        FramebufferError: A name the card does not have (the message lists its
            connectors), one with nothing connected and no modes, one this program
            already shows on (``EBUSY``), or no connected connector is free.
    """
    listing = ", ".join(f"{c.name} ({_state(c)})" for c in connectors) or "none"
    if names:
        chosen = []
        for name in names:
            match = [c for c in connectors if c.name == name]
            if not match:
                raise FramebufferError(errno.ENODEV, f"no connector {name!r}; connectors: {listing}", path)
            c = match[0]
            if name in busy:
                raise FramebufferError(
                    errno.EBUSY,
                    f"connector {name} is already open in this program: close that display first "
                    "(to show one picture on several connectors, name them together: connector=A,B)",
                    path,
                )
            if not c.connected and not c.modes:
                raise FramebufferError(errno.ENODEV, f"connector {name} has no display connected", path)
            if c in chosen:
                raise FramebufferError(errno.EINVAL, f"connector {name} is named twice", path)
            chosen.append(c)
        return chosen
    for c in connectors:
        if c.connected and c.modes and c.name not in busy:
            return [c]
    if any(c.connected and c.modes for c in connectors):
        raise FramebufferError(
            errno.EBUSY, f"every connected display is already open in this program; connectors: {listing}", path
        )
    if any(c.connected for c in connectors):
        raise FramebufferError(
            errno.ENODEV,
            "no connected display lists a mode (the driver could not read one from the monitor); "
            f"connectors: {listing}",
            path,
        )
    raise FramebufferError(errno.ENODEV, f"no connected display; connectors: {listing}", path)


def _state(c: Connector) -> str:
    """How a connector is, for listings: a connected one without modes says so."""
    if not c.connected:
        return "disconnected"
    return "connected" if c.modes else "connected, no modes"


def without_sizeless_modes(connectors: Sequence[Connector], path: str) -> list[Connector]:
    """The connectors without the modes of no size a driver may list (they cannot be
    shown, and a pitch of 0 divides nothing).

    Raises:
        ModeError: Every connected connector lists only such modes.
    """
    cleaned = [replace(c, modes=tuple(m for m in c.modes if m.hdisplay > 0 and m.vdisplay > 0)) for c in connectors]
    if any(c.connected and c.modes for c in connectors) and not any(c.connected and c.modes for c in cleaned):
        listing = "; ".join(f"{c.name}: {mode_listing(c.modes)}" for c in connectors if c.modes)
        raise ModeError(errno.EINVAL, f"the driver lists only modes of no size ({listing})", path)
    return cleaned


def common_sizes(connectors: Sequence[Connector]) -> list[tuple[int, int]]:
    """The (width, height) every connector offers, in the first one's order."""
    sizes: list[tuple[int, int]] = []
    for m in connectors[0].modes if connectors else ():
        size = (m.hdisplay, m.vdisplay)
        if size not in sizes and all(any((o.hdisplay, o.vdisplay) == size for o in c.modes) for c in connectors[1:]):
            sizes.append(size)
    return sizes


def shared_modes(connectors: Sequence[Connector]) -> list[DrmMode]:
    """The first connector's modes whose size every connector offers."""
    sizes = common_sizes(connectors)
    return [m for m in connectors[0].modes if (m.hdisplay, m.vdisplay) in sizes] if connectors else []


def mode_for_size(connector: Connector, width: int, height: int, hz: int | None = None) -> DrmMode | None:
    """The connector's mode of this size (at ``hz`` when given): its preferred mode when
    that is the size, else the first listed (the kernel lists higher rates first)."""
    fits = [m for m in connector.modes if (m.hdisplay, m.vdisplay) == (width, height) and hz in (None, m.vrefresh)]
    return next((m for m in fits if m.preferred), fits[0] if fits else None)


def pick_modes(connectors: Sequence[Connector], text: str | None, path: str) -> list[DrmMode]:
    """A mode for each connector, all of one size: ``text`` (``"WxH[@HZ]"``), else the
    preferred mode of a single connector, else the largest size a mirror's all offer.

    Raises:
        ModeError: ``text`` is not a mode of the connector (or of every connector of a
            mirror), or a mirror's connectors share no size; the message lists what
            there is.
    """
    names = " and ".join(c.name for c in connectors)
    sizes = common_sizes(connectors)
    if not sizes:
        raise ModeError(
            errno.EINVAL,
            f"{names} share no mode: "
            + "; ".join(f"{c.name} offers {mode_listing(c.modes) or 'none'}" for c in connectors),
            path,
            {},
        )
    if text is not None:
        w, h, hz = parse_mode_option(text)
        modes = [mode_for_size(c, w, h, hz) for c in connectors]
        found = [m for m in modes if m is not None]
        if len(found) == len(connectors):
            return found
        if len(connectors) == 1:
            what = f"{text} is not a mode of {names}; its modes: {mode_listing(connectors[0].modes)}"
        else:
            what = f"{text} is not a mode {names} all offer; they share: {mode_listing(shared_modes(connectors))}"
        raise ModeError(errno.EINVAL, what, path, {"xres": w, "yres": h})
    if len(connectors) == 1:
        c = connectors[0]
        return [next((m for m in c.modes if m.preferred), c.modes[0])]
    w, h = max(sizes, key=lambda s: s[0] * s[1])
    return [m for m in (mode_for_size(c, w, h) for c in connectors) if m is not None]


def mode_listing(modes: Sequence[DrmMode]) -> str:
    """``"1280x800@60, 1024x768@75, ..."`` without repeats."""
    seen: list[str] = []
    for m in modes:
        if str(m) not in seen:
            seen.append(str(m))
    return ", ".join(seen)


def pick_crtc(
    card: CardLike,
    connector: Connector,
    crtc_ids: Sequence[int],
    connectors: Sequence[Connector],
    taken: Collection[int],
    path: str,
) -> int:
    """A CRTC for ``connector``: the one driving it now unless another display of this
    program has it, else a free one its encoders can use.

    Raises:
        FramebufferError: No CRTC is free for it.
    """
    if connector.encoder_id:
        crtc = encoder_crtc(card, connector.encoder_id)
        if crtc and crtc not in taken:
            return crtc
    busy = {encoder_crtc(card, c.encoder_id) for c in connectors if c.id != connector.id and c.encoder_id}
    for enc_id in connector.encoders:
        try:
            enc = card.encoder(enc_id)
        except FramebufferError:
            continue
        for index, crtc in enumerate(crtc_ids):
            if enc.possible_crtcs & (1 << index) and crtc not in busy and crtc not in taken:
                return int(crtc)
    raise FramebufferError(errno.ENODEV, f"no CRTC is free to drive connector {connector.name}", path)


def encoder_crtc(card: CardLike, encoder_id: int) -> int:
    """The CRTC an encoder is on (0: none, or unreadable)."""
    try:
        return int(card.encoder(encoder_id).crtc_id)
    except FramebufferError:
        return 0
