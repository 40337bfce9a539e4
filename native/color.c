/* color.c: one (r, g, b) colour packed for a pixel format (color.h says how). */
#include "color.h"

/* The palette entry nearest to (r, g, b): the first entry with the smallest squared
 * distance wins, as NumPy's argmin in PixelFormat.pack picks it. */
int color_nearest(const uint8_t *palette, int n, int r, int g, int b)
{
    int best = 0;
    int best_d = 0x7fffffff;
    for (int i = 0; i < n; i++) {
        const uint8_t *p = palette + 3 * i;
        int dr = r - p[0], dg = g - p[1], db = b - p[2];
        int d = dr * dr + dg * dg + db * db;
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    return best;
}

int64_t color_pack(const color_ink *k, int r, int g, int b)
{
    uint32_t v;
    return color_pack_into(k, r, g, b, &v) < 0 ? -1 : (int64_t)v;
}
