/* Rotation kernels for fbgfx.Screen(rotate=...) (fbgfx/_screen/transfer.py): a frame is
 * turned a quarter or a half turn while it is written into video memory.
 *
 * A "block" is width x height pixels of the frame (the Screen's logical picture), rows
 * src_stride bytes apart. It is written turned clockwise by `turn` quarter turns (1, 2
 * or 3) into the panel's memory at dst, which points at the top-left pixel of where
 * the block lands there (rows dst_stride bytes apart). Turned by 1 or 3 the block is
 * height pixels wide and width tall on the panel. Pixel (x, y) of the block goes to
 *     turn 1 (90 clockwise):  (height - 1 - y, x)
 *     turn 2 (180):           (width - 1 - x, height - 1 - y)
 *     turn 3 (270 clockwise): (y, width - 1 - x)
 * Nothing outside the block and its turned place is read or written. The kernels
 * return 0, or -EINVAL for arguments they do not take.
 *
 * The work goes tile by tile (ROTATE_TILE pixels square): a tile's source rows stay in
 * L1 while its panel rows are written left to right (video memory is write-combined on
 * real hardware: it wants sequential writes, never reads). On x86-64, 8x8 blocks are
 * turned in registers (AVX2 for 32-bit pixels, SSE2 for 16-bit); rotate_pack converts
 * each block of RGB into those registers and writes it turned, so the picture is turned
 * while it is converted, not converted and then copied turned; a half turn there is a
 * row conversion written from the right, with non-temporal stores as convert_pack's
 * (it reads and writes what no turn does, so it costs what no turn costs). Elsewhere
 * (ARM boards), plain loops convert a tile into a buffer on the stack and write it
 * turned. Channels are truncated to their length as PixelFormat.pack and convert_pack
 * do. */
#include "rotate.h"

#define ROTATE_TILE 32
/* Frame rows a quarter turn's 8x8 blocks take in one pass across the frame. One band
 * reads 8 frame rows front to back, streams the hardware prefetchers follow; bands of
 * 16 or 32 rows (more streams than they track) took 1.5-2x as long on 1080p frames, even
 * with the rows prefetched. The panel rows' lines a pass leaves half written wait in L2
 * for the next pass. While a band is turned, the next band's rows are prefetched in step
 * with it (a few lines per block): the hardware alone does not start them early enough,
 * and a turn waited on them (a quarter turn of a 1080p frame took 1.3-1.45x as long,
 * frames read from memory or from L3 alike). */
#define ROTATE_BAND 8
_Static_assert(ROTATE_BAND == 8, "a band is one row of 8x8 blocks");
#define ROTATE_INLINE static inline __attribute__((always_inline))

/* One tile: src is its top-left pixel in the frame, dst the top-left of its turned
 * place; tw x th pixels in the frame. Panel row i, column j takes the pixel given in
 * the file comment, so each panel row is one run of stores. */
#define ROTATE_TILE_FN(NAME, T)                                                                              \
    ROTATE_INLINE void NAME(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int tw, int th,    \
                            int turn)                                                                        \
    {                                                                                                        \
        if (turn == 1) {                                                                                     \
            for (int i = 0; i < tw; i++) { /* panel row i: frame column i, bottom to top */                  \
                T *restrict out = (T *)(dst + i * ds);                                                       \
                const uint8_t *col = src + (ptrdiff_t)(th - 1) * ss + (ptrdiff_t)i * (ptrdiff_t)sizeof(T);   \
                for (int j = 0; j < th; j++)                                                                 \
                    out[j] = *(const T *)(col - j * ss);                                                     \
            }                                                                                                \
        } else if (turn == 3) {                                                                              \
            for (int i = 0; i < tw; i++) { /* panel row i: frame column tw-1-i, top to bottom */             \
                T *restrict out = (T *)(dst + i * ds);                                                       \
                const uint8_t *col = src + (ptrdiff_t)(tw - 1 - i) * (ptrdiff_t)sizeof(T);                   \
                for (int j = 0; j < th; j++)                                                                 \
                    out[j] = *(const T *)(col + j * ss);                                                     \
            }                                                                                                \
        } else {                                                                                             \
            for (int i = 0; i < th; i++) { /* panel row i: frame row th-1-i, right to left */                \
                T *restrict out = (T *)(dst + i * ds);                                                       \
                const T *row = (const T *)(src + (ptrdiff_t)(th - 1 - i) * ss);                              \
                for (int j = 0; j < tw; j++)                                                                 \
                    out[j] = row[tw - 1 - j];                                                                \
            }                                                                                                \
        }                                                                                                    \
    }

ROTATE_TILE_FN(rotate_tile_8, uint8_t)
ROTATE_TILE_FN(rotate_tile_16, uint16_t)
ROTATE_TILE_FN(rotate_tile_32, uint32_t)

typedef struct {
    uint8_t b[3];
} rotate_px24;
ROTATE_TILE_FN(rotate_tile_24, rotate_px24)

/* Where the tile at (tx, ty) of a width x height block lands: the offset of its
 * turned top-left pixel from dst. */
ROTATE_INLINE ptrdiff_t rotate_place(int tx, int ty, int tw, int th, int width, int height, int turn,
                                     ptrdiff_t ds, int bytes)
{
    int x, y;
    if (turn == 1) {
        x = height - ty - th;
        y = tx;
    } else if (turn == 3) {
        x = ty;
        y = width - tx - tw;
    } else {
        x = width - tx - tw;
        y = height - ty - th;
    }
    return (ptrdiff_t)y * ds + (ptrdiff_t)x * bytes;
}

/* ---- x86-64: 8x8 blocks turned in registers ----------------------------------------
 * A quarter turn is a transpose with the rows (turn 1) or the output rows (turn 3)
 * taken in reverse order. The scalar tiles above read a column per panel row (one
 * load a pixel); these transpose 8x8 blocks with unpack/permute steps instead: 32-bit
 * pixels with AVX2 (chosen at run time, as convert.c does), 16-bit with SSE2. Only
 * tiles whose sides are multiples of 8 take them; the others take the plain loops. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FBGFX_NO_CLONES)
#include <immintrin.h>
#include <stdlib.h>
#define ROTATE_X86 1
/* Half turns of frames of at least this many bytes get non-temporal stores (as convert.c). */
#define ROTATE_STREAM_BYTES (2u << 20)

/* FBGFX_NO_AVX2=1 turns the vector kernels off (AVX2 and the SSE2 ones), so tests can
 * check the plain loops that ARM boards run. */
static int rotate_plain_only(void)
{
    static int plain = -1; /* racing threads all store the same answer */
    if (plain < 0) {
        const char *off = getenv("FBGFX_NO_AVX2");
        plain = off && *off && *off != '0';
    }
    return plain;
}

static int rotate_have_avx2(void)
{
    static int have = -1;
    if (have < 0)
        have = __builtin_cpu_supports("avx2") && !rotate_plain_only();
    return have;
}

/* Rows r[0..7] of 32-bit pixels in; out, u[c] holds column c of rows 0..3 in its low
 * lane and column c + 4 of rows 0..3 in its high lane, u[c + 4] the same of rows 4..7. */
__attribute__((target("avx2"), always_inline)) static inline void rotate_t8x8_32_lanes(const __m256i r[8],
                                                                                       __m256i u[8])
{
    __m256i t[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_epi32(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_epi32(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k / 4 * 4] = _mm256_unpacklo_epi64(t[k], t[k + 2]);
        u[k / 4 * 4 + 1] = _mm256_unpackhi_epi64(t[k], t[k + 2]);
        u[k / 4 * 4 + 2] = _mm256_unpacklo_epi64(t[k + 1], t[k + 3]);
        u[k / 4 * 4 + 3] = _mm256_unpackhi_epi64(t[k + 1], t[k + 3]);
    }
}

/* Rows r[0..7] of 32-bit pixels in, r[c] = column c of the block out. */
__attribute__((target("avx2"), always_inline)) static inline void rotate_t8x8_32(__m256i r[8])
{
    __m256i u[8];
    rotate_t8x8_32_lanes(r, u);
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2x128_si256(u[c], u[c + 4], 0x20);
        r[c + 4] = _mm256_permute2x128_si256(u[c], u[c + 4], 0x31);
    }
}

/* One 8x8 block of 32-bit pixels turned by 1 or 3: s is its top-left pixel in the frame,
 * d the top-left of its turned place. Turn 1 takes the rows bottom up (panel rows read
 * the columns upwards); turned by 3, column c is the place's row 7 - c. */
__attribute__((target("avx2"), always_inline)) static inline void
rotate_avx2_8x8_32(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds, int turn)
{
    __m256i r[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm256_loadu_si256((const __m256i *)(s + (ptrdiff_t)(turn == 1 ? 7 - k : k) * ss));
    rotate_t8x8_32(r);
    for (int c = 0; c < 8; c++)
        _mm256_storeu_si256((__m256i *)(d + (ptrdiff_t)(turn == 1 ? c : 7 - c) * ds), r[c]);
}

/* A tile of 32-bit pixels turned by 1 or 3, tw and th multiples of 8. */
__attribute__((target("avx2"))) static void
rotate_avx2_tile_32(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int tw, int th, int turn)
{
    for (int bx = 0; bx < tw; bx += 8) { /* panel rows fill left to right */
        for (int j = 0; j < th; j += 8) {
            const int by = turn == 1 ? th - 8 - j : j;
            rotate_avx2_8x8_32(src + (ptrdiff_t)by * ss + (ptrdiff_t)bx * 4, ss,
                               dst + rotate_place(bx, by, 8, 8, tw, th, turn, ds, 4), ds, turn);
        }
    }
}

/* Rows r[0..7] of 16-bit pixels in, r[c] = column c of the block out (SSE2). */
static inline void rotate_t8x8_16(__m128i r[8])
{
    __m128i a[8], b[8];
    for (int k = 0; k < 8; k += 2) {
        a[k] = _mm_unpacklo_epi16(r[k], r[k + 1]);
        a[k + 1] = _mm_unpackhi_epi16(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        b[k] = _mm_unpacklo_epi32(a[k], a[k + 2]);
        b[k + 1] = _mm_unpackhi_epi32(a[k], a[k + 2]);
        b[k + 2] = _mm_unpacklo_epi32(a[k + 1], a[k + 3]);
        b[k + 3] = _mm_unpackhi_epi32(a[k + 1], a[k + 3]);
    }
    for (int c = 0; c < 4; c++) {
        r[2 * c] = _mm_unpacklo_epi64(b[c], b[c + 4]);
        r[2 * c + 1] = _mm_unpackhi_epi64(b[c], b[c + 4]);
    }
}

/* One 8x8 block of 16-bit pixels turned by 1 or 3, as rotate_avx2_8x8_32. */
static inline void rotate_sse2_8x8_16(const uint8_t *s, ptrdiff_t ss, uint8_t *d, ptrdiff_t ds, int turn)
{
    __m128i r[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm_loadu_si128((const __m128i *)(s + (ptrdiff_t)(turn == 1 ? 7 - k : k) * ss));
    rotate_t8x8_16(r);
    for (int c = 0; c < 8; c++)
        _mm_storeu_si128((__m128i *)(d + (ptrdiff_t)(turn == 1 ? c : 7 - c) * ds), r[c]);
}

/* A tile of 16-bit pixels turned by 1 or 3, tw and th multiples of 8. */
static void rotate_sse2_tile_16(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int tw, int th,
                                int turn)
{
    for (int bx = 0; bx < tw; bx += 8) { /* panel rows fill left to right */
        for (int j = 0; j < th; j += 8) {
            const int by = turn == 1 ? th - 8 - j : j;
            rotate_sse2_8x8_16(src + (ptrdiff_t)by * ss + (ptrdiff_t)bx * 2, ss,
                               dst + rotate_place(bx, by, 8, 8, tw, th, turn, ds, 2), ds, turn);
        }
    }
}

/* The 8x8 blocks of [0, w8) x [0, h8) (multiples of 8) of a width x height block of
 * 2 or 4 byte pixels turned by 1 or 3, in bands of ROTATE_BAND rows, the next band
 * prefetched, as rotate_avx2_pack_blocks takes them (32x32 tiles read 32 rows at once:
 * a whole RGB565 frame took twice as long). One prefetch a 64 bytes of a row. */
#define ROTATE_COPY_BLOCKS(NAME, ATTR, BLOCK, BYTES)                                                         \
    ATTR static void NAME(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int width,           \
                          int height, int turn, int w8, int h8)                                              \
    {                                                                                                        \
        for (int j = 0; j < h8; j += ROTATE_BAND) {                                                          \
            const int by = turn == 1 ? h8 - ROTATE_BAND - j : j;                                             \
            const int next = turn == 1 ? by - ROTATE_BAND : by + ROTATE_BAND;                                \
            const int ahead = next >= 0 && next < h8;                                                        \
            const uint8_t *pre = ahead ? src + (ptrdiff_t)next * ss : src;                                   \
            for (int bx = 0; bx < w8; bx += 8) {                                                             \
                if (ahead && (bx * BYTES) % 64 == 0)                                                         \
                    for (int r = 0; r < ROTATE_BAND; r++)                                                    \
                        _mm_prefetch((const char *)(pre + (ptrdiff_t)r * ss + (ptrdiff_t)bx * BYTES),        \
                                     _MM_HINT_T0);                                                           \
                BLOCK(src + (ptrdiff_t)by * ss + (ptrdiff_t)bx * BYTES, ss,                                  \
                      dst + rotate_place(bx, by, 8, 8, width, height, turn, ds, BYTES), ds, turn);           \
            }                                                                                                \
        }                                                                                                    \
    }

ROTATE_COPY_BLOCKS(rotate_avx2_copy_blocks_32, __attribute__((target("avx2"))), rotate_avx2_8x8_32, 4)
ROTATE_COPY_BLOCKS(rotate_sse2_copy_blocks_16, , rotate_sse2_8x8_16, 2)

/* How rotate_avx2_pack_tile gets a channel into place. */
enum rotate_kind { ROTATE_K_SHIFT, ROTATE_K_BYTES, ROTATE_K_565, ROTATE_K_BGR565 };

static enum rotate_kind rotate_kind_of(const rotate_format *f)
{
    const int *o = f->off, *l = f->len;
    if (f->bytes == 4 && l[0] == 8 && l[1] == 8 && l[2] == 8 && o[0] % 8 == 0 && o[1] % 8 == 0 &&
        o[2] % 8 == 0)
        return ROTATE_K_BYTES; /* XRGB8888, XBGR8888, ARGB8888, RGBA8888, ... */
    if (f->bytes == 2 && l[0] == 5 && l[1] == 6 && l[2] == 5 && o[1] == 5 && !l[3])
        return o[0] == 11 && o[2] == 0   ? ROTATE_K_565
               : o[0] == 0 && o[2] == 11 ? ROTATE_K_BGR565
                                         : ROTATE_K_SHIFT;
    return ROTATE_K_SHIFT;
}

/* Constants of one rotate_pack call for the AVX2 kernels. */
typedef struct {
    __m256i mask, rmask, alpha, ff, m5, m6, m5lo, m5hi;
    __m256i half_p[2], half_q[2], top, mid; /* half turns of 3-byte RGB into RGB565/BGR565 */
    __m128i crs, cgs, cbs, cro, cgo, cbo;
    int hi, step;
    enum rotate_kind kind;
} rotate_avx2_k;

__attribute__((target("avx2"))) static void rotate_avx2_setup(rotate_avx2_k *k, int step,
                                                              const rotate_format *f)
{
    uint8_t m[32], rm[32];
    k->kind = rotate_kind_of(f);
    k->step = step;
    k->hi = step == 3 ? 8 : 16; /* where the high lane's load starts */
    memset(m, 0x80, sizeof m);
    memset(rm, 0x80, sizeof rm);
    /* mask: pixel p to word p % 4 of lane p / 4. rmask takes the two loads the other way
     * round (pixels 4..7 in the low lane) and puts pixel p in word 3 - p % 4 of its lane:
     * the 8 pixels in reverse order, for half turns, without a permute across lanes. */
    for (int p = 0; p < 8; p++) {
        const int lane = p / 4, from = step * p - (lane ? k->hi : 0);
        const int at = 16 * lane + 4 * (p % 4), rat = 16 * (1 - lane) + 4 * (3 - p % 4);
        for (int c = 0; c < 3; c++) {
            const int b = k->kind == ROTATE_K_BYTES ? f->off[c] / 8 : c;
            m[at + b] = rm[rat + b] = (uint8_t)(from + c);
        }
    }
    k->mask = _mm256_loadu_si256((const __m256i *)m);
    k->rmask = _mm256_loadu_si256((const __m256i *)rm);
    /* convert_pack's RGB -> RGB565/BGR565 shuffles (convert_avx2_rgb_565), mirrored: for
     * 16 pixels at p, a = bytes [24, 40) | [0, 16) and b = [32, 48) | [8, 24) (low lane |
     * high lane), so the low lane gathers pixels 8..15 and the high lane 0..7, pixel q of
     * a lane's 8 into 16-bit word 7 - q: P = first << 8 | green, Q = last << 8, where
     * first/last are red/blue (blue/red for BGR565). */
    uint8_t mp[2][32], mq[2][32];
    memset(mp, 0x80, sizeof mp);
    memset(mq, 0x80, sizeof mq);
    const int bgr = k->kind == ROTATE_K_BGR565;
    for (int lane = 0; lane < 2; lane++) {
        for (int q = 0; q < 8; q++) {
            const int src = q < 5 ? 0 : 1, from = 3 * q - 8 * src, at = 16 * lane + 2 * (7 - q);
            mp[src][at] = (uint8_t)(from + 1);
            mp[src][at + 1] = (uint8_t)(from + (bgr ? 2 : 0));
            mq[src][at + 1] = (uint8_t)(from + (bgr ? 0 : 2));
        }
    }
    for (int i = 0; i < 2; i++) {
        k->half_p[i] = _mm256_loadu_si256((const __m256i *)mp[i]);
        k->half_q[i] = _mm256_loadu_si256((const __m256i *)mq[i]);
    }
    k->top = _mm256_set1_epi16((short)0xF800);
    k->mid = _mm256_set1_epi16(0xFC);
    k->alpha = _mm256_set1_epi32(f->len[3] ? (int)((255u >> (8 - f->len[3])) << f->off[3]) : 0);
    k->ff = _mm256_set1_epi32(0xFF);
    k->m5 = _mm256_set1_epi32(0xF8);
    k->m6 = _mm256_set1_epi32(0x07E0);
    k->m5lo = _mm256_set1_epi32(0x1F);
    k->m5hi = _mm256_set1_epi32(0xF800);
    k->crs = _mm_cvtsi32_si128(8 - f->len[0]);
    k->cgs = _mm_cvtsi32_si128(8 - f->len[1]);
    k->cbs = _mm_cvtsi32_si128(8 - f->len[2]);
    k->cro = _mm_cvtsi32_si128(f->off[0]);
    k->cgo = _mm_cvtsi32_si128(f->off[1]);
    k->cbo = _mm_cvtsi32_si128(f->off[2]);
}

/* 16 bytes at lo in the low lane, 16 at hi in the high lane. */
__attribute__((target("avx2"), always_inline)) static inline __m256i rotate_avx2_load2(const uint8_t *lo,
                                                                                       const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
                                   _mm_loadu_si128((const __m128i *)hi), 1);
}

/* 8 RGB pixels gathered into 32-bit words by a byte shuffle (mask or rmask), converted
 * to the layout `kind` (a constant where the caller is inlined): for whole-byte
 * channels the shuffle gives the pixel, else the words are R | G << 8 | B << 16 and
 * each channel is masked and shifted into place (16-bit layouts in the low half). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
rotate_avx2_words(__m256i w, const rotate_avx2_k *k, enum rotate_kind kind)
{
    switch (kind) {
    case ROTATE_K_BYTES:
        return _mm256_or_si256(w, k->alpha);
    case ROTATE_K_565: /* (R & 0xF8) << 8 | (G & 0xFC) << 3 | B >> 3 */
        return _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, k->m5), 8),
                                               _mm256_and_si256(_mm256_srli_epi32(w, 5), k->m6)),
                               _mm256_srli_epi32(w, 19));
    case ROTATE_K_BGR565: /* R >> 3 | (G & 0xFC) << 3 | (B & 0xF8) << 8 */
        return _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w, 3), k->m5lo),
                                               _mm256_and_si256(_mm256_srli_epi32(w, 5), k->m6)),
                               _mm256_and_si256(_mm256_srli_epi32(w, 8), k->m5hi));
    default: {
        __m256i r = _mm256_sll_epi32(_mm256_srl_epi32(_mm256_and_si256(w, k->ff), k->crs), k->cro);
        __m256i g = _mm256_sll_epi32(
            _mm256_srl_epi32(_mm256_and_si256(_mm256_srli_epi32(w, 8), k->ff), k->cgs), k->cgo);
        __m256i b = _mm256_sll_epi32(_mm256_srl_epi32(_mm256_srli_epi32(w, 16), k->cbs), k->cbo);
        return _mm256_or_si256(_mm256_or_si256(r, g), _mm256_or_si256(b, k->alpha));
    }
    }
}

/* 8 RGB pixels at p converted, as 32-bit words in order. Reads only their bytes. */
__attribute__((target("avx2"), always_inline)) static inline __m256i rotate_avx2_px8(const uint8_t *p,
                                                                                     const rotate_avx2_k *k)
{
    return rotate_avx2_words(_mm256_shuffle_epi8(rotate_avx2_load2(p, p + k->hi), k->mask), k, k->kind);
}

/* One 8x8 block at (bx, by) of a width x height block of RGB, converted and turned by 1
 * or 3 in registers straight into the panel's memory: no pixel goes through memory
 * between. */
__attribute__((target("avx2"), always_inline)) static inline void
rotate_avx2_block(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int width, int height,
                  int turn, int bytes, const rotate_avx2_k *k, int bx, int by)
{
    const uint8_t *s = src + (ptrdiff_t)by * ss + (ptrdiff_t)bx * k->step;
    __m256i r[8];
    /* turn 1 takes the rows bottom up, so panel rows read the columns upwards */
    for (int y = 0; y < 8; y++)
        r[y] = rotate_avx2_px8(s + (ptrdiff_t)(turn == 1 ? 7 - y : y) * ss, k);
    /* column c lands on panel row bx + c (turn 1) or width - 1 - bx - c (turn 3) */
    uint8_t *d = turn == 1 ? dst + (ptrdiff_t)bx * ds + (ptrdiff_t)(height - 8 - by) * bytes
                           : dst + (ptrdiff_t)(width - 1 - bx) * ds + (ptrdiff_t)by * bytes;
    const ptrdiff_t next = turn == 1 ? ds : -ds;
    if (bytes == 4) {
        rotate_t8x8_32(r);
        for (int c = 0; c < 8; c++)
            _mm256_storeu_si256((__m256i *)(d + c * next), r[c]);
    } else { /* narrowing u[c] with u[c + 4] gives columns c and c + 4 whole */
        __m256i u[8];
        rotate_t8x8_32_lanes(r, u);
        for (int c = 0; c < 4; c++) {
            __m256i v = _mm256_packus_epi32(u[c], u[c + 4]);
            _mm_storeu_si128((__m128i *)(d + c * next), _mm256_castsi256_si128(v));
            _mm_storeu_si128((__m128i *)(d + (c + 4) * next), _mm256_extracti128_si256(v, 1));
        }
    }
}

/* 16 pixels of 3-byte RGB at p as RGB565/BGR565, in reverse order (pixel 15 first):
 * convert_pack's shuffles and arithmetic, with the reversal in the shuffle masks and
 * the order of the loads (rotate_avx2_setup), so a half turn costs no more steps than
 * no turn. pixel = (P & 0xF800) | (P & 0xFC) << 3 | Q >> 11. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
rotate_avx2_565_rev16(const uint8_t *p, const rotate_avx2_k *k)
{
    const __m256i a = rotate_avx2_load2(p + 24, p), b = rotate_avx2_load2(p + 32, p + 8);
    const __m256i P =
        _mm256_or_si256(_mm256_shuffle_epi8(a, k->half_p[0]), _mm256_shuffle_epi8(b, k->half_p[1]));
    const __m256i Q =
        _mm256_or_si256(_mm256_shuffle_epi8(a, k->half_q[0]), _mm256_shuffle_epi8(b, k->half_q[1]));
    const __m256i v =
        _mm256_or_si256(_mm256_and_si256(P, k->top), _mm256_slli_epi16(_mm256_and_si256(P, k->mid), 3));
    return _mm256_or_si256(v, _mm256_srli_epi16(Q, 11));
}

__attribute__((target("avx2"), always_inline)) static inline void rotate_avx2_store(uint8_t *d, __m256i v,
                                                                                    int stream)
{
    if (stream)
        _mm256_stream_si256((__m256i *)d, v);
    else
        _mm256_storeu_si256((__m256i *)d, v);
}

/* rotate_avx2_half's rows; kind and bytes are constants where it is inlined (kind -1:
 * 3-byte RGB into RGB565/BGR565 by rotate_avx2_565_rev16). */
__attribute__((target("avx2"), always_inline)) static inline int
rotate_avx2_half_rows(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int width, int height,
                      const rotate_avx2_k *k, int x0, int x1, int kind, int bytes)
{
    const int stream = (size_t)width * (size_t)height * (size_t)bytes >= ROTATE_STREAM_BYTES;
    const int step = kind < 0 ? 3 : k->step;
    int streamed = 0;
    for (int y = 0; y < height; y++) {
        const uint8_t *s = src + (ptrdiff_t)y * ss;
        const uint8_t *next = y + 1 < height ? s + ss : s; /* prefetched meanwhile */
        uint8_t *row = dst + (ptrdiff_t)(height - 1 - y) * ds;
        /* pixels [x, x + 16) land at panel columns [width - 16 - x, width - x) */
        const int st = stream && ((uintptr_t)(row + (ptrdiff_t)(width - x0) * bytes) & 31) == 0;
        streamed |= st;
        for (int x = x0; x < x1; x += 16) {
            const uint8_t *p = s + (ptrdiff_t)x * step;
            uint8_t *d = row + (ptrdiff_t)(width - 16 - x) * bytes;
            _mm_prefetch((const char *)(next + (ptrdiff_t)x * step), _MM_HINT_T0);
            if (kind < 0) {
                rotate_avx2_store(d, rotate_avx2_565_rev16(p, k), st);
                continue;
            }
            /* pixels x + 7 .. x, and x + 15 .. x + 8 (rmask: the loads' lanes swapped) */
            const __m256i a = rotate_avx2_words(
                _mm256_shuffle_epi8(rotate_avx2_load2(p + k->hi, p), k->rmask), k, (enum rotate_kind)kind);
            const __m256i b = rotate_avx2_words(
                _mm256_shuffle_epi8(rotate_avx2_load2(p + 8 * step + k->hi, p + 8 * step), k->rmask), k,
                (enum rotate_kind)kind);
            if (bytes == 4) {
                rotate_avx2_store(d, b, st);
                rotate_avx2_store(d + 32, a, st);
            } else { /* the words' low halves, lane by lane: x + 15 .. x */
                rotate_avx2_store(d, _mm256_permute4x64_epi64(_mm256_packus_epi32(b, a), 0xD8), st);
            }
        }
    }
    return streamed;
}

/* A half turn of [x0, x1) x [0, height) (x1 - x0 a multiple of 16): frame row y is panel
 * row height - 1 - y, reversed, so it is a row conversion like convert_pack's, written
 * from the right, 16 pixels a step, the reversal folded into the byte shuffles (no
 * permute across lanes). While a row is converted, the same bytes of the next frame row
 * are prefetched (one prefetch a step, 48 or 64 bytes: every line), as convert_pack
 * does: the hardware prefetchers alone left the turn waiting on its rows. A frame larger
 * than the caches is written with non-temporal stores (video memory is never read back:
 * no read before each line) in the rows where the steps land on 32-byte boundaries;
 * rotate_pack picks x0 so that they do whenever the panel's rows are 32 bytes apart, and
 * the plain loops take the pixels outside [x0, x1). */
__attribute__((target("avx2"))) static void rotate_avx2_half(const uint8_t *src, ptrdiff_t ss, uint8_t *dst,
                                                             ptrdiff_t ds, int width, int height, int bytes,
                                                             const rotate_avx2_k *k, int x0, int x1)
{
    int streamed;
    if (bytes == 2 && k->step == 3 && (k->kind == ROTATE_K_565 || k->kind == ROTATE_K_BGR565))
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, -1, 2);
    else if (k->kind == ROTATE_K_BYTES)
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, ROTATE_K_BYTES, 4);
    else if (k->kind == ROTATE_K_565)
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, ROTATE_K_565, 2);
    else if (k->kind == ROTATE_K_BGR565)
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, ROTATE_K_BGR565, 2);
    else if (bytes == 4)
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, ROTATE_K_SHIFT, 4);
    else
        streamed = rotate_avx2_half_rows(src, ss, dst, ds, width, height, k, x0, x1, ROTATE_K_SHIFT, 2);
    if (streamed)
        _mm_sfence(); /* non-temporal stores are ordered before whatever the caller does next */
}

/* The 8x8 blocks of [0, x1) x [0, y1) (multiples of 8) of a width x height block, turned
 * by 1 or 3, in bands of ROTATE_BAND frame rows (for turn 1 counted from the bottom of
 * the frame, so that every panel row is written left to right). (Streaming stores,
 * which skip reading the lines first, were slower on the machines measured, written
 * from the blocks or from a tile turned in L1: they stay out of quarter turns.) */
__attribute__((target("avx2"))) static void rotate_avx2_pack_blocks(const uint8_t *src, ptrdiff_t ss,
                                                                    uint8_t *dst, ptrdiff_t ds, int width,
                                                                    int height, int turn, int bytes,
                                                                    const rotate_avx2_k *k, int x1, int y1)
{
    for (int j = 0; j < y1; j += ROTATE_BAND) {
        const int by = turn == 1 ? y1 - ROTATE_BAND - j : j; /* rows [by, by + 8) */
        const int next = turn == 1 ? by - ROTATE_BAND : by + ROTATE_BAND;
        const int ahead = next >= 0 && next < y1;
        const uint8_t *pre = ahead ? src + (ptrdiff_t)next * ss : src;
        for (int bx = 0; bx < x1; bx += 8) {
            /* every other block: 16 pixels, at most 64 bytes, so no line is skipped */
            if (ahead && !(bx & 8))
                for (int r = 0; r < ROTATE_BAND; r++)
                    _mm_prefetch((const char *)(pre + (ptrdiff_t)r * ss + (ptrdiff_t)bx * k->step),
                                 _MM_HINT_T0);
            rotate_avx2_block(src, ss, dst, ds, width, height, turn, bytes, k, bx, by);
        }
    }
}
#endif

ROTATE_INLINE void rotate_tile(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int tw, int th,
                               int turn, int bytes)
{
#ifdef ROTATE_X86
    if (turn != 2 && tw % 8 == 0 && th % 8 == 0) {
        if (bytes == 4 && rotate_have_avx2()) {
            rotate_avx2_tile_32(src, ss, dst, ds, tw, th, turn);
            return;
        }
        if (bytes == 2 && !rotate_plain_only()) {
            rotate_sse2_tile_16(src, ss, dst, ds, tw, th, turn);
            return;
        }
    }
#endif
    switch (bytes) {
    case 4:
        rotate_tile_32(src, ss, dst, ds, tw, th, turn);
        break;
    case 3:
        rotate_tile_24(src, ss, dst, ds, tw, th, turn);
        break;
    case 2:
        rotate_tile_16(src, ss, dst, ds, tw, th, turn);
        break;
    default:
        rotate_tile_8(src, ss, dst, ds, tw, th, turn);
    }
}

static int rotate_args_ok(int width, int height, int turn)
{
    return width >= 0 && height >= 0 && turn >= 1 && turn <= 3;
}

/* [x0, x1) x [y0, y1) of a width x height block of native pixels turned, tile by tile. */
static void rotate_copy_part(const uint8_t *src, ptrdiff_t ss, uint8_t *dst, ptrdiff_t ds, int width,
                             int height, int bytes, int turn, int x0, int y0, int x1, int y1)
{
    for (int ty = y0; ty < y1; ty += ROTATE_TILE) {
        const int th = y1 - ty < ROTATE_TILE ? y1 - ty : ROTATE_TILE;
        for (int tx = x0; tx < x1; tx += ROTATE_TILE) {
            const int tw = x1 - tx < ROTATE_TILE ? x1 - tx : ROTATE_TILE;
            rotate_tile(src + (ptrdiff_t)ty * ss + (ptrdiff_t)tx * bytes, ss,
                        dst + rotate_place(tx, ty, tw, th, width, height, turn, ds, bytes), ds, tw, th, turn,
                        bytes);
        }
    }
}

/* Copy a block of native pixels (`bytes` 1 to 4 a pixel) turned. */
FBGFX_HOT int rotate_copy(const uint8_t *src, ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                          int width, int height, int bytes, int turn)
{
    if (!rotate_args_ok(width, height, turn) || bytes < 1 || bytes > 4)
        return -EINVAL;
    int w8 = 0, h8 = 0; /* the part done in bands of 8x8 blocks */
#ifdef ROTATE_X86
    if (turn != 2 && ((bytes == 4 && rotate_have_avx2()) || (bytes == 2 && !rotate_plain_only()))) {
        w8 = width / 8 * 8;
        h8 = height / 8 * 8;
        if (bytes == 4)
            rotate_avx2_copy_blocks_32(src, src_stride, dst, dst_stride, width, height, turn, w8, h8);
        else
            rotate_sse2_copy_blocks_16(src, src_stride, dst, dst_stride, width, height, turn, w8, h8);
    }
#endif
    /* the rest: the columns right of the blocks, then the rows below them */
    rotate_copy_part(src, src_stride, dst, dst_stride, width, height, bytes, turn, w8, 0, width, h8);
    rotate_copy_part(src, src_stride, dst, dst_stride, width, height, bytes, turn, 0, h8, width, height);
    return 0;
}

/* RGB pixels `step` bytes apart (3, or 4 for Pillow's padded RGB) to a direct-colour
 * layout: channels truncated to their length, alpha (if any) opaque. The same values
 * as PixelFormat.pack and convert_pack. STEP and T are constants after expansion. */
#define ROTATE_PACK_ROW(NAME, STEP, T)                                                                       \
    ROTATE_INLINE void NAME(const uint8_t *restrict s, T *restrict d, int n, int ro, int go, int bo, int rs, \
                            int gs, int bs, uint32_t alpha)                                                  \
    {                                                                                                        \
        for (size_t x = 0; x < (size_t)n; x++)                                                               \
            d[x] = (T)(((uint32_t)s[STEP * x] >> rs) << ro | ((uint32_t)s[STEP * x + 1] >> gs) << go |       \
                       ((uint32_t)s[STEP * x + 2] >> bs) << bo | alpha);                                     \
    }

ROTATE_PACK_ROW(rotate_pack_row_3_32, 3, uint32_t)
ROTATE_PACK_ROW(rotate_pack_row_4_32, 4, uint32_t)
ROTATE_PACK_ROW(rotate_pack_row_3_16, 3, uint16_t)
ROTATE_PACK_ROW(rotate_pack_row_4_16, 4, uint16_t)

/* XRGB8888, the layout of nearly every PC framebuffer, with constant shifts. */
#define ROTATE_PACK_XRGB(NAME, STEP)                                                                         \
    ROTATE_INLINE void NAME(const uint8_t *restrict s, uint32_t *restrict d, int n)                          \
    {                                                                                                        \
        for (size_t x = 0; x < (size_t)n; x++)                                                               \
            d[x] = (uint32_t)s[STEP * x] << 16 | (uint32_t)s[STEP * x + 1] << 8 | (uint32_t)s[STEP * x + 2]; \
    }

ROTATE_PACK_XRGB(rotate_pack_xrgb_3, 3)
ROTATE_PACK_XRGB(rotate_pack_xrgb_4, 4)

/* Rows of a tile rotate_pack_part converts at a time (tiles ROTATE_TILE wide): 8 frame
 * rows read at once are streams the hardware prefetchers follow, 32 were not (built
 * without the vector kernels, on x86, a 1080p frame turned 180 degrees in 0.5-0.8x the
 * time with 8, a quarter turn in 0.85-0.95x). */
#define ROTATE_PACK_ROWS 8

/* Convert and turn the part [x0, x1) x [y0, y1) of a width x height block with the
 * plain loops: a tile at a time into a buffer on the stack, then turned out of it. */
static void rotate_pack_part(const uint8_t *src, ptrdiff_t ss, int step, uint8_t *dst, ptrdiff_t ds,
                             int width, int height, int turn, const rotate_format *f, int x0, int y0, int x1,
                             int y1)
{
    const int bytes = f->bytes, ro = f->off[0], go = f->off[1], bo = f->off[2];
    const int rs = 8 - f->len[0], gs = 8 - f->len[1], bs = 8 - f->len[2];
    const uint32_t alpha = f->len[3] ? (255u >> (8 - f->len[3])) << f->off[3] : 0u;
    const int xrgb = bytes == 4 && ro == 16 && go == 8 && bo == 0 && !rs && !gs && !bs && !alpha;
    uint32_t tile[ROTATE_TILE * ROTATE_TILE];
    const ptrdiff_t ts = (ptrdiff_t)ROTATE_TILE * bytes;
    for (int ty = y0; ty < y1; ty += ROTATE_PACK_ROWS) {
        const int th = y1 - ty < ROTATE_PACK_ROWS ? y1 - ty : ROTATE_PACK_ROWS;
        for (int tx = x0; tx < x1; tx += ROTATE_TILE) {
            const int tw = x1 - tx < ROTATE_TILE ? x1 - tx : ROTATE_TILE;
            for (int r = 0; r < th; r++) {
                const uint8_t *s = src + (ptrdiff_t)(ty + r) * ss + (ptrdiff_t)tx * step;
                uint8_t *t = (uint8_t *)tile + r * ts;
                if (xrgb && step == 3)
                    rotate_pack_xrgb_3(s, (uint32_t *)t, tw);
                else if (xrgb)
                    rotate_pack_xrgb_4(s, (uint32_t *)t, tw);
                else if (bytes == 4 && step == 3)
                    rotate_pack_row_3_32(s, (uint32_t *)t, tw, ro, go, bo, rs, gs, bs, alpha);
                else if (bytes == 4)
                    rotate_pack_row_4_32(s, (uint32_t *)t, tw, ro, go, bo, rs, gs, bs, alpha);
                else if (step == 3)
                    rotate_pack_row_3_16(s, (uint16_t *)t, tw, ro, go, bo, rs, gs, bs, alpha);
                else
                    rotate_pack_row_4_16(s, (uint16_t *)t, tw, ro, go, bo, rs, gs, bs, alpha);
            }
            rotate_tile((const uint8_t *)tile, ts,
                        dst + rotate_place(tx, ty, tw, th, width, height, turn, ds, bytes), ds, tw, th, turn,
                        bytes);
        }
    }
}

/* RGB (pixels `step` bytes apart, 3 or 4) converted to a direct-colour layout of 16 or
 * 32 bits and written turned. */
FBGFX_HOT int rotate_pack(const uint8_t *src, ptrdiff_t src_stride, int step, uint8_t *dst,
                          ptrdiff_t dst_stride, int width, int height, int turn, const rotate_format *f)
{
    if (!rotate_args_ok(width, height, turn) || (step != 3 && step != 4) || (f->bytes != 2 && f->bytes != 4))
        return -EINVAL;
    for (int i = 0; i < 4; i++)
        if (f->len[i] < (i < 3) || f->len[i] > 8 || f->off[i] < 0 || f->off[i] + f->len[i] > 8 * f->bytes)
            return -EINVAL;
    int x0 = 0, w8 = 0, h8 = 0; /* the part done in 8x8 blocks (half turns: rows of 16, from x0) */
#ifdef ROTATE_X86
    if (rotate_have_avx2()) {
        rotate_avx2_k k;
        rotate_avx2_setup(&k, step, f);
        if (turn == 2) {
            /* Frame pixels [0, x0) land at the right end of each panel row, after its last
             * 32-byte boundary (a subsurface, a centred picture): the plain loops take them,
             * so that the vector steps stream whole aligned 32 bytes. */
            const uintptr_t end = (uintptr_t)dst + (uintptr_t)width * (uintptr_t)f->bytes;
            if (dst_stride % 32 == 0 && end % (uintptr_t)f->bytes == 0 &&
                (size_t)width * (size_t)height * (size_t)f->bytes >= ROTATE_STREAM_BYTES)
                x0 = (int)((end & 31) / (uintptr_t)f->bytes);
            x0 = x0 < width ? x0 : width;
            w8 = x0 + (width - x0) / 16 * 16;
            h8 = height;
            rotate_avx2_half(src, src_stride, dst, dst_stride, width, height, f->bytes, &k, x0, w8);
        } else {
            w8 = width / 8 * 8;
            h8 = height / 8 * 8;
            rotate_avx2_pack_blocks(src, src_stride, dst, dst_stride, width, height, turn, f->bytes, &k, w8,
                                    h8);
        }
    }
#endif
    /* the rest: the columns left and right of the blocks, then the rows below them */
    rotate_pack_part(src, src_stride, step, dst, dst_stride, width, height, turn, f, 0, 0, x0, h8);
    rotate_pack_part(src, src_stride, step, dst, dst_stride, width, height, turn, f, w8, 0, width, h8);
    rotate_pack_part(src, src_stride, step, dst, dst_stride, width, height, turn, f, 0, h8, width, height);
    return 0;
}
