/* Compression auto-detection; the rules are in detect.h. */
#include "record/detect.h"

#include "record/framing.h"
#include "tfrec/record.h"

static int is_zlib_header(const uint8_t *p)
{
    return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && !(p[1] & 0x20) &&
           ((unsigned)p[0] << 8 | p[1]) % 31 == 0;
}

int tfrec_detect_compression(const uint8_t *head, size_t len)
{
    uint64_t record_len;
    if (len >= FRAME_HEADER && frame_header_ok(head, &record_len))
        return TFREC_COMPRESSION_NONE;
    if (len >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return TFREC_COMPRESSION_GZIP;
    if (len >= 2 && is_zlib_header(head))
        return TFREC_COMPRESSION_ZLIB;
    return TFREC_COMPRESSION_NONE;
}
