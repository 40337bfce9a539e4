/* mirror.c: the kernels of fbgfx.mirror (fbgfx/kiosk/mirror.py): which tiles of a
 * picture changed since the last look, and scaling a rectangle of it.
 *
 * mirror_tiles compares a picture with the copy kept from the last look, tile by tile
 * (tile_bytes x tile_rows), marks the tiles that differ and copies them into the copy,
 * so a still picture costs one read and no writes.
 *
 * mirror_scale makes one rectangle of the scaled picture as packed RGB (3 bytes a
 * pixel): for each output row, a vertical pass over the source rows it needs (only
 * the columns the rectangle needs) into planar sums, then a horizontal pass. Each
 * output column (row) is a weighted sum of `count` source columns (rows) from
 * `first`, with `k` weights stored per output pixel in fixed point (MIRROR_BITS
 * fraction bits, summing to 1 << MIRROR_BITS). Python makes the tables:
 * area-averaging (box) where the picture shrinks, bilinear where it grows, a weight
 * of 1 where the size stays (an exact copy). Source pixels are read as
 *   kind 4: a 32-bit word, 8-bit channels at bit shifts r, g, b;
 *   kind 2: a 16-bit 5-6-5 word, red at bit shift r (11 or 0), blue at b;
 *   kind 3: three bytes, r, g, b the byte index of each channel. */
#include "mirror.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FBGFX_HOT
#define FBGFX_HOT
#endif

#define MIRROR_BITS 16

int mirror_tiles(const uint8_t *cur, ptrdiff_t cur_stride, uint8_t *prev, ptrdiff_t prev_stride,
                 int width_bytes, int height, int tile_bytes, int tile_rows, uint8_t *mask)
{
    if (width_bytes <= 0 || height <= 0 || tile_bytes <= 0 || tile_rows <= 0)
        return -EINVAL;
    int cols = (width_bytes + tile_bytes - 1) / tile_bytes;
    int changed = 0;
    for (int y0 = 0, band = 0; y0 < height; y0 += tile_rows, band++) {
        uint8_t *m = mask + (ptrdiff_t)band * cols;
        int y1 = y0 + tile_rows < height ? y0 + tile_rows : height;
        memset(m, 0, (size_t)cols);
        int marked = 0;
        for (int y = y0; y < y1 && marked < cols; y++) {
            const uint8_t *a = cur + y * cur_stride;
            const uint8_t *b = prev + y * prev_stride;
            for (int c = 0; c < cols; c++) {
                if (m[c])
                    continue;
                int x = c * tile_bytes;
                int n = x + tile_bytes <= width_bytes ? tile_bytes : width_bytes - x;
                if (memcmp(a + x, b + x, (size_t)n)) {
                    m[c] = 1;
                    marked++;
                }
            }
        }
        if (!marked)
            continue;
        changed += marked;
        for (int y = y0; y < y1; y++) {
            const uint8_t *a = cur + y * cur_stride;
            uint8_t *b = prev + y * prev_stride;
            for (int c = 0; c < cols;) {
                if (!m[c]) {
                    c++;
                    continue;
                }
                int e = c;
                while (e < cols && m[e])
                    e++;
                int x = c * tile_bytes;
                int x1 = e * tile_bytes < width_bytes ? e * tile_bytes : width_bytes;
                memcpy(b + x, a + x, (size_t)(x1 - x));
                c = e;
            }
        }
    }
    return changed;
}

static inline int32_t mirror_round(int32_t v)
{
    v = (v + (1 << (MIRROR_BITS - 1))) >> MIRROR_BITS;
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Add weight w times source row `row`, columns [c0, c1), to the planar sums r, g, b. */
FBGFX_HOT static void mirror_add_row(const uint8_t *row, int kind, int rs, int gs, int bs, int32_t w, int c0,
                                     int c1, int32_t *restrict r, int32_t *restrict g, int32_t *restrict b)
{
    int n = c1 - c0;
    if (kind == 4) {
        const uint32_t *p = (const uint32_t *)(const void *)row + c0;
        for (int i = 0; i < n; i++) {
            uint32_t v = p[i];
            r[i] += w * (int32_t)((v >> rs) & 255);
            g[i] += w * (int32_t)((v >> gs) & 255);
            b[i] += w * (int32_t)((v >> bs) & 255);
        }
    } else if (kind == 2) {
        const uint16_t *p = (const uint16_t *)(const void *)row + c0;
        for (int i = 0; i < n; i++) {
            uint32_t v = p[i];
            uint32_t r5 = (v >> rs) & 31, g6 = (v >> 5) & 63, b5 = (v >> bs) & 31;
            r[i] += w * (int32_t)((r5 << 3) | (r5 >> 2));
            g[i] += w * (int32_t)((g6 << 2) | (g6 >> 4));
            b[i] += w * (int32_t)((b5 << 3) | (b5 >> 2));
        }
    } else {
        const uint8_t *p = row + (ptrdiff_t)c0 * 3;
        for (int i = 0; i < n; i++) {
            r[i] += w * p[3 * i + rs];
            g[i] += w * p[3 * i + gs];
            b[i] += w * p[3 * i + bs];
        }
    }
}

FBGFX_HOT static void mirror_round_row(int32_t *restrict v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = mirror_round(v[i]);
}

/* The vertical pass first (each source row it reads is one vectorised run), into
 * planar sums rounded to 8 bits; then the horizontal pass from those. */
int mirror_scale(const uint8_t *src, ptrdiff_t src_stride, int kind, int rs, int gs, int bs,
                 const int32_t *xfirst, const int32_t *xcount, const int32_t *xw, int xk,
                 const int32_t *yfirst, const int32_t *ycount, const int32_t *yw, int yk, int x0, int y0,
                 int w, int h, uint8_t *dst, ptrdiff_t dst_stride)
{
    if (w <= 0 || h <= 0 || xk <= 0 || yk <= 0 || (kind != 2 && kind != 3 && kind != 4))
        return -EINVAL;
    int c0 = xfirst[x0], c1 = c0;
    for (int x = x0; x < x0 + w; x++) {
        if (xfirst[x] < c0)
            c0 = xfirst[x];
        if (xfirst[x] + xcount[x] > c1)
            c1 = xfirst[x] + xcount[x];
    }
    int n = c1 - c0;
    int32_t *sums = malloc(sizeof(int32_t) * 3 * (size_t)n);
    if (!sums)
        return -ENOMEM;
    int32_t *r = sums, *g = sums + n, *b = sums + 2 * n;
    for (int i = 0; i < h; i++) {
        int y = y0 + i;
        const int32_t *wy = yw + (ptrdiff_t)y * yk;
        memset(sums, 0, sizeof(int32_t) * 3 * (size_t)n);
        for (int t = 0; t < ycount[y]; t++)
            mirror_add_row(src + (yfirst[y] + t) * src_stride, kind, rs, gs, bs, wy[t], c0, c1, r, g, b);
        mirror_round_row(sums, 3 * n);
        uint8_t *out = dst + i * dst_stride;
        for (int j = 0; j < w; j++) {
            int x = x0 + j;
            const int32_t *wx = xw + (ptrdiff_t)x * xk;
            int f = xfirst[x] - c0;
            int32_t sr = 0, sg = 0, sb = 0;
            for (int t = 0; t < xcount[x]; t++) {
                sr += wx[t] * r[f + t];
                sg += wx[t] * g[f + t];
                sb += wx[t] * b[f + t];
            }
            out[3 * j] = (uint8_t)mirror_round(sr);
            out[3 * j + 1] = (uint8_t)mirror_round(sg);
            out[3 * j + 2] = (uint8_t)mirror_round(sb);
        }
    }
    free(sums);
    return w * h;
}
