/* Portable CRC32C: slicing-by-8, eight table lookups per 8 input bytes.
 * Works on any CPU and either byte order. */
#include <string.h>

#include "crc32c/crc32c_internal.h"

static uint64_t load_le64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
#endif
}

uint32_t tfrec_crc32c_portable_extend(uint32_t crc, const uint8_t *p, size_t n)
{
    const uint32_t(*s)[256] = tfrec_crc32c_tab.slice;
    uint64_t r = ~crc;

    /* Bytewise until aligned, so the 8-byte loads are cheap everywhere. */
    while (n && ((uintptr_t)p & 7u)) {
        r = (r >> 8) ^ s[0][(r ^ *p++) & 0xffu];
        n--;
    }
    /* The first input byte meets the register's low byte and has the most
     * bytes still to travel through, hence table 7. */
    while (n >= 8) {
        uint64_t w = load_le64(p) ^ r;
        r = s[7][w & 0xff] ^ s[6][(w >> 8) & 0xff] ^ s[5][(w >> 16) & 0xff] ^
            s[4][(w >> 24) & 0xff] ^ s[3][(w >> 32) & 0xff] ^ s[2][(w >> 40) & 0xff] ^
            s[1][(w >> 48) & 0xff] ^ s[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        r = (r >> 8) ^ s[0][(r ^ *p++) & 0xffu];
    return ~(uint32_t)r;
}
