/* smooth.h: antialiased shapes by exact area coverage. smooth.c turns shapes into
 * edges (smooth_acc); smooth_render.c turns the edges' coverage into pixels
 * (smooth_paint). */
#ifndef FBGFX_SMOOTH_H
#define FBGFX_SMOOTH_H

#include "convert.h"
#include "draw.h"
#include "prelude.h"
#include <math.h>

/* Flattening: a curve's chords stray at most this far (pixels) from it, half inside
 * and half outside (vertices are pushed out so the polygon's area is the curve's). */
#define SMOOTH_TOLERANCE 0.03
#define SMOOTH_MAX_STEPS 65536
/* Filled ellipses are cut row by row instead: chords no further than this from the curve */
#define SMOOTH_TOLERANCE_ROW 0.005
#define SMOOTH_LIMIT 1e9 /* coordinates are clamped to +-this before any arithmetic */

/* An edge inside the clip: top < bottom, x given at both ends, dir +1 when it runs down. */
typedef struct {
    double x0, y0, dxdy, top, bottom;
    float dir;
    int32_t next; /* the next edge starting in the same row */
} smooth_edge_t;

typedef struct {
    smooth_edge_t *edges;
    ptrdiff_t n, cap;
    smooth_edge_t local[256];
    int failed;         /* out of memory */
    double top, bottom; /* the rows the edges span */
    double left, right; /* and the columns */
    /* the clip rectangle, [cx0, cx1) x [cy0, cy1) (rows: those of this band) */
    int cx0, cy0, cx1, cy1;
    int clip_top, clip_bottom; /* the clip's rows: every band cuts far segments alike */
} smooth_acc;

enum { SMOOTH_MASK, SMOOTH_X8888, SMOOTH_565, SMOOTH_OTHER };

/* How coverage becomes pixels; copied into locals by the sweep (stores through pixel
 * pointers may alias anything in memory, so nothing it reads per pixel stays there). */
typedef struct {
    int kind, bpp;
    uint32_t r, g, b, a, exact;
    int ro, go, bo;
    const convert_format *f;
    /* SMOOTH_X8888: the colour's bytes spread one to a 16-bit lane (smooth_spread),
     * and the bytes that hold a channel */
    uint64_t spread;
    uint32_t keep;
    int direct; /* X8888 whose `exact` is the lane blend at full weight: cells blend as swept */
} smooth_ink;

typedef struct {
    smooth_ink ink;
    const draw_target *t;
    uint8_t *mask; /* SMOOTH_MASK: over the clip rectangle, cx1 - cx0 bytes a row */
    int evenodd;
    int cy0, cy1;           /* the rows drawn: the clip's, or a band of them */
    int bx0, by0, bx1, by1; /* what was written, exclusive end */
} smooth_paint;

/* The paint of colour (r, g, b, a), `exact` its packed value, blended in format f, or
 * coverage written into mask, in rows [row0, row1) of the clip: 0, or -EINVAL for a
 * colour or format it cannot take. */
int smooth_paint_init(smooth_paint *p, const draw_target *t, const convert_format *f, uint8_t *mask, int r,
                      int g, int b, int a, uint32_t exact, int row0, int row1);
/* Scan the accumulated edges into pixels: 0, -ENOMEM. */
int smooth_render(smooth_acc *a, smooth_paint *p);
/* A filled ellipse, or the ring between it and an inner one (ix, iy > 0): 0, -ENOMEM. */
int smooth_fill_ellipse(smooth_paint *p, double cx, double cy, double rx, double ry, double ix, double iy);

int smooth_line(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                uint32_t exact, int32_t *box, int row0, int row1, double x0, double y0, double x1, double y1,
                double w);
int smooth_polyline(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                    uint32_t exact, int32_t *box, int row0, int row1, const double *xy, ptrdiff_t n, double w,
                    int curve);
int smooth_lines(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                 uint32_t exact, int32_t *box, int row0, int row1, const double *xy, ptrdiff_t n, double w);
int smooth_polygon(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                   uint32_t exact, int32_t *box, int row0, int row1, const double *xy, ptrdiff_t n, double w);
int smooth_ellipse(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                   uint32_t exact, int32_t *box, int row0, int row1, double cx, double cy, double rx,
                   double ry, double start, double end, int kind, double w);
int smooth_rounded_rect(draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a,
                        uint32_t exact, int32_t *box, int row0, int row1, double x0, double y0, double x1,
                        double y1, double rad, int corners, double w);

#endif
