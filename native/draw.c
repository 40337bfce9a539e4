/* draw.c: rasterise Pillow ImageDraw primitives straight into native pixel memory.
 *
 * Every primitive produces exactly the pixels Pillow's ImageDraw produces on an RGB
 * image for the same call (lines, wide lines, rectangles, polygons, ellipses, arcs,
 * chords, pie slices), so code ported from Pillow looks the same on the framebuffer.
 * The rasteriser rules were studied from Pillow's libImaging/Draw.c (HPND licence,
 * Copyright Secret Labs AB and Fredrik Lundh) and re-expressed here; where they use
 * float rather than double arithmetic, so does this file, because that decides
 * which pixel a polygon edge lands on.
 *
 * A draw_target describes the destination: a pointer, a row stride, bytes per pixel
 * (1..4), the surface coordinates of the first pixel, a clip rectangle, a packed
 * colour, and a bounding box of what was written (for dirty rectangles). The clip is
 * the only bound: callers make it lie inside the memory they pass.
 *
 * Coordinates come in as doubles and are truncated toward zero as Pillow's C layer
 * does; NaN or infinity gives -EINVAL. Coordinates are clamped to +-DRAW_LIMIT so
 * that huge values cannot overflow the integer arithmetic, and every loop is bounded
 * by the clip rectangle, never by the size of the shape.
 */
#include <math.h>
#include <sched.h>
#include <stdlib.h>

/* Pillow's pixels depend on whether its build fuses a*b+c into one rounding. Its
 * aarch64 build does (FMA is baseline there and GCC contracts by default: fmadd in
 * its line and polygon code); its x86 and 32-bit ARM builds have no FMA in their
 * baseline and round twice. Match that, whatever CPU fbgfx itself is built for. */
#pragma GCC push_options
#if defined(__aarch64__)
#pragma GCC optimize("fp-contract=fast")
#else
#pragma GCC optimize("fp-contract=off")
#endif

#define DRAW_LIMIT (1 << 28)
/* Ellipses up to this diameter use the exact integer walk (its 64-bit error terms
 * overflow beyond it); larger ones are computed row by row. */
#define DRAW_ELLIPSE_EXACT 32767

typedef struct {
    uint8_t *data;
    ptrdiff_t stride;
    int bpp;
    int ox, oy;
    int cx0, cy0, cx1, cy1;
    uint32_t color;
    int bx0, by0, bx1, by1;
    const color_ink *ink; /* packs the colour of the *_rgb calls */
    /* The log: per-row spans [log_x0[y], log_x1[y]) of what the fast paths (and
     * draw_log) drew since its owner last took them, rows [log_top, log_bottom); NULL
     * when nobody keeps one. log_lock guards it: threads draw without the GIL. */
    int32_t *log_x0, *log_x1;
    int log_top, log_bottom;
    int log_lock;
    /* while log_simple, the log is exactly the rectangle log_box (x0, y0, x1, y1): the
     * Screen keeps it as one rectangle (Region.box) rather than per-row spans */
    int log_simple;
    int log_box[4];
} draw_target;

/* -- spans -------------------------------------------------------------------------- */

/* Fill `rows` rows of n pixels; one call per box, so the row loop runs inside the
 * CPU-specific clone (a call per row cost more than filling a short row). */
FBGFX_HOT static void draw_fill_rows(uint8_t *p, ptrdiff_t stride, ptrdiff_t n, int64_t rows, int bpp,
                                     uint32_t c)
{
    switch (bpp) {
    case 1:
        for (int64_t y = 0; y < rows; y++, p += stride)
            memset(p, (int)c, (size_t)n);
        break;
    case 2:
        for (int64_t y = 0; y < rows; y++, p += stride) {
            uint16_t *q = (uint16_t *)p;
            for (ptrdiff_t i = 0; i < n; i++)
                q[i] = (uint16_t)c;
        }
        break;
    case 3: {
        uint8_t b0 = c & 0xFF, b1 = (c >> 8) & 0xFF, b2 = (c >> 16) & 0xFF;
        for (int64_t y = 0; y < rows; y++, p += stride)
            for (ptrdiff_t i = 0; i < n; i++) {
                p[3 * i] = b0;
                p[3 * i + 1] = b1;
                p[3 * i + 2] = b2;
            }
        break;
    }
    default:
        for (int64_t y = 0; y < rows; y++, p += stride) {
            uint32_t *q = (uint32_t *)p;
            for (ptrdiff_t i = 0; i < n; i++)
                q[i] = c;
        }
        break;
    }
}

static inline void draw_touch(draw_target *t, int x0, int y0, int x1, int y1)
{
    /* x1, y1 exclusive */
    if (x0 < t->bx0)
        t->bx0 = x0;
    if (y0 < t->by0)
        t->by0 = y0;
    if (x1 > t->bx1)
        t->bx1 = x1;
    if (y1 > t->by1)
        t->by1 = y1;
}

/* Fill [x0, x1] x [y0, y1] (inclusive), clipped. Returns pixels written. */
static int64_t draw_box(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1)
{
    if (x0 < t->cx0)
        x0 = t->cx0;
    if (y0 < t->cy0)
        y0 = t->cy0;
    if (x1 >= t->cx1)
        x1 = t->cx1 - 1;
    if (y1 >= t->cy1)
        y1 = t->cy1 - 1;
    if (x0 > x1 || y0 > y1)
        return 0;
    ptrdiff_t n = (ptrdiff_t)(x1 - x0 + 1);
    uint8_t *p = t->data + (y0 - t->oy) * t->stride + (x0 - t->ox) * t->bpp;
    draw_fill_rows(p, t->stride, n, y1 - y0 + 1, t->bpp, t->color);
    draw_touch(t, (int)x0, (int)y0, (int)x1 + 1, (int)y1 + 1);
    return (int64_t)n * (y1 - y0 + 1);
}

static inline void draw_span(draw_target *t, int64_t x0, int64_t y, int64_t x1)
{
    if (y < t->cy0 || y >= t->cy1)
        return;
    draw_box(t, x0, y, x1, y);
}

/* One pixel of 1..4 bytes (3: little-endian). */
static inline __attribute__((always_inline)) void draw_put(uint8_t *p, int bpp, uint32_t c)
{
    switch (bpp) {
    case 1:
        *p = (uint8_t)c;
        break;
    case 2:
        *(uint16_t *)p = (uint16_t)c;
        break;
    case 3:
        p[0] = c & 0xFF;
        p[1] = (c >> 8) & 0xFF;
        p[2] = (c >> 16) & 0xFF;
        break;
    default:
        *(uint32_t *)p = c;
        break;
    }
}

static inline void draw_pixel(draw_target *t, int64_t x, int64_t y)
{
    if (x < t->cx0 || x >= t->cx1 || y < t->cy0 || y >= t->cy1)
        return;
    draw_put(t->data + (y - t->oy) * t->stride + (x - t->ox) * t->bpp, t->bpp, t->color);
    draw_touch(t, (int)x, (int)y, (int)x + 1, (int)y + 1);
}

/* Pillow truncates double coordinates with a C cast. */
static inline int draw_coord(double v, int64_t *out)
{
    if (!isfinite(v))
        return -EINVAL;
    v = trunc(v);
    if (v > DRAW_LIMIT)
        v = DRAW_LIMIT;
    if (v < -DRAW_LIMIT)
        v = -DRAW_LIMIT;
    *out = (int64_t)v;
    return 0;
}

static int draw_coords(const double *xy, int64_t *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (draw_coord(xy[i], &out[i]) < 0)
            return -EINVAL;
    return 0;
}

/* -- 1-pixel lines -------------------------------------------------------------------- */

/* Walking a 1-pixel segment. Each step depends on the one before (the error term
 * decides whether it also moves along the minor axis), so a single walker waits on that
 * chain: DRAW_WALKERS walkers, one per part of the segment, step in the same loop and
 * fill the wait. The minor step is taken without a branch (which way a line steps is
 * data the branch predictor cannot learn), and each walker prefetches the pixel about
 * 16 steps ahead, because the rows a steep line crosses are far apart in memory. */
#define DRAW_WALKERS 3

typedef struct {
    uint8_t *p[DRAW_WALKERS];
    int64_t e[DRAW_WALKERS];
    ptrdiff_t mstep, nstep, ahead;
    int64_t e_up, e_down;
} draw_walker;

/* Where step i of a segment lies: the pixel pointer and the error term that decides
 * whether step i + 1 also moves along the minor axis. */
static inline void draw_walk_start(const draw_target *t, int xmajor, int64_t m0, int64_t n0, int ms, int ns,
                                   int64_t major, int64_t minor, int64_t i, uint8_t **p, int64_t *e)
{
    int64_t k = (2 * minor * i + major) / (2 * major);
    int64_t m = m0 + ms * i, n = n0 + ns * k;
    int64_t x = xmajor ? m : n, y = xmajor ? n : m;
    *p = t->data + (y - t->oy) * t->stride + (x - t->ox) * t->bpp;
    *e = 2 * minor * (i + 1) - major - 2 * major * k;
}

static inline __attribute__((always_inline)) void draw_step(draw_walker *w, int j)
{
    ptrdiff_t take = -(ptrdiff_t)(w->e[j] >= 0);
    w->p[j] += w->mstep + (w->nstep & take);
    w->e[j] += w->e_up - (w->e_down & take);
}

/* q steps of every walker, then `rest` more steps of the last one; bpp is a constant at
 * each call site, so every pixel size gets its own loop. */
static inline __attribute__((always_inline)) void draw_walk(draw_walker *w, int64_t q, int64_t rest, int bpp,
                                                            uint32_t c)
{
    for (int64_t i = 0; i < q; i++) {
        for (int j = 0; j < DRAW_WALKERS; j++) {
            draw_put(w->p[j], bpp, c);
            __builtin_prefetch((const void *)((uintptr_t)w->p[j] + (uintptr_t)w->ahead), 1);
            draw_step(w, j);
        }
    }
    for (int64_t i = 0; i < rest; i++) {
        draw_put(w->p[DRAW_WALKERS - 1], bpp, c);
        draw_step(w, DRAW_WALKERS - 1);
    }
}

/* The pixels of a Bresenham segment from (x0, y0) towards (x1, y1), without the end
 * point, as Pillow steps it: along the major axis, the minor coordinate of step i is
 * floor((2*minor*i + major) / (2*major)). Only steps inside the clip are visited. */
static void draw_segment(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1)
{
    int64_t dx = x1 - x0, dy = y1 - y0;
    int xs = dx < 0 ? -1 : 1, ys = dy < 0 ? -1 : 1;
    if (dx < 0)
        dx = -dx;
    if (dy < 0)
        dy = -dy;
    if (dx == 0 && dy == 0)
        return;
    if (dy == 0) {
        /* horizontal: x0 .. x1 - xs */
        if (xs > 0)
            draw_span(t, x0, y0, x1 - 1);
        else
            draw_span(t, x1 + 1, y0, x0);
        return;
    }
    if (dx == 0) {
        if (ys > 0)
            draw_box(t, x0, y0, x0, y1 - 1);
        else
            draw_box(t, x0, y1 + 1, x0, y0);
        return;
    }
    int xmajor = dx > dy;
    int64_t major = xmajor ? dx : dy, minor = xmajor ? dy : dx;
    int64_t m0 = xmajor ? x0 : y0, n0 = xmajor ? y0 : x0;
    int ms = xmajor ? xs : ys, ns = xmajor ? ys : xs;
    int64_t lo = xmajor ? t->cx0 : t->cy0, hi = xmajor ? t->cx1 : t->cy1;   /* major clip */
    int64_t nlo = xmajor ? t->cy0 : t->cx0, nhi = xmajor ? t->cy1 : t->cx1; /* minor clip */
    /* step range [i0, i1) whose major coordinate m0 + ms*i lies in [lo, hi) */
    int64_t i0, i1;
    if (ms > 0) {
        i0 = lo - m0;
        i1 = hi - m0;
    } else {
        i0 = m0 - (hi - 1);
        i1 = m0 - lo + 1;
    }
    if (i0 < 0)
        i0 = 0;
    if (i1 > major)
        i1 = major;
    if (i0 >= i1)
        return;
    /* restrict further to steps whose minor coordinate is inside the clip:
     * k(i) = floor((2*minor*i + major) / (2*major)) is monotonic in i. */
    int64_t klo = ns > 0 ? nlo - n0 : n0 - (nhi - 1); /* need k >= klo */
    int64_t khi = ns > 0 ? nhi - 1 - n0 : n0 - nlo;   /* need k <= khi */
    if (khi < 0)
        return;
    if (klo > 0) {
        /* smallest i with 2*minor*i + major >= 2*major*klo */
        int64_t num = 2 * major * klo - major;
        int64_t i = (num + 2 * minor - 1) / (2 * minor);
        if (i > i0)
            i0 = i;
    }
    {
        /* largest i with 2*minor*i + major < 2*major*(khi + 1) */
        int64_t num = 2 * major * (khi + 1) - major - 1;
        int64_t i = num / (2 * minor) + 1;
        if (i < i1)
            i1 = i;
    }
    if (i0 >= i1)
        return;
    int64_t k = (2 * minor * i0 + major) / (2 * major);
    int64_t m = m0 + ms * i0, nn = n0 + ns * k;
    int64_t bm0 = m, bn0 = nn;
    int bpp = t->bpp;
    ptrdiff_t mstep = (xmajor ? bpp : t->stride) * ms;
    ptrdiff_t nstep = (xmajor ? t->stride : bpp) * ns;
    draw_walker w = {.mstep = mstep, .nstep = nstep, .e_up = 2 * minor, .e_down = 2 * major};
    /* the pixel ~16 steps ahead, give or take one minor step */
    w.ahead = 16 * mstep + (ptrdiff_t)((16 * minor + major / 2) / major) * nstep;
    int64_t q = (i1 - i0) / DRAW_WALKERS;
    for (int j = 0; j < DRAW_WALKERS; j++)
        draw_walk_start(t, xmajor, m0, n0, ms, ns, major, minor, i0 + j * q, &w.p[j], &w.e[j]);
    switch (bpp) {
    case 1:
        draw_walk(&w, q, i1 - i0 - DRAW_WALKERS * q, 1, t->color);
        break;
    case 2:
        draw_walk(&w, q, i1 - i0 - DRAW_WALKERS * q, 2, t->color);
        break;
    case 3:
        draw_walk(&w, q, i1 - i0 - DRAW_WALKERS * q, 3, t->color);
        break;
    default:
        draw_walk(&w, q, i1 - i0 - DRAW_WALKERS * q, 4, t->color);
        break;
    }
    /* bounding box of the visited run */
    int64_t em = m0 + ms * (i1 - 1); /* major coordinate of the last pixel */
    int64_t en = n0 + ns * ((2 * minor * (i1 - 1) + major) / (2 * major));
    int64_t ax0 = xmajor ? bm0 : bn0, ay0 = xmajor ? bn0 : bm0;
    int64_t ax1 = xmajor ? em : en, ay1 = xmajor ? en : em;
    draw_touch(t, (int)(ax0 < ax1 ? ax0 : ax1), (int)(ay0 < ay1 ? ay0 : ay1),
               (int)(ax0 < ax1 ? ax1 : ax0) + 1, (int)(ay0 < ay1 ? ay1 : ay0) + 1);
}

/* -- polygons (Pillow's scanline rules) ------------------------------------------------- */

typedef struct {
    int x0, y0;
    int xmin, ymin, xmax, ymax;
    float dx;
} draw_edge;

static void draw_edge_set(draw_edge *e, int x0, int y0, int x1, int y1)
{
    e->xmin = x0 < x1 ? x0 : x1;
    e->xmax = x0 < x1 ? x1 : x0;
    e->ymin = y0 < y1 ? y0 : y1;
    e->ymax = y0 < y1 ? y1 : y0;
    e->dx = y0 == y1 ? 0.0f : ((float)(x1 - x0)) / (y1 - y0);
    e->x0 = x0;
    e->y0 = y0;
}

/* Pillow's rounding of span ends: half away from zero on the left, toward zero on
 * the right, with its float/double promotions. */
static inline int64_t draw_round_left(float f)
{
    double r = f >= 0.0 ? floor(f + 0.5F) : -floor(fabs(f) + 0.5F);
    if (r > DRAW_LIMIT * 4.0)
        r = DRAW_LIMIT * 4.0;
    if (r < -DRAW_LIMIT * 4.0)
        r = -DRAW_LIMIT * 4.0;
    return (int64_t)r;
}

static inline int64_t draw_round_right(float f)
{
    double r = f >= 0.0 ? ceil(f - 0.5F) : -ceil(fabs(f) - 0.5F);
    if (r > DRAW_LIMIT * 4.0)
        r = DRAW_LIMIT * 4.0;
    if (r < -DRAW_LIMIT * 4.0)
        r = -DRAW_LIMIT * 4.0;
    return (int64_t)r;
}

static int draw_float_cmp(const void *a, const void *b)
{
    float d = *(const float *)a - *(const float *)b;
    return d < 0 ? -1 : d > 0 ? 1 : 0;
}

static inline float draw_edge_x(const draw_edge *e, int y)
{
    return (y - e->y0) * e->dx + e->x0;
}

/* Even-odd scan conversion of n edges. Float arithmetic on purpose (see top). */
static int draw_fill_edges(draw_target *t, draw_edge *e, ptrdiff_t n)
{
    if (n <= 0)
        return 0;
    draw_edge **table = malloc(sizeof(draw_edge *) * (size_t)n);
    float *xx = malloc(sizeof(float) * 2 * (size_t)n + sizeof(float));
    if (!table || !xx) {
        free(table);
        free(xx);
        return -ENOMEM;
    }
    ptrdiff_t count = 0;
    int64_t ymin = INT32_MAX, ymax = INT32_MIN;
    for (ptrdiff_t i = 0; i < n; i++) {
        if (e[i].ymin < ymin)
            ymin = e[i].ymin;
        if (e[i].ymax > ymax)
            ymax = e[i].ymax;
        if (e[i].ymin == e[i].ymax) {
            draw_span(t, e[i].xmin, e[i].ymin, e[i].xmax);
            continue;
        }
        table[count++] = e + i;
    }
    /* Rows outside the clip draw nothing; clamping ymax to the clip bottom keeps the
     * "ymin < ymax" test below equivalent for every visible row. */
    if (ymin < t->cy0)
        ymin = t->cy0;
    if (ymax > t->cy1)
        ymax = t->cy1;
    for (int y = (int)ymin; y <= ymax; y++) {
        ptrdiff_t j = 0;
        for (ptrdiff_t i = 0; i < count; i++) {
            draw_edge *cur = table[i];
            if (y < cur->ymin || y > cur->ymax)
                continue;
            xx[j++] = draw_edge_x(cur, y);
            if (y == cur->ymax && y < ymax) {
                xx[j] = xx[j - 1];
                j++;
            } else if ((y == cur->ymin || y == cur->ymax) && cur->dx != 0) {
                /* where two slanted edges meet in a corner, widen the span so the
                 * corner joins the next (or previous) row */
                for (ptrdiff_t k = 0; k < i; k++) {
                    draw_edge *other = table[k];
                    if ((y != other->ymin && y != other->ymax) || other->dx == 0)
                        continue;
                    if (roundf(xx[j - 1]) != roundf(draw_edge_x(other, y)))
                        continue;
                    int off = y == cur->ymax ? -1 : 1;
                    float adj = draw_edge_x(cur, y + off);
                    if (y + off < other->ymin || y + off > other->ymax)
                        continue;
                    float adj_other = draw_edge_x(other, y + off);
                    if (xx[j - 1] > adj + 1 && xx[j - 1] > adj_other + 1)
                        xx[j - 1] = roundf(fmax(adj, adj_other)) + 1;
                    else if (xx[j - 1] < adj - 1 && xx[j - 1] < adj_other - 1)
                        xx[j - 1] = roundf(fmin(adj, adj_other)) - 1;
                    break;
                }
            }
        }
        if (j > 1) {
            if (j < 16) {
                for (ptrdiff_t a = 1; a < j; a++) {
                    float v = xx[a];
                    ptrdiff_t b = a - 1;
                    while (b >= 0 && xx[b] > v) {
                        xx[b + 1] = xx[b];
                        b--;
                    }
                    xx[b + 1] = v;
                }
            } else {
                qsort(xx, (size_t)j, sizeof(float), draw_float_cmp);
            }
        }
        for (ptrdiff_t i = 1; i < j; i += 2)
            draw_span(t, draw_round_left(xx[i - 1]), y, draw_round_right(xx[i]));
    }
    free(xx);
    free(table);
    return 0;
}

/* -- wide lines ------------------------------------------------------------------------ */

static inline int64_t draw_round_up_d(double f)
{
    return (int64_t)(f >= 0.0 ? floor(f + 0.5F) : -floor(fabs(f) + 0.5F));
}

static inline int64_t draw_round_down_d(double f)
{
    return (int64_t)(f >= 0.0 ? ceil(f - 0.5F) : -ceil(fabs(f) - 0.5F));
}

static int draw_wide_segment(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int width)
{
    int64_t dx = x1 - x0, dy = y1 - y0;
    if (dx == 0 && dy == 0) {
        draw_pixel(t, x0, y0);
        return 0;
    }
    double big = hypot((double)dx, (double)dy);
    double small = (width - 1) / 2.0;
    double rmax = draw_round_up_d(small) / big;
    double rmin = draw_round_down_d(small) / big;
    int64_t dxmin = draw_round_down_d(rmin * dy), dxmax = draw_round_down_d(rmax * dy);
    int64_t dymin = draw_round_down_d(rmin * dx), dymax = draw_round_down_d(rmax * dx);
    int v[4][2] = {
        {(int)(x0 - dxmin), (int)(y0 + dymax)},
        {(int)(x1 - dxmin), (int)(y1 + dymax)},
        {(int)(x1 + dxmax), (int)(y1 - dymin)},
        {(int)(x0 + dxmax), (int)(y0 - dymin)},
    };
    draw_edge e[4];
    for (int i = 0; i < 4; i++)
        draw_edge_set(&e[i], v[i][0], v[i][1], v[(i + 1) % 4][0], v[(i + 1) % 4][1]);
    return draw_fill_edges(t, e, 4);
}

/* -- public: points, lines, rectangles, polygons -------------------------------------- */

int draw_point(draw_target *t, double x, double y)
{
    int64_t ix, iy;
    if (draw_coord(x, &ix) < 0 || draw_coord(y, &iy) < 0)
        return -EINVAL;
    draw_pixel(t, ix, iy);
    return 0;
}

int draw_points(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        int64_t ix, iy;
        if (draw_coord(xy[2 * i], &ix) < 0 || draw_coord(xy[2 * i + 1], &iy) < 0)
            return -EINVAL;
        if (colors)
            t->color = colors[i];
        draw_pixel(t, ix, iy);
    }
    return 0;
}

int draw_line(draw_target *t, double x0, double y0, double x1, double y1, int width)
{
    int64_t c[4];
    double xy[4] = {x0, y0, x1, y1};
    if (draw_coords(xy, c, 4) < 0)
        return -EINVAL;
    if (width <= 1) {
        draw_segment(t, c[0], c[1], c[2], c[3]);
        draw_pixel(t, c[2], c[3]);
        return 0;
    }
    return draw_wide_segment(t, c[0], c[1], c[2], c[3], width);
}

/* A connected line through n points, as ImageDraw.line draws it. */
int draw_polyline(draw_target *t, const double *xy, ptrdiff_t n, int width)
{
    int64_t prev[2], cur[2] = {0, 0};
    if (n <= 0)
        return 0;
    for (ptrdiff_t i = 0; i < 2 * n; i++)
        if (!isfinite(xy[i]))
            return -EINVAL;
    draw_coords(xy, prev, 2);
    for (ptrdiff_t i = 1; i < n; i++) {
        draw_coords(xy + 2 * i, cur, 2);
        if (width <= 1) {
            draw_segment(t, prev[0], prev[1], cur[0], cur[1]);
        } else {
            int rc = draw_wide_segment(t, prev[0], prev[1], cur[0], cur[1], width);
            if (rc < 0)
                return rc;
        }
        prev[0] = cur[0];
        prev[1] = cur[1];
    }
    if (width <= 1 && n > 1)
        draw_pixel(t, prev[0], prev[1]);
    return 0;
}

/* Many independent lines: xy holds n rows of (x0, y0, x1, y1); colors may be NULL. */
FBGFX_HOT int draw_lines(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int width)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        if (colors)
            t->color = colors[i];
        int rc = draw_line(t, xy[4 * i], xy[4 * i + 1], xy[4 * i + 2], xy[4 * i + 3], width);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void draw_rect_int(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int fill, int64_t w)
{
    if (x0 > x1) {
        int64_t s = x0;
        x0 = x1;
        x1 = s;
    }
    if (y0 > y1) {
        int64_t s = y0;
        y0 = y1;
        y1 = s;
    }
    if (fill) {
        draw_box(t, x0, y0, x1, y1);
        return;
    }
    if (w == 0)
        w = 1;
    if (w < 0)
        return;
    /* Pillow draws `w` rows at the top and bottom and `w` one-pixel columns on each
     * side from y0 + w towards y1 - w + 1 (exclusive); as bands this costs O(1). */
    draw_box(t, x0, y0, x1, y0 + w - 1);
    draw_box(t, x0, y1 - w + 1, x1, y1);
    int64_t ys = y0 + w, ye = y1 - w + 1, r0, r1;
    if (ys < ye) {
        r0 = ys;
        r1 = ye - 1;
    } else if (ys > ye) {
        r0 = ye + 1;
        r1 = ys;
    } else
        return;
    draw_box(t, x1 - w + 1, r0, x1, r1);
    draw_box(t, x0, r0, x0 + w - 1, r1);
}

int draw_rect(draw_target *t, double x0, double y0, double x1, double y1, int fill, int width)
{
    int64_t c[4];
    double xy[4] = {x0, y0, x1, y1};
    if (draw_coords(xy, c, 4) < 0)
        return -EINVAL;
    draw_rect_int(t, c[0], c[1], c[2], c[3], fill, width);
    return 0;
}

FBGFX_HOT int draw_rects(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int fill,
                         int width)
{
    int64_t c[4];
    for (ptrdiff_t i = 0; i < n; i++) {
        if (draw_coords(xy + 4 * i, c, 4) < 0)
            return -EINVAL;
        if (colors)
            t->color = colors[i];
        draw_rect_int(t, c[0], c[1], c[2], c[3], fill, width);
    }
    return 0;
}

int draw_polygon(draw_target *t, const double *xy, ptrdiff_t n, int fill, int width)
{
    if (n <= 0)
        return 0;
    int64_t *v = malloc(sizeof(int64_t) * 2 * (size_t)n);
    if (!v)
        return -ENOMEM;
    int rc = draw_coords(xy, v, 2 * n);
    if (rc < 0)
        goto done;
    if (fill) {
        draw_edge *e = malloc(sizeof(draw_edge) * (size_t)n);
        if (!e) {
            rc = -ENOMEM;
            goto done;
        }
        ptrdiff_t m = 0, i;
        for (i = 0; i < n - 1; i++) {
            int x0 = (int)v[2 * i], y0 = (int)v[2 * i + 1], x1 = (int)v[2 * i + 2], y1 = (int)v[2 * i + 3];
            if (y0 == y1 && i != 0 && y0 == v[2 * i - 1] && m > 0) {
                /* a horizontal edge continuing the previous horizontal edge extends it */
                int px = (int)v[2 * i - 2];
                if (x1 > x0 && x0 > px) {
                    e[m - 1].xmax = x1;
                    continue;
                }
                if (x1 < x0 && x0 < px) {
                    e[m - 1].xmin = x1;
                    continue;
                }
            }
            draw_edge_set(&e[m++], x0, y0, x1, y1);
        }
        if (v[2 * i] != v[0] || v[2 * i + 1] != v[1])
            draw_edge_set(&e[m++], (int)v[2 * i], (int)v[2 * i + 1], (int)v[0], (int)v[1]);
        rc = draw_fill_edges(t, e, m);
        free(e);
    } else {
        for (ptrdiff_t i = 0; i < n; i++) {
            ptrdiff_t j = (i + 1) % n;
            if (width <= 1) {
                draw_segment(t, v[2 * i], v[2 * i + 1], v[2 * j], v[2 * j + 1]);
            } else {
                rc = draw_wide_segment(t, v[2 * i], v[2 * i + 1], v[2 * j], v[2 * j + 1], width);
                if (rc < 0)
                    break;
            }
        }
    }
done:
    free(v);
    return rc;
}

/* -- ellipses ---------------------------------------------------------------------------
 * The ellipse is walked on a grid of step 2 centred on the ellipse (so both even and
 * odd diameters have integer points): a quarter walk gives the outline of one quarter,
 * an outer and an inner quarter walk together give the spans of a ring of the given
 * width, mirrored into four quarters. Pixel x is x0 + (X + a) / 2. */

typedef struct {
    int64_t a2, b2, a2b2;
    int64_t err; /* a2*cy^2 + b2*cx^2 - a2b2 at the current point, kept incrementally */
    int32_t cx, cy, ex, ey;
    int done;
} draw_quarter;

static void draw_quarter_init(draw_quarter *q, int32_t a, int32_t b)
{
    if (a < 0 || b < 0) {
        q->done = 1;
        return;
    }
    q->cx = a;
    q->cy = b % 2;
    q->ex = a % 2;
    q->ey = b;
    q->a2 = (int64_t)a * a;
    q->b2 = (int64_t)b * b;
    q->a2b2 = q->a2 * q->b2;
    q->err = q->a2 * q->cy * q->cy + q->b2 * (int64_t)q->cx * q->cx - q->a2b2;
    q->done = 0;
}

static int draw_quarter_next(draw_quarter *q, int32_t *x, int32_t *y)
{
    if (q->done)
        return -1;
    *x = q->cx;
    *y = q->cy;
    if (q->cx == q->ex && q->cy == q->ey) {
        q->done = 1;
        return 0;
    }
    /* best of: up, up-left, left, by the absolute error of the ellipse equation;
     * the errors of the neighbours differ from the current one by exact increments */
    int64_t up = q->a2 * (4 * (int64_t)q->cy + 4);
    int64_t left = q->b2 * (4 - 4 * (int64_t)q->cx);
    int64_t e = q->err + up;
    int32_t nx = q->cx, ny = q->cy + 2;
    int64_t best = llabs(e);
    if (nx > 1) {
        int64_t ed = q->err + up + left, el = q->err + left;
        if (best > llabs(ed)) {
            nx = q->cx - 2;
            best = llabs(ed);
            e = ed;
        }
        if (best > llabs(el)) {
            nx = q->cx - 2;
            ny = q->cy;
            e = el;
        }
    }
    q->cx = nx;
    q->cy = ny;
    q->err = e;
    return 0;
}

typedef struct {
    draw_quarter outer, inner;
    int32_t py, pl, pr;
    int32_t by[4], bl[4], br[4];
    int nbuf;
    int done;
    int32_t leftmost;
} draw_ring;

static void draw_ring_init(draw_ring *s, int32_t a, int32_t b, int32_t w)
{
    s->nbuf = 0;
    s->leftmost = a % 2;
    draw_quarter_init(&s->outer, a, b);
    if (w < 1 || draw_quarter_next(&s->outer, &s->pr, &s->py) == -1) {
        s->done = 1;
        return;
    }
    s->done = 0;
    draw_quarter_init(&s->inner, a - 2 * (w - 1), b - 2 * (w - 1));
    s->pl = s->leftmost;
}

/* Next span (X0, Y, X1) of the ring in grid coordinates; -1 at the end. */
static int draw_ring_next(draw_ring *s, int32_t *x0, int32_t *y, int32_t *x1)
{
    if (s->nbuf == 0) {
        if (s->done)
            return -1;
        int32_t yy = s->py, l = s->pl, r = s->pr, cx = 0, cy = 0;
        int rc;
        while ((rc = draw_quarter_next(&s->outer, &cx, &cy)) != -1 && cy <= yy) {
        }
        if (rc == -1)
            s->done = 1;
        else {
            s->pr = cx;
            s->py = cy;
        }
        while ((rc = draw_quarter_next(&s->inner, &cx, &cy)) != -1 && cy <= yy)
            l = cx;
        s->pl = rc == -1 ? s->leftmost : cx;
        /* pushed in reverse of the order they are popped */
        if ((l > 0 || l < r) && yy > 0) {
            s->bl[s->nbuf] = l == 0 ? 2 : l;
            s->by[s->nbuf] = yy;
            s->br[s->nbuf] = r;
            s->nbuf++;
        }
        if (yy > 0) {
            s->bl[s->nbuf] = -r;
            s->by[s->nbuf] = yy;
            s->br[s->nbuf] = -l;
            s->nbuf++;
        }
        if (l > 0 || l < r) {
            s->bl[s->nbuf] = l == 0 ? 2 : l;
            s->by[s->nbuf] = -yy;
            s->br[s->nbuf] = r;
            s->nbuf++;
        }
        s->bl[s->nbuf] = -r;
        s->by[s->nbuf] = -yy;
        s->br[s->nbuf] = -l;
        s->nbuf++;
    }
    s->nbuf--;
    *x0 = s->bl[s->nbuf];
    *y = s->by[s->nbuf];
    *x1 = s->br[s->nbuf];
    return 0;
}

/* Huge ellipses: the same ring, computed per visible row from the ellipse equation
 * (the exact walk would overflow and take time proportional to the size). */
typedef struct {
    double a, b, ai, bi;
    int32_t y, yend, side;
    int32_t par;
} draw_bigring;

static void draw_bigring_init(draw_bigring *s, draw_target *t, int64_t y0, int32_t a, int32_t b, int32_t w)
{
    s->a = a;
    s->b = b;
    s->ai = a - 2.0 * (w - 1);
    s->bi = b - 2.0 * (w - 1);
    s->par = a % 2;
    /* visible pixel rows -> grid rows Y = 2 * (row - y0) - b */
    int64_t r0 = t->cy0 > y0 ? t->cy0 : y0, r1 = t->cy1 - 1 < y0 + b ? t->cy1 - 1 : y0 + b;
    s->y = (int32_t)(2 * (r0 - y0) - b);
    s->yend = r1 < r0 ? s->y - 2 : (int32_t)(2 * (r1 - y0) - b);
    s->side = 0;
}

static int draw_bigring_next(draw_bigring *s, int32_t *x0, int32_t *y, int32_t *x1)
{
    while (s->y <= s->yend) {
        /* a pixel row spans grid rows Y-1..Y+1: the outline reaches furthest at the
         * edge nearer the centre, the hole is narrowest at the farther edge */
        double Y = fabs((double)s->y), r, l = -1;
        double Yo = Y > 1 ? Y - 1 : 0, Yi = Y + 1;
        double f = 1.0 - (Yo * Yo) / (s->b * s->b);
        int32_t yy = s->y;
        int side = s->side;
        if (side == 1) {
            s->side = 0;
            s->y += 2;
        } else
            s->side = 1;
        if (f < 0)
            continue;
        r = s->a * sqrt(f);
        if (s->ai > 0 && s->bi > 0 && Yi < s->bi)
            l = s->ai * sqrt(1.0 - (Yi * Yi) / (s->bi * s->bi));
        /* snap to the grid parity */
        int32_t R = (int32_t)floor((r - s->par) / 2) * 2 + s->par;
        int32_t L = l < 0 ? -R - 2 : (int32_t)ceil((l - s->par) / 2) * 2 + s->par;
        if (L < -R)
            L = -R - 2;
        if (l < 0) {
            if (side == 1)
                continue; /* one full span per row */
            *x0 = -R;
            *y = yy;
            *x1 = R;
            if (R < -R)
                continue;
            return 0;
        }
        if (side == 0) {
            *x0 = -R;
            *x1 = -L;
        } else {
            *x0 = L;
            *x1 = R;
        }
        *y = yy;
        if (*x0 > *x1)
            continue;
        return 0;
    }
    return -1;
}

static int draw_norm_box(const double *in, int64_t *c)
{
    if (draw_coords(in, c, 4) < 0)
        return -EINVAL;
    if (c[0] > c[2]) {
        int64_t s = c[0];
        c[0] = c[2];
        c[2] = s;
    }
    if (c[1] > c[3]) {
        int64_t s = c[1];
        c[1] = c[3];
        c[3] = s;
    }
    return 0;
}

static void draw_ellipse_int(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1, int fill,
                             int64_t width)
{
    int64_t a = x1 - x0, b = y1 - y0;
    if (a < 0 || b < 0)
        return;
    if (fill)
        width = a + b;
    if (width > a + b + 1)
        width = a + b + 1;
    int32_t X0, Y, X1;
    if (a <= DRAW_ELLIPSE_EXACT && b <= DRAW_ELLIPSE_EXACT) {
        draw_ring st;
        draw_ring_init(&st, (int32_t)a, (int32_t)b, (int32_t)width);
        while (draw_ring_next(&st, &X0, &Y, &X1) != -1)
            draw_span(t, x0 + (X0 + a) / 2, y0 + (Y + b) / 2, x0 + (X1 + a) / 2);
    } else {
        if (width < 1)
            return;
        draw_bigring st;
        draw_bigring_init(&st, t, y0, (int32_t)a, (int32_t)b, (int32_t)width);
        while (draw_bigring_next(&st, &X0, &Y, &X1) != -1)
            draw_span(t, x0 + (X0 + a) / 2, y0 + (Y + b) / 2, x0 + (X1 + a) / 2);
    }
}

int draw_ellipse(draw_target *t, double x0, double y0, double x1, double y1, int fill, int width)
{
    int64_t c[4];
    double xy[4] = {x0, y0, x1, y1};
    if (draw_norm_box(xy, c) < 0)
        return -EINVAL;
    draw_ellipse_int(t, c[0], c[1], c[2], c[3], fill, width);
    return 0;
}

/* Many filled or outlined ellipses: xy holds n boxes (x0, y0, x1, y1). */
FBGFX_HOT int draw_ellipses(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int fill,
                            int width)
{
    int64_t c[4];
    for (ptrdiff_t i = 0; i < n; i++) {
        if (draw_norm_box(xy + 4 * i, c) < 0)
            return -EINVAL;
        if (colors)
            t->color = colors[i];
        draw_ellipse_int(t, c[0], c[1], c[2], c[3], fill, width);
    }
    return 0;
}

/* -- arcs, chords, pie slices -------------------------------------------------------------
 * A ring span is cut by a small tree of half-planes (a*x + b*y + c >= 0) combined with
 * AND / OR; the result is at most a few disjoint spans per row. */

enum { DRAW_CT_AND, DRAW_CT_OR, DRAW_CT_CLIP };

typedef struct draw_clip {
    int type;
    double a, b, c;
    struct draw_clip *l, *r;
} draw_clip;

#define DRAW_MAX_EV 16
typedef struct {
    int n;
    int32_t x[DRAW_MAX_EV];
    int8_t type[DRAW_MAX_EV]; /* +1 opens, -1 closes */
} draw_events;

static void draw_clip_transpose(draw_clip *c)
{
    if (!c)
        return;
    if (c->type == DRAW_CT_CLIP) {
        double s = c->a;
        c->a = c->b;
        c->b = s;
    }
    draw_clip_transpose(c->l);
    draw_clip_transpose(c->r);
}

static void draw_clip_run(const draw_clip *c, int32_t x0, int32_t y, int32_t x1, draw_events *out)
{
    out->n = 0;
    if (c == NULL || c->type == DRAW_CT_CLIP) {
        if (c) {
            const double eps = 1e-9;
            if (fabs(c->a) < eps) {
                if (c->b * y + c->c < -eps) {
                    x0 = 1;
                    x1 = 0;
                }
            } else {
                double ix = -(c->b * y + c->c) / c->a;
                if (c->a * x0 + c->b * y + c->c < eps)
                    x0 = (int32_t)lround(fmax(x0, ix));
                if (c->a * x1 + c->b * y + c->c < eps)
                    x1 = (int32_t)lround(fmin(x1, ix));
            }
        }
        if (x0 <= x1) {
            out->x[0] = x0;
            out->type[0] = 1;
            out->x[1] = x1;
            out->type[1] = -1;
            out->n = 2;
        }
        return;
    }
    draw_events l, r;
    draw_clip_run(c->l, x0, y, x1, &l);
    draw_clip_run(c->r, x0, y, x1, &r);
    int i = 0, j = 0, k1 = 0, k2 = 0, tail = 0; /* tail: type of the last kept event, 0 none */
    while (i < l.n || j < r.n) {
        int32_t x;
        int8_t ty;
        if (j >= r.n || (i < l.n && (l.x[i] < r.x[j] || (l.x[i] == r.x[j] && l.type[i] > r.type[j])))) {
            x = l.x[i];
            ty = l.type[i];
            k1 += ty;
            i++;
        } else {
            x = r.x[j];
            ty = r.type[j];
            k2 += ty;
            j++;
        }
        int keep;
        if (c->type == DRAW_CT_OR)
            keep = (ty == 1 && tail != 1) || (ty == -1 && k1 == 0 && k2 == 0);
        else
            keep =
                (ty == 1 && tail != 1 && k1 > 0 && k2 > 0) || (ty == -1 && tail == 1 && (k1 == 0 || k2 == 0));
        if (keep && out->n < DRAW_MAX_EV) {
            out->x[out->n] = x;
            out->type[out->n] = ty;
            out->n++;
            tail = ty;
        }
    }
}

typedef struct {
    draw_ring ring;
    draw_clip *root;
    draw_clip nodes[7];
    int count;
} draw_cut;

static draw_clip *draw_node(draw_cut *s, int type)
{
    draw_clip *c = &s->nodes[s->count++];
    c->type = type;
    c->a = c->b = c->c = 0;
    c->l = c->r = NULL;
    return c;
}

static draw_clip *draw_half(draw_cut *s, double a, double b, double c)
{
    draw_clip *n = draw_node(s, DRAW_CT_CLIP);
    n->a = a;
    n->b = b;
    n->c = c;
    return n;
}

static draw_clip *draw_join(draw_cut *s, int type, draw_clip *l, draw_clip *r)
{
    draw_clip *n = draw_node(s, type);
    n->l = l;
    n->r = r;
    return n;
}

/* 0 <= al < 360 and al <= ar <= al + 360 */
static void draw_norm_angles(float *al, float *ar)
{
    if (*ar - *al >= 360) {
        *al = 0;
        *ar = 360;
    } else {
        *al = fmod(*al < 0 ? 360 - (fmod(-*al, 360)) : *al, 360);
        *ar = *al + fmod(*ar < *al ? 360 - fmod(*al - *ar, 360) : *ar - *al, 360);
    }
}

/* Arc with caps normal to the curve; built for a >= b and transposed otherwise. */
static void draw_arc_tree(draw_cut *s, int32_t a, int32_t b, float al, float ar)
{
    if (a < b) {
        draw_arc_tree(s, b, a, 90 - ar, 90 - al);
        draw_clip_transpose(s->root);
        return;
    }
    draw_norm_angles(&al, &ar);
    if (ar == al + 360) {
        s->root = NULL;
        return;
    }
    draw_clip *lc = draw_half(s, -a * sin(al * M_PI / 180.0), b * cos(al * M_PI / 180.0),
                              ((double)a * a - (double)b * b) * sin(al * M_PI / 90.0) / 2.0);
    draw_clip *rc = draw_half(s, a * sin(ar * M_PI / 180.0), -b * cos(ar * M_PI / 180.0),
                              ((double)b * b - (double)a * a) * sin(ar * M_PI / 90.0) / 2.0);
    if (fmod(al, 180) == 0 || fmod(ar, 180) == 0) {
        s->root = draw_join(s, ar - al < 180 ? DRAW_CT_AND : DRAW_CT_OR, lc, rc);
    } else if (((int)(al / 180) + (int)(ar / 180)) % 2 == 1) {
        draw_clip *hl = draw_half(s, 0, (int)(al / 180) % 2 == 0 ? 1 : -1, 0);
        draw_clip *hr = draw_half(s, 0, (int)(ar / 180) % 2 == 0 ? 1 : -1, 0);
        s->root =
            draw_join(s, DRAW_CT_OR, draw_join(s, DRAW_CT_AND, hl, lc), draw_join(s, DRAW_CT_AND, hr, rc));
    } else {
        int ty = ar - al < 180 ? DRAW_CT_AND : DRAW_CT_OR;
        draw_clip *h = draw_half(s, 0, ar < 180 || ar > 540 ? 1 : -1, 0);
        s->root = draw_join(s, ty, draw_join(s, ty, lc, rc), h);
    }
}

enum { DRAW_ARC, DRAW_CHORD, DRAW_CHORD_LINE, DRAW_PIE, DRAW_PIE_SIDE };

static void draw_cut_init(draw_cut *s, int kind, int32_t a, int32_t b, int32_t w, float al, float ar)
{
    s->count = 0;
    s->root = NULL;
    double xl = a * cos(al * M_PI / 180.0), xr = a * cos(ar * M_PI / 180.0);
    double yl = b * sin(al * M_PI / 180.0), yr = b * sin(ar * M_PI / 180.0);
    switch (kind) {
    case DRAW_ARC:
        draw_ring_init(&s->ring, a, b, w);
        draw_arc_tree(s, a, b, al, ar);
        break;
    case DRAW_CHORD:
        draw_ring_init(&s->ring, a, b, w);
        s->root = draw_half(s, yr - yl, xl - xr, -((yr - yl) * xl + (xl - xr) * yl));
        break;
    case DRAW_CHORD_LINE: {
        draw_ring_init(&s->ring, a, b, a + b + 1);
        double la = yr - yl, lb = xl - xr, lc = -(la * xl + lb * yl);
        draw_clip *l = draw_half(s, la, lb, lc);
        draw_clip *r = draw_half(s, -la, -lb, 2 * w * sqrt(pow(la, 2.0) + pow(lb, 2.0)) - lc);
        s->root = draw_join(s, DRAW_CT_AND, l, r);
        break;
    }
    case DRAW_PIE: {
        draw_ring_init(&s->ring, a, b, w);
        draw_clip *lc = draw_half(s, -yl, xl, 0);
        draw_clip *rc = draw_half(s, yr, -xr, 0);
        s->root = draw_join(s, ar - al < 180 ? DRAW_CT_AND : DRAW_CT_OR, lc, rc);
        if (ar - al < 90) {
            /* a third half-plane stops spikes on the far side of the centre */
            draw_clip *spike = draw_half(s, (xl + xr) / 2.0, (yl + yr) / 2.0, 0);
            s->root = draw_join(s, DRAW_CT_AND, s->root, spike);
        }
        break;
    }
    default: { /* DRAW_PIE_SIDE: a band of width w along the radius at angle al */
        draw_ring_init(&s->ring, a, b, a + b + 1);
        double a1 = -yl, b1 = xl, c1 = w * sqrt(a1 * a1 + b1 * b1);
        draw_clip *band = draw_join(s, DRAW_CT_AND, draw_half(s, a1, b1, c1), draw_half(s, -a1, -b1, c1));
        s->root = draw_join(s, DRAW_CT_AND, band, draw_half(s, b1, -a1, 0));
        break;
    }
    }
}

static void draw_cut_render(draw_target *t, int kind, int64_t x0, int64_t y0, int64_t x1, int64_t y1,
                            float al, float ar, int64_t w)
{
    int64_t a = x1 - x0, b = y1 - y0;
    if (a < 0 || b < 0)
        return;
    if (a > DRAW_ELLIPSE_EXACT || b > DRAW_ELLIPSE_EXACT)
        return; /* see draw_arc */
    if (w > a + b + 1)
        w = a + b + 1;
    if (w < -1)
        w = -1;
    draw_cut s;
    draw_cut_init(&s, kind, (int32_t)a, (int32_t)b, (int32_t)w, al, ar);
    int32_t X0, Y, X1;
    draw_events ev;
    while (draw_ring_next(&s.ring, &X0, &Y, &X1) != -1) {
        int64_t py = y0 + (Y + b) / 2;
        if (py < t->cy0 || py >= t->cy1)
            continue;
        draw_clip_run(s.root, X0, Y, X1, &ev);
        for (int i = 0; i + 1 < ev.n; i += 2)
            draw_span(t, x0 + (ev.x[i] + a) / 2, py, x0 + (ev.x[i + 1] + a) / 2);
    }
}

static int draw_arc_args(const double *xy, float *start, float *end, int64_t *c)
{
    if (!isfinite(*start) || !isfinite(*end))
        return -EINVAL;
    if (draw_norm_box(xy, c) < 0)
        return -EINVAL;
    draw_norm_angles(start, end);
    return 0;
}

/* Arcs, chords and slices of ellipses wider than DRAW_ELLIPSE_EXACT draw only when
 * they are whole ellipses; their partial forms are skipped (Pillow overflows there). */
/* The shared start of arc, chord and pieslice: normalises the angles and fills c[];
 * returns 1 when nothing is left to do (a whole ellipse, drawn here, or an empty
 * sweep), 0 to go on, or -EINVAL. */
static int draw_cut_begin(draw_target *t, double x0, double y0, double x1, double y1, float *start,
                          float *end, int64_t c[4], int fill, int width)
{
    double xy[4] = {x0, y0, x1, y1};
    if (draw_arc_args(xy, start, end, c) < 0)
        return -EINVAL;
    if (*start + 360 == *end) {
        draw_ellipse_int(t, c[0], c[1], c[2], c[3], fill, width);
        return 1;
    }
    return *start == *end;
}

int draw_arc(draw_target *t, double x0, double y0, double x1, double y1, float start, float end, int width)
{
    int64_t c[4];
    int rc = draw_cut_begin(t, x0, y0, x1, y1, &start, &end, c, 0, width);
    if (rc)
        return rc < 0 ? rc : 0;
    draw_cut_render(t, DRAW_ARC, c[0], c[1], c[2], c[3], start, end, width);
    return 0;
}

int draw_chord(draw_target *t, double x0, double y0, double x1, double y1, float start, float end, int fill,
               int width)
{
    int64_t c[4];
    int rc = draw_cut_begin(t, x0, y0, x1, y1, &start, &end, c, fill, width);
    if (rc)
        return rc < 0 ? rc : 0;
    if (fill) {
        draw_cut_render(t, DRAW_CHORD, c[0], c[1], c[2], c[3], start, end, c[2] - c[0] + c[3] - c[1] + 1);
    } else {
        draw_cut_render(t, DRAW_CHORD_LINE, c[0], c[1], c[2], c[3], start, end, width);
        draw_cut_render(t, DRAW_CHORD, c[0], c[1], c[2], c[3], start, end, width);
    }
    return 0;
}

int draw_pieslice(draw_target *t, double x0, double y0, double x1, double y1, float start, float end,
                  int fill, int width)
{
    int64_t c[4];
    int rc = draw_cut_begin(t, x0, y0, x1, y1, &start, &end, c, fill, width);
    if (rc)
        return rc < 0 ? rc : 0;
    if (fill) {
        draw_cut_render(t, DRAW_PIE, c[0], c[1], c[2], c[3], start, end, c[2] + c[3] - c[0] - c[1]);
    } else {
        draw_cut_render(t, DRAW_PIE_SIDE, c[0], c[1], c[2], c[3], start, 0, width);
        draw_cut_render(t, DRAW_PIE_SIDE, c[0], c[1], c[2], c[3], end, 0, width);
        int64_t xc = lround((c[0] + c[2] - width) / 2.0), yc = lround((c[1] + c[3] - width) / 2.0);
        draw_ellipse_int(t, xc, yc, xc + width - 1, yc + width - 1, 1, 0);
        draw_cut_render(t, DRAW_PIE, c[0], c[1], c[2], c[3], start, end, width);
    }
    return 0;
}

/* Write the colour wherever mask (w x h bytes, rows mstride apart) is non-zero; the
 * mask's top-left pixel lands at surface (x, y). Clipped. */
FBGFX_HOT int draw_mask(draw_target *t, const uint8_t *mask, ptrdiff_t mstride, int x, int y, int w, int h)
{
    int64_t c0 = x > t->cx0 ? x : t->cx0, c1 = (int64_t)x + w < t->cx1 ? (int64_t)x + w : t->cx1;
    int64_t r0 = y > t->cy0 ? y : t->cy0, r1 = (int64_t)y + h < t->cy1 ? (int64_t)y + h : t->cy1;
    int64_t n = 0;
    for (int64_t r = r0; r < r1; r++) {
        const uint8_t *m = mask + (r - y) * mstride;
        for (int64_t cc = c0; cc < c1; cc++)
            if (m[cc - x]) {
                draw_pixel(t, cc, r);
                n++;
            }
    }
    return (int)(n > INT32_MAX ? INT32_MAX : n);
}

/* -- one-call fast paths ----------------------------------------------------------------
 * A drawing call with one opaque colour is one call into C. *_c take the packed value
 * (a colour the surface has seen before); *_rgb take the three channels as Python gives
 * them and pack here with the target's ink, so a fresh colour costs no second call.
 * Channels are ints (Python hands over ints, and other real numbers equal to whole
 * ones as ints); one outside 0..255 is -ERANGE and the caller takes its slow path,
 * which says what is wrong. */

/* -- the log of what was drawn ---------------------------------------------------------- */

static inline void draw_log_lock(draw_target *t)
{
    while (__atomic_exchange_n(&t->log_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static inline void draw_log_unlock(draw_target *t)
{
    __atomic_store_n(&t->log_lock, 0, __ATOMIC_RELEASE);
}

/* Widen the log by [x0, x1) x [y0, y1); the caller holds the lock. */
FBGFX_HOT static void draw_log_add(draw_target *t, int x0, int y0, int x1, int y1)
{
    int *r = t->log_box;
    if (t->log_top >= t->log_bottom) {
        t->log_simple = 1;
        r[0] = x0, r[1] = y0, r[2] = x1, r[3] = y1;
    } else if (t->log_simple && !(x0 >= r[0] && y0 >= r[1] && x1 <= r[2] && y1 <= r[3])) {
        if (x0 <= r[0] && y0 <= r[1] && x1 >= r[2] && y1 >= r[3])
            r[0] = x0, r[1] = y0, r[2] = x1, r[3] = y1; /* around the rectangle: the new one */
        else
            t->log_simple = 0;
    }
    int32_t *a = t->log_x0, *b = t->log_x1;
    for (int y = y0; y < y1; y++) { /* stores without branches: the loop vectorises */
        a[y] = a[y] < x0 ? a[y] : x0;
        b[y] = b[y] > x1 ? b[y] : x1;
    }
    if (y0 < t->log_top)
        t->log_top = y0;
    if (y1 > t->log_bottom)
        t->log_bottom = y1;
}

/* Log [x0, x1) x [y0, y1) (inside the surface) for the slow paths drawn from Python. */
int draw_log(draw_target *t, int x0, int y0, int x1, int y1)
{
    if (t->log_x0 && x0 < x1 && y0 < y1) {
        draw_log_lock(t);
        draw_log_add(t, x0, y0, x1, y1);
        draw_log_unlock(t);
    }
    return 0;
}

/* Take the log and empty it, in one step (nothing drawn meanwhile is lost). A log that
 * is one rectangle comes back in rows[2..5] (x0, y0, x1, y1), returning 2; otherwise its
 * spans widen x0[], x1[] (rows[0], rows[1]: their top and bottom, widened too), returning
 * 1. 0: the log was empty. */
FBGFX_HOT int draw_log_take(draw_target *t, int32_t *x0, int32_t *x1, int32_t *rows)
{
    draw_log_lock(t);
    int top = t->log_top, bottom = t->log_bottom, rc = 1;
    if (top >= bottom)
        rc = 0;
    else if (t->log_simple)
        rc = 2;
    if (rc == 2)
        for (int i = 0; i < 4; i++)
            rows[2 + i] = t->log_box[i];
    int32_t *a = t->log_x0, *b = t->log_x1;
    if (rc == 1)
        for (int y = top; y < bottom; y++) {
            x0[y] = a[y] < x0[y] ? a[y] : x0[y];
            x1[y] = b[y] > x1[y] ? b[y] : x1[y];
        }
    if (rc > 0) {
        for (int y = top; y < bottom; y++) {
            a[y] = INT32_MAX;
            b[y] = 0;
        }
        t->log_top = INT32_MAX;
        t->log_bottom = 0;
    }
    draw_log_unlock(t);
    if (rc == 1) {
        if (top < rows[0])
            rows[0] = top;
        if (bottom > rows[1])
            rows[1] = bottom;
    }
    return rc;
}

/* The fast paths draw with a copy of the target, so the colour and the bounding box are
 * this call's own: threads drawing on one surface (C runs without the GIL) never draw in
 * each other's colour. Where a log is kept, the call holds its lock from before the first
 * pixel to the logged box: taking the lock is a full memory barrier, which costs little
 * before the stores and waits for all of them after; and a Screen taking the log then
 * never sees a shape half drawn. */
static inline void draw_begin(draw_target *t, draw_target *shared, uint32_t color)
{
    if (shared->log_x0)
        draw_log_lock(shared);
    *t = *shared;
    t->color = color;
    t->bx0 = t->by0 = INT32_MAX;
    t->bx1 = t->by1 = INT32_MIN;
}

static inline int draw_begin_rgb(draw_target *t, draw_target *shared, int r, int g, int b)
{
    uint32_t color;
    int rc = color_pack_into(shared->ink, r, g, b, &color);
    if (rc < 0)
        return rc;
    draw_begin(t, shared, color);
    return 0;
}

static inline int draw_end(draw_target *shared, const draw_target *t, int rc)
{
    if (shared->log_x0) {
        if (rc >= 0 && t->bx0 < t->bx1)
            draw_log_add(shared, t->bx0, t->by0, t->bx1, t->by1);
        draw_log_unlock(shared);
    }
    return rc;
}

int draw_point_c(draw_target *s, uint32_t color, double x, double y)
{
    draw_target t;
    draw_begin(&t, s, color);
    return draw_end(s, &t, draw_point(&t, x, y));
}

int draw_line_c(draw_target *s, uint32_t color, double x0, double y0, double x1, double y1)
{
    draw_target t;
    draw_begin(&t, s, color);
    return draw_end(s, &t, draw_line(&t, x0, y0, x1, y1, 1));
}

int draw_rect_c(draw_target *s, uint32_t color, double x0, double y0, double x1, double y1)
{
    draw_target t;
    draw_begin(&t, s, color);
    return draw_end(s, &t, draw_rect(&t, x0, y0, x1, y1, 1, 1));
}

int draw_ellipse_c(draw_target *s, uint32_t color, double x0, double y0, double x1, double y1)
{
    draw_target t;
    draw_begin(&t, s, color);
    return draw_end(s, &t, draw_ellipse(&t, x0, y0, x1, y1, 1, 0));
}

int draw_point_rgb(draw_target *s, int r, int g, int b, double x, double y)
{
    draw_target t;
    int rc = draw_begin_rgb(&t, s, r, g, b);
    return rc < 0 ? rc : draw_end(s, &t, draw_point(&t, x, y));
}

int draw_line_rgb(draw_target *s, int r, int g, int b, double x0, double y0, double x1, double y1)
{
    draw_target t;
    int rc = draw_begin_rgb(&t, s, r, g, b);
    return rc < 0 ? rc : draw_end(s, &t, draw_line(&t, x0, y0, x1, y1, 1));
}

int draw_rect_rgb(draw_target *s, int r, int g, int b, double x0, double y0, double x1, double y1)
{
    draw_target t;
    int rc = draw_begin_rgb(&t, s, r, g, b);
    return rc < 0 ? rc : draw_end(s, &t, draw_rect(&t, x0, y0, x1, y1, 1, 1));
}

int draw_ellipse_rgb(draw_target *s, int r, int g, int b, double x0, double y0, double x1, double y1)
{
    draw_target t;
    int rc = draw_begin_rgb(&t, s, r, g, b);
    return rc < 0 ? rc : draw_end(s, &t, draw_ellipse(&t, x0, y0, x1, y1, 1, 0));
}

#pragma GCC pop_options
