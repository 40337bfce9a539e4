/* Pillow's pixels depend on whether its build fuses a*b+c into one rounding. Its
 * aarch64 build does (FMA is baseline there and GCC contracts by default: fmadd in
 * its line and polygon code); its x86 and 32-bit ARM builds have no FMA in their
 * baseline and round twice. Match that, whatever CPU fbgfx itself is built for.
 * Included first by the files that rasterise as Pillow does (draw.c, draw_ellipse.c):
 * the pragma then holds for the whole file, the helpers of draw.h included. */
#ifndef FBGFX_PILLOW_ROUNDING_H
#define FBGFX_PILLOW_ROUNDING_H
#if defined(__aarch64__)
#pragma GCC optimize("fp-contract=fast")
#else
#pragma GCC optimize("fp-contract=off")
#endif
#endif
