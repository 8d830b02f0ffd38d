/* Internal: TFRecord framing (header and footer encoding and checks). */
#ifndef TFREC_RECORD_FRAMING_H
#define TFREC_RECORD_FRAMING_H

#include <stdint.h>
#include <string.h>

#include "tfrec/crc32c.h"

enum { FRAME_HEADER = 12, FRAME_FOOTER = 4, FRAME_OVERHEAD = FRAME_HEADER + FRAME_FOOTER };

/* Little-endian loads; compilers turn these into single moves. */
static inline uint64_t frame_load64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline uint32_t frame_load32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void frame_store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The masked CRC a header stores for its 8 length bytes. */
static inline uint32_t frame_length_crc(const uint8_t *header)
{
    return tfrec_crc32c_mask(tfrec_crc32c(header, 8));
}

/* 1 when the 12-byte header's length CRC matches; *len gets the length. */
static inline int frame_header_ok(const uint8_t *header, uint64_t *len)
{
    *len = frame_load64(header);
    return frame_load32(header + 8) == frame_length_crc(header);
}

#endif
