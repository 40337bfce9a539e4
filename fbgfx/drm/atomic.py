"""Atomic KMS on an open card: object properties by name, property blobs, and commits
(``TEST_ONLY``, blocking, or non-blocking with a page-flip event).

:class:`Atomic` is what a ``drm:`` display uses where the driver has atomic
modesetting (``DRM_CLIENT_CAP_ATOMIC``): it lights a CRTC, flips its primary plane and
puts back what it showed, and the layers (:mod:`fbgfx.layer`) put their pictures on
overlay planes through it. :class:`PlaneInfo` is what ``fb.planes`` lists. The
structs and ioctl numbers come from ``native/drm_atomic.h``; no cdata leaves this
module.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .._ffi import ffi, lib
from ..errors import FramebufferError
from .card import Card, CardLike, DrmMode, address

__all__ = ["ATOMIC_ENV", "PLANE_TYPES", "Atomic", "Change", "PlaneInfo", "mode_blob", "plane_rect"]

#: ``$FBGFX_DRM_ATOMIC=0`` keeps ``drm:`` displays on legacy KMS (SETCRTC, PAGE_FLIP).
ATOMIC_ENV = "FBGFX_DRM_ATOMIC"
#: The plane ``type`` property's values.
PLANE_TYPES = {0: "overlay", 1: "primary", 2: "cursor"}

#: One object's part of a commit: (object id, {property name: value}).
Change = tuple[int, Mapping[str, int]]


@dataclass(frozen=True)
class PlaneInfo:
    """A display plane, as ``fb.planes`` lists it.

    Attributes:
        id: The plane's object id.
        type: ``"primary"``, ``"overlay"`` or ``"cursor"``.
        formats: The formats it scans out, as fourcc codes (``"AR24"``, ``"XR24"``),
            as ``fbgfx info`` prints them.
        in_use: It shows a framebuffer now (this program's or another's).
        crtc_id: The CRTC it shows on (0: none).
        blend: Its ``pixel blend mode`` (``"Pre-multiplied"``, ``"Coverage"``,
            ``"None"``), or ``""`` when it has no such property (premultiplied, as vkms).
        zpos: Its ``zpos`` where it has one, else None.
    """

    id: int
    type: str
    formats: tuple[str, ...]
    in_use: bool
    crtc_id: int = 0
    blend: str = ""
    zpos: int | None = None


@dataclass(frozen=True)
class _Property:
    id: int
    name: str
    enums: Mapping[str, int]


class Atomic:
    """Atomic modesetting on one card.

    Use :meth:`enable`. Property ids are read once per object and kept.

    Attributes:
        card: The card.
        lock: Held around a commit and the bookkeeping of what is in flight.
    """

    def __init__(self, card: Card) -> None:
        self.card = card
        self.path = card.path
        self.lock = threading.RLock()
        self._props: dict[int, dict[str, _Property]] = {}  # object id -> its properties
        self._types: dict[int, int] = {}  # object id -> DRM_MODE_OBJECT_*

    @classmethod
    def enable(cls, card: CardLike) -> Atomic | None:
        """Atomic modesetting on ``card`` where the driver has it (and
        ``$FBGFX_DRM_ATOMIC`` is not ``0``), else None."""
        if os.environ.get(ATOMIC_ENV, "").strip() == "0" or not isinstance(card, Card):
            return None
        if not card.set_client_cap(lib.DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1):
            return None
        if not card.set_client_cap(lib.DRM_CLIENT_CAP_ATOMIC, 1):
            return None
        return cls(card)

    # -- properties -------------------------------------------------------------------------------

    def values(self, obj_id: int, obj_type: int) -> dict[str, int]:
        """The current value of each property of an object, by name."""
        doing = "reading an object's properties (DRM_IOCTL_MODE_OBJ_GETPROPERTIES)"
        for _ in range(4):  # the count may grow between the two calls
            q = ffi.new("struct drm_mode_obj_get_properties *")
            q.obj_id, q.obj_type = obj_id, obj_type
            self.card.ioctl(lib.DRM_IOCTL_MODE_OBJ_GETPROPERTIES, q, doing)
            n = q.count_props
            ids = ffi.new("uint32_t[]", max(n, 1))
            vals = ffi.new("uint64_t[]", max(n, 1))
            q2 = ffi.new("struct drm_mode_obj_get_properties *")
            q2.obj_id, q2.obj_type, q2.count_props = obj_id, obj_type, n
            q2.props_ptr, q2.prop_values_ptr = address(ids), address(vals)
            self.card.ioctl(lib.DRM_IOCTL_MODE_OBJ_GETPROPERTIES, q2, doing)
            if q2.count_props <= n:
                break
        props = self._props.get(obj_id)
        if props is None:
            props = {}
            for i in range(min(n, q2.count_props)):
                p = self._property(int(ids[i]))
                props[p.name] = p
            self._props[obj_id] = props
            self._types[obj_id] = obj_type
        by_id = {p.id: name for name, p in props.items()}
        return {by_id[int(ids[i])]: int(vals[i]) for i in range(min(n, q2.count_props)) if int(ids[i]) in by_id}

    def _property(self, prop_id: int) -> _Property:
        doing = "reading a property (DRM_IOCTL_MODE_GETPROPERTY)"
        p = ffi.new("struct drm_mode_get_property *")
        p.prop_id = prop_id
        self.card.ioctl(lib.DRM_IOCTL_MODE_GETPROPERTY, p, doing)
        name = ffi.string(p.name).decode("ascii", "replace")
        enums: dict[str, int] = {}
        if p.flags & (lib.DRM_MODE_PROP_ENUM | lib.DRM_MODE_PROP_BITMASK) and p.count_enum_blobs:
            n = p.count_enum_blobs
            table = ffi.new("struct drm_mode_property_enum[]", n)
            vals = ffi.new("uint64_t[]", max(p.count_values, 1))
            p2 = ffi.new("struct drm_mode_get_property *")
            p2.prop_id, p2.count_enum_blobs, p2.enum_blob_ptr = prop_id, n, address(table)
            p2.count_values, p2.values_ptr = p.count_values, address(vals)
            self.card.ioctl(lib.DRM_IOCTL_MODE_GETPROPERTY, p2, doing)
            for i in range(min(n, p2.count_enum_blobs)):
                enums[ffi.string(table[i].name).decode("ascii", "replace")] = int(table[i].value)
        return _Property(prop_id, name, enums)

    def has(self, obj_id: int, obj_type: int, name: str) -> bool:
        """The object has a property ``name``."""
        if obj_id not in self._props:
            self.values(obj_id, obj_type)
        return name in self._props[obj_id]

    def enum_value(self, obj_id: int, obj_type: int, name: str, choice: str) -> int | None:
        """The value of enum property ``name``'s ``choice`` on an object, or None."""
        if obj_id not in self._props:
            self.values(obj_id, obj_type)
        prop = self._props[obj_id].get(name)
        return None if prop is None else prop.enums.get(choice)

    def enum_name(self, obj_id: int, obj_type: int, name: str, value: int) -> str:
        """The name of value ``value`` of enum property ``name`` ("" when unknown)."""
        if obj_id not in self._props:
            self.values(obj_id, obj_type)
        prop = self._props[obj_id].get(name)
        if prop is None:
            return ""
        return next((k for k, v in prop.enums.items() if v == value), "")

    # -- planes --------------------------------------------------------------------------------

    def planes(self) -> list[PlaneInfo]:
        """Every plane of the card with its type, formats and state."""
        out = []
        for plane in self.card.planes():
            vals = self.values(plane.id, lib.DRM_MODE_OBJECT_PLANE)
            kind = PLANE_TYPES.get(vals.get("type", 0), "overlay")
            blend, mode = "", vals.get("pixel blend mode")
            if mode is not None:
                blend = self.enum_name(plane.id, lib.DRM_MODE_OBJECT_PLANE, "pixel blend mode", mode)
            out.append(
                PlaneInfo(
                    plane.id,
                    kind,
                    plane.formats,
                    bool(vals.get("FB_ID", plane.fb_id)),
                    vals.get("CRTC_ID", plane.crtc_id),
                    blend,
                    vals.get("zpos"),
                )
            )
        return out

    def possible(self, crtc_index: int) -> set[int]:
        """Ids of the planes that can show on the CRTC of index ``crtc_index``."""
        bit = 1 << crtc_index
        return {p.id for p in self.card.planes() if p.possible_crtcs & bit}

    # -- blobs and commits -------------------------------------------------------------------------

    def create_blob(self, data: bytes) -> int:
        """A property blob holding ``data``; its id."""
        buf = ffi.from_buffer(data)
        doing = "creating a property blob (DRM_IOCTL_MODE_CREATEPROPBLOB)"
        b = self.card.call(
            lib.DRM_IOCTL_MODE_CREATEPROPBLOB, "drm_mode_create_blob", doing, data=address(buf), length=len(data)
        )
        return int(b.blob_id)

    def destroy_blob(self, blob_id: int) -> None:
        """Free a property blob (a CRTC using it keeps its copy)."""
        doing = "freeing a property blob (DRM_IOCTL_MODE_DESTROYPROPBLOB)"
        self.card.call(lib.DRM_IOCTL_MODE_DESTROYPROPBLOB, "drm_mode_destroy_blob", doing, blob_id=blob_id)

    def commit(
        self,
        changes: Iterable[Change],
        *,
        test: bool = False,
        modeset: bool = False,
        event: int | None = None,
        doing: str = "an atomic commit",
    ) -> None:
        """Commit property changes atomically.

        Args:
            changes: (object id, {property name: value}) each; the objects' types must
                be known (their properties read once: :meth:`values`).
            test: ``TEST_ONLY``: ask whether the driver takes it, change nothing.
            modeset: Allow a full modeset (``ALLOW_MODESET``).
            event: Commit without blocking and send a page-flip event with this
                user_data when it is on screen.
            doing: What the commit does, for the error.

        Raises:
            FramebufferError: The driver refused (``EINVAL``, ``ERANGE``, ``ENOSPC``
                for bandwidth, ``EBUSY`` while a commit is in flight).
        """
        items = [(obj, dict(props)) for obj, props in changes if props]
        objs, counts, ids, vals = [], [], [], []
        for obj, props in items:
            known = self._props.get(obj)
            if known is None:
                raise ValueError(f"object {obj}: read its properties first")
            objs.append(obj)
            counts.append(len(props))
            for name, value in props.items():
                prop = known.get(name)
                if prop is None:
                    raise FramebufferError(errno.EINVAL, f"{doing}: object {obj} has no property {name!r}", self.path)
                ids.append(prop.id)
                vals.append(int(value) & 0xFFFFFFFFFFFFFFFF)
        c_objs = ffi.new("uint32_t[]", objs or [0])
        c_counts = ffi.new("uint32_t[]", counts or [0])
        c_ids = ffi.new("uint32_t[]", ids or [0])
        c_vals = ffi.new("uint64_t[]", vals or [0])
        a = ffi.new("struct drm_mode_atomic *")
        flags = 0
        if test:
            flags |= lib.DRM_MODE_ATOMIC_TEST_ONLY
        if modeset:
            flags |= lib.DRM_MODE_ATOMIC_ALLOW_MODESET
        if event is not None and not test:
            flags |= lib.DRM_MODE_ATOMIC_NONBLOCK | lib.DRM_MODE_PAGE_FLIP_EVENT
            a.user_data = event
        a.flags, a.count_objs = flags, len(objs)
        a.objs_ptr, a.count_props_ptr = address(c_objs), address(c_counts)
        a.props_ptr, a.prop_values_ptr = address(c_ids), address(c_vals)
        self.card.ioctl(lib.DRM_IOCTL_MODE_ATOMIC, a, f"{doing} (DRM_IOCTL_MODE_ATOMIC)")

    def refusal(self, changes: Iterable[Change], *, modeset: bool = False, doing: str = "a TEST_ONLY commit") -> str:
        """Why the driver would refuse ``changes`` ("" when it takes them), asked with
        a ``TEST_ONLY`` commit."""
        try:
            self.commit(changes, test=True, modeset=modeset, doing=doing)
        except FramebufferError as e:
            name = errno.errorcode.get(e.errno or 0, str(e.errno))
            why = "not enough display bandwidth" if e.errno == errno.ENOSPC else "refused"
            return f"the driver {why} ({name}) in a TEST_ONLY commit"
        return ""


def mode_blob(atomic: Atomic, mode: DrmMode) -> int:
    """A property blob holding ``mode`` (a ``struct drm_mode_modeinfo``), for ``MODE_ID``."""
    c = ffi.new("struct drm_mode_modeinfo *")
    for f in dataclasses.fields(mode):
        if f.name != "name":
            setattr(c, f.name, int(getattr(mode, f.name)))
    c.name = mode.name.encode("ascii", "replace")[:31]
    return atomic.create_blob(bytes(ffi.buffer(c)))


def plane_rect(x: int, y: int, w: int, h: int, sw: int, sh: int) -> dict[str, int]:
    """A plane's position properties: ``sw`` x ``sh`` of its framebuffer (unscaled when
    the same as ``w`` x ``h``) shown at (x, y), ``w`` x ``h`` on the CRTC."""
    return {
        "SRC_X": 0,
        "SRC_Y": 0,
        "SRC_W": sw << 16,
        "SRC_H": sh << 16,
        "CRTC_X": x & 0xFFFFFFFF,
        "CRTC_Y": y & 0xFFFFFFFF,
        "CRTC_W": w,
        "CRTC_H": h,
    }
