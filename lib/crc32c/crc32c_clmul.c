/* x86-64 CRC32C by carry-less-multiply folding on 128-bit vectors
 * (PCLMULQDQ), for CPUs without VPCLMULQDQ on wide vectors; the loop is
 * crc_x86_clmul_fold() in crc32c_x86.h, shared with the AVX-512 path. */
#if defined(__x86_64__)
#include "crc32c/crc32c_x86.h"

/* Below 64 bytes one stream of crc32 instructions; from 64 bytes on
 * folding, which measured faster than the three-stream crc32 path at every
 * such length (bench/RESULTS.md, "CRC32C: folding thresholds, hybrid chunks
 * and prefetch"). AUTO's choice on CPUs with
 * PCLMULQDQ but not VPCLMULQDQ. */
TFREC_SSE42_CLMUL uint32_t tfrec_crc32c_clmul_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    return ~crc_x86_clmul_fold(~crc, p, n);
}
#else
typedef int tfrec_crc32c_clmul_unused; /* ISO C wants a non-empty file */
#endif
