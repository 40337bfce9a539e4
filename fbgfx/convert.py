"""Pixel conversion and blending between RGB(A) images and native pixel formats.

These are the hot loops under :class:`~fbgfx.Surface` drawing and ``Screen.present``:
turning any image into RGB(A) bytes (:func:`as_rgb`), writing RGB(A) into native memory
with optional source-over blending (:func:`to_native`), reading it back
(:func:`from_native`), blending antialiased coverage masks (:func:`blend_mask`) and
filling (:func:`fill`). Destinations may be strided views (video memory rows
``line_length`` apart, subsurfaces); nothing outside the given array is ever touched.

Every function gives the same pixels as :meth:`PixelFormat.pack` /
:meth:`PixelFormat.unpack`: channels are truncated to their bit length (8 -> 5 bits is
``>> 3``), gray levels are ITU-R 601 luma, palette formats take the nearest entry.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import PIL

from . import pixelformat as _pf
from ._ffi import check_value, ffi, lib
from .color import parse_color
from .pixelformat import PixelFormat, default_palette

# True: the C kernels do the work where they can; tests set it False to check the NumPy
# reference paths, which formats the kernels do not cover always take.
_C = True
_UINT8 = np.dtype(np.uint8)  # (the dtype of uint8 arrays, as a rule: compared by identity first)

__all__ = ["as_rgb", "blend_mask", "fill", "from_native", "has_alpha", "to_native"]

# -- input normalisation --------------------------------------------------------------

_ALPHA_MODES = {"RGBA", "LA", "PA", "RGBa", "La"}


def has_alpha(image: Any) -> bool:
    """Whether a PIL image has transparency: an alpha mode, or a transparent colour key
    or palette entry (``info["transparency"]``)."""
    return image.mode in _ALPHA_MODES or "transparency" in image.info


def as_rgb(source: Any) -> np.ndarray:
    """Turn an image into RGB or RGBA uint8 pixels.

    Args:
        source: A PIL image of any mode, or a NumPy array: (h, w) gray uint8,
            (h, w, 3) RGB uint8 or (h, w, 4) RGBA uint8. Palette images with a
            transparent entry, and L/RGB images with a transparency key, give RGBA.
            16-bit images (``I;16`` modes) are scaled to 8 bits; ``I`` and ``F``
            images are clipped to 0..255 as Pillow's ``convert`` does.

    Returns:
        A (h, w, 3) or (h, w, 4) uint8 array; (h, w, 4) only when the source has
        alpha. Arrays that already have that form are returned as they are (no copy).
        For RGB and RGBA images this is a read-only view of Pillow's own memory when
        Pillow can export it (Arrow C data interface), so later changes to the image
        show through; copy it to keep a snapshot.

    Raises:
        TypeError: The source is neither a PIL image nor a NumPy array, or the array
            is not uint8.
        ValueError: The array's shape is not one of the above.
    """
    if isinstance(source, np.ndarray):
        return _array_as_rgb(source)
    from PIL import Image  # noqa: PLC0415 (Pillow is a dependency; imported here as it was before)

    if not isinstance(source, Image.Image):
        raise TypeError(f"expected a PIL image or a NumPy uint8 array, got {type(source).__name__}")
    return _image_as_rgb(source)


def _array_as_rgb(a: np.ndarray) -> np.ndarray:
    if a.dtype is not _UINT8 and a.dtype != np.uint8:
        raise TypeError(f"image arrays must be uint8, got dtype {a.dtype}")
    if a.ndim == 2:
        return np.repeat(a[:, :, None], 3, axis=2)
    if a.ndim == 3 and a.shape[2] in (3, 4):
        return a
    if a.ndim == 3 and a.shape[2] == 1:
        return np.repeat(a, 3, axis=2)
    raise ValueError(f"image arrays must be (h, w) gray, (h, w, 3) RGB or (h, w, 4) RGBA, got shape {a.shape}")


def _image_as_rgb(im: Any) -> np.ndarray:
    mode = im.mode
    if mode in ("RGB", "RGBA"):
        shared = _pillow_pixels(im)
        if shared is not None:
            return shared if mode == "RGBA" else shared[..., :3]
        return np.asarray(im)
    if mode.startswith("I;16"):
        # 16-bit samples use the full 0..65535 range: keep the top 8 bits.
        levels = (np.asarray(im).astype(np.uint32) >> 8).astype(np.uint8)
        return np.repeat(levels[:, :, None], 3, axis=2)
    if mode == "La":
        # Premultiplied gray + alpha: Pillow has no converter for it.
        la = np.asarray(im).astype(np.uint32)
        a = la[..., 1]
        lum = np.where(a > 0, (la[..., 0] * 255 + a // 2) // np.maximum(a, 1), 0)
        lum = np.minimum(lum, 255).astype(np.uint8)
        return np.stack([lum, lum, lum, a.astype(np.uint8)], axis=-1)
    return np.asarray(im.convert("RGBA" if has_alpha(im) else "RGB"))


class _PillowPixels:
    """Pillow's own pixel memory, exported zero-copy through the Arrow C data interface.

    Pillow keeps RGB pixels as 4 bytes (R, G, B, padding) and RGBA as 4 bytes; reading
    them in place saves ``tobytes()``, a full extra copy of every image shown. NumPy
    holds this object as the array's base, which keeps the export (and so the image
    memory) alive as long as any view of it.
    """

    def __init__(self, image: Any, capsule: Any, address: int, shape: tuple[int, ...]) -> None:
        self._keep = (image, capsule)
        self.__array_interface__ = {
            "shape": shape,
            "typestr": "|u1",
            "data": (address, True),
            "version": 3,
        }


def _capsule_function() -> Any:
    """CPython's ``PyCapsule_GetPointer`` through ctypes: a call into the interpreter that
    needs the GIL, which cffi releases around its calls."""
    import ctypes  # noqa: PLC0415 (ctypes only for Pillow's Arrow export)

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get


_capsule_pointer: Any
try:
    _capsule_pointer = _capsule_function()
except (ImportError, AttributeError):  # pragma: no cover - not CPython
    _capsule_pointer = None


def _arrow_rgba_buffer(schema_capsule: Any, array_capsule: Any, pixels: int) -> int | None:
    """Address of the pixel bytes when Pillow exported 4 bytes a pixel in one block (the
    structs of the Arrow C data interface: native/arrow.h)."""
    try:
        schema = ffi.cast("struct ArrowSchema *", _capsule_pointer(schema_capsule, b"arrow_schema"))
        array = ffi.cast("struct ArrowArray *", _capsule_pointer(array_capsule, b"arrow_array"))
    except (ValueError, TypeError):  # a capsule of another name
        return None
    if ffi.string(schema.format) != b"+w:4" or schema.n_children != 1 or ffi.string(schema.children[0].format) != b"C":
        return None
    if array.length != pixels or array.offset != 0 or array.n_children != 1:
        return None
    child = array.children[0]
    if child.length != 4 * pixels or child.offset != 0 or child.n_buffers != 2 or child.buffers[1] == ffi.NULL:
        return None
    return int(ffi.cast("uintptr_t", child.buffers[1]))


# Pillow before 13 segfaults in __arrow_c_array__ on an image whose memory it borrows
# (Image.fromarray, Image.frombuffer: im.readonly); those take the copying path there.
_OLD_ARROW = tuple(int(p) for p in PIL.__version__.split(".")[:2]) < (13, 0)


def _pillow_pixels(im: Any) -> np.ndarray | None:
    """A read-only (h, w, 4) view of an RGB/RGBA image's memory, or None."""
    export = getattr(im, "__arrow_c_array__", None)
    if export is None or _capsule_pointer is None:
        return None
    if im.readonly and _OLD_ARROW:
        return None  # Pillow 11.2-12.x crash exporting memory borrowed from a buffer
    try:
        schema_capsule, array_capsule = export()
    except Exception:  # noqa: BLE001 - e.g. an image in several blocks: take the copying path
        return None
    address = _arrow_rgba_buffer(schema_capsule, array_capsule, im.width * im.height)
    if address is None:
        return None
    return np.asarray(_PillowPixels(im, (schema_capsule, array_capsule), address, (im.height, im.width, 4)))


def _in_pillow(a: np.ndarray) -> bool:
    """True for views of Pillow memory from :func:`as_rgb` (4 bytes behind every pixel)."""
    base = a.base
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, _PillowPixels)


def _check_src(src: Any) -> np.ndarray:
    if not isinstance(src, np.ndarray):
        raise TypeError(f"src must be a NumPy array, got {type(src).__name__}")
    if src.dtype != np.uint8:
        raise TypeError(f"src must be uint8 RGB or RGBA, got dtype {src.dtype}")
    if src.ndim != 3 or src.shape[2] not in (3, 4):
        raise ValueError(f"src must be (h, w, 3) RGB or (h, w, 4) RGBA, got shape {src.shape}")
    return src


def _check_out(out: Any, fmt: PixelFormat, height: int, width: int) -> np.ndarray:
    if not isinstance(fmt, PixelFormat):
        raise TypeError(f"fmt must be a PixelFormat, got {type(fmt).__name__}")
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
    if out.dtype != fmt.dtype:
        raise TypeError(f"out must have dtype {fmt.dtype} for {fmt.name}, got {out.dtype}")
    want = fmt.array_shape(height, width)
    if out.shape != want:
        raise ValueError(f"out must have shape {want} for {fmt.name}, got {out.shape}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _palette_of(fmt: PixelFormat, palette: Any) -> np.ndarray | None:
    if not fmt.indexed:
        return None
    if palette is None:
        return default_palette(fmt.bpp)
    return check_palette(palette)


def check_palette(palette: Any, entries: int = 256) -> np.ndarray:
    """A colour map as a C-contiguous (n, 3) uint8 array, or ValueError.

    Args:
        palette: (n, 3) or (n, 4) numbers (alpha is dropped), 1 <= n <= ``entries``:
            integers, or whole-valued floats, 0..255.
        entries: How many entries the format can index (``2 ** bpp``).

    Raises:
        ValueError: Another shape, NaN or infinity, fractions, values outside 0..255.
    """
    try:
        p = np.asarray(palette)
    except (ValueError, TypeError):  # ragged lists
        raise ValueError("palette must be an (n, 3) array of 0..255 values") from None
    if p.ndim != 2 or p.shape[1] not in (3, 4) or not 1 <= p.shape[0] <= entries:
        raise ValueError(f"palette must be (n, 3) with 1 <= n <= {entries}, got shape {p.shape}")
    if p.dtype != np.uint8:
        if p.dtype == bool or not (np.issubdtype(p.dtype, np.integer) or np.issubdtype(p.dtype, np.floating)):
            raise ValueError(f"palette entries must be numbers 0..255, got dtype {p.dtype}")
        with np.errstate(invalid="ignore"):
            bad = (
                ~np.isfinite(p) | (p < 0) | (p > 255) | (p != np.round(p))
                if p.dtype.kind == "f"
                else (p < 0) | (p > 255)
            )
        if bad.any():
            raise ValueError("palette entries must be whole numbers 0..255 (no NaN, infinity or fractions)")
    return np.ascontiguousarray(p[:, :3], np.uint8)


def _check_color(color: Sequence[int]) -> tuple[int, int, int, int]:
    """An (r, g, b[, a]) sequence by :func:`fbgfx.color.parse_color`'s rules (one copy)."""
    if isinstance(color, str) or not hasattr(color, "__len__"):
        raise TypeError(f"color must be a tuple (r, g, b[, a]) of ints, got {color!r}")
    try:
        return parse_color(color)
    except ValueError as e:
        raise ValueError(f"color must be (r, g, b[, a]) with values 0..255: {e}") from None
    except TypeError as e:
        raise TypeError(f"color must be a tuple (r, g, b[, a]) of numbers: {e}") from None


# -- conversion -----------------------------------------------------------------------


def to_native(src: np.ndarray, fmt: PixelFormat, out: np.ndarray, *, palette: Any = None, blend: bool = True) -> None:
    """Write RGB or RGBA pixels into native-format memory.

    Args:
        src: (h, w, 3) RGB or (h, w, 4) RGBA uint8, any strides.
        fmt: The native pixel format of ``out``.
        out: The destination, shape ``fmt.array_shape(h, w)`` and dtype ``fmt.dtype``;
            rows may be strided (a view of video memory or a subsurface).
        palette: For indexed formats, the (n, 3) uint8 colour map to match against;
            defaults to :func:`fbgfx.default_palette`.
        blend: With RGBA ``src``: blend source-over onto the pixels already in
            ``out`` (alpha 0 leaves a pixel untouched, 255 writes ``fmt.pack``'s
            value; formats with alpha store ``a + dst_a * (1 - a)``). False writes
            the alpha into formats that have it and ignores it otherwise.

    Raises:
        TypeError: Wrong array types or dtypes.
        ValueError: Shapes that do not match.
    """
    src = _check_src(src)
    h, w = src.shape[:2]
    out = _check_out(out, fmt, h, w)
    pal = _palette_of(fmt, palette)
    if h == 0 or w == 0:
        return
    rgba = src.shape[2] == 4
    # `spec` owns every buffer its C struct points into, and `src` and `out` own the
    # pixels: all stay referenced here until C returns, whatever other threads evict.
    spec = native_spec(fmt, pal, h * w)
    if spec is not None and _addressable(out, fmt):
        step = src.strides[1]
        if not (src.strides[2] == 1 and (step == src.shape[2] or (step == 4 and _in_pillow(src)))):
            src = np.ascontiguousarray(src)
            step = src.shape[2]
        if rgba and blend:
            rc = lib.convert_blend(_ptr(src), src.strides[0], _ptr(out), out.strides[0], w, h, spec.c)
        else:
            rc = lib.convert_pack(_ptr(src), src.strides[0], step, int(rgba), _ptr(out), out.strides[0], w, h, spec.c)
        check_value(rc, "to_native")
        return
    if rgba and blend:
        _blend_np(src[..., :3], src[..., 3], fmt, out, pal)
        return
    out[...] = fmt.pack(src, pal)


class FramePacker:
    """:func:`to_native` of whole RGB frames of one size into one format, with what
    holds for every frame checked once: a Screen converts each presented frame through
    one. Each call does the few checks that keep C inside the two arrays; anything
    unusual (another shape, strided pixels, RGBA, a format C does not pack) goes
    through :func:`to_native`.

    Args:
        fmt: The native pixel format of the destinations.
        palette: For indexed formats, the colour map (default :func:`fbgfx.default_palette`).
        height: Frame height in pixels.
        width: Frame width in pixels.
    """

    def __init__(self, fmt: PixelFormat, palette: Any, height: int, width: int) -> None:
        self.format, self.height, self.width = fmt, height, width
        self.palette = _palette_of(fmt, palette)
        self._spec = native_spec(fmt, self.palette, height * width) if height * width else None
        self._rgb_shape = (height, width, 3)
        self._shape, self._dtype = fmt.array_shape(height, width), fmt.dtype
        self._pixel_strides = (3, 1) if fmt.bpp == 24 else (self._dtype.itemsize,)
        self._rgb_row = 3 * width  # the row stride of a contiguous (height, width, 3) frame

    def __call__(self, src: np.ndarray, out: np.ndarray) -> None:
        """Write ``src`` ((height, width, 3) or (.., 4) uint8) into ``out`` (one frame
        of the format, rows any stride apart), as :func:`to_native` would."""
        spec = self._spec
        # each attribute read once (a frame's Python runs with the caches emptied by the last)
        s_strides, o_strides, o_flags = src.strides, out.strides, out.flags
        if (
            spec is None
            or not _C
            or src.shape != self._rgb_shape
            or s_strides[1:] != (3, 1)
            or s_strides[0] <= 0
            or (src.dtype is not _UINT8 and src.dtype != np.uint8)
            or out.shape != self._shape
            or out.dtype != self._dtype
            or o_strides[1:] != self._pixel_strides
            or not o_flags.aligned
            or not o_flags.writeable
        ):
            to_native(src, self.format, out, palette=self.palette)
            return
        # a contiguous array's pointer costs less through its buffer than its interface
        s = ffi.from_buffer("uint8_t[]", src) if s_strides[0] == self._rgb_row else _ptr(src)
        d = ffi.from_buffer("uint8_t[]", out, True) if o_flags.c_contiguous else _ptr(out)
        rc = lib.convert_pack(s, s_strides[0], 3, 0, d, o_strides[0], self.width, self.height, spec.c)
        if rc < 0:
            check_value(rc, "to_native")


def from_native(native: np.ndarray, fmt: PixelFormat, *, palette: Any = None, alpha: bool = False) -> np.ndarray:
    """Read native pixels as RGB (or RGBA) uint8, as :meth:`PixelFormat.unpack` does.

    Args:
        native: An array of shape ``fmt.array_shape(h, w)`` and dtype ``fmt.dtype``.
        fmt: Its pixel format.
        palette: For indexed formats, the (n, 3) colour map; defaults to
            :func:`fbgfx.default_palette`.
        alpha: Return (h, w, 4) RGBA; formats without alpha give 255.

    Returns:
        A new C-contiguous (h, w, 3) or (h, w, 4) uint8 array.
    """
    if not isinstance(native, np.ndarray):
        raise TypeError(f"native must be a NumPy array, got {type(native).__name__}")
    if native.ndim < 2:
        raise ValueError(f"native must be an (h, w) image, got shape {native.shape}")
    h, w = native.shape[:2]
    if not isinstance(fmt, PixelFormat):
        raise TypeError(f"fmt must be a PixelFormat, got {type(fmt).__name__}")
    if native.dtype != fmt.dtype:
        raise TypeError(f"native must have dtype {fmt.dtype} for {fmt.name}, got {native.dtype}")
    if native.shape != fmt.array_shape(h, w):
        raise ValueError(f"native must have shape {fmt.array_shape(h, w)} for {fmt.name}, got {native.shape}")
    pal = _palette_of(fmt, palette)
    spec = native_spec(fmt, pal, h * w)
    if spec is not None and _addressable(native, fmt):
        rgb = np.empty((h, w, 4 if alpha else 3), np.uint8)
        if h and w:
            check_value(
                lib.convert_unpack(
                    _ptr(native), native.strides[0], _ptr(rgb), rgb.strides[0], rgb.shape[2], w, h, spec.c
                ),
                "from_native",
            )
        return rgb
    return np.ascontiguousarray(fmt.unpack(native, pal, alpha=alpha))


def blend_mask(
    out: np.ndarray, mask: np.ndarray, color: Sequence[int], fmt: PixelFormat, *, palette: Any = None
) -> None:
    """Blend one colour into native pixels through an antialiased coverage mask.

    Each pixel becomes ``dst + (color - dst) * coverage * a / 255**2`` (rounded), so
    coverage 255 with alpha 255 writes exactly ``fmt.pack_color(color)`` and coverage
    0 leaves the pixel untouched. Used for glyphs and antialiased lines.

    Args:
        out: Native array, shape ``fmt.array_shape(h, w)``, any row stride.
        mask: (h, w) uint8 coverage, 0..255.
        color: (r, g, b) or (r, g, b, a) ints 0..255.
        fmt: The native pixel format of ``out``.
        palette: For indexed formats, the colour map (default
            :func:`fbgfx.default_palette`).
    """
    if not isinstance(mask, np.ndarray) or mask.dtype != np.uint8 or mask.ndim != 2:
        raise TypeError("mask must be an (h, w) uint8 NumPy array")
    h, w = mask.shape
    out = _check_out(out, fmt, h, w)
    r, g, b, a = _check_color(color)
    pal = _palette_of(fmt, palette)
    if h == 0 or w == 0 or a == 0:
        return
    exact = _packed_color(fmt, (r, g, b), None if pal is None else pal.tobytes())
    spec = native_spec(fmt, pal, h * w)
    if spec is not None and _addressable(out, fmt):
        if mask.strides[1] != 1:
            mask = np.ascontiguousarray(mask)
        check_value(
            lib.convert_blend_mask(
                _ptr(mask), mask.strides[0], _ptr(out), out.strides[0], w, h, r, g, b, a, exact, spec.c
            ),
            "blend_mask",
        )
        return
    k = (mask.astype(np.uint32) * a + 127) // 255
    rgb = np.broadcast_to(np.array([r, g, b], np.uint8), (h, w, 3))
    _blend_np(rgb, k.astype(np.uint8), fmt, out, pal, exact=exact)


def fill(out: np.ndarray, value: int) -> None:
    """Fill a native array with one packed pixel value, as memset would.

    Args:
        out: A native array (any strides). For 24 bpp, (h, w, 3) bytes and ``value``
            holds the three bytes little-endian (as :meth:`PixelFormat.pack_color`
            returns them).
        value: The packed pixel value.
    """
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
    value = int(value)
    if out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3:
        if not 0 <= value < 1 << 24:
            raise ValueError(f"a 24 bpp pixel value must be 0..0xFFFFFF, got {value:#x}")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        if _C and out.strides[1:] == (3, 1):
            check_value(lib.convert_fill(_ptr(out), out.strides[0], out.shape[1], out.shape[0], 3, value), "fill")
        else:
            out[...] = np.array([value & 0xFF, value >> 8 & 0xFF, value >> 16], np.uint8)
        return
    if out.dtype not in (np.uint8, np.dtype("<u2"), np.dtype("<u4")) or out.ndim != 2:
        raise TypeError(f"out must be a native pixel array, got dtype {out.dtype} shape {out.shape}")
    size = out.dtype.itemsize
    if not 0 <= value < 1 << (8 * size):
        raise ValueError(f"pixel value {value:#x} does not fit in {out.dtype}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if _C and out.strides[1] == size and out.strides[0] % size == 0 and _ptr_int(out) % size == 0:
        check_value(lib.convert_fill(_ptr(out), out.strides[0], out.shape[1], out.shape[0], size, value), "fill")
    else:
        out[...] = value


@functools.lru_cache(maxsize=256)
def _packed_color(fmt: PixelFormat, rgb: tuple[int, int, int], palette_bytes: bytes | None) -> int:
    """fmt.pack_color of an opaque colour, cached: text draws the same colour often."""
    palette = None if palette_bytes is None else np.frombuffer(palette_bytes, np.uint8).reshape(-1, 3)
    return fmt.pack_color(rgb + (255,), palette)


# -- the C kernels ----------------------------------------------------------------------

_KIND_DIRECT, _KIND_GRAY, _KIND_INDEXED = 0, 1, 2


@functools.cache
def _expand_coeffs(bits: int) -> tuple[int, int]:
    """(mul, add) with ``(v * mul + add) >> 16`` equal to PixelFormat.unpack's levels."""
    top = (1 << bits) - 1
    mul, add = round(255 * 65536 / top), 32768
    want = _pf.expand_lut(bits)
    if any((v * mul + add) >> 16 != want[v] for v in range(top + 1)):  # pragma: no cover
        raise RuntimeError(f"no exact expansion for {bits}-bit levels")
    return mul, add


class _Spec:
    """A C format description together with every buffer its pointers reach.

    C reads ``lut`` and ``palette`` through the struct while it runs without the GIL;
    a cache entry alone does not keep them alive (another thread's cache miss may
    evict it mid-call). So the struct and its buffers live in one object, and each
    call holds that object in a local variable until C returns.
    """

    __slots__ = ("c", "_buffers")

    def __init__(self, c: Any, *buffers: object) -> None:
        self.c = c
        self._buffers = buffers


@functools.lru_cache(maxsize=64)
def _direct_spec(fmt: PixelFormat) -> _Spec | None:
    """The C description of a direct-colour or gray format; None if C cannot do it."""
    f = ffi.new("convert_format *")
    f.bpp = fmt.bpp
    if fmt.gray:
        f.kind = _KIND_GRAY
        f.inverted = int(fmt.inverted)
        f.mul[0], f.add[0] = _expand_coeffs(fmt.bpp)
        return _Spec(f)
    fields = (fmt.red, fmt.green, fmt.blue, fmt.transp)
    if fmt.bpp not in (8, 16, 24, 32) or any(bf.length > 8 for bf in fields):
        return None  # e.g. 10-bit channels: the NumPy path rounds those
    f.kind = _KIND_DIRECT
    for i, bf in enumerate(fields):
        f.off[i], f.len[i] = bf.offset, bf.length
        if bf.length:
            f.mul[i], f.add[i] = _expand_coeffs(bf.length)
    return _Spec(f)


@functools.lru_cache(maxsize=8)
def _indexed_spec(bpp: int, palette_bytes: bytes) -> _Spec:
    palette = np.frombuffer(palette_bytes, np.uint8)  # a view that keeps the bytes alive
    lut = _pf.nearest_lut(palette_bytes)
    f = ffi.new("convert_format *")
    f.bpp, f.kind = bpp, _KIND_INDEXED
    f.lut = ffi.from_buffer("uint8_t[]", lut)
    f.palette = ffi.from_buffer("uint8_t[]", palette)
    f.palette_len = len(palette) // 3
    return _Spec(f, lut, palette)


def native_spec(fmt: PixelFormat, palette: np.ndarray | None, pixels: int) -> _Spec | None:
    """The C format description for this call, or None to take the NumPy path.

    Keep the returned object referenced until the C call returns (see :class:`_Spec`).
    """
    if not _C:
        return None
    if fmt.indexed:
        if pixels * 3 <= 192 or palette is None:
            return None  # PixelFormat.pack searches tiny inputs exactly; stay identical
        return _indexed_spec(fmt.bpp, palette.tobytes())
    return _direct_spec(fmt)


def _ptr_int(a: np.ndarray) -> int:
    address: int = a.__array_interface__["data"][0]
    return address


def _ptr(a: np.ndarray) -> Any:
    """A pointer into ``a``'s memory; the caller keeps ``a`` referenced across the call."""
    return ffi.cast("uint8_t *", _ptr_int(a))


def _addressable(a: np.ndarray, fmt: PixelFormat) -> bool:
    """True when the kernels can address ``a``: pixels packed along each row and
    aligned to the pixel size."""
    if fmt.bpp == 24:
        return a.strides[1:] == (3, 1)
    size = a.dtype.itemsize
    return a.strides[1] == size and a.strides[0] % size == 0 and _ptr_int(a) % size == 0


# -- NumPy reference paths --------------------------------------------------------------


def _div255(x: np.ndarray) -> np.ndarray:
    """round(x / 255) for 0 <= x <= 255 * 255, exactly."""
    x = x + 128
    out: np.ndarray = (x + (x >> 8)) >> 8
    return out


def _blend_np(
    rgb: np.ndarray,
    alpha: np.ndarray,
    fmt: PixelFormat,
    out: np.ndarray,
    pal: np.ndarray | None,
    exact: int | None = None,
) -> None:
    a = alpha.astype(np.uint32)[..., None]
    dst = fmt.unpack(out, pal, alpha=fmt.has_alpha).astype(np.uint32)
    mixed = _div255(rgb.astype(np.uint32) * a + dst[..., :3] * (255 - a))
    if fmt.has_alpha:
        da = a + _div255(dst[..., 3:] * (255 - a))
        mixed = np.concatenate([mixed, da], axis=-1)
    packed = fmt.pack(mixed.astype(np.uint8), pal)
    if exact is not None and fmt.indexed:
        packed = np.where(alpha == 255, exact, packed).astype(packed.dtype)
    keep = alpha != 0
    if fmt.bpp == 24:
        keep = keep[..., None]
    np.copyto(out, packed, where=keep)
