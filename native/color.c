/* color.c: one colour matched to a colour map, for fbgfx/color.py.
 *
 * PixelFormat.pack matches a few pixels against a palette exactly (NumPy argmin of the
 * squared RGB distance); a drawing call needs the same answer for one colour without
 * building arrays, so this is that search as a plain loop: the first entry with the
 * smallest distance wins, as argmin picks it. */

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
