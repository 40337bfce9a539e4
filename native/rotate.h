/* rotate.h: frames turned a quarter or half turn while written into video memory
 * (rotate.c). */
#ifndef FBGFX_ROTATE_H
#define FBGFX_ROTATE_H

#include "prelude.h"

typedef struct rotate_format {
    int bytes;  /* 2 or 4: direct colour, channels of 1..8 bits */
    int off[4]; /* bit offsets of red, green, blue, alpha */
    int len[4]; /* bit lengths; len[3] == 0 when there is no alpha */
} rotate_format;

int rotate_copy(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride, int width,
                int height, int bytes, int turn);
int rotate_pack(const uint8_t *src, ptrdiff_t src_stride, int step, uint8_t *dst, ptrdiff_t dst_stride,
                int width, int height, int turn, const rotate_format *f);

#endif
