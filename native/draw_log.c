/* draw_log.c: the log of what was drawn (per-row spans a Screen takes as its dirty
 * region), and the one-call fast paths that draw with a colour of their own and keep
 * that log under its lock. */
#include "draw.h"
#include <sched.h>

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
