/* smooth_render.c: coverage into pixels. The cells that smooth.c's edges cover are
 * swept row by row from the left (see smooth.c), each pixel or span of pixels blended
 * with the paint's colour in the surface's format, or its coverage written to a mask. */
#include "smooth.h"
#include <stdlib.h>

/* A 32-bit pixel's bytes 0, 2, 1, 3 in the 16-bit lanes of a 64-bit word, so that all
 * four blend with one multiply each (no lane can carry: 255 * 255 < 65536). */
static inline uint64_t smooth_spread(uint32_t v)
{
    return (v & 0x00ff00ffu) | (uint64_t)(v & 0xff00ff00u) << 24;
}

/* An X8888 pixel v blended with the ink at weight c (1..254): per channel
 * div255(colour * c + v * (255 - c)), convert_div255 in every lane at once, so the
 * same bytes as the three-channel formula; the padding byte becomes 0 as there. */
static inline __attribute__((always_inline)) uint32_t smooth_blend_word(uint64_t spread, uint32_t keep,
                                                                        uint32_t v, uint32_t c)
{
    const uint64_t lanes = 0x00ff00ff00ff00ffull;
    uint64_t x = smooth_spread(v) * (255 - c) + spread * c + 0x0080008000800080ull;
    x = ((x + ((x >> 8) & lanes)) >> 8) & lanes;
    return ((uint32_t)x | (uint32_t)(x >> 24)) & keep;
}

FBGFX_HOT static void smooth_blend_x8888(uint32_t *restrict d, int n, int ro, int go, int bo, uint32_t r,
                                         uint32_t g, uint32_t b, uint32_t k)
{
    const uint32_t ik = 255 - k, rk = r * k, gk = g * k, bk = b * k;
    for (int x = 0; x < n; x++) {
        uint32_t v = d[x];
        d[x] = convert_div255(rk + ((v >> ro) & 255) * ik) << ro |
               convert_div255(gk + ((v >> go) & 255) * ik) << go |
               convert_div255(bk + ((v >> bo) & 255) * ik) << bo;
    }
}

FBGFX_HOT static void smooth_blend_565(uint16_t *restrict d, int n, int ro, int bo, uint32_t r, uint32_t g,
                                       uint32_t b, uint32_t k, const convert_format *f)
{
    const uint32_t m5 = f->mul[0], a5 = f->add[0], m6 = f->mul[1], a6 = f->add[1];
    const uint32_t ik = 255 - k, rk = r * k, gk = g * k, bk = b * k;
    for (int x = 0; x < n; x++) {
        uint32_t v = d[x];
        uint32_t dr = (((v >> ro) & 31) * m5 + a5) >> 16;
        uint32_t dg = (((v >> 5) & 63) * m6 + a6) >> 16;
        uint32_t db = (((v >> bo) & 31) * m5 + a5) >> 16;
        d[x] =
            (uint16_t)((convert_div255(rk + dr * ik) >> 3) << ro | (convert_div255(gk + dg * ik) >> 2) << 5 |
                       (convert_div255(bk + db * ik) >> 3) << bo);
    }
}

/* One pixel at d, at coverage alpha (1..255). */
static inline __attribute__((always_inline)) void smooth_pixel(const smooth_ink k, uint8_t *d, uint32_t alpha)
{
    if (k.kind == SMOOTH_MASK) {
        *d = (uint8_t)alpha;
        return;
    }
    uint32_t c = convert_div255(alpha * k.a);
    if (c == 255) {
        convert_store(d, k.bpp, k.exact);
        return;
    }
    if (c == 0)
        return;
    const uint32_t ic = 255 - c;
    if (k.kind == SMOOTH_X8888) {
        *(uint32_t *)d = smooth_blend_word(k.spread, k.keep, *(uint32_t *)d, c);
    } else if (k.kind == SMOOTH_565) {
        const convert_format *f = k.f;
        uint32_t v = *(uint16_t *)d;
        uint32_t dr = (((v >> k.ro) & 31) * f->mul[0] + f->add[0]) >> 16;
        uint32_t dg = (((v >> 5) & 63) * f->mul[1] + f->add[1]) >> 16;
        uint32_t db = (((v >> k.bo) & 31) * f->mul[0] + f->add[0]) >> 16;
        *(uint16_t *)d = (uint16_t)((convert_div255(k.r * c + dr * ic) >> 3) << k.ro |
                                    (convert_div255(k.g * c + dg * ic) >> 2) << 5 |
                                    (convert_div255(k.b * c + db * ic) >> 3) << k.bo);
    } else {
        convert_store(d, k.bpp, convert_blend_pixel(convert_load(d, k.bpp), k.r, k.g, k.b, c, k.f));
    }
}

/* n pixels from d on, at coverage alpha (1..255). Inlined into the sweep (and so into
 * its AVX2 clones): a filled shape's inside is one such span a row. */
static inline __attribute__((always_inline)) void smooth_span(const smooth_ink *k, uint8_t *d, int n,
                                                              uint32_t alpha)
{
    if (k->kind == SMOOTH_MASK) {
        memset(d, (int)alpha, (size_t)n);
        return;
    }
    uint32_t c = convert_div255(alpha * k->a);
    if (c == 0)
        return;
    if (c == 255) {
        if (k->kind == SMOOTH_X8888) {
            uint32_t *restrict q = (uint32_t *)d;
            for (int i = 0; i < n; i++)
                q[i] = k->exact;
        } else {
            draw_fill_rows(d, 0, n, 1, k->bpp, k->exact);
        }
        return;
    }
    switch (k->kind) {
    case SMOOTH_X8888:
        smooth_blend_x8888((uint32_t *)d, n, k->ro, k->go, k->bo, k->r, k->g, k->b, c);
        break;
    case SMOOTH_565:
        smooth_blend_565((uint16_t *)d, n, k->ro, k->bo, k->r, k->g, k->b, c, k->f);
        break;
    default:
        for (int i = 0; i < n; i++, d += k->bpp)
            convert_store(d, k->bpp, convert_blend_pixel(convert_load(d, k->bpp), k->r, k->g, k->b, c, k->f));
    }
}

/* n pixels from d on, each at its own coverage (alphas[i], 0..255). */
FBGFX_HOT static void smooth_run(const smooth_ink *k, const uint8_t *alphas, uint8_t *d, int n)
{
    switch (k->kind) {
    case SMOOTH_MASK:
        memcpy(d, alphas, (size_t)n);
        break;
    case SMOOTH_X8888:
        if (n >= 16) { /* long enough for the vector loop */
            convert_mask_row_x8888(alphas, (uint32_t *)d, n, k->ro, k->go, k->bo, k->r, k->g, k->b, k->a);
            break;
        }
        for (int i = 0; i < n; i++) { /* the same bytes, in lanes (a weight of 0 keeps the pixel) */
            uint32_t c = convert_div255(alphas[i] * k->a);
            if (c)
                ((uint32_t *)d)[i] = smooth_blend_word(k->spread, k->keep, ((uint32_t *)d)[i], c);
        }
        break;
    case SMOOTH_565:
        convert_mask_row_565(alphas, (uint16_t *)d, n, k->ro, k->bo, k->r, k->g, k->b, k->a, k->f);
        break;
    default:
        for (int i = 0; i < n; i++, d += k->bpp)
            if (alphas[i])
                smooth_pixel(*k, d, alphas[i]);
    }
}

static inline __attribute__((always_inline)) uint32_t smooth_alpha(int evenodd, float v)
{
    float c = fabsf(v);
    if (!evenodd)
        /* not fminf: without -ffinite-math-only that is a libm call, which spills the
         * sweep's registers every cell; this compiles to minss (1 for NaN, as fminf) */
        return (uint32_t)((c < 1.0f ? c : 1.0f) * 255.0f + 0.5f);
    if (c > 1.0f) {
        c -= 2.0f * floorf(c * 0.5f);
        if (c > 1.0f)
            c = 2.0f - c;
    }
    return (uint32_t)(c * 255.0f + 0.5f);
}

/* The piece of an edge inside one row, from x = xa to x = xb (inside the clip's
 * columns), covering signed height d: added to the row's cells, cover[] and area[]
 * (indexed from the clip's left side). Returns the columns touched, [*i0, *i1]. */
static inline void smooth_piece(float *restrict cover, float *restrict area, int cx0, int cx1, double xa,
                                double xb, double d, int *i0, int *i1)
{
    double lo = xa < xb ? xa : xb, hi = xa < xb ? xb : xa;
    int j0 = (int)floor(lo), j1 = (int)ceil(hi) - 1;
    if (j1 < j0)
        j1 = j0; /* a vertical piece on a pixel boundary belongs to the pixel on its right */
    const int jc = j1 < cx1 ? j1 : cx1 - 1; /* the last column inside the clip */
    *i0 = j0, *i1 = jc;
    if (j0 > jc)
        return; /* on the clip's right side: nothing to see */
    if (j0 == j1) {
        cover[j0 - cx0] += (float)d;
        area[j0 - cx0] += (float)(d * ((lo + hi) * 0.5 - j0));
        return;
    }
    /* a partial column at each end, whole ones between (each covering `per`) */
    double per = d / (hi - lo);
    double part = (j0 + 1 - lo) * per;
    cover[j0 - cx0] += (float)part;
    area[j0 - cx0] += (float)(part * ((lo + j0 + 1) * 0.5 - j0));
    const int end = j1 - 1 < jc ? j1 - 1 : jc;
    const float whole = (float)per, half = (float)(per * 0.5);
    for (int i = j0 + 1; i <= end; i++) {
        cover[i - cx0] += whole;
        area[i - cx0] += half;
    }
    if (j1 <= jc) {
        part = (hi - j1) * per;
        cover[j1 - cx0] += (float)part;
        area[j1 - cx0] += (float)(part * ((j1 + hi) * 0.5 - j1));
    }
}

/* Sweep row y from the left: its cells (cover[], area[], touched in the sorted column
 * ranges) pixel by pixel, spans of constant coverage between them; the cells are left
 * zero. With `more`, the pixels of the next row near these ranges are prefetched. */
static inline __attribute__((always_inline)) void
smooth_sweep(smooth_paint *p, const smooth_ink ink, int evenodd, int y, int more, int cx0, int cx1,
             float *cover, float *area, const int32_t *ranges, ptrdiff_t nranges, uint8_t *alphas)
{
    const draw_target *t = p->t;
    const int bpp = ink.bpp;
    uint8_t *const mask = ink.kind == SMOOTH_MASK ? p->mask : NULL;
    /* sweep: cells pixel by pixel, spans of constant coverage between them */
    float acc = 0;
    int x = cx0;                             /* everything left of x is done */
    int first = INT32_MAX, last = INT32_MIN; /* what this row wrote */
    uint8_t *row = mask ? mask + (ptrdiff_t)(y - t->cy0) * (cx1 - cx0) - cx0
                        : t->data + (ptrdiff_t)(y - t->oy) * t->stride - (ptrdiff_t)t->ox * bpp;
    for (ptrdiff_t j = 0; j < nranges; j++) {
        int lo = ranges[2 * j] > x ? ranges[2 * j] : x, hi = ranges[2 * j + 1];
        if (lo > x) {
            uint32_t alpha = smooth_alpha(evenodd, acc);
            if (alpha) {
                smooth_span(&ink, row + (ptrdiff_t)x * bpp, lo - x, alpha);
                first = first < x ? first : x;
                last = lo;
            }
        }
        int f0 = INT32_MAX, f1 = INT32_MIN;
        if (ink.direct) {
            /* each cell blended as it is swept: a pixel's bytes do not depend on whether
             * it is part of a run (at full weight the blend gives `exact`) */
            uint32_t *px = (uint32_t *)row;
            for (int i = lo; i <= hi; i++) {
                float c = cover[i - cx0];
                uint32_t alpha = smooth_alpha(evenodd, acc + c - area[i - cx0]);
                if (alpha) {
                    f0 = f0 < i ? f0 : i;
                    f1 = i + 1;
                    uint32_t w = convert_div255(alpha * ink.a);
                    if (w)
                        px[i] = smooth_blend_word(ink.spread, ink.keep, px[i], w);
                }
                acc += c;
                cover[i - cx0] = 0;
                area[i - cx0] = 0;
            }
            if (f0 < f1) {
                first = first < f0 ? first : f0;
                last = f1;
            }
            if (hi + 1 > x)
                x = hi + 1;
            continue;
        }
        /* the cells' alphas, then blended as one run */
        for (int i = lo; i <= hi; i++) {
            float c = cover[i - cx0];
            uint32_t alpha = smooth_alpha(evenodd, acc + c - area[i - cx0]);
            alphas[i - lo] = (uint8_t)alpha;
            if (alpha) {
                f0 = f0 < i ? f0 : i;
                f1 = i + 1;
            }
            acc += c;
            cover[i - cx0] = 0;
            area[i - cx0] = 0;
        }
        if (f1 - f0 > 4) {
            smooth_run(&ink, alphas + (f0 - lo), row + (ptrdiff_t)f0 * bpp, f1 - f0);
            first = first < f0 ? first : f0;
            last = f1;
        } else if (f0 < f1) { /* a few pixels: not worth a vector loop */
            for (int i = f0; i < f1; i++)
                if (alphas[i - lo])
                    smooth_pixel(ink, row + (ptrdiff_t)i * bpp, alphas[i - lo]);
            first = first < f0 ? first : f0;
            last = f1;
        }
        if (hi + 1 > x)
            x = hi + 1;
    }
    if (x < cx1) {
        uint32_t alpha = smooth_alpha(evenodd, acc);
        if (alpha) {
            smooth_span(&ink, row + (ptrdiff_t)x * bpp, cx1 - x, alpha);
            first = first < x ? first : x;
            last = cx1;
        }
    }
    if (!mask && more) {
        /* the next row's cells lie near this row's: fetch their pixels while its
         * pieces are worked out (a pixel read from memory is the sweep's main cost) */
        const uint8_t *next = row + t->stride;
        for (ptrdiff_t j = 0; j < nranges; j++) {
            const uint8_t *a0 = next + (ptrdiff_t)ranges[2 * j] * bpp;
            const uint8_t *a1 = next + (ptrdiff_t)ranges[2 * j + 1] * bpp;
            __builtin_prefetch(a0, 1);
            if (((uintptr_t)a0 ^ (uintptr_t)a1) >= 64)
                __builtin_prefetch(a1, 1);
        }
    }
    if (first < last) {
        p->bx0 = first < p->bx0 ? first : p->bx0;
        p->bx1 = last > p->bx1 ? last : p->bx1;
        p->by0 = y < p->by0 ? y : p->by0;
        p->by1 = y + 1;
    }
}

/* Add column range [i0, i1] to a row's ranges, kept sorted by their start. */
static inline void smooth_add_range(int32_t *ranges, ptrdiff_t *n, int i0, int i1)
{
    ptrdiff_t j = (*n)++;
    while (j > 0 && ranges[2 * j - 2] > i0) {
        ranges[2 * j] = ranges[2 * j - 2];
        ranges[2 * j + 1] = ranges[2 * j - 1];
        j--;
    }
    ranges[2 * j] = i0;
    ranges[2 * j + 1] = i1;
}

static int smooth_range_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Put a row's n column ranges (appended as the edges came) in order of their start, for
 * the sweep; returns how many there are then. A few are sorted in place; so many that
 * they cover the row's cells several times over become one range from the first column
 * to the last (the sweep reads each cell once either way, and a cell no edge touched
 * gives the same pixel as the span it would have been part of): a long polyline's rows
 * cost what their cells and edges cost, never the square of their edges. */
static ptrdiff_t smooth_order_ranges(int32_t *ranges, ptrdiff_t n, ptrdiff_t width)
{
    if (n <= 16) {
        for (ptrdiff_t i = 1; i < n; i++) {
            int32_t i0 = ranges[2 * i], i1 = ranges[2 * i + 1];
            ptrdiff_t j = i;
            for (; j > 0 && ranges[2 * j - 2] > i0; j--) {
                ranges[2 * j] = ranges[2 * j - 2];
                ranges[2 * j + 1] = ranges[2 * j - 1];
            }
            ranges[2 * j] = i0;
            ranges[2 * j + 1] = i1;
        }
        return n;
    }
    if (n * 8 > width) {
        int32_t lo = ranges[0], hi = ranges[1];
        for (ptrdiff_t i = 1; i < n; i++) {
            lo = ranges[2 * i] < lo ? ranges[2 * i] : lo;
            hi = ranges[2 * i + 1] > hi ? ranges[2 * i + 1] : hi;
        }
        ranges[0] = lo, ranges[1] = hi;
        return 1;
    }
    qsort(ranges, (size_t)n, 2 * sizeof *ranges, smooth_range_cmp);
    return n;
}

/* Zero the cells of columns [left, right] (clip coordinates, inside the clip's columns):
 * all a shape within them can touch, and the sweep leaves them zero again. */
static void smooth_zero_cells(float *cover, float *area, int cx0, int cx1, double left, double right)
{
    ptrdiff_t i0 = (ptrdiff_t)floor(left) - cx0, i1 = (ptrdiff_t)ceil(right) - cx0;
    ptrdiff_t n = (ptrdiff_t)cx1 - cx0;
    i0 = i0 < 0 ? 0 : i0;
    i1 = i1 > n ? n : i1;
    if (i0 <= i1) {
        memset(cover + i0, 0, (size_t)(i1 - i0 + 1) * sizeof *cover);
        memset(area + i0, 0, (size_t)(i1 - i0 + 1) * sizeof *area);
    }
}

/* Scan the rows: each row's active edges add their pieces to the row's cells, then the
 * row is swept from the left, pixel by pixel where cells are, as spans between them. */
FBGFX_HOT int smooth_render(smooth_acc *a, smooth_paint *p)
{
    if (a->failed)
        return -ENOMEM;
    if (a->n == 0)
        return 0;
    const int cx0 = a->cx0, cx1 = a->cx1;
    const int r0 = (int)floor(a->top), r1 = (int)ceil(a->bottom);
    const smooth_ink ink = p->ink;
    const int evenodd = p->evenodd;
    const ptrdiff_t rows = (ptrdiff_t)r1 - r0, width = (ptrdiff_t)cx1 - cx0 + 1;
    int32_t local_head[256], local_active[2][128], local_ranges[2 * 128];
    float local_cells[2 * 1024];
    uint8_t local_alphas[1024];
    int32_t *head = rows <= 256 ? local_head : malloc((size_t)rows * sizeof *head);
    int32_t *const lists = a->n <= 128 ? local_active[0] : malloc((size_t)a->n * 2 * sizeof *lists);
    int32_t *active = lists, *spare = lists == local_active[0] ? local_active[1] : lists + a->n;
    int32_t *ranges = a->n <= 128 ? local_ranges : malloc((size_t)a->n * 2 * sizeof *ranges);
    float *cover = width <= 1024 ? local_cells : calloc((size_t)width * 2, sizeof *cover);
    uint8_t *alphas = width <= 1024 ? local_alphas : malloc((size_t)width);
    int rc = 0;
    if (!head || !lists || !ranges || !cover || !alphas) {
        rc = -ENOMEM;
        goto done;
    }
    float *area = cover + width;
    if (cover == local_cells)
        smooth_zero_cells(cover, area, cx0, cx1, a->left, a->right);
    for (ptrdiff_t r = 0; r < rows; r++)
        head[r] = -1;
    for (ptrdiff_t i = a->n - 1; i >= 0; i--) {
        ptrdiff_t r = (ptrdiff_t)floor(a->edges[i].top) - r0;
        a->edges[i].next = head[r];
        head[r] = (int32_t)i;
    }
    ptrdiff_t nactive = 0;
    for (ptrdiff_t r = 0; r < rows; r++) {
        const int y = (int)(r0 + r);
        /* the row's edges in the order they were added: the active ones still going and
         * those starting here, merged. Each cell's pieces then add up in the same order
         * whichever band of rows the row is drawn in, and so round alike. */
        ptrdiff_t m = 0, k = 0;
        for (int32_t fresh = head[r]; k < nactive || fresh >= 0;) {
            int32_t i;
            if (fresh >= 0 && (k >= nactive || fresh < active[k])) {
                i = fresh;
                fresh = a->edges[fresh].next;
            } else if (a->edges[i = active[k++]].bottom <= y) {
                continue;
            }
            spare[m++] = i;
        }
        int32_t *swap = active;
        active = spare, spare = swap, nactive = m;
        /* each active edge's piece in this row */
        ptrdiff_t nranges = 0;
        for (k = 0; k < nactive; k++) {
            const smooth_edge_t *e = &a->edges[active[k]];
            double ya = e->top > y ? e->top : y, yb = e->bottom < y + 1 ? e->bottom : y + 1;
            double xa = e->x0 + (ya - e->y0) * e->dxdy, xb = e->x0 + (yb - e->y0) * e->dxdy;
            xa = xa < cx0 ? cx0 : xa > cx1 ? cx1 : xa;
            xb = xb < cx0 ? cx0 : xb > cx1 ? cx1 : xb;
            int i0, i1;
            smooth_piece(cover, area, cx0, cx1, xa, xb, (yb - ya) * e->dir, &i0, &i1);
            if (i0 <= i1) {
                ranges[2 * nranges] = i0;
                ranges[2 * nranges + 1] = i1;
                nranges++;
            }
        }
        nranges = smooth_order_ranges(ranges, nranges, width);
        smooth_sweep(p, ink, evenodd, y, y + 1 < r1, cx0, cx1, cover, area, ranges, nranges, alphas);
    }
done:
    if (head != local_head)
        free(head);
    if (lists != local_active[0])
        free(lists);
    if (ranges != local_ranges)
        free(ranges);
    if (cover != local_cells)
        free(cover);
    if (alphas != local_alphas)
        free(alphas);
    return rc;
}

/* A piece of the straight boundary from (xa, ya) to (xb, yb) inside one row, clipped
 * to the clip's columns as smooth_edge does (a part left of it counts as a vertical
 * edge on its left side, a part right of it is dropped). Widens [*lo, *hi], the
 * columns touched. */
static inline void smooth_row_edge(float *cover, float *area, int cx0, int cx1, double xa, double ya,
                                   double xb, double yb, int *lo, int *hi)
{
    double d = yb - ya;
    if (d == 0)
        return;
    int i0, i1;
    if ((xa < cx0 && xb > cx0) || (xa > cx0 && xb < cx0)) { /* crosses the left side: split there */
        double ym = ya + (cx0 - xa) * (yb - ya) / (xb - xa);
        smooth_row_edge(cover, area, cx0, cx1, xa, ya, cx0, ym, lo, hi);
        smooth_row_edge(cover, area, cx0, cx1, cx0, ym, xb, yb, lo, hi);
        return;
    }
    if (xa >= cx1 && xb >= cx1)
        return;
    xa = xa < cx0 ? cx0 : xa > cx1 ? cx1 : xa;
    xb = xb < cx0 ? cx0 : xb > cx1 ? cx1 : xb;
    smooth_piece(cover, area, cx0, cx1, xa, xb, d, &i0, &i1);
    if (i0 <= i1) {
        *lo = i0 < *lo ? i0 : *lo;
        *hi = i1 > *hi ? i1 : *hi;
    }
}

/* The boundary of the ellipse (cx, cy, rx, ry) inside rows [ylo, yhi] (within the
 * ellipse's rows): its left side runs between the exact points where it crosses the
 * rows' top and bottom (split at the ellipse's middle, and into pieces of equal angle
 * where a chord would stray more than the tolerance from the curve), the right side
 * mirrors it; `rev` reverses both (an inner ellipse cut out of an outer one). `memo`
 * holds the last cut's y, u and half-width (and asin(u), or NaN): a row starts where
 * the one above ended, and the same inputs give the same values without the square root. */
typedef struct {
    double y, u, w, t;
    /* u and half-width at each whole row y0 + i, i < n, worked out in one loop before the
     * rows: its divisions and square roots overlap, where each row would wait for its own */
    const double *tu, *tw;
    double y0;
    ptrdiff_t n;
} smooth_ellipse_memo;

enum { SMOOTH_ELLIPSE_TABLE = 512 };

/* Fill the memo's table for rows' tops y0 .. y0 + n - 1 (n <= SMOOTH_ELLIPSE_TABLE). */
static inline __attribute__((always_inline)) void smooth_ellipse_table(smooth_ellipse_memo *memo, double *tu,
                                                                       double *tw, int y0, ptrdiff_t n,
                                                                       double cy, double rx, double ry)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        double u = ((double)y0 + (double)i - cy) / ry;
        u = u < -1 ? -1 : u > 1 ? 1 : u;
        tu[i] = u;
        tw[i] = rx * sqrt(1 - u * u);
    }
    memo->tu = tu, memo->tw = tw, memo->y0 = y0, memo->n = n;
}

static inline __attribute__((always_inline)) void
smooth_ellipse_rows(float *cover, float *area, int cx0, int cx1, double cx, double cy, double rx, double ry,
                    double ylo, double yhi, int rev, int *llo, int *lhi, int *rlo, int *rhi,
                    smooth_ellipse_memo *memo)
{
    /* a chord of length L strays about L^2 k / 8 from a curve of curvature k */
    const double kmax = rx / (ry * ry) > ry / (rx * rx) ? rx / (ry * ry) : ry / (rx * rx);
    const double per_len = sqrt(kmax / (8.0 * SMOOTH_TOLERANCE_ROW));
    double cuts[3] = {ylo, cy, yhi};
    int nc = 0;
    if (cy > ylo && cy < yhi)
        nc = 3;
    else
        cuts[1] = yhi, nc = 2;
    for (int c = 0; c + 1 < nc; c++) {
        double ya = cuts[c], yb = cuts[c + 1];
        double ua, wa, ta_memo = NAN;
        if (ya == memo->y) {
            ua = memo->u, wa = memo->w, ta_memo = memo->t;
        } else {
            ua = (ya - cy) / ry;
            ua = ua < -1 ? -1 : ua > 1 ? 1 : ua;
            wa = rx * sqrt(1 - ua * ua);
        }
        double ub, wb, fi = yb - memo->y0;
        ptrdiff_t i = fi >= 0 && fi < (double)memo->n ? (ptrdiff_t)fi : -1;
        if (i >= 0 && (double)i == fi) {
            ub = memo->tu[i], wb = memo->tw[i];
        } else {
            ub = (yb - cy) / ry;
            ub = ub < -1 ? -1 : ub > 1 ? 1 : ub;
            wb = rx * sqrt(1 - ub * ub);
        }
        double len2 = ((wb - wa) * (wb - wa) + (yb - ya) * (yb - ya)) * (per_len * per_len);
        /* one piece when short enough (no square root); NaN or infinite for a degenerate
         * ellipse: one piece too */
        double steps = len2 <= 1 ? 1 : ceil(sqrt(len2));
        int k = steps >= 2 && steps <= SMOOTH_MAX_STEPS ? (int)steps
                : steps > SMOOTH_MAX_STEPS              ? SMOOTH_MAX_STEPS
                                                        : 1;
        double ta = k > 1 ? (isnan(ta_memo) ? asin(ua) : ta_memo) : 0, tb = k > 1 ? asin(ub) : 0;
        double px = wa, py = ya;
        memo->y = yb, memo->u = ub, memo->w = wb, memo->t = k > 1 ? tb : NAN;
        /* the points between, at equal angles: (cos, sin) of the next one turned from
         * this one's by the step's angle (one sine and cosine a row, not one a point) */
        double cs = k > 1 ? sqrt(1 - ua * ua) : 0, sn = ua, cd = 1, sd = 0;
        if (k > 1) {
            double d = (tb - ta) / k;
            cd = cos(d), sd = sin(d);
        }
        for (int j = 1; j <= k; j++) {
            double qx = wb, qy = yb;
            if (j < k) {
                double c2 = cs * cd - sn * sd;
                sn = sn * cd + cs * sd, cs = c2;
                qx = rx * cs, qy = cy + ry * sn;
            }
            if (rev) { /* left side down, right side up */
                smooth_row_edge(cover, area, cx0, cx1, cx - px, py, cx - qx, qy, llo, lhi);
                smooth_row_edge(cover, area, cx0, cx1, cx + qx, qy, cx + px, py, rlo, rhi);
            } else {
                smooth_row_edge(cover, area, cx0, cx1, cx - qx, qy, cx - px, py, llo, lhi);
                smooth_row_edge(cover, area, cx0, cx1, cx + px, py, cx + qx, qy, rlo, rhi);
            }
            px = qx, py = qy;
        }
    }
}

/* A filled ellipse, or the ring between it and an inner one (ix, iy > 0) of the same
 * centre, row by row without an edge list. */
FBGFX_HOT int smooth_fill_ellipse(smooth_paint *p, double cx, double cy, double rx, double ry, double ix,
                                  double iy)
{
    const draw_target *t = p->t;
    const int cx0 = t->cx0, cx1 = t->cx1;
    double top = cy - ry > p->cy0 ? cy - ry : p->cy0, bottom = cy + ry < p->cy1 ? cy + ry : p->cy1;
    if (!(top < bottom) || cx0 >= cx1 || cx - rx >= cx1 || cx + rx <= cx0)
        return 0;
    const int inner = ix > 0 && iy > 0;
    const int r0 = (int)floor(top), r1 = (int)ceil(bottom);
    const ptrdiff_t width = (ptrdiff_t)cx1 - cx0 + 1;
    float local_cells[2 * 1024];
    uint8_t local_alphas[1024];
    float *cover = width <= 1024 ? local_cells : calloc((size_t)width * 2, sizeof *cover);
    uint8_t *alphas = width <= 1024 ? local_alphas : malloc((size_t)width);
    if (!cover || !alphas) {
        if (cover != local_cells)
            free(cover);
        if (alphas != local_alphas)
            free(alphas);
        return -ENOMEM;
    }
    float *area = cover + width;
    if (cover == local_cells)
        smooth_zero_cells(cover, area, cx0, cx1, cx - rx < cx0 ? cx0 : cx - rx,
                          cx + rx > cx1 ? cx1 : cx + rx);
    const smooth_ink ink = p->ink;
    smooth_ellipse_memo outer = {NAN, 0, 0, NAN, NULL, NULL, 0, 0}, hole = {NAN, 0, 0, NAN, NULL, NULL, 0, 0};
    double table[2 * SMOOTH_ELLIPSE_TABLE];
    if (r1 - r0 <= SMOOTH_ELLIPSE_TABLE)
        smooth_ellipse_table(&outer, table, table + SMOOTH_ELLIPSE_TABLE, r0, r1 - r0, cy, rx, ry);
    for (int y = r0; y < r1; y++) {
        int32_t ranges[8];
        ptrdiff_t nranges = 0;
        int lo[4] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX},
            hi[4] = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
        double ylo = y > top ? y : top, yhi = y + 1 < bottom ? y + 1 : bottom;
        smooth_ellipse_rows(cover, area, cx0, cx1, cx, cy, rx, ry, ylo, yhi, 0, &lo[0], &hi[0], &lo[1],
                            &hi[1], &outer);
        if (inner) {
            double a = cy - iy > ylo ? cy - iy : ylo, b = cy + iy < yhi ? cy + iy : yhi;
            if (a < b)
                smooth_ellipse_rows(cover, area, cx0, cx1, cx, cy, ix, iy, a, b, 1, &lo[2], &hi[2], &lo[3],
                                    &hi[3], &hole);
        }
        for (int i = 0; i < 4; i++)
            if (lo[i] <= hi[i])
                smooth_add_range(ranges, &nranges, lo[i], hi[i]);
        smooth_sweep(p, ink, 0, y, y + 1 < r1, cx0, cx1, cover, area, ranges, nranges, alphas);
    }
    if (cover != local_cells)
        free(cover);
    if (alphas != local_alphas)
        free(alphas);
    return 0;
}

int smooth_paint_init(smooth_paint *p, const draw_target *t, const convert_format *f, uint8_t *mask, int r,
                      int g, int b, int a, uint32_t exact, int row0, int row1)
{
    if ((unsigned)r > 255 || (unsigned)g > 255 || (unsigned)b > 255 || (unsigned)a > 255)
        return -EINVAL;
    smooth_ink *k = &p->ink;
    p->t = t;
    p->mask = mask;
    p->evenodd = 0;
    p->cy0 = row0 > t->cy0 ? row0 : t->cy0;
    p->cy1 = row1 < t->cy1 ? row1 : t->cy1;
    p->bx0 = p->by0 = INT32_MAX;
    p->bx1 = p->by1 = INT32_MIN;
    k->f = f;
    k->r = (uint32_t)r, k->g = (uint32_t)g, k->b = (uint32_t)b, k->a = (uint32_t)a;
    k->exact = exact;
    k->ro = k->go = k->bo = 0;
    k->spread = 0, k->keep = 0, k->direct = 0;
    k->bpp = t->bpp;
    if (mask) {
        k->kind = SMOOTH_MASK;
        k->bpp = 1;
        return 0;
    }
    if (!f || convert_path_of(f) == CONVERT_P_NONE || f->kind == CONVERT_INDEXED || f->bpp != 8 * t->bpp)
        return -EINVAL;
    if (convert_is_x8888(f) && f->len[3] == 0) {
        k->kind = SMOOTH_X8888;
        k->ro = f->off[0], k->go = f->off[1], k->bo = f->off[2];
        k->spread = smooth_spread(k->r << k->ro | k->g << k->go | k->b << k->bo);
        k->keep = 0xffu << k->ro | 0xffu << k->go | 0xffu << k->bo;
        k->direct = exact == (k->r << k->ro | k->g << k->go | k->b << k->bo);
    } else if (convert_path_of(f) == CONVERT_P_RGB565 || convert_path_of(f) == CONVERT_P_BGR565) {
        k->kind = SMOOTH_565;
        k->ro = f->off[0], k->bo = f->off[2];
    } else {
        k->kind = SMOOTH_OTHER;
    }
    return 0;
}
