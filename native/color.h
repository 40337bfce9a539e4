/* color.c: one (r, g, b) colour packed for a pixel format, for fbgfx/color.py and the
 * drawing calls that take their colour as three channels (draw.c).
 *
 * A drawing call with a colour of its own must not pay for building arrays or for a
 * second call into C: a color_ink holds what packing needs, made once per format by
 * fbgfx.color.Packer. Direct formats OR three tables of their bitfields (alpha folded
 * into the red table), gray formats add three tables of ITU-R 601 weights and scale the
 * sum as PixelFormat.pack does, palette formats search the colour map. Every value
 * equals PixelFormat.pack_color's for the same colour. */
#ifndef FBGFX_COLOR_H
#define FBGFX_COLOR_H

#include "prelude.h"

enum { COLOR_DIRECT, COLOR_GRAY, COLOR_PALETTE };

typedef struct {
    uint32_t lut[768];      /* red, green, blue: 256 entries each */
    int kind;               /* COLOR_DIRECT, COLOR_GRAY or COLOR_PALETTE */
    int shift, top, invert; /* gray: 8 - bpp, (1 << bpp) - 1, white is 0 */
    const uint8_t *palette; /* palette: n (r, g, b) entries */
    int n;
} color_ink;

int color_nearest(const uint8_t *palette, int n, int r, int g, int b);
int64_t color_pack(const color_ink *k, int r, int g, int b);

/* Pack (r, g, b) into *out; -ERANGE when a channel is outside 0..255. */
static inline int color_pack_into(const color_ink *k, int r, int g, int b, uint32_t *out)
{
    if ((unsigned)r > 255 || (unsigned)g > 255 || (unsigned)b > 255)
        return -ERANGE;
    const uint32_t *t = k->lut;
    switch (k->kind) {
    case COLOR_DIRECT:
        *out = t[r] | t[256 + g] | t[512 + b];
        break;
    case COLOR_GRAY: {
        uint32_t level = ((t[r] + t[256 + g] + t[512 + b] + 0x8000) >> 16) >> k->shift;
        *out = k->invert ? (uint32_t)k->top - level : level;
        break;
    }
    default:
        *out = (uint32_t)color_nearest(k->palette, k->n, r, g, b);
        break;
    }
    return 0;
}

#endif
