/* fastcall.c: Surface.line, rectangle and ellipse's one-call fast paths (and line, circle
 * and polygon's with antialias=True) as plain CPython functions, added to fbgfx._native
 * by fastcall_install().
 *
 * A cffi call costs more than drawing a short line: it builds a tuple of the arguments,
 * converts each through cffi's tables, saves errno and lets the GIL go and takes it back.
 * These take the Python objects as given (METH_FASTCALL), read what they can read exactly
 * (a tuple of three ints, four ints or floats) and draw; anything else returns
 * FAST_MISS without touching the surface, and the caller takes its general path, which
 * accepts or refuses the call as before. Small shapes keep the GIL (letting it go costs
 * more than they do); shapes of many pixels let it go as the cffi calls do. */
#include <Python.h>

#include "color.h"
#include "draw.h"
#include "fastcall.h"
#include "smooth.h"

#if !defined(PYPY_VERSION)

#ifndef METH_FASTCALL /* in the limited API from 3.10; the same flag since 3.7 */
#define METH_FASTCALL 0x0080
#endif

enum { FAST_MISS = -1000000 };
/* shapes whose box holds more pixels than this are drawn without the GIL */
enum { FAST_GIL_PIXELS = 16384 };

typedef int (*rgb_kernel)(draw_target *, int, int, int, double, double, double, double);
typedef int (*packed_kernel)(draw_target *, uint32_t, double, double, double, double);

/* A coordinate as cffi reads it into a double, for the two types that need no call. */
static int fast_number(PyObject *o, double *out)
{
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AsDouble(o);
        return 0;
    }
    if (PyLong_CheckExact(o)) {
        double v = PyLong_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        *out = v;
        return 0;
    }
    return -1;
}

/* A channel of an (r, g, b) tuple: a plain int; out of range becomes 256, which packing
 * refuses (and the caller's general path says why). */
static int fast_channel(PyObject *o, int *out)
{
    if (!PyLong_CheckExact(o))
        return -1;
    int overflow;
    long v = PyLong_AsLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = overflow || v < 0 || v > 255 ? 256 : (int)v;
    return 0;
}

/* An (r, g, b) tuple of plain ints into rgb (out of range as fast_channel gives it). */
static int fast_tuple_rgb(PyObject *fill, int *rgb)
{
    if (!PyTuple_CheckExact(fill) || PyTuple_Size(fill) != 3)
        return -1;
    for (Py_ssize_t i = 0; i < 3; i++)
        if (fast_channel(PyTuple_GetItem(fill, i), &rgb[i]) < 0)
            return -1;
    return 0;
}

/* Four coordinates from a tuple or list of exactly four. */
static int fast_box(PyObject *xy, double *c)
{
    PyObject *(*item)(PyObject *, Py_ssize_t);
    if (PyTuple_CheckExact(xy)) {
        if (PyTuple_Size(xy) != 4)
            return -1;
        item = PyTuple_GetItem;
    } else if (PyList_CheckExact(xy)) {
        if (PyList_Size(xy) != 4)
            return -1;
        item = PyList_GetItem;
    } else {
        return -1;
    }
    for (Py_ssize_t i = 0; i < 4; i++)
        if (fast_number(item(xy, i), &c[i]) < 0)
            return -1;
    return 0;
}

/* The packed value of a colour the surface cached: cache[type(colour)][colour]. */
static int fast_cached(PyObject *cache, PyObject *fill, uint32_t *out)
{
    if (!PyDict_CheckExact(cache))
        return -1;
    PyObject *inner = PyDict_GetItem(cache, (PyObject *)Py_TYPE(fill)); /* borrowed */
    if (inner == NULL || !PyDict_CheckExact(inner))
        return -1;
    PyObject *value = PyDict_GetItem(inner, fill); /* errors (unhashable) are a miss */
    if (value == NULL || !PyLong_CheckExact(value))
        return -1;
    unsigned long v = PyLong_AsUnsignedLong(value);
    if (PyErr_Occurred() || v > UINT32_MAX) {
        PyErr_Clear();
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* args: the draw_target's address, xy, fill, the surface's cache of packed colours.
 * Returns what the kernel returned, or FAST_MISS. */
static PyObject *fast_draw(PyObject *const *args, Py_ssize_t n, rgb_kernel rgb, packed_kernel packed,
                           int area)
{
    if (n != 4)
        return PyLong_FromLong(FAST_MISS);
    draw_target *t = PyLong_AsVoidPtr(args[0]);
    double c[4];
    if (t == NULL || fast_box(args[1], c) < 0) {
        PyErr_Clear();
        return PyLong_FromLong(FAST_MISS);
    }
    int ch[3] = {0, 0, 0}, tuple = PyTuple_CheckExact(args[2]);
    uint32_t value = 0;
    PyObject *fill = args[2];
    if (tuple ? fast_tuple_rgb(fill, ch) < 0 : fast_cached(args[3], fill, &value) < 0)
        return PyLong_FromLong(FAST_MISS);
    int r = ch[0], g = ch[1], b = ch[2];
    /* NaN compares false: such a box keeps the GIL, and the kernel refuses it at once */
    double w = c[2] - c[0], h = c[3] - c[1];
    int rc;
    if (area && w * w * h * h > (double)FAST_GIL_PIXELS * FAST_GIL_PIXELS) {
        Py_BEGIN_ALLOW_THREADS;
        rc = tuple ? rgb(t, r, g, b, c[0], c[1], c[2], c[3]) : packed(t, value, c[0], c[1], c[2], c[3]);
        Py_END_ALLOW_THREADS;
    } else {
        rc = tuple ? rgb(t, r, g, b, c[0], c[1], c[2], c[3]) : packed(t, value, c[0], c[1], c[2], c[3]);
    }
    return PyLong_FromLong(rc);
}

static PyObject *fast_line(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    return fast_draw(args, n, draw_line_rgb, draw_line_c, 0);
}

static PyObject *fast_rect(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    return fast_draw(args, n, draw_rect_rgb, draw_rect_c, 1);
}

static PyObject *fast_ellipse(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    return fast_draw(args, n, draw_ellipse_rgb, draw_ellipse_c, 1);
}

/* -- antialias=True: one shape of an opaque (r, g, b) tuple's colour ------------------ */

/* A fill that is a tuple of three ints 0..255, packed as Packer packs it; -1 for any
 * other (the general path takes those: names, alpha, caches). */
static int fast_rgb(PyObject *fill, const draw_target *t, int *rgb, uint32_t *exact)
{
    if (t->ink == NULL || fast_tuple_rgb(fill, rgb) < 0 || rgb[0] > 255 || rgb[1] > 255 || rgb[2] > 255)
        return -1;
    return color_pack_into(t->ink, rgb[0], rgb[1], rgb[2], exact);
}

/* A width or radius as smooth.width reads it: a plain int or float, finite, >= 0. */
static int fast_size(PyObject *o, double *out)
{
    return fast_number(o, out) == 0 && isfinite(*out) && *out >= 0 ? 0 : -1;
}

/* Up to max / 2 points of a tuple or list in either of Pillow's forms (flat numbers or
 * (x, y) pairs, mixed as geometry.flat takes them), finite, moved onto the pixel
 * centres (+0.5) as fbgfx._draw.smooth does: how many numbers, or -1. */
static Py_ssize_t fast_points(PyObject *xy, double *out, Py_ssize_t max)
{
    int tuple = PyTuple_CheckExact(xy);
    if (!tuple && !PyList_CheckExact(xy))
        return -1;
    Py_ssize_t n = tuple ? PyTuple_Size(xy) : PyList_Size(xy), m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = tuple ? PyTuple_GetItem(xy, i) : PyList_GetItem(xy, i);
        int pt = PyTuple_CheckExact(p);
        if (pt || PyList_CheckExact(p)) {
            if ((pt ? PyTuple_Size(p) : PyList_Size(p)) != 2 || m + 2 > max)
                return -1;
            for (Py_ssize_t k = 0; k < 2; k++)
                if (fast_number(pt ? PyTuple_GetItem(p, k) : PyList_GetItem(p, k), &out[m++]) < 0)
                    return -1;
        } else if (m + 1 > max || fast_number(p, &out[m++]) < 0) {
            return -1;
        }
    }
    if (m % 2)
        return -1;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (!isfinite(out[i]))
            return -1;
        out[i] += 0.5;
    }
    return m;
}

/* The surface's draw_target and convert_format (0 when it blends through a mask). */
static int fast_smooth_target(PyObject *ta, PyObject *fa, draw_target **t, const convert_format **f)
{
    *t = PyLong_AsVoidPtr(ta);
    *f = PyLong_AsVoidPtr(fa);
    if (*t == NULL || *f == NULL) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* Kernels of shapes of more pixels than this let the GIL go. */
#define FAST_SMOOTH(call, pixels)                                                                            \
    do {                                                                                                     \
        int rc_;                                                                                             \
        if ((pixels) > (double)FAST_GIL_PIXELS) {                                                            \
            Py_BEGIN_ALLOW_THREADS;                                                                          \
            rc_ = (call);                                                                                    \
            Py_END_ALLOW_THREADS;                                                                            \
        } else {                                                                                             \
            rc_ = (call);                                                                                    \
        }                                                                                                    \
        return PyLong_FromLong(rc_);                                                                         \
    } while (0)

#define FAST_ROWS INT32_MIN, INT32_MAX

/* args: target, format, xy, fill, width: Surface.line(xy, fill, width, antialias=True)
 * for one segment. */
static PyObject *fast_smooth_line(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    draw_target *t;
    const convert_format *f;
    double w, c[4];
    int rgb[3];
    uint32_t exact;
    if (n != 5 || fast_smooth_target(args[0], args[1], &t, &f) < 0 || fast_size(args[4], &w) < 0)
        return PyLong_FromLong(FAST_MISS);
    if (w == 0)
        return PyLong_FromLong(0); /* draws nothing, whatever xy and fill are */
    if (fast_points(args[2], c, 4) != 4 || fast_rgb(args[3], t, rgb, &exact) < 0)
        return PyLong_FromLong(FAST_MISS);
    double pixels = (fabs(c[2] - c[0]) + fabs(c[3] - c[1])) * (w + 2);
    FAST_SMOOTH(smooth_line(t, f, NULL, rgb[0], rgb[1], rgb[2], 255, exact, NULL, FAST_ROWS, c[0], c[1], c[2],
                            c[3], w),
                pixels);
}

/* args: target, format, xy, fill, radius, width: Surface.circle(xy, radius, fill,
 * width=width, antialias=True) with no outline. */
static PyObject *fast_smooth_circle(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    draw_target *t;
    const convert_format *f;
    double r, w, c[2];
    int rgb[3];
    uint32_t exact;
    if (n != 6 || fast_smooth_target(args[0], args[1], &t, &f) < 0 || fast_size(args[4], &r) < 0 ||
        fast_size(args[5], &w) < 0 || fast_points(args[2], c, 2) != 2 ||
        fast_rgb(args[3], t, rgb, &exact) < 0)
        return PyLong_FromLong(FAST_MISS);
    FAST_SMOOTH(smooth_ellipse(t, f, NULL, rgb[0], rgb[1], rgb[2], 255, exact, NULL, FAST_ROWS, c[0], c[1], r,
                               r, 0.0, 360.0, 0, 0.0),
                4 * r * r);
}

enum { FAST_POLYGON_POINTS = 256 };

/* args: target, format, xy, fill, width: Surface.polygon(xy, fill, width=width,
 * antialias=True) with no outline, of 3 to FAST_POLYGON_POINTS points. */
static PyObject *fast_smooth_polygon(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    draw_target *t;
    const convert_format *f;
    double w, xy[2 * FAST_POLYGON_POINTS];
    int rgb[3];
    uint32_t exact;
    if (n != 5 || fast_smooth_target(args[0], args[1], &t, &f) < 0 || fast_size(args[4], &w) < 0)
        return PyLong_FromLong(FAST_MISS);
    Py_ssize_t m = fast_points(args[2], xy, 2 * FAST_POLYGON_POINTS);
    if (m < 6 || fast_rgb(args[3], t, rgb, &exact) < 0)
        return PyLong_FromLong(FAST_MISS);
    double lo[2] = {xy[0], xy[1]}, hi[2] = {xy[0], xy[1]};
    for (Py_ssize_t i = 2; i < m; i++) {
        lo[i & 1] = xy[i] < lo[i & 1] ? xy[i] : lo[i & 1];
        hi[i & 1] = xy[i] > hi[i & 1] ? xy[i] : hi[i & 1];
    }
    FAST_SMOOTH(
        smooth_polygon(t, f, NULL, rgb[0], rgb[1], rgb[2], 255, exact, NULL, FAST_ROWS, xy, m / 2, 0.0),
        (hi[0] - lo[0]) * (hi[1] - lo[1]));
}

static PyMethodDef fast_methods[] = {
    {"fast_line", (PyCFunction)(void (*)(void))fast_line, METH_FASTCALL, NULL},
    {"fast_rect", (PyCFunction)(void (*)(void))fast_rect, METH_FASTCALL, NULL},
    {"fast_ellipse", (PyCFunction)(void (*)(void))fast_ellipse, METH_FASTCALL, NULL},
    {"fast_smooth_line", (PyCFunction)(void (*)(void))fast_smooth_line, METH_FASTCALL, NULL},
    {"fast_smooth_circle", (PyCFunction)(void (*)(void))fast_smooth_circle, METH_FASTCALL, NULL},
    {"fast_smooth_polygon", (PyCFunction)(void (*)(void))fast_smooth_polygon, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

/* Adds the fast_* functions to fbgfx._native: 0, or -1 when it could not. cffi calls this
 * without the GIL. */
int fastcall_install(void)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    int rc = -1;
    PyObject *module = PyImport_ImportModule("fbgfx._native");
    if (module != NULL) {
        rc = 0;
        for (PyMethodDef *d = fast_methods; d->ml_name != NULL; d++) {
            PyObject *fn = PyCFunction_NewEx(d, NULL, NULL);
            if (fn == NULL || PyModule_AddObject(module, d->ml_name, fn) < 0) {
                Py_XDECREF(fn);
                rc = -1;
                break;
            }
        }
        Py_DECREF(module);
    }
    if (rc < 0)
        PyErr_Clear();
    PyGILState_Release(gil);
    return rc;
}

#else /* PyPy: cffi's calls are already cheap there, and cpyext is not */

int fastcall_install(void)
{
    return -1;
}

#endif
