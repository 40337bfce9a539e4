/* convert.h: the pixel format description of the conversion kernels (convert.c) and
 * the per-pixel helpers that the blending shapes (smooth_render.c) share with them. */
#ifndef FBGFX_CONVERT_H
#define FBGFX_CONVERT_H

#include "prelude.h"

/* Row helpers are inlined into the FBGFX_HOT entry points so they get each clone's ISA. */
#define CONVERT_ROW static inline __attribute__((always_inline))

#define CONVERT_DIRECT 0
#define CONVERT_GRAY 1
#define CONVERT_INDEXED 2

typedef struct convert_format {
    int bpp;                /* 8, 16, 24 or 32 (gray and indexed: 1..8, one pixel a byte) */
    int kind;               /* CONVERT_DIRECT, CONVERT_GRAY or CONVERT_INDEXED */
    int off[4];             /* bit offsets of red, green, blue, alpha */
    int len[4];             /* bit lengths 1..8; len[3] == 0 when there is no alpha */
    int inverted;           /* gray: the top level is black (FB_VISUAL_MONO01) */
    uint32_t mul[4];        /* unpack: 8-bit level = (v * mul + add) >> 16, */
    uint32_t add[4];        /* exact for every v of the channel's length */
    const uint8_t *lut;     /* indexed: 32x32x32 cube of nearest palette indices */
    const uint8_t *palette; /* indexed: palette_len RGB triplets */
    int palette_len;
} convert_format;

/* round(x / 255) for 0 <= x <= 255 * 255, exactly, without a division. */
static inline uint32_t convert_div255(uint32_t x)
{
    x += 128;
    return (x + (x >> 8)) >> 8;
}

static inline uint32_t convert_luma(uint32_t r, uint32_t g, uint32_t b)
{
    return (r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16;
}

static inline uint32_t convert_field(uint32_t c, int off, int len)
{
    return (c >> (8 - len)) << off;
}

static inline uint32_t convert_expand(uint32_t v, const convert_format *f, int i)
{
    return (((v >> f->off[i]) & ((1u << f->len[i]) - 1u)) * f->mul[i] + f->add[i]) >> 16;
}

static inline uint32_t convert_load(const uint8_t *p, int bytes)
{
    switch (bytes) {
    case 4:
        return *(const uint32_t *)p;
    case 2:
        return *(const uint16_t *)p;
    case 3:
        return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    default:
        return *p;
    }
}

static inline void convert_store(uint8_t *p, int bytes, uint32_t v)
{
    switch (bytes) {
    case 4:
        *(uint32_t *)p = v;
        break;
    case 2:
        *(uint16_t *)p = (uint16_t)v;
        break;
    case 3:
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        break;
    default:
        *p = (uint8_t)v;
    }
}

static inline int convert_is(const convert_format *f, int bpp, int ro, int rl, int go, int gl, int bo, int bl)
{
    return f->bpp == bpp && f->off[0] == ro && f->len[0] == rl && f->off[1] == go && f->len[1] == gl &&
           f->off[2] == bo && f->len[2] == bl && f->len[3] == 0;
}

/* Which loop a format takes; decided once per call. */
enum convert_path {
    CONVERT_P_GRAY,
    CONVERT_P_INDEXED,
    CONVERT_P_XRGB,
    CONVERT_P_XBGR,
    CONVERT_P_RGB565,
    CONVERT_P_BGR565,
    CONVERT_P_32,
    CONVERT_P_24,
    CONVERT_P_16,
    CONVERT_P_8,
    CONVERT_P_NONE
};

static inline enum convert_path convert_path_of(const convert_format *f)
{
    if (f->kind == CONVERT_GRAY)
        return f->bpp >= 1 && f->bpp <= 8 ? CONVERT_P_GRAY : CONVERT_P_NONE;
    if (f->kind == CONVERT_INDEXED)
        return f->lut && f->palette && f->palette_len > 0 ? CONVERT_P_INDEXED : CONVERT_P_NONE;
    for (int i = 0; i < 4; i++)
        if (f->len[i] < (i < 3) || f->len[i] > 8 || f->off[i] < 0 || f->off[i] + f->len[i] > f->bpp)
            return CONVERT_P_NONE;
    if (convert_is(f, 32, 16, 8, 8, 8, 0, 8))
        return CONVERT_P_XRGB;
    if (convert_is(f, 32, 0, 8, 8, 8, 16, 8))
        return CONVERT_P_XBGR;
    if (convert_is(f, 16, 11, 5, 5, 6, 0, 5))
        return CONVERT_P_RGB565;
    if (convert_is(f, 16, 0, 5, 5, 6, 11, 5))
        return CONVERT_P_BGR565;
    switch (f->bpp) {
    case 32:
        return CONVERT_P_32;
    case 24:
        return CONVERT_P_24;
    case 16:
        return CONVERT_P_16;
    case 8:
        return CONVERT_P_8;
    default:
        return CONVERT_P_NONE;
    }
}

/* 32-bit layouts whose channels are whole bytes (XRGB8888, ARGB8888, RGBX8888, ...). */
static inline int convert_is_x8888(const convert_format *f)
{
    return f->kind == CONVERT_DIRECT && f->bpp == 32 && f->len[0] == 8 && f->len[1] == 8 && f->len[2] == 8 &&
           (f->len[3] == 0 || f->len[3] == 8) && f->off[0] % 8 == 0 && f->off[1] % 8 == 0 &&
           f->off[2] % 8 == 0 && f->off[3] % 8 == 0;
}

/* One pixel of any format blended with colour (r, g, b) at weight k (0..255). k == 0
 * returns the pixel unchanged; k == 255 gives exactly the packed colour. */
static inline uint32_t convert_blend_pixel(uint32_t v, uint32_t r, uint32_t g, uint32_t b, uint32_t k,
                                           const convert_format *f)
{
    uint32_t dr, dg, db, da = 255, ik = 255 - k;
    if (k == 0)
        return v;
    if (f->kind == CONVERT_INDEXED) {
        const uint8_t *p = f->palette + 3 * (v % (uint32_t)f->palette_len);
        dr = p[0], dg = p[1], db = p[2];
    } else if (f->kind == CONVERT_GRAY) {
        const uint32_t mask = (1u << f->bpp) - 1u, top = f->inverted ? mask : 0u;
        dr = dg = db = (((v ^ top) & mask) * f->mul[0] + f->add[0]) >> 16;
    } else {
        dr = convert_expand(v, f, 0);
        dg = convert_expand(v, f, 1);
        db = convert_expand(v, f, 2);
        if (f->len[3])
            da = convert_expand(v, f, 3);
    }
    r = convert_div255(r * k + dr * ik);
    g = convert_div255(g * k + dg * ik);
    b = convert_div255(b * k + db * ik);
    if (f->kind == CONVERT_INDEXED)
        return f->lut[(r >> 3) << 10 | (g >> 3) << 5 | b >> 3];
    if (f->kind == CONVERT_GRAY) {
        uint32_t level = convert_luma(r, g, b) >> (8 - f->bpp);
        return f->inverted ? (uint32_t)((1 << f->bpp) - 1) - level : level;
    }
    da = k + convert_div255(da * ik);
    return convert_field(r, f->off[0], f->len[0]) | convert_field(g, f->off[1], f->len[1]) |
           convert_field(b, f->off[2], f->len[2]) |
           (f->len[3] ? convert_field(da, f->off[3], f->len[3]) : 0u);
}

/* Coverage rows for the common layouts: branch-free so they vectorise. */
CONVERT_ROW void convert_mask_row_x8888(const uint8_t *restrict m, uint32_t *restrict d, ptrdiff_t w, int ro,
                                        int go, int bo, uint32_t r, uint32_t g, uint32_t b, uint32_t a)
{
    for (size_t x = 0; x < (size_t)w; x++) {
        uint32_t v = d[x], k = convert_div255(m[x] * a), ik = 255 - k;
        uint32_t o = convert_div255(r * k + ((v >> ro) & 255) * ik) << ro |
                     convert_div255(g * k + ((v >> go) & 255) * ik) << go |
                     convert_div255(b * k + ((v >> bo) & 255) * ik) << bo;
        d[x] = k ? o : v;
    }
}

CONVERT_ROW void convert_mask_row_565(const uint8_t *restrict m, uint16_t *restrict d, ptrdiff_t w, int ro,
                                      int bo, uint32_t r, uint32_t g, uint32_t b, uint32_t a,
                                      const convert_format *f)
{
    const uint32_t m5 = f->mul[0], a5 = f->add[0], m6 = f->mul[1], a6 = f->add[1];
    for (size_t x = 0; x < (size_t)w; x++) {
        uint32_t v = d[x], k = convert_div255(m[x] * a), ik = 255 - k;
        uint32_t dr = (((v >> ro) & 31) * m5 + a5) >> 16;
        uint32_t dg = (((v >> 5) & 63) * m6 + a6) >> 16;
        uint32_t db = (((v >> bo) & 31) * m5 + a5) >> 16;
        uint32_t o = (convert_div255(r * k + dr * ik) >> 3) << ro |
                     (convert_div255(g * k + dg * ik) >> 2) << 5 |
                     (convert_div255(b * k + db * ik) >> 3) << bo;
        d[x] = (uint16_t)(k ? o : v);
    }
}

ptrdiff_t convert_pack(const uint8_t *src, ptrdiff_t src_stride, int channels, int alpha, uint8_t *dst,
                       ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height, const convert_format *f);
ptrdiff_t convert_unpack(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                         int channels, ptrdiff_t width, ptrdiff_t height, const convert_format *f);
ptrdiff_t convert_blend(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                        ptrdiff_t width, ptrdiff_t height, const convert_format *f);
ptrdiff_t convert_blend_mask(const uint8_t *mask, ptrdiff_t mask_stride, uint8_t *dst, ptrdiff_t dst_stride,
                             ptrdiff_t width, ptrdiff_t height, int r, int g, int b, int a, uint32_t exact,
                             const convert_format *f);
ptrdiff_t convert_fill(uint8_t *dst, ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height, int bytes,
                       uint32_t value);

#endif
