/* Internal: x86-64 building blocks shared by the SSE4.2, PCLMUL and AVX-512
 * files. Everything is static inline with a target attribute, so the global
 * compiler flags stay baseline x86-64 and only code reached after the CPU
 * check uses the newer instructions. */
#ifndef TFREC_CRC32C_X86_H
#define TFREC_CRC32C_X86_H

#include <immintrin.h>
#include <string.h>

#include "crc32c/crc32c_internal.h"

#define TFREC_SSE42 __attribute__((target("sse4.2")))
#define TFREC_SSE42_CLMUL __attribute__((target("sse4.2,pclmul")))
#define TFREC_AVX512_CLMUL \
    __attribute__((target("sse4.2,pclmul,avx512f,avx512vl,avx512bw,vpclmulqdq")))
#define TFREC_INLINE static inline __attribute__((always_inline))

TFREC_INLINE uint64_t crc_ld64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
TFREC_INLINE uint32_t crc_ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
TFREC_INLINE uint16_t crc_ld16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

/* One stream of crc32 instructions; used for short inputs and tails. */
TFREC_INLINE TFREC_SSE42 uint32_t crc_x86_one_stream(uint32_t reg, const uint8_t *p, size_t n)
{
    uint64_t r = reg;
    while (n >= 8) {
        r = _mm_crc32_u64(r, crc_ld64(p));
        p += 8;
        n -= 8;
    }
    if (n & 4) {
        r = _mm_crc32_u32((uint32_t)r, crc_ld32(p));
        p += 4;
    }
    if (n & 2) {
        r = _mm_crc32_u16((uint32_t)r, crc_ld16(p));
        p += 2;
    }
    if (n & 1)
        r = _mm_crc32_u8((uint32_t)r, *p);
    return (uint32_t)r;
}

/* Advance a register over 8m zero bytes: multiply by shift[m] and reduce
 * the 64-bit product with one crc32 instruction. */
TFREC_INLINE TFREC_SSE42_CLMUL uint32_t crc_x86_shift_clmul(uint32_t reg, uint32_t k)
{
    __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)reg), _mm_cvtsi32_si128((int)k), 0);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(prod));
}

/* The same multiply without PCLMULQDQ (SSE4.2-only CPUs such as Nehalem). */
TFREC_INLINE TFREC_SSE42 uint32_t crc_x86_shift_soft(uint32_t reg, uint32_t k)
{
    uint64_t prod = 0;
    for (int i = 0; i < 32; i++)
        prod ^= ((uint64_t)reg << i) & (0 - (uint64_t)((k >> i) & 1u));
    return (uint32_t)_mm_crc32_u64(0, prod);
}

/* Three streams of crc32 instructions over three adjacent blocks of
 * `words` 8-byte words each: the instruction has a latency of 3 cycles but
 * issues every cycle, so three independent chains keep it busy. The second
 * and third start from zero and are merged by linearity:
 *   reg = shift(a, 2 blocks) ^ shift(b, 1 block) ^ c. */
#define CRC_X86_THREE_WAY(reg, p, words, shift_fn)                                 \
    do {                                                                           \
        const uint8_t *q_ = (p);                                                   \
        const size_t w_ = (words), blk_ = 8 * w_;                                  \
        uint64_t a_ = (reg), b_ = 0, c_ = 0;                                       \
        for (size_t i_ = 0; i_ < blk_; i_ += 8) {                                  \
            a_ = _mm_crc32_u64(a_, crc_ld64(q_ + i_));                             \
            b_ = _mm_crc32_u64(b_, crc_ld64(q_ + blk_ + i_));                      \
            c_ = _mm_crc32_u64(c_, crc_ld64(q_ + 2 * blk_ + i_));                  \
        }                                                                          \
        (reg) = shift_fn((uint32_t)a_, tfrec_crc32c_tab.shift[2 * w_]) ^           \
                shift_fn((uint32_t)b_, tfrec_crc32c_tab.shift[w_]) ^ (uint32_t)c_; \
    } while (0)

/* Below this many bytes one stream is as fast: the merge costs about as
 * much as the latency it hides. */
#define CRC_X86_THREE_WAY_MIN 96

#define CRC_X86_MULTI_STREAM(reg, p, n, shift_fn)                        \
    do {                                                                 \
        while ((n) >= 3 * TFREC_CRC32C_BLOCK) {                          \
            CRC_X86_THREE_WAY(reg, p, TFREC_CRC32C_BLOCK / 8, shift_fn); \
            (p) += 3 * TFREC_CRC32C_BLOCK;                               \
            (n) -= 3 * TFREC_CRC32C_BLOCK;                               \
        }                                                                \
        if ((n) >= CRC_X86_THREE_WAY_MIN) {                              \
            size_t words_ = (n) / 24;                                    \
            CRC_X86_THREE_WAY(reg, p, words_, shift_fn);                 \
            (p) += 24 * words_;                                          \
            (n) -= 24 * words_;                                          \
        }                                                                \
        (reg) = crc_x86_one_stream(reg, p, n);                           \
    } while (0)

/* Three-stream crc32 with the PCLMULQDQ merge, inlinable into any caller
 * whose target includes sse4.2 and pclmul. */
TFREC_INLINE TFREC_SSE42_CLMUL uint32_t crc_x86_multi_stream(uint32_t reg, const uint8_t *p,
                                                             size_t n)
{
    CRC_X86_MULTI_STREAM(reg, p, n, crc_x86_shift_clmul);
    return reg;
}

/* 128-bit fold: the chunk's halves times the two constants of `k`
 * (see fold[] in crc32c_internal.h), congruent to chunk * x^distance. */
TFREC_INLINE TFREC_SSE42_CLMUL __m128i crc_x86_fold128(__m128i x, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

TFREC_INLINE TFREC_SSE42_CLMUL __m128i crc_x86_fold_k(int j)
{
    return _mm_load_si128((const __m128i *)tfrec_crc32c_tab.fold[j]);
}

/* A 128-bit chunk congruent to the whole message so far becomes the
 * register: feeding its 16 bytes to crc32 from zero computes chunk*x^32
 * mod P, exactly the CRC's definition. */
TFREC_INLINE TFREC_SSE42_CLMUL uint32_t crc_x86_reduce128(__m128i x)
{
    uint64_t r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x));
    return (uint32_t)_mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(x, 1));
}

/* Folding keeps a 128-bit value congruent (mod P) to everything read so
 * far and moves it forward by multiplying with x^distance mod P instead of
 * dividing; only the final 128 bits go through the crc32 instruction.
 * Four accumulators hide PCLMULQDQ's latency: 64 bytes per iteration. */
TFREC_INLINE TFREC_SSE42_CLMUL uint32_t crc_x86_clmul_fold(uint32_t reg, const uint8_t *p, size_t n)
{
    if (n < 64)
        return crc_x86_one_stream(reg, p, n);

    /* The register joins the first 32 message bits (they are the terms
     * with the highest powers, like the register's own). */
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)reg));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    n -= 64;

    const __m128i k512 = crc_x86_fold_k(4);
    while (n >= 64) {
        x0 = _mm_xor_si128(crc_x86_fold128(x0, k512), _mm_loadu_si128((const __m128i *)p));
        x1 = _mm_xor_si128(crc_x86_fold128(x1, k512), _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = _mm_xor_si128(crc_x86_fold128(x2, k512), _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = _mm_xor_si128(crc_x86_fold128(x3, k512), _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        n -= 64;
    }
    /* x0 precedes x3 by 384 bits, x1 by 256, x2 by 128. */
    __m128i x = _mm_xor_si128(_mm_xor_si128(crc_x86_fold128(x0, crc_x86_fold_k(3)),
                                            crc_x86_fold128(x1, crc_x86_fold_k(2))),
                              _mm_xor_si128(crc_x86_fold128(x2, crc_x86_fold_k(1)), x3));
    const __m128i k128 = crc_x86_fold_k(1);
    while (n >= 16) {
        x = _mm_xor_si128(crc_x86_fold128(x, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    return crc_x86_one_stream(crc_x86_reduce128(x), p, n);
}

#endif
