/* draw_ellipse.c: ellipses, arcs, chords and pie slices as Pillow's ImageDraw draws
 * them (the rules of libImaging/Draw.c, as in draw.c), straight into native pixels. */
#include "pillow_rounding.h" /* first: see there */

#include "draw.h"
#include <stdlib.h>

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
