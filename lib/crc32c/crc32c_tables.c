/* Tables for every CRC32C implementation, generated at start-up from the
 * polynomial alone, so no magic constants need to be trusted: each entry is
 * x^k mod P for a documented k, computed with the two helpers below.
 *
 * Representation: "reflected" 32-bit values, bit i = coefficient of
 * x^(31-i), the bit order CRC32C (and the crc32 instruction) uses. */
#include <pthread.h>

#include "crc32c/crc32c_internal.h"
#include "crc32c/crc32c_shift.h"

tfrec_crc32c_tables tfrec_crc32c_tab;

/* a * x mod P: shifting right moves every coefficient one degree up; the
 * coefficient that leaves x^31 becomes x^32 == P - x^32 (mod P). */
static uint32_t mul_x(uint32_t a)
{
    return (a >> 1) ^ (TFREC_CRC32C_POLY_REFLECTED & (0u - (a & 1u)));
}

/* a * b mod P by Horner's rule over a's coefficients, highest degree first.
 * Without branches: the bits are data (tfrec_crc32c_shift runs this per
 * call), and mispredicted branches would cost more than the arithmetic. */
static uint32_t mul_mod(uint32_t a, uint32_t b)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r = mul_x(r) ^ (b & (0u - ((a >> i) & 1u)));
    return r;
}

uint32_t tfrec_crc32c_xpow(uint64_t n)
{
    uint32_t result = 0x80000000u; /* x^0 */
    uint32_t sq = 0x40000000u;     /* x^1, squared at every step */
    for (; n; n >>= 1) {
        if (n & 1)
            result = mul_mod(result, sq);
        sq = mul_mod(sq, sq);
    }
    return result;
}

void tfrec_crc32c_tables_init(void)
{
    tfrec_crc32c_tables *t = &tfrec_crc32c_tab;

    /* One byte b through the register = b's 8 coefficients times x^32. */
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t r = b;
        for (int k = 0; k < 8; k++)
            r = (r >> 1) ^ ((r & 1u) ? TFREC_CRC32C_POLY_REFLECTED : 0u);
        t->slice[0][b] = r;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++) {
            uint32_t prev = t->slice[k - 1][b];
            t->slice[k][b] = (prev >> 8) ^ t->slice[0][prev & 0xffu];
        }

    t->shift[0] = 0; /* unused: a zero-length shift needs no multiply */
    for (int m = 1; m <= TFREC_CRC32C_SHIFT_WORDS; m++)
        t->shift[m] = tfrec_crc32c_xpow(64u * (uint64_t)m - 33u);

    /* A reflected 64-bit lane times a 32-bit constant (pclmulqdq) lands in a
     * 128-bit lane scaled by x^33; hence the +31 (= 64 - 33) for the low
     * half, which sits 64 bits further from the end, and -33 for the high. */
    t->fold[0][0] = t->fold[0][1] = 0;
    for (int j = 1; j <= TFREC_CRC32C_FOLD_MAX; j++) {
        t->fold[j][0] = tfrec_crc32c_xpow(128u * (uint64_t)j + 31u);
        t->fold[j][1] = tfrec_crc32c_xpow(128u * (uint64_t)j - 33u);
    }
    for (int lane = 0; lane < 16; lane++) {
        t->to_last16[lane][0] = t->fold[15 - lane][0];
        t->to_last16[lane][1] = t->fold[15 - lane][1];
    }
    const uint64_t streams_bits = 8u * 3u * TFREC_CRC32C_HYB_STREAM;
    t->hyb_fold[0] = tfrec_crc32c_xpow(streams_bits + 31u);
    t->hyb_fold[1] = tfrec_crc32c_xpow(streams_bits - 33u);
    t->hyb_shift_chunk = tfrec_crc32c_xpow(8u * (uint64_t)TFREC_CRC32C_HYB_CHUNK - 33u);
}

/* zeros[k][j] = x^(8 * j * 256^k) mod P: multiplying a CRC by it moves it
 * over j * 256^k bytes, so a shift takes one multiply per nonzero byte of
 * the length (three for any record up to 16 MiB). Filled on the first
 * shift only: most processes never resynchronise. */
static uint32_t zeros[8][256];
static pthread_once_t zeros_once = PTHREAD_ONCE_INIT;

static void zeros_init(void)
{
    for (int k = 0; k < 8; k++) {
        zeros[k][0] = 0x80000000u;                                 /* x^0: no move */
        uint32_t step = tfrec_crc32c_xpow((uint64_t)8 << (8 * k)); /* 256^k bytes */
        for (int j = 1; j < 256; j++)
            zeros[k][j] = mul_mod(zeros[k][j - 1], step);
    }
}

uint32_t tfrec_crc32c_shift(uint32_t crc, uint64_t len)
{
    pthread_once(&zeros_once, zeros_init);
    for (int k = 0; len; k++, len >>= 8)
        if (len & 255u)
            crc = mul_mod(crc, zeros[k][len & 255u]);
    return crc;
}
