"""Types of the compiled module ``fbgfx._native`` (cffi API mode, built from native/).

Only :mod:`fbgfx._ffi` imports it. ``lib`` holds one function per declaration in
``native/*.cdef`` and the integer constants the compiler read from the kernel headers;
pointers, arrays and structs are cffi cdata (Python lists, bytes and buffers convert
where C takes a pointer). ``tests/device/test_native_stub.py`` keeps this file and the
declarations in step.
"""

from typing import Any, Callable

from typing_extensions import Concatenate, ParamSpec, TypeAlias

_CData = Any  # a cffi pointer, array or struct

# Families of C functions with one signature (or one start of it), named once. Callable
# types keep no parameter names: native/*.cdef has them, the comments repeat the rest.
_P = ParamSpec("_P")
# smooth.cdef: (t, f, mask, r, g, b, a, exact, box, row0, row1, ...the shape)
_Smooth: TypeAlias = Callable[Concatenate[_CData, _CData, _CData, int, int, int, int, int, _CData, int, int, _P], int]
_SmoothPath: TypeAlias = _Smooth[[_CData, int, float]]  # xy, n, w
# From one strided picture into another: (src, src_stride, dst, dst_stride, width, height, ...)
_Strided: TypeAlias = Callable[Concatenate[_CData, int, _CData, int, int, int, _P], int]
# draw.cdef
_DrawBox: TypeAlias = Callable[[_CData, float, float, float, float, int, int], int]  # t, x0, y0, x1, y1, fill, width
_DrawBoxes: TypeAlias = Callable[[_CData, _CData, int, _CData, int, int], int]  # t, xy, n, colors, fill, width
# t, x0, y0, x1, y1, start, end, fill, width
_DrawCut: TypeAlias = Callable[[_CData, float, float, float, float, float, float, int, int], int]
_DrawPacked: TypeAlias = Callable[[_CData, int, float, float, float, float], int]  # t, color, x0, y0, x1, y1
_DrawRGB: TypeAlias = Callable[[_CData, int, int, int, float, float, float, float], int]  # t, r, g, b, x0, y0, x1, y1
# fb.cdef: an fbdev ioctl on one struct (fd, var | fix | cmap)
_FbStruct: TypeAlias = Callable[[int, _CData], int]
# input.cdef, uinput.cdef: (fd, buf, len) read into a buffer of len
_ReadInto: TypeAlias = Callable[[int, _CData, int], int]

class _FFI:
    NULL: _CData
    def new(self, cdecl: str, init: Any = ..., /) -> _CData: ...
    def cast(self, cdecl: str, value: Any, /) -> _CData: ...
    def from_buffer(self, cdecl: Any, python_buffer: Any = ..., require_writable: bool = ..., /) -> _CData: ...
    def string(self, cdata: _CData, maxlen: int = ..., /) -> bytes: ...
    def buffer(self, cdata: _CData, size: int = ..., /) -> Any: ...
    def gc(self, cdata: _CData, destructor: Callable[[_CData], Any], size: int = ..., /) -> _CData: ...
    def sizeof(self, cdecl: Any, /) -> int: ...

class _Lib:
    COLOR_DIRECT: int
    COLOR_GRAY: int
    COLOR_PALETTE: int
    DRM_IOCTL_VERSION: int
    DRM_IOCTL_GEM_CLOSE: int
    DRM_IOCTL_GET_CAP: int
    DRM_IOCTL_SET_CLIENT_CAP: int
    DRM_IOCTL_SET_MASTER: int
    DRM_IOCTL_DROP_MASTER: int
    DRM_IOCTL_MODE_GETRESOURCES: int
    DRM_IOCTL_MODE_GETCRTC: int
    DRM_IOCTL_MODE_SETCRTC: int
    DRM_IOCTL_MODE_GETENCODER: int
    DRM_IOCTL_MODE_GETCONNECTOR: int
    DRM_IOCTL_MODE_GETFB: int
    DRM_IOCTL_MODE_RMFB: int
    DRM_IOCTL_MODE_PAGE_FLIP: int
    DRM_IOCTL_MODE_DIRTYFB: int
    DRM_IOCTL_MODE_CREATE_DUMB: int
    DRM_IOCTL_MODE_MAP_DUMB: int
    DRM_IOCTL_MODE_DESTROY_DUMB: int
    DRM_IOCTL_MODE_GETPLANERESOURCES: int
    DRM_IOCTL_MODE_GETPLANE: int
    DRM_IOCTL_MODE_ADDFB2: int
    DRM_IOCTL_MODE_GETFB2: int
    DRM_EVENT_FLIP_COMPLETE: int
    DRM_CAP_DUMB_BUFFER: int
    DRM_CAP_DUMB_PREFERRED_DEPTH: int
    DRM_CAP_DUMB_PREFER_SHADOW: int
    DRM_CLIENT_CAP_UNIVERSAL_PLANES: int
    DRM_MODE_CONNECTED: int
    DRM_MODE_TYPE_PREFERRED: int
    DRM_MODE_PAGE_FLIP_EVENT: int
    # atomic KMS (native/drm_atomic.cdef)
    DRM_IOCTL_MODE_GETPROPERTY: int
    DRM_IOCTL_MODE_OBJ_GETPROPERTIES: int
    DRM_IOCTL_MODE_ATOMIC: int
    DRM_IOCTL_MODE_CREATEPROPBLOB: int
    DRM_IOCTL_MODE_DESTROYPROPBLOB: int
    DRM_CLIENT_CAP_ATOMIC: int
    DRM_MODE_OBJECT_CRTC: int
    DRM_MODE_OBJECT_CONNECTOR: int
    DRM_MODE_OBJECT_PLANE: int
    DRM_MODE_PROP_ENUM: int
    DRM_MODE_PROP_BITMASK: int
    DRM_MODE_ATOMIC_TEST_ONLY: int
    DRM_MODE_ATOMIC_NONBLOCK: int
    DRM_MODE_ATOMIC_ALLOW_MODESET: int
    FB_TYPE_PACKED_PIXELS: int
    FB_VISUAL_MONO01: int
    FB_VISUAL_MONO10: int
    FB_VISUAL_TRUECOLOR: int
    FB_VISUAL_PSEUDOCOLOR: int
    FB_VISUAL_DIRECTCOLOR: int
    FB_VISUAL_STATIC_PSEUDOCOLOR: int
    FB_ACTIVATE_NOW: int
    FB_ACTIVATE_TEST: int
    FB_ACTIVATE_FORCE: int
    FBGFX_INPUT_EVENT_SIZE: int
    EV_SYN: int
    EV_KEY: int
    EV_ABS: int
    EV_MAX: int
    SYN_REPORT: int
    SYN_DROPPED: int
    ABS_X: int
    ABS_Y: int
    ABS_MT_SLOT: int
    ABS_MT_POSITION_X: int
    ABS_MT_POSITION_Y: int
    ABS_MT_TRACKING_ID: int
    ABS_MAX: int
    BTN_LEFT: int
    BTN_TOUCH: int
    KEY_MAX: int
    INPUT_PROP_POINTER: int
    INPUT_PROP_DIRECT: int
    INPUT_PROP_MAX: int
    KD_TEXT: int
    KD_GRAPHICS: int
    def fbgfx_abi_cdef(self, name: _CData, /) -> _CData: ...
    def convert_pack(
        self,
        src: _CData,
        src_stride: int,
        channels: int,
        alpha: int,
        dst: _CData,
        dst_stride: int,
        width: int,
        height: int,
        f: _CData,
        /,
    ) -> int: ...
    def convert_unpack(
        self,
        src: _CData,
        src_stride: int,
        dst: _CData,
        dst_stride: int,
        channels: int,
        width: int,
        height: int,
        f: _CData,
        /,
    ) -> int: ...
    convert_blend: _Strided[[_CData]]  # f
    convert_blend_mask: _Strided[[int, int, int, int, int, _CData]]  # r, g, b, a, exact, f
    def glyph_compose(
        self,
        dst: _CData,
        dst_stride: int,
        dst_w: int,
        dst_h: int,
        src: _CData,
        src_stride: int,
        src_w: int,
        src_h: int,
        x: int,
        y: int,
        /,
    ) -> int: ...
    def color_nearest(self, palette: _CData, n: int, r: int, g: int, b: int, /) -> int: ...
    def color_pack(self, k: _CData, r: int, g: int, b: int, /) -> int: ...
    def convert_fill(self, dst: _CData, dst_stride: int, width: int, height: int, bytes: int, value: int, /) -> int: ...
    def draw_point(self, t: _CData, x: float, y: float, /) -> int: ...
    def draw_points(self, t: _CData, xy: _CData, n: int, colors: _CData, /) -> int: ...
    def draw_line(self, t: _CData, x0: float, y0: float, x1: float, y1: float, width: int, /) -> int: ...
    def draw_polyline(self, t: _CData, xy: _CData, n: int, width: int, /) -> int: ...
    def draw_lines(self, t: _CData, xy: _CData, n: int, colors: _CData, width: int, /) -> int: ...
    draw_rect: _DrawBox
    draw_rects: _DrawBoxes
    def draw_polygon(self, t: _CData, xy: _CData, n: int, fill: int, width: int, /) -> int: ...
    draw_ellipse: _DrawBox
    draw_ellipses: _DrawBoxes
    def draw_arc(
        self, t: _CData, x0: float, y0: float, x1: float, y1: float, start: float, end: float, width: int, /
    ) -> int: ...
    draw_chord: _DrawCut
    draw_pieslice: _DrawCut
    def draw_mask(self, t: _CData, mask: _CData, mstride: int, x: int, y: int, w: int, h: int, /) -> int: ...
    def draw_point_c(self, t: _CData, color: int, x: float, y: float, /) -> int: ...
    draw_line_c: _DrawPacked
    draw_rect_c: _DrawPacked
    draw_ellipse_c: _DrawPacked
    def draw_log(self, t: _CData, x0: int, y0: int, x1: int, y1: int, /) -> int: ...
    def draw_log_take(self, t: _CData, x0: _CData, x1: _CData, rows: _CData, /) -> int: ...
    def draw_point_rgb(self, t: _CData, r: int, g: int, b: int, x: float, y: float, /) -> int: ...
    draw_line_rgb: _DrawRGB
    draw_rect_rgb: _DrawRGB
    draw_ellipse_rgb: _DrawRGB
    smooth_line: _Smooth[[float, float, float, float, float]]  # x0, y0, x1, y1, w
    smooth_polyline: _Smooth[[_CData, int, float, int]]  # xy, n, w, curve
    smooth_lines: _SmoothPath
    smooth_polygon: _SmoothPath
    # cx, cy, rx, ry, start, end, kind, w
    smooth_ellipse: _Smooth[[float, float, float, float, float, float, int, float]]
    smooth_rounded_rect: _Smooth[[float, float, float, float, float, int, float]]  # x0, y0, x1, y1, rad, corners, w
    def fbgfx_drm_ioctl(self, fd: int, request: int, arg: _CData, /) -> int: ...
    def fbgfx_drm_wait_vblank(self, fd: int, crtc_index: int, /) -> int: ...
    def fbgfx_drm_map_pages(self, fd: int, offsets: _CData, count: int, size: int, out: _CData, /) -> int: ...
    def fbgfx_drm_detach_pages(self, base: _CData, length: int, /) -> int: ...
    def fbgfx_drm_unmap(self, base: _CData, length: int, /) -> int: ...
    def fbgfx_guard_add(self, base: _CData, length: int, writable: int, /) -> int: ...
    def fbgfx_guard_lost(self, slot: int, /) -> int: ...
    def fbgfx_guard_remove(self, slot: int, /) -> int: ...
    def fastcall_install(self, /) -> int: ...
    fbgfx_get_var: _FbStruct
    fbgfx_put_var: _FbStruct
    fbgfx_get_fix: _FbStruct
    fbgfx_pan: _FbStruct
    fbgfx_get_cmap: _FbStruct
    fbgfx_put_cmap: _FbStruct
    def fbgfx_blank(self, fd: int, level: int, /) -> int: ...
    def fbgfx_wait_for_vsync(self, fd: int, /) -> int: ...
    fbgfx_input_name: _ReadInto
    def fbgfx_input_bits(self, fd: int, ev: int, buf: _CData, len: int, /) -> int: ...
    fbgfx_input_props: _ReadInto
    fbgfx_input_keys: _ReadInto
    def fbgfx_input_absinfo(self, fd: int, axis: int, out: _CData, /) -> int: ...
    fbgfx_input_mt_slots: _ReadInto
    def fbgfx_input_clock_monotonic(self, fd: int, /) -> int: ...
    def fbgfx_input_decode(self, buf: _CData, len: int, out: _CData, max: int, /) -> int: ...
    def fbgfx_input_encode(self, in_: _CData, n: int, out: _CData, len: int, /) -> int: ...
    def fbgfx_uinput_create(self, fd: int, name: _CData, width: int, height: int, /) -> int: ...
    fbgfx_uinput_sysname: _ReadInto
    def fbgfx_uinput_destroy(self, fd: int, /) -> int: ...
    def fbgfx_kd_get_mode(self, fd: int, /) -> int: ...
    def fbgfx_kd_set_mode(self, fd: int, mode: int, /) -> int: ...
    rotate_copy: _Strided[[int, int]]  # bytes, turn
    def rotate_pack(
        self,
        src: _CData,
        src_stride: int,
        step: int,
        dst: _CData,
        dst_stride: int,
        width: int,
        height: int,
        turn: int,
        f: _CData,
        /,
    ) -> int: ...
    # (cur, cur_stride, prev, prev_stride, width_bytes, height) tile_bytes, tile_rows, mask
    mirror_tiles: _Strided[[int, int, _CData]]
    def mirror_scale(
        self,
        src: _CData,
        src_stride: int,
        kind: int,
        rs: int,
        gs: int,
        bs: int,
        xfirst: _CData,
        xcount: _CData,
        xw: _CData,
        xk: int,
        yfirst: _CData,
        ycount: _CData,
        yw: _CData,
        yk: int,
        x0: int,
        y0: int,
        w: int,
        h: int,
        dst: _CData,
        dst_stride: int,
        /,
    ) -> int: ...
    def fbgfx_input_grab(self, fd: int, on: int, /) -> int: ...

ffi: _FFI
lib: _Lib

# Added by lib.fastcall_install() (native/fastcall.c): a drawing call's one-call fast
# path with the draw_target's address, xy, fill and the surface's cache of packed
# colours (fast_smooth_*: the format's convert_format address, then the shape's sizes);
# the kernel's result, or a large negative number for "take the general path".
def fast_line(t: int, xy: Any, fill: Any, cache: Any, /) -> int: ...
def fast_rect(t: int, xy: Any, fill: Any, cache: Any, /) -> int: ...
def fast_ellipse(t: int, xy: Any, fill: Any, cache: Any, /) -> int: ...
def fast_smooth_line(t: int, f: int, xy: Any, fill: Any, width: Any, /) -> int: ...
def fast_smooth_circle(t: int, f: int, xy: Any, fill: Any, radius: Any, width: Any, /) -> int: ...
def fast_smooth_polygon(t: int, f: int, xy: Any, fill: Any, width: Any, /) -> int: ...
