/* Compression auto-detection; the rules are in detect.h. */
#include <string.h>

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

const char *tfrec_detect_other_format(const uint8_t *head, size_t len)
{
    static const struct {
        const char *magic;
        size_t n;
        const char *what;
    } magics[] = {
        { "\xff\xd8\xff", 3, "a JPEG image" },
        { "\x89PNG\r\n\x1a\n", 8, "a PNG image" },
        { "\x1f\x8b", 2, "a GZIP file (read it with compression GZIP)" },
        { "PK\x03\x04", 4, "a ZIP archive" },
    };
    if (len >= 263 && memcmp(head + 257, "ustar", 5) == 0) /* POSIX and GNU tar headers */
        return "a tar archive";
    for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++)
        if (len >= magics[i].n && memcmp(head, magics[i].magic, magics[i].n) == 0)
            return magics[i].what;
    /* Every byte printable or white space: a text file; JSON if its first
     * character after the blanks opens an object or an array. */
    if (len > DETECT_BYTES)
        len = DETECT_BYTES;
    size_t first = len;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = head[i];
        if (c >= 0x7f || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
            return NULL;
        if (first == len && c != ' ' && c != '\n' && c != '\r' && c != '\t')
            first = i;
    }
    if (len == 0 || first == len)
        return NULL;
    return head[first] == '{' || head[first] == '[' ? "JSON" : "text";
}
