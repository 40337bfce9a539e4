/* glyph.c: one glyph's coverage composed into a text mask, as Pillow composes it.
 *
 * Pillow's FreeType text renderer (_imagingft.c, font_render) writes each glyph's 8-bit
 * coverage into the line's mask: a zero source pixel leaves the mask alone, a mask
 * pixel that is still zero takes the source, and otherwise the two combine "over":
 * src + dst * (255 - src) / 255, rounded with Pillow's MULDIV255. fbgfx composes
 * glyphs it has rendered once the same way, so the mask is the one Pillow would make.
 * The glyph is clipped to the mask; returns 0. */
#include "glyph.h"

int glyph_compose(uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h, const uint8_t *src,
                  ptrdiff_t src_stride, int src_w, int src_h, int x, int y)
{
    int x0 = x < 0 ? -x : 0, y0 = y < 0 ? -y : 0;
    int x1 = x + src_w > dst_w ? dst_w - x : src_w;
    int y1 = y + src_h > dst_h ? dst_h - y : src_h;
    for (int j = y0; j < y1; j++) {
        const uint8_t *s = src + (ptrdiff_t)j * src_stride;
        uint8_t *d = dst + (ptrdiff_t)(y + j) * dst_stride + x;
        for (int i = x0; i < x1; i++) {
            unsigned int a = s[i];
            if (a == 0)
                continue;
            if (d[i] == 0) {
                d[i] = (uint8_t)a;
            } else {
                unsigned int tmp = d[i] * (255 - a) + 128;
                unsigned int v = a + (((tmp >> 8) + tmp) >> 8);
                d[i] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    return 0;
}
