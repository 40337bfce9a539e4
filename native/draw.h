/* draw.h: the target every Pillow-compatible primitive draws into, and the span and
 * coordinate helpers they share (draw.c, draw_ellipse.c, draw_log.c; smooth.c paints
 * through a draw_target too).
 *
 * A draw_target describes the destination: a pointer, a row stride, bytes per pixel
 * (1..4), the surface coordinates of the first pixel, a clip rectangle, a packed
 * colour, and a bounding box of what was written (for dirty rectangles). The clip is
 * the only bound: callers make it lie inside the memory they pass. */
#ifndef FBGFX_DRAW_H
#define FBGFX_DRAW_H

#include "color.h"
#include "prelude.h"
#include <math.h>

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

/* Fill `rows` rows of n pixels of bpp bytes with c, rows `stride` bytes apart (draw.c). */
void draw_fill_rows(uint8_t *p, ptrdiff_t stride, ptrdiff_t n, int64_t rows, int bpp, uint32_t c);

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
static inline int64_t draw_box(draw_target *t, int64_t x0, int64_t y0, int64_t x1, int64_t y1)
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

static inline int draw_coords(const double *xy, int64_t *out, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (draw_coord(xy[i], &out[i]) < 0)
            return -EINVAL;
    return 0;
}

/* Angles (degrees) made 0 <= al < 360 and al <= ar <= al + 360, as Pillow does (draw_ellipse.c,
 * smooth.c). */
static inline void draw_norm_angles(float *al, float *ar)
{
    if (*ar - *al >= 360) {
        *al = 0;
        *ar = 360;
    } else {
        *al = fmod(*al < 0 ? 360 - (fmod(-*al, 360)) : *al, 360);
        *ar = *al + fmod(*ar < *al ? 360 - fmod(*al - *ar, 360) : *ar - *al, 360);
    }
}

/* The part of segment xy (x0, y0, x1, y1, any finite doubles) inside box (x0, y0, x1,
 * y1) into out, or 0 when none of it is: far-away segments are cut to what can show
 * (draw.c, smooth.c) rather than clamped point by point, which would bend them. Computed
 * on halves, so that no difference overflows; a cut end lies exactly on its side. */
static inline int draw_cut_segment(const double *xy, const double *box, double *out)
{
    const double h[2] = {xy[0] * 0.5, xy[1] * 0.5}, d[2] = {xy[2] * 0.5 - h[0], xy[3] * 0.5 - h[1]};
    const double lo[2] = {box[0], box[1]}, hi[2] = {box[2], box[3]};
    double t0 = 0, t1 = 1;
    int k0 = -1, k1 = -1; /* the axis whose side cut each end */
    double b0 = 0, b1 = 0;
    for (int k = 0; k < 2; k++) {
        if (d[k] == 0) {
            if (h[k] < lo[k] * 0.5 || h[k] > hi[k] * 0.5)
                return 0;
            continue;
        }
        double ta = (lo[k] * 0.5 - h[k]) / d[k], tb = (hi[k] * 0.5 - h[k]) / d[k];
        double ba = lo[k], bb = hi[k];
        if (ta > tb) {
            double s = ta;
            ta = tb, tb = s, s = ba, ba = bb, bb = s;
        }
        if (ta > t0)
            t0 = ta, k0 = k, b0 = ba;
        if (tb < t1)
            t1 = tb, k1 = k, b1 = bb;
    }
    if (!(t0 <= t1))
        return 0;
    out[0] = xy[0], out[1] = xy[1], out[2] = xy[2], out[3] = xy[3];
    /* A cut end lies on the side that cut it, exactly; its other coordinate j on the
     * line, as intercept + slope * side: the intercept keeps what the side adds where
     * the ends are so far that `side - end` would lose it. */
    for (int end = 0; end < 2; end++) {
        const int k = end ? k1 : k0;
        if (k < 0)
            continue;
        const int j = 1 - k;
        const double slope = d[j] / d[k], b = end ? b1 : b0;
        out[2 * end + k] = b;
        out[2 * end + j] = (xy[j] - slope * xy[k]) + slope * b;
    }
    return 1;
}

int draw_point(draw_target *t, double x, double y);
int draw_points(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors);
int draw_line(draw_target *t, double x0, double y0, double x1, double y1, int width);
int draw_polyline(draw_target *t, const double *xy, ptrdiff_t n, int width);
int draw_lines(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int width);
int draw_rect(draw_target *t, double x0, double y0, double x1, double y1, int fill, int width);
int draw_rects(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int fill, int width);
int draw_polygon(draw_target *t, const double *xy, ptrdiff_t n, int fill, int width);
int draw_ellipse(draw_target *t, double x0, double y0, double x1, double y1, int fill, int width);
int draw_ellipses(draw_target *t, const double *xy, ptrdiff_t n, const uint32_t *colors, int fill, int width);
int draw_arc(draw_target *t, double x0, double y0, double x1, double y1, float start, float end, int width);
int draw_chord(draw_target *t, double x0, double y0, double x1, double y1, float start, float end, int fill,
               int width);
int draw_pieslice(draw_target *t, double x0, double y0, double x1, double y1, float start, float end,
                  int fill, int width);
int draw_mask(draw_target *t, const uint8_t *mask, ptrdiff_t mstride, int x, int y, int w, int h);
int draw_point_c(draw_target *t, uint32_t color, double x, double y);
int draw_line_c(draw_target *t, uint32_t color, double x0, double y0, double x1, double y1);
int draw_rect_c(draw_target *t, uint32_t color, double x0, double y0, double x1, double y1);
int draw_ellipse_c(draw_target *t, uint32_t color, double x0, double y0, double x1, double y1);
int draw_point_rgb(draw_target *t, int r, int g, int b, double x, double y);
int draw_line_rgb(draw_target *t, int r, int g, int b, double x0, double y0, double x1, double y1);
int draw_rect_rgb(draw_target *t, int r, int g, int b, double x0, double y0, double x1, double y1);
int draw_ellipse_rgb(draw_target *t, int r, int g, int b, double x0, double y0, double x1, double y1);
int draw_log(draw_target *t, int x0, int y0, int x1, int y1);
int draw_log_take(draw_target *t, int32_t *x0, int32_t *x1, int32_t *rows);

#endif
