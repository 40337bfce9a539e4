"""DRM/KMS: displays through ``/dev/dri/cardN`` (``fbgfx.open("drm:...")``).

One idea a module: :mod:`~fbgfx.drm.card` (fourcc tables, the mode objects and
:class:`Card`, the card's ioctl wrapper, and :class:`CardLike`),
:mod:`~fbgfx.drm.discovery` (finding cards and displays, ``drm:`` specs,
:func:`read_scanout`), :mod:`~fbgfx.drm.choose` (connectors, modes and CRTCs for a
display), :mod:`~fbgfx.drm.buffers` (dumb buffers), :mod:`~fbgfx.drm.shared` (one card
shared by the displays of a program), :mod:`~fbgfx.drm.hotplug` (monitors that come and
go) and :mod:`~fbgfx.drm.device` (:class:`DrmDevice`, the ``drm:`` backend). Their public
names are re-exported here.
"""

from __future__ import annotations

from .atomic import PlaneInfo
from .card import (
    CONNECTOR_TYPES,
    DRI_DIR,
    FOURCC_FORMATS,
    Card,
    CardInfo,
    CardLike,
    Connector,
    CrtcState,
    DrmMode,
    Encoder,
    FbInfo,
    Plane,
    find_cards,
    fourcc,
    fourcc_name,
)
from .device import DIRTY_FULL_ROWS, FLIP_TIMEOUT, CardFactory, DrmDevice, DrmInfo
from .discovery import describe, find_display, is_drm_spec, parse_spec, probe, read_scanout

__all__ = [
    "CONNECTOR_TYPES",
    "DIRTY_FULL_ROWS",
    "DRI_DIR",
    "FLIP_TIMEOUT",
    "FOURCC_FORMATS",
    "Card",
    "CardFactory",
    "CardInfo",
    "CardLike",
    "Connector",
    "CrtcState",
    "DrmDevice",
    "DrmInfo",
    "DrmMode",
    "Encoder",
    "FbInfo",
    "Plane",
    "PlaneInfo",
    "describe",
    "find_cards",
    "find_display",
    "fourcc",
    "fourcc_name",
    "is_drm_spec",
    "parse_spec",
    "probe",
    "read_scanout",
]
