/* x86-64 CRC32C with the SSE4.2 crc32 instruction in three interleaved
 * streams (see CRC_X86_THREE_WAY in crc32c_x86.h). */
#if defined(__x86_64__)
#include "crc32c/crc32c_x86.h"

TFREC_SSE42_CLMUL uint32_t tfrec_crc32c_sse42_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    return ~crc_x86_multi_stream(~crc, p, n);
}

/* The soft merge (an estimate: ~40 cycles) is small next to a 3 KiB block. */
TFREC_SSE42 uint32_t tfrec_crc32c_sse42_soft_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    uint32_t reg = ~crc;
    CRC_X86_MULTI_STREAM(reg, p, n, crc_x86_shift_soft);
    return ~reg;
}
#else
typedef int tfrec_crc32c_sse42_unused; /* ISO C wants a non-empty file */
#endif
