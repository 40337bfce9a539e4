/* smooth.c: antialiased shapes by exact area coverage, blended into native pixels.
 *
 * A shape is a set of closed contours of straight edges (curves are flattened finely
 * enough that no pixel's area moves by more than a fraction of 1/256). Each edge adds
 * to cells, one per pixel it crosses, the signed height it covers there (`cover`) and
 * that height times where it crosses the pixel (`area`): the signed-area accumulation
 * of font rasterisers (libart, FreeType's "gray" raster, font-rs). Sweeping a row from
 * the left, a pixel's winding area is the cover of every cell left of it plus its own
 * cover minus its own area, so each pixel gets the shape's exact area inside it; runs
 * between cells have one constant coverage and are filled (or blended) as spans.
 *
 * Coverage becomes alpha in 1/255 steps and is blended in the surface's native format
 * as text is (convert.c's formulas, on the stored sRGB values). A target with no format
 * writes the alpha into a mask over the clip rectangle instead (palette formats, where
 * the caller then blends to the nearest palette entry).
 *
 * Geometry: pixel (i, j) is the square [i, i+1) x [j, j+1). Everything is clipped to the
 * target's clip rectangle before it becomes a cell: rows outside it are never visited,
 * an edge left of it counts as a vertical edge on its left side, an edge right of it is
 * dropped. Loops are bounded by the clip and by the number of edges, never by the size
 * of the shape.
 */
#include "smooth.h"
#include <stdlib.h>

/* An empty accumulator for the paint's rows of the clip. */
static void smooth_acc_init(smooth_acc *a, const smooth_paint *p)
{
    a->edges = a->local;
    a->n = 0;
    a->cap = (ptrdiff_t)(sizeof a->local / sizeof a->local[0]);
    a->failed = 0;
    a->top = INFINITY;
    a->left = INFINITY;
    a->right = -INFINITY;
    a->bottom = -INFINITY;
    a->cx0 = p->t->cx0;
    a->cy0 = p->cy0;
    a->cx1 = p->t->cx1;
    a->cy1 = p->cy1;
    a->clip_top = p->t->cy0;
    a->clip_bottom = p->t->cy1;
}

static void smooth_acc_free(smooth_acc *a)
{
    if (a->edges != a->local)
        free(a->edges);
    a->edges = a->local;
    a->n = 0;
}

/* An edge already inside the clip's columns, kept for the rows of the clip it spans. */
static void smooth_edge_in(smooth_acc *a, double x0, double y0, double x1, double y1)
{
    float dir = 1.0f;
    if (y0 > y1) {
        double tx = x0, ty = y0;
        x0 = x1, y0 = y1, x1 = tx, y1 = ty;
        dir = -1.0f;
    }
    double top = y0 > a->cy0 ? y0 : a->cy0, bottom = y1 < a->cy1 ? y1 : a->cy1;
    if (!(top < bottom))
        return;
    if (a->n == a->cap) {
        if (a->failed)
            return;
        ptrdiff_t cap = a->cap * 2;
        smooth_edge_t *e = malloc((size_t)cap * sizeof *e);
        if (!e) {
            a->failed = 1;
            return;
        }
        memcpy(e, a->edges, (size_t)a->n * sizeof *e);
        if (a->edges != a->local)
            free(a->edges);
        a->edges = e;
        a->cap = cap;
    }
    smooth_edge_t *e = &a->edges[a->n++];
    e->x0 = x0;
    e->y0 = y0;
    e->dxdy = (x1 - x0) / (y1 - y0);
    e->top = top;
    e->bottom = bottom;
    e->dir = dir;
    if (top < a->top)
        a->top = top;
    if ((x0 < x1 ? x0 : x1) < a->left)
        a->left = x0 < x1 ? x0 : x1;
    if ((x0 > x1 ? x0 : x1) > a->right)
        a->right = x0 > x1 ? x0 : x1;
    if (bottom > a->bottom)
        a->bottom = bottom;
}

/* Any edge: split where it crosses the clip's left and right sides; a part left of the
 * clip acts as a vertical edge on its left side, a part right of it changes nothing. */
static void smooth_edge(smooth_acc *a, double x0, double y0, double x1, double y1)
{
    if (y0 == y1 || (y0 <= a->cy0 && y1 <= a->cy0) || (y0 >= a->cy1 && y1 >= a->cy1))
        return;
    const double L = a->cx0, R = a->cx1;
    if (x0 >= R && x1 >= R)
        return;
    if (x0 >= L && x1 >= L && x0 <= R && x1 <= R) {
        smooth_edge_in(a, x0, y0, x1, y1);
        return;
    }
    /* parameters where it crosses x = L and x = R, in order */
    double ts[4] = {0, 0, 0, 1};
    int n = 1;
    if (x0 != x1) {
        double tl = (L - x0) / (x1 - x0), tr = (R - x0) / (x1 - x0);
        if (tl > tr) {
            double tmp = tl;
            tl = tr, tr = tmp;
        }
        if (tl > 0 && tl < 1)
            ts[n++] = tl;
        if (tr > 0 && tr < 1)
            ts[n++] = tr;
    }
    ts[n++] = 1;
    double px = x0, py = y0;
    for (int k = 1; k < n; k++) {
        double t = ts[k];
        double qx = t == 1 ? x1 : x0 + (x1 - x0) * t, qy = t == 1 ? y1 : y0 + (y1 - y0) * t;
        double mx = (px + qx) * 0.5;
        if (mx < L)
            smooth_edge_in(a, L, py, L, qy);
        else if (mx < R)
            smooth_edge_in(a, px < L ? L : px > R ? R : px, py, qx < L ? L : qx > R ? R : qx, qy);
        px = qx, py = qy;
    }
}

/* -- shapes ----------------------------------------------------------------------------- */

static int smooth_finite(const double *v, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static inline double smooth_clamp(double v)
{
    return v < -SMOOTH_LIMIT ? -SMOOTH_LIMIT : v > SMOOTH_LIMIT ? SMOOTH_LIMIT : v;
}

/* Render, log what was written, report its box; frees the cells. */
static int smooth_finish(smooth_acc *a, smooth_paint *p, draw_target *t, int32_t *box)
{
    int rc = smooth_render(a, p);
    smooth_acc_free(a);
    if (p->bx0 < p->bx1 && p->ink.kind != SMOOTH_MASK)
        draw_log(t, p->bx0, p->by0, p->bx1, p->by1);
    if (box) {
        box[0] = p->bx0, box[1] = p->by0, box[2] = p->bx1, box[3] = p->by1;
    }
    return rc;
}

/* A closed polygon of n points (x, y pairs), optionally in reverse. */
static void smooth_poly(smooth_acc *a, const double *xy, ptrdiff_t n)
{
    if (n < 2)
        return;
    double px = xy[2 * n - 2], py = xy[2 * n - 1];
    for (ptrdiff_t i = 0; i < n; i++) {
        double x = xy[2 * i], y = xy[2 * i + 1];
        smooth_edge(a, px, py, x, y);
        px = x, py = y;
    }
}

/* The rectangle of width w around segment (x0, y0)-(x1, y1), wound as the ellipses are
 * (so that overlapping parts add up, and count once). */
static void smooth_band(smooth_acc *a, double x0, double y0, double x1, double y1, double w)
{
    double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy);
    if (len == 0 || w <= 0)
        return;
    double nx = -dy / len * w * 0.5, ny = dx / len * w * 0.5;
    double q[8] = {x0 - nx, y0 - ny, x1 - nx, y1 - ny, x1 + nx, y1 + ny, x0 + nx, y0 + ny};
    smooth_poly(a, q, 4);
}

/* A segment of a line of width w: its band, where it can show. A far-away segment is cut
 * to the rows and columns it can reach (its butt ends then lie where nothing shows, and
 * the slope stays); one that cannot reach them adds no edges at all. */
static void smooth_segment(smooth_acc *a, double x0, double y0, double x1, double y1, double w)
{
    const double m = w * 0.5 + 2;
    if ((y0 < a->cy0 - m && y1 < a->cy0 - m) || (y0 > a->cy1 + m && y1 > a->cy1 + m) ||
        (x0 > a->cx1 + m && x1 > a->cx1 + m))
        return; /* outside this band (left of the clip still counts: its edges cancel) */
    /* cut to the whole clip, not the band: each band then cuts a segment alike */
    const double box[4] = {a->cx0 - m, a->clip_top - m, a->cx1 + m, a->clip_bottom + m};
    if (x0 < box[0] || y0 < box[1] || x0 > box[2] || y0 > box[3] || x1 < box[0] || y1 < box[1] ||
        x1 > box[2] || y1 > box[3]) {
        const double xy[4] = {x0, y0, x1, y1};
        double cut[4];
        if (!draw_cut_segment(xy, box, cut))
            return;
        x0 = cut[0], y0 = cut[1], x1 = cut[2], y1 = cut[3];
    }
    smooth_band(a, x0, y0, x1, y1, w);
}

/* Steps for a full turn of an ellipse with the larger radius rmax. */
static int smooth_steps(double rmax)
{
    double n = ceil(M_PI * sqrt(rmax / (2.0 * SMOOTH_TOLERANCE)));
    if (!(n >= 8))
        return 8;
    return n > SMOOTH_MAX_STEPS ? SMOOTH_MAX_STEPS : (int)n;
}

/* How far to push vertices out so that a regular polygon of `steps` sides has the area
 * of the circle through them. */
static double smooth_area_scale(int steps)
{
    double th = 2.0 * M_PI / steps;
    return sqrt(th / sin(th));
}

/* Edges along the ellipse (cx, cy, rx, ry) from parametric angle a0 to a1 (radians,
 * either direction), starting at its point for a0. Returns the end point in *ex, *ey. */
static void smooth_ellipse_path(smooth_acc *a, double cx, double cy, double rx, double ry, double a0,
                                double a1, double *px, double *py)
{
    double rmax = rx > ry ? rx : ry;
    int full = smooth_steps(rmax);
    int n = (int)ceil(full * fabs(a1 - a0) / (2.0 * M_PI));
    if (n < 1)
        n = 1;
    double s = smooth_area_scale(full);
    double step = (a1 - a0) / n;
    /* rotate (cos, sin) by step each time: no trigonometry per vertex */
    double c = cos(step), sn = sin(step);
    double u = cos(a0), v = sin(a0);
    double x = *px, y = *py;
    for (int i = 1; i <= n; i++) {
        double nu = u * c - v * sn, nv = u * sn + v * c;
        u = nu, v = nv;
        double qx, qy;
        if (i == n) {
            qx = cx + rx * cos(a1) * (n > 1 ? s : 1.0), qy = cy + ry * sin(a1) * (n > 1 ? s : 1.0);
        } else {
            qx = cx + rx * s * u, qy = cy + ry * s * v;
        }
        smooth_edge(a, x, y, qx, qy);
        x = qx, y = qy;
    }
    *px = x, *py = y;
}

/* A whole ellipse as a closed contour, in the direction `dir` (+1 or -1). */
static void smooth_ellipse_contour(smooth_acc *a, double cx, double cy, double rx, double ry, int dir)
{
    if (rx <= 0 || ry <= 0)
        return;
    double rmax = rx > ry ? rx : ry;
    int n = smooth_steps(rmax);
    double s = smooth_area_scale(n);
    double step = dir * 2.0 * M_PI / n, c = cos(step), sn = sin(step);
    double u = 1, v = 0, x = cx + rx * s, y = cy;
    for (int i = 1; i <= n; i++) {
        double nu = u * c - v * sn, nv = u * sn + v * c;
        u = nu, v = nv;
        double qx = i == n ? cx + rx * s : cx + rx * s * u, qy = i == n ? cy : cy + ry * s * v;
        smooth_edge(a, x, y, qx, qy);
        x = qx, y = qy;
    }
}

/* What every shape starts with: its paint (colour checked) and an empty accumulator. */
static int smooth_begin(smooth_paint *p, smooth_acc *acc, const draw_target *t, const convert_format *f,
                        uint8_t *mask, int r, int g, int b, int a, uint32_t exact, int row0, int row1)
{
    int rc = smooth_paint_init(p, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc == 0)
        smooth_acc_init(acc, p);
    return rc;
}

/* -- public ----------------------------------------------------------------------------- */

#define SMOOTH_PAINT_ARGS                                                                                    \
    draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a, uint32_t exact,      \
        int32_t *box, int row0, int row1

int smooth_line(SMOOTH_PAINT_ARGS, double x0, double y0, double x1, double y1, double w)
{
    double v[5] = {x0, y0, x1, y1, w};
    if (!smooth_finite(v, 5))
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    smooth_segment(&acc, x0, y0, x1, y1, smooth_clamp(w));
    return smooth_finish(&acc, &p, t, box);
}

/* Connected segments through n points, width w; round joints (discs) when `curve`. */
int smooth_polyline(SMOOTH_PAINT_ARGS, const double *xy, ptrdiff_t n, double w, int curve)
{
    if (!smooth_finite(xy, 2 * n) || !isfinite(w))
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    w = smooth_clamp(w);
    const double m = w * 0.5 + 1; /* a joint further than this from the clip cannot show */
    for (ptrdiff_t i = 0; i + 1 < n; i++) {
        double x0 = xy[2 * i], y0 = xy[2 * i + 1];
        smooth_segment(&acc, x0, y0, xy[2 * i + 2], xy[2 * i + 3], w);
        if (curve && i > 0 && w > 0 && x0 > acc.cx0 - m && x0 < acc.cx1 + m && y0 > acc.cy0 - m &&
            y0 < acc.cy1 + m)
            smooth_ellipse_contour(&acc, x0, y0, w * 0.5, w * 0.5, 1);
    }
    return smooth_finish(&acc, &p, t, box);
}

/* Independent segments: n rows of (x0, y0, x1, y1), one colour. */
int smooth_lines(SMOOTH_PAINT_ARGS, const double *xy, ptrdiff_t n, double w)
{
    if (!smooth_finite(xy, 4 * n) || !isfinite(w))
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    w = smooth_clamp(w);
    for (ptrdiff_t i = 0; i < n; i++)
        smooth_segment(&acc, xy[4 * i], xy[4 * i + 1], xy[4 * i + 2], xy[4 * i + 3], w);
    return smooth_finish(&acc, &p, t, box);
}

/* The polygon's points moved inward by w along both neighbouring edges (mitred; a very
 * sharp corner is cut square at its tip, 4w from the corner). `out` holds up to 4n values. */
static ptrdiff_t smooth_inset(const double *xy, ptrdiff_t n, double w, double *out)
{
    double area2 = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        ptrdiff_t j = (i + 1) % n;
        area2 += xy[2 * i] * xy[2 * j + 1] - xy[2 * j] * xy[2 * i + 1];
    }
    double side = area2 >= 0 ? 1.0 : -1.0; /* y down: positive area is clockwise on screen */
    ptrdiff_t m = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        ptrdiff_t h = (i + n - 1) % n, j = (i + 1) % n;
        double x = xy[2 * i], y = xy[2 * i + 1];
        double ax = x - xy[2 * h], ay = y - xy[2 * h + 1], bx = xy[2 * j] - x, by = xy[2 * j + 1] - y;
        double la = sqrt(ax * ax + ay * ay), lb = sqrt(bx * bx + by * by);
        if (la == 0 || lb == 0) {
            out[2 * m] = x, out[2 * m + 1] = y, m++;
            continue;
        }
        /* inward normals of the two edges */
        double nax = -ay / la * side, nay = ax / la * side, nbx = -by / lb * side, nby = bx / lb * side;
        double mx = nax + nbx, my = nay + nby, d = 1 + (nax * nbx + nay * nby);
        if (d > 1.0 / 8) { /* miter no longer than 4w */
            out[2 * m] = x + w * mx / d, out[2 * m + 1] = y + w * my / d, m++;
        } else {
            out[2 * m] = x + w * nax, out[2 * m + 1] = y + w * nay, m++;
            out[2 * m] = x + w * nbx, out[2 * m + 1] = y + w * nby, m++;
        }
    }
    return m;
}

/* A polygon of n points filled even-odd (w == 0), or its outline: the band between it
 * and the polygon moved inward by w (w > 0). */
int smooth_polygon(SMOOTH_PAINT_ARGS, const double *xy, ptrdiff_t n, double w)
{
    if (n < 0 || !smooth_finite(xy, 2 * n) || !isfinite(w) || w < 0)
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    p.evenodd = 1;
    double local[64];
    double *pts = n <= 8 ? local : malloc((size_t)n * 6 * sizeof(double));
    if (!pts)
        return -ENOMEM;
    for (ptrdiff_t i = 0; i < 2 * n; i++)
        pts[i] = smooth_clamp(xy[i]);
    smooth_poly(&acc, pts, n);
    if (w > 0 && n > 2) {
        ptrdiff_t m = smooth_inset(pts, n, smooth_clamp(w), pts + 2 * n);
        /* a polygon thinner than its outline turns its inset inside out: keep that
         * inside the polygon's box, where the outline is drawn */
        double lo[2] = {pts[0], pts[1]}, hi[2] = {pts[0], pts[1]};
        for (ptrdiff_t i = 0; i < 2 * n; i++) {
            lo[i & 1] = pts[i] < lo[i & 1] ? pts[i] : lo[i & 1];
            hi[i & 1] = pts[i] > hi[i & 1] ? pts[i] : hi[i & 1];
        }
        for (ptrdiff_t i = 2 * n; i < 2 * (n + m); i++)
            pts[i] = pts[i] < lo[i & 1] ? lo[i & 1] : pts[i] > hi[i & 1] ? hi[i & 1] : pts[i];
        smooth_poly(&acc, pts + 2 * n, m);
    }
    if (pts != local)
        free(pts);
    return smooth_finish(&acc, &p, t, box);
}

enum { SMOOTH_ELLIPSE, SMOOTH_ARC, SMOOTH_CHORD, SMOOTH_PIE };

/* Where the line through (px, py) along (dx, dy) meets the ellipse (0, 0, rx, ry):
 * the larger parameter in *s1, the smaller in *s0; 0 when it misses. */
static int smooth_meet(double px, double py, double dx, double dy, double rx, double ry, double *s0,
                       double *s1)
{
    double A = dx * dx / (rx * rx) + dy * dy / (ry * ry), B = 2 * (px * dx / (rx * rx) + py * dy / (ry * ry));
    double C = px * px / (rx * rx) + py * py / (ry * ry) - 1, disc = B * B - 4 * A * C;
    if (A == 0 || disc <= 0)
        return 0;
    double q = sqrt(disc);
    *s0 = (-B - q) / (2 * A);
    *s1 = (-B + q) / (2 * A);
    return 1;
}

/* The parametric angle of (x, y) on the ellipse (0, 0, rx, ry), in [lo, lo + 2 pi). */
static double smooth_angle_of(double x, double y, double rx, double ry, double lo)
{
    double a = atan2(y / ry, x / rx);
    while (a < lo)
        a += 2 * M_PI;
    while (a >= lo + 2 * M_PI)
        a -= 2 * M_PI;
    return a;
}

/* A chord's or pie slice's inside moved inward by w (relative to the centre: the
 * inner ellipse has radii ix, iy), as a contour in the reverse direction; nothing
 * when no inside is left. */
static void smooth_inset_cut(smooth_acc *acc, int kind, double cx, double cy, double rx, double ry, double ix,
                             double iy, double a0, double a1, double w)
{
    if (ix <= 0 || iy <= 0)
        return;
    double p0x = rx * cos(a0), p0y = ry * sin(a0), p1x = rx * cos(a1), p1y = ry * sin(a1);
    double s0, s1, b0, b1, ex, ey, fx, fy;
    double d0 = sqrt(p0x * p0x + p0y * p0y), d1 = sqrt(p1x * p1x + p1y * p1y);
    double ux = p0x / d0, uy = p0y / d0, vx = p1x / d1, vy = p1y / d1, cross = ux * vy - uy * vx;
    if (kind == SMOOTH_CHORD || fabs(cross) < 1e-9) {
        /* the chord (or a half slice's diameter) moved toward the curve by w */
        double dx = p1x - p0x, dy = p1y - p0y, l = sqrt(dx * dx + dy * dy);
        if (l == 0)
            return;
        dx /= l, dy /= l;
        double ox = p0x + dy * w, oy = p0y - dx * w; /* inward normal (dy, -dx): toward the curve */
        if (!smooth_meet(ox, oy, dx, dy, ix, iy, &s0, &s1))
            return;
        ex = ox + s0 * dx, ey = oy + s0 * dy, fx = ox + s1 * dx, fy = oy + s1 * dy;
        b0 = smooth_angle_of(ex, ey, ix, iy, a0 - M_PI);
        b1 = smooth_angle_of(fx, fy, ix, iy, b0);
        double x = cx + fx, y = cy + fy;
        smooth_ellipse_path(acc, cx, cy, ix, iy, b1, b0, &x, &y);
        smooth_edge(acc, x, y, cx + fx, cy + fy);
        return;
    }
    /* the two radii moved inward by w meet at the new apex */
    double n0x = -uy * w, n0y = ux * w, n1x = vy * w, n1y = -vx * w;
    /* n0 + s u = n1 + q v */
    double s = ((n1x - n0x) * vy - (n1y - n0y) * vx) / cross;
    double qx = n0x + s * ux, qy = n0y + s * uy;
    if (qx * qx / (ix * ix) + qy * qy / (iy * iy) >= 1)
        return; /* the slice is thinner than the outline */
    double q0, q1;
    if (!smooth_meet(qx, qy, ux, uy, ix, iy, &s0, &s1) || !smooth_meet(qx, qy, vx, vy, ix, iy, &q0, &q1))
        return;
    ex = qx + s1 * ux, ey = qy + s1 * uy, fx = qx + q1 * vx, fy = qy + q1 * vy;
    b0 = smooth_angle_of(ex, ey, ix, iy, a0 - M_PI);
    b1 = smooth_angle_of(fx, fy, ix, iy, b0);
    double x = cx + fx, y = cy + fy;
    smooth_edge(acc, cx + qx, cy + qy, x, y);
    smooth_ellipse_path(acc, cx, cy, ix, iy, b1, b0, &x, &y);
    smooth_edge(acc, x, y, cx + qx, cy + qy);
}

/* An ellipse centred on (cx, cy) with radii rx, ry: whole (kind 0) or the part from
 * parametric angle start to end in degrees, clockwise on screen (arc, chord, pie
 * slice), angles normalised as Pillow does. w == 0 fills it; w > 0 draws its outline:
 * the shape minus the shape moved inward by w (an arc: the band of width w inside the
 * curve, cut along the radii). */
int smooth_ellipse(SMOOTH_PAINT_ARGS, double cx, double cy, double rx, double ry, double start, double end,
                   int kind, double w)
{
    double v[7] = {cx, cy, rx, ry, start, end, w};
    if (!smooth_finite(v, 7) || w < 0 || kind < SMOOTH_ELLIPSE || kind > SMOOTH_PIE)
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    cx = smooth_clamp(cx), cy = smooth_clamp(cy), rx = smooth_clamp(rx), ry = smooth_clamp(ry),
    w = smooth_clamp(w);
    if (kind == SMOOTH_ARC && w == 0)
        w = 1;
    double ix = rx - w, iy = ry - w; /* the inner edge of an outline */
    float al = (float)start, ar = (float)end;
    if (kind != SMOOTH_ELLIPSE)
        draw_norm_angles(&al, &ar);
    if (rx <= 0 || ry <= 0 || (kind != SMOOTH_ELLIPSE && ar == al))
        return smooth_finish(&acc, &p, t, box);
    if (kind == SMOOTH_ELLIPSE || ar - al >= 360) {
        /* filled, or a ring: row by row */
        rc = smooth_fill_ellipse(&p, cx, cy, rx, ry, w > 0 ? ix : 0, w > 0 ? iy : 0);
        if (rc < 0) {
            smooth_acc_free(&acc);
            return rc;
        }
        return smooth_finish(&acc, &p, t, box);
    }
    double a0 = al * M_PI / 180.0, a1 = ar * M_PI / 180.0;
    double x0 = cx + rx * cos(a0), y0 = cy + ry * sin(a0), x = x0, y = y0;
    smooth_ellipse_path(&acc, cx, cy, rx, ry, a0, a1, &x, &y);
    if (kind == SMOOTH_ARC && ix > 0 && iy > 0) {
        double jx = cx + ix * cos(a1), jy = cy + iy * sin(a1);
        smooth_edge(&acc, x, y, jx, jy);
        smooth_ellipse_path(&acc, cx, cy, ix, iy, a1, a0, &jx, &jy);
        smooth_edge(&acc, jx, jy, x0, y0);
    } else if (kind == SMOOTH_CHORD) {
        smooth_edge(&acc, x, y, x0, y0);
    } else { /* a pie slice, or an arc whose band reaches the centre */
        smooth_edge(&acc, x, y, cx, cy);
        smooth_edge(&acc, cx, cy, x0, y0);
    }
    if (w > 0 && kind != SMOOTH_ARC)
        smooth_inset_cut(&acc, kind, cx, cy, rx, ry, ix, iy, a0, a1, w);
    return smooth_finish(&acc, &p, t, box);
}

/* A rectangle [x0, x1] x [y0, y1] with corners rounded to radius rad (those whose bit
 * is set in `corners`: 1 top left, 2 top right, 4 bottom right, 8 bottom left): filled
 * (w == 0) or its outline, the band of width w inside its edge. */
static void smooth_rounded_contour(smooth_acc *a, double x0, double y0, double x1, double y1, double rad,
                                   int corners, int dir)
{
    if (x1 <= x0 || y1 <= y0)
        return;
    double cxs[4] = {x0 + rad, x1 - rad, x1 - rad, x0 + rad},
           cys[4] = {y0 + rad, y0 + rad, y1 - rad, y1 - rad};
    double px[4] = {x0, x1, x1, x0}, py[4] = {y0, y0, y1, y1};
    /* clockwise on screen from the top-left corner; each corner arc spans 90 degrees */
    double first_x = 0, first_y = 0, x = 0, y = 0;
    for (int k = 0; k < 4; k++) {
        int i = dir > 0 ? k : 3 - k;
        double sx, sy;
        if ((corners >> i & 1) && rad > 0) {
            double a0 = M_PI * (1.0 + 0.5 * i), a1 = a0 + M_PI / 2;
            if (dir < 0) {
                double tmp = a0;
                a0 = a1, a1 = tmp;
            }
            sx = cxs[i] + rad * cos(a0), sy = cys[i] + rad * sin(a0);
            if (k == 0)
                first_x = sx, first_y = sy;
            else
                smooth_edge(a, x, y, sx, sy);
            x = sx, y = sy;
            smooth_ellipse_path(a, cxs[i], cys[i], rad, rad, a0, a1, &x, &y);
        } else {
            sx = px[i], sy = py[i];
            if (k == 0)
                first_x = sx, first_y = sy;
            else
                smooth_edge(a, x, y, sx, sy);
            x = sx, y = sy;
        }
    }
    smooth_edge(a, x, y, first_x, first_y);
}

int smooth_rounded_rect(SMOOTH_PAINT_ARGS, double x0, double y0, double x1, double y1, double rad,
                        int corners, double w)
{
    double v[6] = {x0, y0, x1, y1, rad, w};
    if (!smooth_finite(v, 6) || w < 0)
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact, row0, row1);
    if (rc < 0)
        return rc;
    x0 = smooth_clamp(x0), y0 = smooth_clamp(y0), x1 = smooth_clamp(x1), y1 = smooth_clamp(y1);
    w = smooth_clamp(w);
    double half = (x1 - x0 < y1 - y0 ? x1 - x0 : y1 - y0) * 0.5;
    rad = rad < 0 ? 0 : rad > half ? half : rad;
    smooth_rounded_contour(&acc, x0, y0, x1, y1, rad, corners, 1);
    if (w > 0) {
        double ir = rad - w;
        smooth_rounded_contour(&acc, x0 + w, y0 + w, x1 - w, y1 - w, ir < 0 ? 0 : ir, ir > 0 ? corners : 0,
                               -1);
    }
    return smooth_finish(&acc, &p, t, box);
}
