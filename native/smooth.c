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
    /* the clip rectangle, [cx0, cx1) x [cy0, cy1) */
    int cx0, cy0, cx1, cy1;
} smooth_acc;

static void smooth_acc_init(smooth_acc *a, const draw_target *t)
{
    a->edges = a->local;
    a->n = 0;
    a->cap = (ptrdiff_t)(sizeof a->local / sizeof a->local[0]);
    a->failed = 0;
    a->top = INFINITY;
    a->left = INFINITY;
    a->right = -INFINITY;
    a->bottom = -INFINITY;
    a->cx0 = t->cx0;
    a->cy0 = t->cy0;
    a->cx1 = t->cx1;
    a->cy1 = t->cy1;
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

/* -- paint: turning coverage into pixels -------------------------------------------- */

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

typedef struct {
    smooth_ink ink;
    const draw_target *t;
    uint8_t *mask; /* SMOOTH_MASK: over the clip rectangle, cx1 - cx0 bytes a row */
    int evenodd;
    int bx0, by0, bx1, by1; /* what was written, exclusive end */
} smooth_paint;

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
FBGFX_HOT static int smooth_render(smooth_acc *a, smooth_paint *p)
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
    int32_t local_head[256], local_active[128], local_ranges[2 * 128];
    float local_cells[2 * 1024];
    uint8_t local_alphas[1024];
    int32_t *head = rows <= 256 ? local_head : malloc((size_t)rows * sizeof *head);
    int32_t *active = a->n <= 128 ? local_active : malloc((size_t)a->n * sizeof *active);
    int32_t *ranges = a->n <= 128 ? local_ranges : malloc((size_t)a->n * 2 * sizeof *ranges);
    float *cover = width <= 1024 ? local_cells : calloc((size_t)width * 2, sizeof *cover);
    uint8_t *alphas = width <= 1024 ? local_alphas : malloc((size_t)width);
    int rc = 0;
    if (!head || !active || !ranges || !cover || !alphas) {
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
        for (int32_t i = head[r]; i >= 0; i = a->edges[i].next)
            active[nactive++] = i;
        /* each active edge's piece in this row */
        ptrdiff_t nranges = 0;
        for (ptrdiff_t k = 0; k < nactive;) {
            const smooth_edge_t *e = &a->edges[active[k]];
            if (e->bottom <= y) {
                active[k] = active[--nactive];
                continue;
            }
            double ya = e->top > y ? e->top : y, yb = e->bottom < y + 1 ? e->bottom : y + 1;
            double xa = e->x0 + (ya - e->y0) * e->dxdy, xb = e->x0 + (yb - e->y0) * e->dxdy;
            xa = xa < cx0 ? cx0 : xa > cx1 ? cx1 : xa;
            xb = xb < cx0 ? cx0 : xb > cx1 ? cx1 : xb;
            int i0, i1;
            smooth_piece(cover, area, cx0, cx1, xa, xb, (yb - ya) * e->dir, &i0, &i1);
            if (i0 <= i1)
                smooth_add_range(ranges, &nranges, i0, i1);
            k++;
        }
        smooth_sweep(p, ink, evenodd, y, y + 1 < r1, cx0, cx1, cover, area, ranges, nranges, alphas);
    }
done:
    if (head != local_head)
        free(head);
    if (active != local_active)
        free(active);
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
} smooth_ellipse_memo;

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
        double ub = (yb - cy) / ry;
        ub = ub < -1 ? -1 : ub > 1 ? 1 : ub;
        double wb = rx * sqrt(1 - ub * ub);
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
        for (int j = 1; j <= k; j++) {
            double qx = wb, qy = yb;
            if (j < k) {
                double th = ta + (tb - ta) * j / k;
                qx = rx * cos(th), qy = cy + ry * sin(th);
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
FBGFX_HOT static int smooth_fill_ellipse(smooth_paint *p, double cx, double cy, double rx, double ry,
                                         double ix, double iy)
{
    const draw_target *t = p->t;
    const int cx0 = t->cx0, cx1 = t->cx1;
    double top = cy - ry > t->cy0 ? cy - ry : t->cy0, bottom = cy + ry < t->cy1 ? cy + ry : t->cy1;
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
    smooth_ellipse_memo outer = {NAN, 0, 0, NAN}, hole = {NAN, 0, 0, NAN};
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

static int smooth_paint_init(smooth_paint *p, const draw_target *t, const convert_format *f, uint8_t *mask,
                             int r, int g, int b, int a, uint32_t exact)
{
    if ((unsigned)r > 255 || (unsigned)g > 255 || (unsigned)b > 255 || (unsigned)a > 255)
        return -EINVAL;
    smooth_ink *k = &p->ink;
    p->t = t;
    p->mask = mask;
    p->evenodd = 0;
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
                        uint8_t *mask, int r, int g, int b, int a, uint32_t exact)
{
    int rc = smooth_paint_init(p, t, f, mask, r, g, b, a, exact);
    if (rc == 0)
        smooth_acc_init(acc, t);
    return rc;
}

/* -- public ----------------------------------------------------------------------------- */

#define SMOOTH_PAINT_ARGS                                                                                    \
    draw_target *t, const convert_format *f, uint8_t *mask, int r, int g, int b, int a, uint32_t exact,      \
        int32_t *box

int smooth_line(SMOOTH_PAINT_ARGS, double x0, double y0, double x1, double y1, double w)
{
    double v[5] = {x0, y0, x1, y1, w};
    if (!smooth_finite(v, 5))
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
    if (rc < 0)
        return rc;
    smooth_band(&acc, smooth_clamp(x0), smooth_clamp(y0), smooth_clamp(x1), smooth_clamp(y1),
                smooth_clamp(w));
    return smooth_finish(&acc, &p, t, box);
}

/* Connected segments through n points, width w; round joints (discs) when `curve`. */
int smooth_polyline(SMOOTH_PAINT_ARGS, const double *xy, ptrdiff_t n, double w, int curve)
{
    if (!smooth_finite(xy, 2 * n) || !isfinite(w))
        return -EINVAL;
    smooth_paint p;
    smooth_acc acc;
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
    if (rc < 0)
        return rc;
    w = smooth_clamp(w);
    for (ptrdiff_t i = 0; i + 1 < n; i++) {
        double x0 = smooth_clamp(xy[2 * i]), y0 = smooth_clamp(xy[2 * i + 1]);
        double x1 = smooth_clamp(xy[2 * i + 2]), y1 = smooth_clamp(xy[2 * i + 3]);
        smooth_band(&acc, x0, y0, x1, y1, w);
        if (curve && i > 0 && w > 0)
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
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
    if (rc < 0)
        return rc;
    for (ptrdiff_t i = 0; i < n; i++)
        smooth_band(&acc, smooth_clamp(xy[4 * i]), smooth_clamp(xy[4 * i + 1]), smooth_clamp(xy[4 * i + 2]),
                    smooth_clamp(xy[4 * i + 3]), smooth_clamp(w));
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
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
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
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
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
    int rc = smooth_begin(&p, &acc, t, f, mask, r, g, b, a, exact);
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
