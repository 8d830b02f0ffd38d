/* arm64 CRC32C with the ARMv8 CRC32C instructions (one stream of 8-byte
 * steps). Compiled only on aarch64; elsewhere this file is empty. */
#if defined(__aarch64__)
#include <string.h>
#include <sys/auxv.h>

#include "crc32c/crc32c_internal.h"

#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif

int tfrec_crc32c_arm64_supported(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}

/* Inline assembly rather than arm_acle.h, so the file builds with the
 * baseline -march; the directive lets the assembler accept the CRC
 * instructions (GCC and Clang alike), which run only after the HWCAP check. */
#define CRC_EXT ".arch_extension crc\n\t"

uint32_t tfrec_crc32c_arm64_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    uint32_t r = ~crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        __asm__(CRC_EXT "crc32cx %w0, %w0, %x1" : "+r"(r) : "r"(v));
        p += 8;
        n -= 8;
    }
    if (n & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        __asm__(CRC_EXT "crc32cw %w0, %w0, %w1" : "+r"(r) : "r"(v));
        p += 4;
    }
    if (n & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        __asm__(CRC_EXT "crc32ch %w0, %w0, %w1" : "+r"(r) : "r"((uint32_t)v));
        p += 2;
    }
    if (n & 1)
        __asm__(CRC_EXT "crc32cb %w0, %w0, %w1" : "+r"(r) : "r"((uint32_t)*p));
    return ~r;
}
#else
typedef int tfrec_crc32c_arm64_unused; /* ISO C wants a non-empty file */
#endif
