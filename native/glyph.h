/* glyph.h: glyph coverage composed into a text mask (glyph.c). */
#ifndef FBGFX_GLYPH_H
#define FBGFX_GLYPH_H

#include "prelude.h"

int glyph_compose(uint8_t *dst, ptrdiff_t dst_stride, int dst_w, int dst_h, const uint8_t *src,
                  ptrdiff_t src_stride, int src_w, int src_h, int x, int y);

#endif
