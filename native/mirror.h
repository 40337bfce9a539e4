/* mirror.h: fbgfx.mirror's kernels (mirror.c): changed tiles, and scaling into a panel. */
#ifndef FBGFX_MIRROR_H
#define FBGFX_MIRROR_H

#include <stddef.h>
#include <stdint.h>

int mirror_tiles(const uint8_t *cur, ptrdiff_t cur_stride, uint8_t *prev, ptrdiff_t prev_stride,
                 int width_bytes, int height, int tile_bytes, int tile_rows, uint8_t *mask);
int mirror_scale(const uint8_t *src, ptrdiff_t src_stride, int kind, int rs, int gs, int bs,
                 const int32_t *xfirst, const int32_t *xcount, const int32_t *xw, int xk,
                 const int32_t *yfirst, const int32_t *ycount, const int32_t *yw, int yk, int x0, int y0,
                 int w, int h, uint8_t *dst, ptrdiff_t dst_stride);

#endif
