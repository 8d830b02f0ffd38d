/* x86-64 CRC32C by carry-less-multiply folding on 512-bit vectors
 * (AVX-512 + VPCLMULQDQ): the same folding as crc32c_clmul.c, four 128-bit
 * lanes per instruction and four vectors in flight, 256 bytes a round.
 * Long input goes in hybrid chunks that also keep the crc32 unit busy;
 * below 64 bytes the crc32 instruction alone. This is AUTO's choice on
 * CPUs that have it. */
#if defined(__x86_64__)
#include "crc32c/crc32c_x86.h"

/* Prefetch distance of the plain folding loop. Prefetches never fault, so
 * running past the end of the buffer is harmless. 2 KiB into L1 beat no
 * prefetch, longer distances and L2-only hints (bench/RESULTS.md, "CRC32C:
 * folding thresholds, hybrid chunks and prefetch"). */
#define PREFETCH_AHEAD 2048

/* The hybrid chunks read at four places at once (the folded part and three
 * streams 4 KiB further on), a pattern the hardware prefetchers follow
 * poorly when the data comes from memory: without a software prefetch, or
 * with the plain loop's (which leaves 1 KiB of every chunk uncovered), they
 * fell behind ISA-L's sequential loop there. So on long input every round
 * prefetches the next CHUNK_PREFETCH_STEP bytes of the region
 * CHUNK_PREFETCH_AHEAD bytes past the chunk's start: 16 rounds of 320
 * bytes cover a whole 4864-byte chunk at any alignment; 7-8 KiB ahead
 * measured best. On cache-resident data the far prefetch lost to the near
 * one, so it starts at STREAM_MIN, well past any L2: shorter input is more
 * likely to be cache-resident (bench/RESULTS.md, "CRC32C: folding
 * thresholds, hybrid chunks and prefetch"). */
#define CHUNK_PREFETCH_AHEAD 8192
#define CHUNK_PREFETCH_STEP 320
#define STREAM_MIN ((size_t)4 << 20)
_Static_assert((TFREC_CRC32C_HYB_ROUNDS * CHUNK_PREFETCH_STEP) >= TFREC_CRC32C_HYB_CHUNK + 64,
               "the chunk prefetch must cover a whole chunk at any alignment");

/* x*x^distance + data, three-way XOR in one vpternlogq. */
TFREC_INLINE TFREC_AVX512_CLMUL __m512i fold512(__m512i x, __m512i k, __m512i data)
{
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                     _mm512_clmulepi64_epi128(x, k, 0x11), data, 0x96);
}

TFREC_INLINE TFREC_AVX512_CLMUL __m512i fold512_k(int j)
{
    return _mm512_broadcast_i32x4(crc_x86_fold_k(j));
}

TFREC_INLINE TFREC_AVX512_CLMUL __m512i load512(const uint8_t *p)
{
    return _mm512_loadu_si512((const void *)p);
}

/* Four lanes of one vector -> one 128-bit chunk: lanes 0, 1, 2 precede
 * lane 3 by 384, 256 and 128 bits. */
TFREC_INLINE TFREC_AVX512_CLMUL __m128i lanes_to_128(__m512i x)
{
    const __m256i k_lo = _mm256_set_m128i(crc_x86_fold_k(2), crc_x86_fold_k(3));
    const __m256i k_hi = _mm256_set_m128i(_mm_setzero_si128(), crc_x86_fold_k(1));
    const __m512i k = _mm512_inserti64x4(_mm512_castsi256_si512(k_lo), k_hi, 1);
    /* Lane 3's constant is zero, so its products vanish and x's lane 3
     * enters unchanged through the masked copy. */
    __m512i y = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                          _mm512_clmulepi64_epi128(x, k, 0x11),
                                          _mm512_maskz_mov_epi64(0xC0, x), 0x96);
    __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64(y, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* Four vectors (sixteen lanes) -> one 128-bit chunk in a single round of
 * independent multiplies, each lane by its own distance to the last lane. */
TFREC_INLINE TFREC_AVX512_CLMUL __m128i vectors_to_128(__m512i x0, __m512i x1, __m512i x2,
                                                       __m512i x3)
{
    const uint8_t *k = (const uint8_t *)tfrec_crc32c_tab.to_last16;
    const __m512i k0 = load512(k), k1 = load512(k + 64), k2 = load512(k + 128),
                  k3 = load512(k + 192);
    __m512i y = fold512(x0, k0, fold512(x1, k1, _mm512_maskz_mov_epi64(0xC0, x3)));
    y = _mm512_ternarylogic_epi64(y, fold512(x2, k2, _mm512_setzero_si512()),
                                  fold512(x3, k3, _mm512_setzero_si512()), 0x96);
    __m256i h = _mm256_xor_si256(_mm512_castsi512_si256(y), _mm512_extracti64x4_epi64(y, 1));
    return _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* Long input in hybrid chunks (layout in crc32c_internal.h): the folding
 * keeps the carry-less multiplier busy, three crc32 streams the crc32 unit
 * next to it. Each chunk starts from zero and the incoming register is
 * shifted over the chunk instead, so consecutive chunks overlap in the
 * pipeline; only one multiply and one crc32 link them. */
TFREC_INLINE TFREC_AVX512_CLMUL uint32_t hybrid_chunks(uint32_t reg, const uint8_t **pp, size_t *pn,
                                                       int far)
{
    const uint8_t *p = *pp;
    size_t n = *pn;
    const tfrec_crc32c_tables *t = &tfrec_crc32c_tab;
    const __m512i k2048 = fold512_k(16);
    const __m128i k_streams = _mm_load_si128((const __m128i *)t->hyb_fold);
    const __m128i k_chunk = _mm_cvtsi32_si128((int)t->hyb_shift_chunk);
    const __m128i k_s0 = _mm_cvtsi32_si128((int)t->shift[2 * TFREC_CRC32C_HYB_STREAM / 8]);
    const __m128i k_s1 = _mm_cvtsi32_si128((int)t->shift[TFREC_CRC32C_HYB_STREAM / 8]);

    while (n >= TFREC_CRC32C_HYB_CHUNK) {
        const uint8_t *s = p + TFREC_CRC32C_HYB_FOLD;
        __m512i x0 = load512(p), x1 = load512(p + 64), x2 = load512(p + 128), x3 = load512(p + 192);
        uint64_t s0 = 0, s1 = 0, s2 = 0;
        for (int j = 0;; j++) {
            const uint8_t *w = s + 8 * TFREC_CRC32C_HYB_WORDS * j;
            for (int i = 0; i < 8 * TFREC_CRC32C_HYB_WORDS; i += 8) {
                s0 = _mm_crc32_u64(s0, crc_ld64(w + i));
                s1 = _mm_crc32_u64(s1, crc_ld64(w + i + TFREC_CRC32C_HYB_STREAM));
                s2 = _mm_crc32_u64(s2, crc_ld64(w + i + 2 * TFREC_CRC32C_HYB_STREAM));
            }
            if (far) {
                const char *pf = (const char *)p + CHUNK_PREFETCH_AHEAD + CHUNK_PREFETCH_STEP * j;
                for (int line = 0; line < CHUNK_PREFETCH_STEP; line += 64)
                    _mm_prefetch(pf + line, _MM_HINT_T0);
            }
            if (j == TFREC_CRC32C_HYB_ROUNDS - 1)
                break;
            const uint8_t *a = p + 256 * (j + 1);
            if (!far)
                for (int line = 0; line < 256; line += 64)
                    _mm_prefetch((const char *)a + PREFETCH_AHEAD + line, _MM_HINT_T0);
            x0 = fold512(x0, k2048, load512(a));
            x1 = fold512(x1, k2048, load512(a + 64));
            x2 = fold512(x2, k2048, load512(a + 128));
            x3 = fold512(x3, k2048, load512(a + 192));
        }
        /* Folded part moved past the streams; stream 0, stream 1 and the
         * incoming register shifted by 64-bit products that join the last
         * 8 bytes of the chunk before the final reduction (crc32 is linear,
         * so XOR before reducing equals XOR after). */
        __m128i v = crc_x86_fold128(vectors_to_128(x0, x1, x2, x3), k_streams);
        __m128i prod = _mm_xor_si128(
            _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)reg), k_chunk, 0),
            _mm_xor_si128(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)s0), k_s0, 0),
                          _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)s1), k_s1, 0)));
        v = _mm_xor_si128(v, _mm_slli_si128(prod, 8));
        reg = crc_x86_reduce128(v) ^ (uint32_t)s2;
        p += TFREC_CRC32C_HYB_CHUNK;
        n -= TFREC_CRC32C_HYB_CHUNK;
    }
    *pp = p;
    *pn = n;
    return reg;
}

/* Below 64 bytes the crc32 instruction (no vector set-up or reduction);
 * from 64 bytes on folding, which measured faster at every such length
 * (bench/RESULTS.md, "CRC32C: folding thresholds, hybrid chunks and
 * prefetch"): on 128-bit vectors up to 192 bytes (same speed for independent calls,
 * less latency: no cross-lane reduction), then on 512-bit vectors, with
 * hybrid chunks first when the input holds at least one. */
TFREC_INLINE TFREC_AVX512_CLMUL uint32_t avx512_fold(uint32_t reg, const uint8_t *p, size_t n)
{
    if (n < 192)
        return crc_x86_clmul_fold(reg, p, n);
    if (n >= TFREC_CRC32C_HYB_CHUNK) {
        /* Two copies of the loop, each with its prefetch pattern fixed. */
        reg = n >= STREAM_MIN ? hybrid_chunks(reg, &p, &n, 1) : hybrid_chunks(reg, &p, &n, 0);
        if (n < 64)
            return crc_x86_one_stream(reg, p, n);
    }

    /* The register joins the first 32 message bits. */
    __m512i x = _mm512_xor_si512(load512(p), _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
    __m128i x128;
    p += 64;
    n -= 64;
    if (n >= 192) {
        __m512i x1 = load512(p), x2 = load512(p + 64), x3 = load512(p + 128);
        p += 192;
        n -= 192;
        const __m512i k2048 = fold512_k(16);
        while (n >= 256) {
            for (int line = 0; line < 256; line += 64)
                _mm_prefetch((const char *)p + PREFETCH_AHEAD + line, _MM_HINT_T0);
            x = fold512(x, k2048, load512(p));
            x1 = fold512(x1, k2048, load512(p + 64));
            x2 = fold512(x2, k2048, load512(p + 128));
            x3 = fold512(x3, k2048, load512(p + 192));
            p += 256;
            n -= 256;
        }
        if (n < 64) {
            x128 = vectors_to_128(x, x1, x2, x3);
            goto chunks16;
        }
        /* x, x1, x2 precede x3 by 1536, 1024 and 512 bits. */
        x = fold512(x, fold512_k(12), fold512(x1, fold512_k(8), fold512(x2, fold512_k(4), x3)));
    }
    const __m512i k512 = fold512_k(4);
    while (n >= 64) {
        x = fold512(x, k512, load512(p));
        p += 64;
        n -= 64;
    }
    x128 = lanes_to_128(x);
chunks16:;
    const __m128i k128 = crc_x86_fold_k(1);
    while (n >= 16) {
        x128 = _mm_xor_si128(crc_x86_fold128(x128, k128), _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    return crc_x86_one_stream(crc_x86_reduce128(x128), p, n);
}

TFREC_AVX512_CLMUL uint32_t tfrec_crc32c_avx512_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    return ~avx512_fold(~crc, p, n);
}
#else
typedef int tfrec_crc32c_avx512_unused; /* ISO C wants a non-empty file */
#endif
