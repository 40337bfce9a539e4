/* Pixel conversion, blending and fill kernels for fbgfx.convert.
 *
 * Every kernel takes plain pointers, byte strides between rows, a width and a height,
 * and writes exactly width x height pixels: nothing outside them is read or written.
 * Sizes, offsets and pixel counts are ptrdiff_t or size_t, never int: a surface of more
 * than 2**31 pixels (100000 x 21475 C8) must not overflow.
 * A format is described by struct convert_format (filled in by fbgfx/convert.py):
 * channel offsets and lengths as the kernel's bitfields give them (lengths 1..8).
 * Channels are truncated when packed (8 -> 5 bits is >> 3) and expanded to the
 * nearest 8-bit level when unpacked, exactly as PixelFormat.pack/unpack do.
 *
 * Inner loops are plain loops over a row with restrict pointers and constant
 * channel counts, so GCC vectorises them; the common layouts (XRGB8888 family,
 * RGB565/BGR565) get loops with constant shifts. Their counters are size_t: Python
 * builds extensions with -fwrapv, under which GCC cannot vectorise `s[4 * x]` for
 * an int x (it must allow the index to wrap). */
#include "convert.h"

/* ---- RGB(A) -> native, opaque ------------------------------------------------------ */

/* Any direct-colour layout of 8/16/32 bits; the channel count and pixel size are
 * constants after inlining, the shifts are loop invariants (vector shift by scalar). */
#define CONVERT_PACK_DIRECT(NAME, CH, T)                                                                     \
    CONVERT_ROW void NAME(const uint8_t *restrict s, T *restrict d, ptrdiff_t w, const convert_format *f,    \
                          uint32_t opaque)                                                                   \
    {                                                                                                        \
        const int ro = f->off[0], go = f->off[1], bo = f->off[2], ao = f->off[3];                            \
        const int rs = 8 - f->len[0], gs = 8 - f->len[1], bs = 8 - f->len[2];                                \
        const int as = 8 - f->len[3];                                                                        \
        for (size_t x = 0; x < (size_t)w; x++) {                                                             \
            uint32_t a = CH == 4 ? s[4 * x + 3] | opaque : 255u;                                             \
            d[x] = (T)(((uint32_t)s[CH * x] >> rs) << ro | ((uint32_t)s[CH * x + 1] >> gs) << go |           \
                       ((uint32_t)s[CH * x + 2] >> bs) << bo | (as < 8 ? (a >> as) << ao : 0u));             \
        }                                                                                                    \
    }

CONVERT_PACK_DIRECT(convert_pack_rgb_32, 3, uint32_t)
CONVERT_PACK_DIRECT(convert_pack_rgba_32, 4, uint32_t)
CONVERT_PACK_DIRECT(convert_pack_rgb_16, 3, uint16_t)
CONVERT_PACK_DIRECT(convert_pack_rgba_16, 4, uint16_t)
CONVERT_PACK_DIRECT(convert_pack_rgb_8, 3, uint8_t)
CONVERT_PACK_DIRECT(convert_pack_rgba_8, 4, uint8_t)

/* The layouts nearly every framebuffer has, with constant shifts. */
#define CONVERT_PACK_FIXED32(NAME, CH, RO, GO, BO)                                                           \
    CONVERT_ROW void NAME(const uint8_t *restrict s, uint32_t *restrict d, ptrdiff_t w)                      \
    {                                                                                                        \
        for (size_t x = 0; x < (size_t)w; x++)                                                               \
            d[x] =                                                                                           \
                (uint32_t)s[CH * x] << RO | (uint32_t)s[CH * x + 1] << GO | (uint32_t)s[CH * x + 2] << BO;   \
    }

CONVERT_PACK_FIXED32(convert_pack_rgb_xrgb, 3, 16, 8, 0)
CONVERT_PACK_FIXED32(convert_pack_rgba_xrgb, 4, 16, 8, 0)
CONVERT_PACK_FIXED32(convert_pack_rgb_xbgr, 3, 0, 8, 16)
CONVERT_PACK_FIXED32(convert_pack_rgba_xbgr, 4, 0, 8, 16)

#define CONVERT_PACK_FIXED16(NAME, CH, RO, BO)                                                               \
    CONVERT_ROW void NAME(const uint8_t *restrict s, uint16_t *restrict d, ptrdiff_t w)                      \
    {                                                                                                        \
        for (size_t x = 0; x < (size_t)w; x++)                                                               \
            d[x] = (uint16_t)(((unsigned)s[CH * x] >> 3) << RO | ((unsigned)s[CH * x + 1] >> 2) << 5 |       \
                              ((unsigned)s[CH * x + 2] >> 3) << BO);                                         \
    }

CONVERT_PACK_FIXED16(convert_pack_rgb_565, 3, 11, 0)
CONVERT_PACK_FIXED16(convert_pack_rgba_565, 4, 11, 0)
CONVERT_PACK_FIXED16(convert_pack_rgb_bgr565, 3, 0, 11)
CONVERT_PACK_FIXED16(convert_pack_rgba_bgr565, 4, 0, 11)

CONVERT_ROW void convert_pack_24(const uint8_t *restrict s, int ch, uint8_t *restrict d, ptrdiff_t w,
                                 const convert_format *f, uint32_t opaque)
{
    const int ro = f->off[0], go = f->off[1], bo = f->off[2], ao = f->off[3];
    const int rs = 8 - f->len[0], gs = 8 - f->len[1], bs = 8 - f->len[2], as = 8 - f->len[3];
    for (size_t x = 0; x < (size_t)w; x++) {
        const uint8_t *p = s + ch * x;
        uint32_t a = ch == 4 ? p[3] | opaque : 255u;
        uint32_t v = ((uint32_t)p[0] >> rs) << ro | ((uint32_t)p[1] >> gs) << go |
                     ((uint32_t)p[2] >> bs) << bo | (as < 8 ? (a >> as) << ao : 0u);
        d[3 * x] = (uint8_t)v;
        d[3 * x + 1] = (uint8_t)(v >> 8);
        d[3 * x + 2] = (uint8_t)(v >> 16);
    }
}

#define CONVERT_PACK_GRAY(NAME, CH)                                                                          \
    CONVERT_ROW void NAME(const uint8_t *restrict s, uint8_t *restrict d, ptrdiff_t w, int shift, int top)   \
    {                                                                                                        \
        for (size_t x = 0; x < (size_t)w; x++) {                                                             \
            uint32_t v = convert_luma(s[CH * x], s[CH * x + 1], s[CH * x + 2]) >> shift;                     \
            d[x] = (uint8_t)(top ? (uint32_t)top - v : v);                                                   \
        }                                                                                                    \
    }

CONVERT_PACK_GRAY(convert_pack_rgb_gray, 3)
CONVERT_PACK_GRAY(convert_pack_rgba_gray, 4)

CONVERT_ROW void convert_pack_indexed(const uint8_t *restrict s, int ch, uint8_t *restrict d, ptrdiff_t w,
                                      const uint8_t *restrict lut)
{
    for (size_t x = 0; x < (size_t)w; x++) {
        const uint8_t *p = s + ch * x;
        d[x] = lut[(p[0] >> 3) << 10 | (p[1] >> 3) << 5 | p[2] >> 3];
    }
}

/* ---- x86-64 AVX2 kernels for the layouts every PC framebuffer has -------------------
 * GCC vectorises the plain loops above, but 3-byte pixels cost it many permutes; a few
 * in-lane byte shuffles per 8 pixels do the job at memory speed. Each kernel converts
 * as many whole groups as fit in the row, never reading or writing past it, and
 * returns how many pixels it did; the plain loops finish the row.
 * While it converts a row, a kernel prefetches the same bytes of `next` (the next
 * source row, or the row itself for the last one), one prefetch a step: the hardware
 * prefetchers alone left a 1080p RGB -> RGB565 frame read from memory at 1.2-1.4x a
 * memcpy of the destination, one row ahead brought it to 0.95-1.1x. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FBGFX_NO_CLONES)
#include <immintrin.h>
#include <stdlib.h>
#define CONVERT_AVX2 1
/* Destinations of at least this many bytes get non-temporal stores (see convert_pack). */
#define CONVERT_STREAM_BYTES (2u << 20)

/* FBGFX_NO_AVX2=1 in the environment turns these kernels off, so the tests can check
 * the plain loops (the ones ARM boards run) on a PC too. */
static int convert_have_avx2(void)
{
    static int have = -1; /* racing threads all store the same answer */
    if (have < 0) {
        const char *off = getenv("FBGFX_NO_AVX2");
        have = __builtin_cpu_supports("avx2") && !(off && *off && *off != '0');
    }
    return have;
}

/* Byte shuffle for 8 pixels of `ch` bytes: the low lane holds source bytes 0..15, the
 * high lane bytes 4*ch-8*(ch==3) on (so 3-byte pixels 4..7 end at the lane's last
 * byte). Pixel p goes to 32-bit word p%4 of its lane with red, green, blue (and alpha
 * if ao >= 0) at byte offsets ro, go, bo, ao; other bytes are zero. */
__attribute__((target("avx2"))) static __m256i convert_x86_mask32(int ch, int ro, int go, int bo, int ao)
{
    uint8_t m[32];
    const int hi_base = ch == 3 ? 8 : 16;
    memset(m, 0x80, sizeof m);
    for (int p = 0; p < 8; p++) {
        int lane = p / 4, at = 16 * lane + 4 * (p % 4), from = ch * p - (lane ? hi_base : 0);
        m[at + ro / 8] = (uint8_t)from;
        m[at + go / 8] = (uint8_t)(from + 1);
        m[at + bo / 8] = (uint8_t)(from + 2);
        if (ao >= 0 && ch == 4)
            m[at + ao / 8] = (uint8_t)(from + 3);
    }
    return _mm256_loadu_si256((const __m256i *)m);
}

__attribute__((target("avx2"))) static inline __m256i convert_x86_load2(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
                                   _mm_loadu_si128((const __m128i *)hi), 1);
}

/* RGB(A) -> 32-bit layouts with 8-bit channels at byte offsets; `bits` is ORed in
 * (the alpha channel a 3-byte source does not have). 8 pixels per step. */
__attribute__((target("avx2"))) static ptrdiff_t
convert_avx2_pack32(const uint8_t *restrict s, const uint8_t *next, int ch, uint32_t *restrict d, ptrdiff_t w,
                    int ro, int go, int bo, int ao, uint32_t bits, int stream)
{
    const __m256i mask = convert_x86_mask32(ch, ro, go, bo, ao), or = _mm256_set1_epi32((int)bits);
    const int hi = ch == 3 ? 8 : 16;
    ptrdiff_t x = 0;
    for (; x + 8 <= w; x += 8) {
        const uint8_t *p = s + ch * x;
        if (x % 16 == 0) /* 48 or 64 bytes of source */
            _mm_prefetch((const char *)(next + ch * x), _MM_HINT_T0);
        __m256i v = _mm256_or_si256(_mm256_shuffle_epi8(convert_x86_load2(p, p + hi), mask), or);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + x), v);
        else
            _mm256_storeu_si256((__m256i *)(d + x), v);
    }
    return x;
}

/* RGB -> RGB565 (bgr = 0) or BGR565 (bgr = 1), 16 pixels (48 bytes) per step. Two
 * shuffles gather each pixel as a 16-bit word P = (first << 8 | green) and Q = (last
 * << 8), where first/last are red/blue (blue/red for BGR565); then
 * pixel = (P & 0xF800) | (P & 0xFC) << 3 | Q >> 11. */
__attribute__((target("avx2"))) static ptrdiff_t convert_avx2_rgb_565(const uint8_t *restrict s,
                                                                      const uint8_t *next,
                                                                      uint16_t *restrict d, ptrdiff_t w,
                                                                      int bgr, int stream)
{
    uint8_t mp[2][32], mq[2][32];
    memset(mp, 0x80, sizeof mp);
    memset(mq, 0x80, sizeof mq);
    /* a = bytes [0, 16) and [24, 40): pixels 0..4 of each half; b = [8, 24) and
     * [32, 48): pixels 5..7 of each half. */
    for (int lane = 0; lane < 2; lane++) {
        for (int p = 0; p < 8; p++) {
            int src = p < 5 ? 0 : 1, from = 3 * p - 8 * src, at = 16 * lane + 2 * p;
            mp[src][at] = (uint8_t)(from + 1);
            mp[src][at + 1] = (uint8_t)(from + (bgr ? 2 : 0));
            mq[src][at + 1] = (uint8_t)(from + (bgr ? 0 : 2));
        }
    }
    const __m256i pa = _mm256_loadu_si256((const __m256i *)mp[0]),
                  pb = _mm256_loadu_si256((const __m256i *)mp[1]);
    const __m256i qa = _mm256_loadu_si256((const __m256i *)mq[0]),
                  qb = _mm256_loadu_si256((const __m256i *)mq[1]);
    const __m256i top = _mm256_set1_epi16((short)0xF800), mid = _mm256_set1_epi16(0xFC);
    ptrdiff_t x = 0;
    for (; x + 16 <= w; x += 16) {
        const uint8_t *p = s + 3 * x;
        _mm_prefetch((const char *)(next + 3 * x), _MM_HINT_T0); /* 48 bytes a step: every line */
        __m256i a = convert_x86_load2(p, p + 24), b = convert_x86_load2(p + 8, p + 32);
        __m256i P = _mm256_or_si256(_mm256_shuffle_epi8(a, pa), _mm256_shuffle_epi8(b, pb));
        __m256i Q = _mm256_or_si256(_mm256_shuffle_epi8(a, qa), _mm256_shuffle_epi8(b, qb));
        __m256i v = _mm256_or_si256(_mm256_and_si256(P, top), _mm256_slli_epi16(_mm256_and_si256(P, mid), 3));
        v = _mm256_or_si256(v, _mm256_srli_epi16(Q, 11));
        if (stream)
            _mm256_stream_si256((__m256i *)(d + x), v);
        else
            _mm256_storeu_si256((__m256i *)(d + x), v);
    }
    return x;
}

/* RGBA -> RGB565/BGR565, 16 pixels per step: gather 0x00RRGGBB words, shift the
 * fields into place, pack to 16 bits. */
__attribute__((target("avx2"))) static ptrdiff_t convert_avx2_rgba_565(const uint8_t *restrict s,
                                                                       const uint8_t *next,
                                                                       uint16_t *restrict d, ptrdiff_t w,
                                                                       int bgr, int stream)
{
    const __m256i mask = bgr ? convert_x86_mask32(4, 0, 8, 16, -1) : convert_x86_mask32(4, 16, 8, 0, -1);
    const __m256i m_hi = _mm256_set1_epi32(0xF800), m_mid = _mm256_set1_epi32(0x07E0),
                  m_lo = _mm256_set1_epi32(0x001F);
    ptrdiff_t x = 0;
    for (; x + 16 <= w; x += 16) {
        const uint8_t *p = s + 4 * x;
        _mm_prefetch((const char *)(next + 4 * x), _MM_HINT_T0);
        _mm_prefetch((const char *)(next + 4 * x + 32), _MM_HINT_T0); /* 64 bytes a step */
        __m256i a = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)p), mask);
        __m256i b = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), mask);
        a = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a, 8), m_hi),
                                            _mm256_and_si256(_mm256_srli_epi32(a, 5), m_mid)),
                            _mm256_and_si256(_mm256_srli_epi32(a, 3), m_lo));
        b = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(b, 8), m_hi),
                                            _mm256_and_si256(_mm256_srli_epi32(b, 5), m_mid)),
                            _mm256_and_si256(_mm256_srli_epi32(b, 3), m_lo));
        __m256i v = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + x), v);
        else
            _mm256_storeu_si256((__m256i *)(d + x), v);
    }
    return x;
}

/* Source-over blend of 8 RGBA pixels per step onto 32-bit pixels with 8-bit channels
 * at byte offsets ro/go/bo and no alpha, in 16-bit lanes. Same rounding as the plain
 * loop: round((s * a + d * (255 - a)) / 255); alpha 0 keeps the pixel as it was. */
__attribute__((target("avx2"))) static ptrdiff_t
convert_avx2_blend_x8888(const uint8_t *restrict s, uint32_t *restrict d, ptrdiff_t w, int ro, int go, int bo)
{
    uint8_t mc[32], ma[32], keep[32];
    memset(mc, 0x80, sizeof mc);
    memset(keep, 0, sizeof keep);
    for (int i = 0; i < 32; i += 4) {
        int p = i % 16; /* first byte of this pixel within its lane */
        mc[i + ro / 8] = (uint8_t)p;
        mc[i + go / 8] = (uint8_t)(p + 1);
        mc[i + bo / 8] = (uint8_t)(p + 2);
        keep[i + ro / 8] = keep[i + go / 8] = keep[i + bo / 8] = 0xFF;
        ma[i] = ma[i + 1] = ma[i + 2] = ma[i + 3] = (uint8_t)(p + 3);
    }
    const __m256i to_dst = _mm256_loadu_si256((const __m256i *)mc),
                  alpha = _mm256_loadu_si256((const __m256i *)ma);
    const __m256i channels = _mm256_loadu_si256((const __m256i *)keep), zero = _mm256_setzero_si256();
    const __m256i c255 = _mm256_set1_epi16(255), c128 = _mm256_set1_epi16(128);
    ptrdiff_t x = 0;
    for (; x + 8 <= w; x += 8) {
        __m256i sv = _mm256_loadu_si256((const __m256i *)(s + 4 * x));
        __m256i dv = _mm256_loadu_si256((const __m256i *)(d + x));
        __m256i c = _mm256_shuffle_epi8(sv, to_dst), a = _mm256_shuffle_epi8(sv, alpha);
        __m256i out[2];
        for (int half = 0; half < 2; half++) {
            __m256i c16 = half ? _mm256_unpackhi_epi8(c, zero) : _mm256_unpacklo_epi8(c, zero);
            __m256i d16 = half ? _mm256_unpackhi_epi8(dv, zero) : _mm256_unpacklo_epi8(dv, zero);
            __m256i a16 = half ? _mm256_unpackhi_epi8(a, zero) : _mm256_unpacklo_epi8(a, zero);
            __m256i t =
                _mm256_add_epi16(_mm256_add_epi16(_mm256_mullo_epi16(c16, a16),
                                                  _mm256_mullo_epi16(d16, _mm256_sub_epi16(c255, a16))),
                                 c128);
            out[half] = _mm256_srli_epi16(_mm256_add_epi16(t, _mm256_srli_epi16(t, 8)), 8);
        }
        __m256i v = _mm256_and_si256(_mm256_packus_epi16(out[0], out[1]), channels);
        v = _mm256_blendv_epi8(v, dv, _mm256_cmpeq_epi8(a, zero));
        _mm256_storeu_si256((__m256i *)(d + x), v);
    }
    return x;
}
#endif

CONVERT_ROW void convert_pack_row(const uint8_t *s, int rgba, uint8_t *d, ptrdiff_t w, enum convert_path path,
                                  const convert_format *f, uint32_t opaque)
{
    switch (path) {
    case CONVERT_P_GRAY: {
        int shift = 8 - f->bpp, top = f->inverted ? (1 << f->bpp) - 1 : 0;
        if (rgba)
            convert_pack_rgba_gray(s, d, w, shift, top);
        else
            convert_pack_rgb_gray(s, d, w, shift, top);
        break;
    }
    case CONVERT_P_INDEXED:
        convert_pack_indexed(s, rgba ? 4 : 3, d, w, f->lut);
        break;
    case CONVERT_P_XRGB:
        if (rgba)
            convert_pack_rgba_xrgb(s, (uint32_t *)d, w);
        else
            convert_pack_rgb_xrgb(s, (uint32_t *)d, w);
        break;
    case CONVERT_P_XBGR:
        if (rgba)
            convert_pack_rgba_xbgr(s, (uint32_t *)d, w);
        else
            convert_pack_rgb_xbgr(s, (uint32_t *)d, w);
        break;
    case CONVERT_P_RGB565:
        if (rgba)
            convert_pack_rgba_565(s, (uint16_t *)d, w);
        else
            convert_pack_rgb_565(s, (uint16_t *)d, w);
        break;
    case CONVERT_P_BGR565:
        if (rgba)
            convert_pack_rgba_bgr565(s, (uint16_t *)d, w);
        else
            convert_pack_rgb_bgr565(s, (uint16_t *)d, w);
        break;
    case CONVERT_P_32:
        if (rgba)
            convert_pack_rgba_32(s, (uint32_t *)d, w, f, opaque);
        else
            convert_pack_rgb_32(s, (uint32_t *)d, w, f, opaque);
        break;
    case CONVERT_P_16:
        if (rgba)
            convert_pack_rgba_16(s, (uint16_t *)d, w, f, opaque);
        else
            convert_pack_rgb_16(s, (uint16_t *)d, w, f, opaque);
        break;
    case CONVERT_P_8:
        if (rgba)
            convert_pack_rgba_8(s, d, w, f, opaque);
        else
            convert_pack_rgb_8(s, d, w, f, opaque);
        break;
    case CONVERT_P_24:
        convert_pack_24(s, rgba ? 4 : 3, d, w, f, opaque);
        break;
    case CONVERT_P_NONE:
        break;
    }
}

/* Write pixels of `channels` bytes (3: RGB; 4: RGBA when `alpha`, else RGB plus a
 * padding byte, as Pillow stores RGB images) into native memory; alpha is stored
 * where the format has it. Returns the number of pixels written or -EINVAL. */
FBGFX_HOT ptrdiff_t convert_pack(const uint8_t *src, ptrdiff_t src_stride, int channels, int alpha,
                                 uint8_t *dst, ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height,
                                 const convert_format *f)
{
    const enum convert_path path = convert_path_of(f);
    if (width < 0 || height < 0 || (channels != 3 && channels != 4) || path == CONVERT_P_NONE)
        return -EINVAL;
    const int rgba = channels == 4;
    const uint32_t opaque = rgba && alpha ? 0u : 255u;
#ifdef CONVERT_AVX2
    const int bytes = f->kind == CONVERT_DIRECT ? f->bpp / 8 : 1;
    const int avx2 = convert_have_avx2(), x8888 = convert_is_x8888(f);
    const int ao = f->len[3] && opaque == 0 ? f->off[3] : -1;
    const uint32_t bits = f->len[3] && opaque ? 0xFFu << f->off[3] : 0u;
    /* A destination larger than the caches is written with non-temporal stores: a
     * plain store first reads each line it fills (the read-for-ownership), a third of
     * the traffic of a frame conversion, and video memory is never read back anyway.
     * Frames that fit in the caches keep ordinary stores (the next step may read them). */
    const int stream = (size_t)width * (size_t)height * (size_t)bytes >= CONVERT_STREAM_BYTES;
    int streamed = 0;
    const int bgr = path == CONVERT_P_BGR565, kernel = avx2 && (x8888 || path == CONVERT_P_RGB565 || bgr);
#endif
    for (ptrdiff_t y = 0; y < height; y++) {
        const uint8_t *s = src + y * src_stride;
        uint8_t *d = dst + y * dst_stride;
        ptrdiff_t w = width;
#ifdef CONVERT_AVX2
        if (kernel) {
            const uint8_t *next = y + 1 < height ? s + src_stride : s; /* prefetched meanwhile */
            /* Streaming stores need 32-byte alignment: the pixels before the row's first
             * 32-byte boundary (a subsurface, a centred picture) take the plain loop. */
            ptrdiff_t lead = 0;
            if (stream && (uintptr_t)d % (uintptr_t)bytes == 0) {
                lead = (ptrdiff_t)((32 - ((uintptr_t)d & 31)) & 31) / bytes;
                lead = lead < w ? lead : w;
                convert_pack_row(s, rgba, d, lead, path, f, opaque);
                s += channels * lead, next += channels * lead, d += bytes * lead, w -= lead;
            }
            const int st = stream && ((uintptr_t)d & 31) == 0;
            ptrdiff_t done;
            streamed |= st;
            if (x8888)
                done = convert_avx2_pack32(s, next, channels, (uint32_t *)d, w, f->off[0], f->off[1],
                                           f->off[2], ao, bits, st);
            else if (rgba)
                done = convert_avx2_rgba_565(s, next, (uint16_t *)d, w, bgr, st);
            else
                done = convert_avx2_rgb_565(s, next, (uint16_t *)d, w, bgr, st);
            s += channels * done, d += bytes * done, w -= done;
        }
#endif
        convert_pack_row(s, rgba, d, w, path, f, opaque);
    }
#ifdef CONVERT_AVX2
    if (streamed)
        _mm_sfence(); /* non-temporal stores are ordered before whatever the caller does next */
#endif
    return width * height;
}

/* ---- native -> RGB(A) ------------------------------------------------------------- */

#define CONVERT_UNPACK_DIRECT(NAME, CH, T)                                                                   \
    CONVERT_ROW void NAME(const T *restrict s, uint8_t *restrict d, ptrdiff_t w, const convert_format *f)    \
    {                                                                                                        \
        const convert_format c = *f; /* a local copy: stores to d cannot alias it */                         \
        for (size_t x = 0; x < (size_t)w; x++) {                                                             \
            uint32_t v = s[x];                                                                               \
            d[CH * x] = (uint8_t)convert_expand(v, &c, 0);                                                   \
            d[CH * x + 1] = (uint8_t)convert_expand(v, &c, 1);                                               \
            d[CH * x + 2] = (uint8_t)convert_expand(v, &c, 2);                                               \
            if (CH == 4)                                                                                     \
                d[CH * x + 3] = c.len[3] ? (uint8_t)convert_expand(v, &c, 3) : 255;                          \
        }                                                                                                    \
    }

CONVERT_UNPACK_DIRECT(convert_unpack_32_rgb, 3, uint32_t)
CONVERT_UNPACK_DIRECT(convert_unpack_32_rgba, 4, uint32_t)
CONVERT_UNPACK_DIRECT(convert_unpack_16_rgb, 3, uint16_t)
CONVERT_UNPACK_DIRECT(convert_unpack_16_rgba, 4, uint16_t)
CONVERT_UNPACK_DIRECT(convert_unpack_8_rgb, 3, uint8_t)
CONVERT_UNPACK_DIRECT(convert_unpack_8_rgba, 4, uint8_t)

/* Native pixels to RGB (channels 3) or RGBA (channels 4). Returns the pixel count. */
FBGFX_HOT ptrdiff_t convert_unpack(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                                   ptrdiff_t dst_stride, int channels, ptrdiff_t width, ptrdiff_t height,
                                   const convert_format *f)
{
    if (width < 0 || height < 0 || (channels != 3 && channels != 4) || convert_path_of(f) == CONVERT_P_NONE)
        return -EINVAL;
    const int rgba = channels == 4;
    for (ptrdiff_t y = 0; y < height; y++) {
        const uint8_t *s = src + y * src_stride;
        uint8_t *d = dst + y * dst_stride;
        if (f->kind == CONVERT_GRAY) {
            const uint32_t mask = (1u << f->bpp) - 1u, top = f->inverted ? mask : 0u;
            for (size_t x = 0; x < (size_t)width; x++) {
                uint32_t level = (s[x] ^ top) & mask;
                uint8_t v = (uint8_t)((level * f->mul[0] + f->add[0]) >> 16);
                d[channels * x] = d[channels * x + 1] = d[channels * x + 2] = v;
                if (rgba)
                    d[4 * x + 3] = 255;
            }
        } else if (f->kind == CONVERT_INDEXED) {
            for (size_t x = 0; x < (size_t)width; x++) {
                const uint8_t *p = f->palette + 3 * (s[x] % f->palette_len);
                d[channels * x] = p[0];
                d[channels * x + 1] = p[1];
                d[channels * x + 2] = p[2];
                if (rgba)
                    d[4 * x + 3] = 255;
            }
        } else if (f->bpp == 32) {
            if (rgba)
                convert_unpack_32_rgba((const uint32_t *)s, d, width, f);
            else
                convert_unpack_32_rgb((const uint32_t *)s, d, width, f);
        } else if (f->bpp == 16) {
            if (rgba)
                convert_unpack_16_rgba((const uint16_t *)s, d, width, f);
            else
                convert_unpack_16_rgb((const uint16_t *)s, d, width, f);
        } else if (f->bpp == 8) {
            if (rgba)
                convert_unpack_8_rgba(s, d, width, f);
            else
                convert_unpack_8_rgb(s, d, width, f);
        } else if (f->bpp == 24) {
            for (size_t x = 0; x < (size_t)width; x++) {
                uint32_t v = convert_load(s + 3 * x, 3);
                d[channels * x] = (uint8_t)convert_expand(v, f, 0);
                d[channels * x + 1] = (uint8_t)convert_expand(v, f, 1);
                d[channels * x + 2] = (uint8_t)convert_expand(v, f, 2);
                if (rgba)
                    d[4 * x + 3] = f->len[3] ? (uint8_t)convert_expand(v, f, 3) : 255;
            }
        } else {
            return -EINVAL;
        }
    }
    return width * height;
}

/* ---- blending --------------------------------------------------------------------- */

/* Source-over blend of an RGBA row onto XRGB8888-family pixels (8-bit channels at
 * byte offsets); branch-free so it vectorises. */
CONVERT_ROW void convert_blend_row_x8888(const uint8_t *restrict s, uint32_t *restrict d, ptrdiff_t w, int ro,
                                         int go, int bo)
{
    for (size_t x = 0; x < (size_t)w; x++) {
        uint32_t v = d[x], a = s[4 * x + 3], ia = 255 - a;
        uint32_t r = convert_div255(s[4 * x] * a + ((v >> ro) & 255) * ia);
        uint32_t g = convert_div255(s[4 * x + 1] * a + ((v >> go) & 255) * ia);
        uint32_t b = convert_div255(s[4 * x + 2] * a + ((v >> bo) & 255) * ia);
        uint32_t o = r << ro | g << go | b << bo;
        d[x] = a ? o : v;
    }
}

CONVERT_ROW void convert_blend_row_565(const uint8_t *restrict s, uint16_t *restrict d, ptrdiff_t w, int ro,
                                       int bo, const convert_format *f)
{
    const uint32_t m5 = f->mul[0], a5 = f->add[0], m6 = f->mul[1], a6 = f->add[1];
    for (size_t x = 0; x < (size_t)w; x++) {
        uint32_t v = d[x], a = s[4 * x + 3], ia = 255 - a;
        uint32_t dr = (((v >> ro) & 31) * m5 + a5) >> 16;
        uint32_t dg = (((v >> 5) & 63) * m6 + a6) >> 16;
        uint32_t db = (((v >> bo) & 31) * m5 + a5) >> 16;
        uint32_t r = convert_div255(s[4 * x] * a + dr * ia);
        uint32_t g = convert_div255(s[4 * x + 1] * a + dg * ia);
        uint32_t b = convert_div255(s[4 * x + 2] * a + db * ia);
        uint32_t o = (r >> 3) << ro | (g >> 2) << 5 | (b >> 3) << bo;
        d[x] = (uint16_t)(a ? o : v);
    }
}

/* Source-over blend of RGBA pixels onto native ones: alpha 0 leaves a pixel as it
 * was, 255 writes the packed colour. Returns the pixel count or -EINVAL. */
FBGFX_HOT ptrdiff_t convert_blend(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst,
                                  ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height,
                                  const convert_format *f)
{
    if (width < 0 || height < 0 || convert_path_of(f) == CONVERT_P_NONE)
        return -EINVAL;
    const int x8888 = f->kind == CONVERT_DIRECT && f->bpp == 32 && f->len[0] == 8 && f->len[1] == 8 &&
                      f->len[2] == 8 && f->len[3] == 0 && f->off[0] % 8 == 0 && f->off[1] % 8 == 0 &&
                      f->off[2] % 8 == 0;
    const int x565 = convert_is(f, 16, 11, 5, 5, 6, 0, 5) || convert_is(f, 16, 0, 5, 5, 6, 11, 5);
    const int bytes = f->kind == CONVERT_DIRECT ? f->bpp / 8 : 1;
#ifdef CONVERT_AVX2
    const int avx2 = convert_have_avx2();
#endif
    for (ptrdiff_t y = 0; y < height; y++) {
        const uint8_t *s = src + y * src_stride;
        uint8_t *d = dst + y * dst_stride;
        if (x8888) {
            ptrdiff_t done = 0;
#ifdef CONVERT_AVX2
            if (avx2)
                done = convert_avx2_blend_x8888(s, (uint32_t *)d, width, f->off[0], f->off[1], f->off[2]);
#endif
            convert_blend_row_x8888(s + 4 * done, (uint32_t *)d + done, width - done, f->off[0], f->off[1],
                                    f->off[2]);
        } else if (x565 && f->kind == CONVERT_DIRECT) {
            convert_blend_row_565(s, (uint16_t *)d, width, f->off[0], f->off[2], f);
        } else {
            for (size_t x = 0; x < (size_t)width; x++) {
                const uint8_t *p = s + 4 * x;
                if (p[3] == 0)
                    continue;
                uint32_t v = convert_load(d + bytes * x, bytes);
                convert_store(d + bytes * x, bytes, convert_blend_pixel(v, p[0], p[1], p[2], p[3], f));
            }
        }
    }
    return width * height;
}

/* Blend colour (r, g, b, a) through a coverage mask (0..255) onto native pixels:
 * weight = mask * a / 255. Where the weight is 255 the pixel becomes `exact` (the
 * packed colour, which for palette formats is the exactly nearest entry). */
FBGFX_HOT ptrdiff_t convert_blend_mask(const uint8_t *mask, ptrdiff_t mask_stride, uint8_t *dst,
                                       ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height, int r, int g,
                                       int b, int a, uint32_t exact, const convert_format *f)
{
    if (width < 0 || height < 0 || (unsigned)r > 255 || (unsigned)g > 255 || (unsigned)b > 255 ||
        (unsigned)a > 255 || convert_path_of(f) == CONVERT_P_NONE)
        return -EINVAL;
    const int bytes = f->kind == CONVERT_DIRECT ? f->bpp / 8 : 1;
    const enum convert_path path = convert_path_of(f);
    const int x8888 = convert_is_x8888(f) && f->len[3] == 0;
    for (ptrdiff_t y = 0; y < height; y++) {
        const uint8_t *m = mask + y * mask_stride;
        uint8_t *d = dst + y * dst_stride;
        if (x8888) {
            convert_mask_row_x8888(m, (uint32_t *)d, width, f->off[0], f->off[1], f->off[2], r, g, b, a);
            continue;
        }
        if (path == CONVERT_P_RGB565 || path == CONVERT_P_BGR565) {
            convert_mask_row_565(m, (uint16_t *)d, width, f->off[0], f->off[2], r, g, b, a, f);
            continue;
        }
        for (size_t x = 0; x < (size_t)width; x++) {
            uint32_t k = convert_div255((uint32_t)m[x] * (uint32_t)a);
            if (k == 0)
                continue;
            uint32_t v =
                k == 255 ? exact : convert_blend_pixel(convert_load(d + bytes * x, bytes), r, g, b, k, f);
            convert_store(d + bytes * x, bytes, v);
        }
    }
    return width * height;
}

/* ---- fill ------------------------------------------------------------------------- */

/* Fill width x height pixels of `bytes` bytes each with `value` (little-endian). */
FBGFX_HOT ptrdiff_t convert_fill(uint8_t *dst, ptrdiff_t dst_stride, ptrdiff_t width, ptrdiff_t height,
                                 int bytes, uint32_t value)
{
    if (width < 0 || height < 0 || bytes < 1 || bytes > 4)
        return -EINVAL;
    for (ptrdiff_t y = 0; y < height; y++) {
        uint8_t *d = dst + y * dst_stride;
        if (bytes == 1) {
            memset(d, (int)(value & 255), (size_t)width);
        } else if (bytes == 2) {
            uint16_t *restrict p = (uint16_t *)d;
            for (size_t x = 0; x < (size_t)width; x++)
                p[x] = (uint16_t)value;
        } else if (bytes == 4) {
            uint32_t *restrict p = (uint32_t *)d;
            for (size_t x = 0; x < (size_t)width; x++)
                p[x] = value;
        } else {
            uint8_t *restrict p = d;
            const uint8_t b0 = (uint8_t)value, b1 = (uint8_t)(value >> 8), b2 = (uint8_t)(value >> 16);
            for (size_t x = 0; x < (size_t)width; x++) {
                p[3 * x] = b0;
                p[3 * x + 1] = b1;
                p[3 * x + 2] = b2;
            }
        }
    }
    return width * height;
}
