/* draw.c: rasterise Pillow ImageDraw primitives straight into native pixel memory.
 *
 * Every primitive produces exactly the pixels Pillow's ImageDraw produces on an RGB
 * image for the same call (lines, wide lines, rectangles, polygons, ellipses, arcs,
 * chords, pie slices), so code ported from Pillow looks the same on the framebuffer.
 * The rasteriser rules were studied from Pillow's libImaging/Draw.c (HPND licence,
 * Copyright Secret Labs AB and Fredrik Lundh) and re-expressed here; where they use
 * float rather than double arithmetic, so does this file, because that decides
 * which pixel a polygon edge lands on. This file holds points, lines, rectangles and
 * polygons; draw_ellipse.c the curved shapes; draw.h the target they draw into.
 *
 * Coordinates come in as doubles and are truncated toward zero as Pillow's C layer
 * does; NaN or infinity gives -EINVAL. Line segments far away are cut to the clip
 * (draw_segment_coords); other coordinates are clamped to +-DRAW_LIMIT so that huge
 * values cannot overflow the integer arithmetic. Every loop is bounded by the clip
 * rectangle, never by the size of the shape.
 */
#include "pillow_rounding.h" /* first: see there */

#include "draw.h"
#include <stdlib.h>

/* -- spans -------------------------------------------------------------------------- */

/* Fill `rows` rows of n pixels; one call per box, so the row loop runs inside the
 * CPU-specific clone (a call per row cost more than filling a short row). */
FBGFX_HOT void draw_fill_rows(uint8_t *p, ptrdiff_t stride, ptrdiff_t n, int64_t rows, int bpp, uint32_t c)
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

/* floor((a * b + c) / d) for d > 0 and |a|, |b|, |c|, |d| < 2^34, whose product would
 * overflow 64 bits (a segment between endpoints 2^31 apart): estimated in double, then
 * corrected by the remainder a*b + c - q*d, which is small, so arithmetic modulo 2^64
 * gives it exactly. The remainder goes to *rem (0 <= *rem < d). */
static inline int64_t draw_floordiv(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *rem)
{
    int64_t q = (int64_t)floor(((double)a * (double)b + (double)c) / (double)d);
    int64_t r = (int64_t)((uint64_t)a * (uint64_t)b + (uint64_t)c - (uint64_t)q * (uint64_t)d);
    q += r / d;
    r %= d;
    if (r < 0) {
        q--;
        r += d;
    }
    *rem = r;
    return q;
}

/* Where step i of a segment lies: the pixel pointer and the error term that decides
 * whether step i + 1 also moves along the minor axis. */
static inline void draw_walk_start(const draw_target *t, int xmajor, int64_t m0, int64_t n0, int ms, int ns,
                                   int64_t major, int64_t minor, int64_t i, uint8_t **p, int64_t *e)
{
    int64_t rem, k = draw_floordiv(2 * minor, i, major, 2 * major, &rem);
    int64_t m = m0 + ms * i, n = n0 + ns * k;
    int64_t x = xmajor ? m : n, y = xmajor ? n : m;
    *p = t->data + (y - t->oy) * t->stride + (x - t->ox) * t->bpp;
    *e = rem + 2 * minor - 2 * major; /* 2*minor*(i + 1) - major - 2*major*k */
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
    int64_t rem;
    if (klo > 0) {
        /* smallest i with 2*minor*i + major >= 2*major*klo */
        int64_t i = draw_floordiv(2 * major, klo, 2 * minor - 1 - major, 2 * minor, &rem);
        if (i > i0)
            i0 = i;
    }
    {
        /* largest i with 2*minor*i + major < 2*major*(khi + 1) */
        int64_t i = draw_floordiv(2 * major, khi + 1, -major - 1, 2 * minor, &rem) + 1;
        if (i < i1)
            i1 = i;
    }
    if (i0 >= i1)
        return;
    int64_t k = draw_floordiv(2 * minor, i0, major, 2 * major, &rem);
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

/* Segments are not clamped point by point (that bends them): a 1-pixel segment keeps
 * Pillow's pixels for endpoints anywhere in Pillow's int range (the walk starts where
 * the clip begins, exactly), a wide one up to DRAW_WIDE_EXACT (its corners stay ints).
 * Farther segments are first cut, in double, to the clip rectangle grown by a margin the
 * line cannot reach across, so what shows keeps its slope. */
#define DRAW_SEGMENT_EXACT 2147483647.0
#define DRAW_WIDE_EXACT 1073741824.0

/* Segment xy as Pillow's int endpoints into c, cut first when it reaches beyond `limit`:
 * 0, 1 when nothing of it can show, -EINVAL for NaN or infinity. */
static int draw_segment_coords(const draw_target *t, const double *xy, double limit, double margin,
                               int64_t *c)
{
    double v[4];
    int far = 0;
    for (int i = 0; i < 4; i++) {
        if (!isfinite(xy[i]))
            return -EINVAL;
        v[i] = trunc(xy[i]);
        far |= fabs(v[i]) > limit;
    }
    if (far) {
        double cut[4];
        const double box[4] = {t->cx0 - margin, t->cy0 - margin, t->cx1 + margin, t->cy1 + margin};
        if (!draw_cut_segment(xy, box, cut))
            return 1;
        for (int i = 0; i < 4; i++)
            v[i] = trunc(cut[i]);
    }
    for (int i = 0; i < 4; i++)
        c[i] = (int64_t)v[i];
    return 0;
}

/* One segment of a line; `last` draws its end pixel too (1-pixel lines). */
static int draw_line_segment(draw_target *t, const double *xy, int width, int last)
{
    int64_t c[4];
    if (width <= 1) {
        int rc = draw_segment_coords(t, xy, DRAW_SEGMENT_EXACT, 2, c);
        if (rc == 0) {
            draw_segment(t, c[0], c[1], c[2], c[3]);
            if (last && fabs(xy[2]) <= DRAW_SEGMENT_EXACT && fabs(xy[3]) <= DRAW_SEGMENT_EXACT)
                draw_pixel(t, c[2], c[3]);
        }
        return rc < 0 ? rc : 0;
    }
    int rc = draw_segment_coords(t, xy, DRAW_WIDE_EXACT, (double)width + 2, c);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    return draw_wide_segment(t, c[0], c[1], c[2], c[3], width);
}

int draw_line(draw_target *t, double x0, double y0, double x1, double y1, int width)
{
    double xy[4] = {x0, y0, x1, y1};
    return draw_line_segment(t, xy, width, 1);
}

/* A connected line through n points, as ImageDraw.line draws it. */
int draw_polyline(draw_target *t, const double *xy, ptrdiff_t n, int width)
{
    if (n <= 0)
        return 0;
    for (ptrdiff_t i = 0; i < 2 * n; i++)
        if (!isfinite(xy[i]))
            return -EINVAL;
    for (ptrdiff_t i = 0; i + 1 < n; i++) { /* (one point draws nothing, as in Pillow) */
        int rc = draw_line_segment(t, xy + 2 * i, width, i + 2 == n);
        if (rc < 0)
            return rc;
    }
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
