/* libtfrec: CRC32C (Castagnoli) and the TFRecord CRC mask.
 *
 * The fastest implementation the CPU supports is chosen once, on first use,
 * thread-safely. Setting TFREC_CRC32C=portable in the environment before the
 * first call (it is read once, then), or calling tfrec_crc32c_force_impl(),
 * selects another one.
 * All functions here are thread-safe.
 */
#ifndef TFREC_CRC32C_H
#define TFREC_CRC32C_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

TFREC_BEGIN_DECLS

/* Continue a CRC: crc is a previous result (0 to start). */
uint32_t tfrec_crc32c_extend(uint32_t crc, const void *data, size_t len);

/* CRC of one buffer; tfrec_crc32c("123456789", 9) == 0xE3069283. */
static inline uint32_t tfrec_crc32c(const void *data, size_t len)
{
    return tfrec_crc32c_extend(0, data, len);
}

/* TFRecord stores CRCs masked, because CRCs of data that embeds CRCs are weak. */
static inline uint32_t tfrec_crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static inline uint32_t tfrec_crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

enum tfrec_crc32c_impl {
    TFREC_CRC32C_AUTO = 0,     /* best available (the default) */
    TFREC_CRC32C_PORTABLE = 1, /* slicing-by-8, any CPU */
    TFREC_CRC32C_SSE42 = 2,    /* x86-64 crc32 instruction, interleaved streams */
    TFREC_CRC32C_CLMUL = 3,    /* x86-64 SSE4.2 + carry-less multiply folding */
    TFREC_CRC32C_AVX512 = 4,   /* x86-64 VPCLMULQDQ folding on 512-bit vectors */
    TFREC_CRC32C_ARM64 = 5     /* arm64 CRC instructions */
};

/* Force an implementation (TFREC_CRC32C_AUTO restores the default).
 * Returns TFREC_E_UNSUPPORTED if this CPU or build lacks it. Not meant to be
 * raced with concurrent CRC computation; call it at start-up or in tests. */
int tfrec_crc32c_force_impl(int impl);

/* Implementation in use, and its name ("sse42", "portable", ...). Under
 * AUTO this is the implementation AUTO is built on (e.g. "avx512", which
 * itself uses the crc32 instruction below 64 bytes). TFREC_CRC32C accepts
 * these names and "auto"; an unknown or unavailable name keeps AUTO. */
int tfrec_crc32c_impl(void);
const char *tfrec_crc32c_impl_name(int impl);

/* Compute with one specific implementation, bypassing dispatch (tests and
 * benchmarks). Returns 0 and sets *crc, or TFREC_E_UNSUPPORTED. */
int tfrec_crc32c_extend_with(int impl, uint32_t *crc, const void *data, size_t len);

TFREC_END_DECLS
#endif
