/* The "header" verification level: walk the JPEG marker structure from SOI
 * to EOI without decoding anything. It catches what a cut-off download or a
 * zero-filled tail looks like (no EOI, a segment running past the end, the
 * entropy-coded data never reaching a marker) at memchr speed. */
#include "image/image_internal.h"

#include <string.h>

#include "util/errors.h"

static int is_sof(uint8_t m)
{
    /* C0..CF are SOF markers except DHT (C4), JPG (C8) and DAC (CC). */
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* Skip entropy-coded data starting at p; returns the offset of the 0xFF of
 * the next real marker, or len if the data runs to the end. Inside the
 * data 0xFF is followed by 0x00 (stuffing) or RSTn. */
static size_t skip_entropy(const uint8_t *d, size_t p, size_t len)
{
    while (p < len) {
        const uint8_t *ff = memchr(d + p, 0xFF, len - p);
        if (!ff)
            return len;
        size_t q = (size_t)(ff - d);
        if (q + 1 >= len)
            return len;
        uint8_t next = d[q + 1];
        if (next == 0x00 || (next >= 0xD0 && next <= 0xD7) || next == 0xFF) {
            p = q + 1; /* stuffed byte, restart marker or fill byte */
            continue;
        }
        return q;
    }
    return len;
}

int tfrec_img_jpeg_check_structure(const uint8_t *d, size_t len)
{
    if (len < 4 || d[0] != 0xFF || d[1] != 0xD8)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "not a JPEG (no SOI marker)");
    size_t p = 2;
    int seen_sof = 0, scans = 0;
    for (;;) {
        if (p >= len)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "truncated JPEG: ends at byte %zu without an EOI marker", len);
        if (d[p] != 0xFF)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "corrupt JPEG: expected a marker at byte %zu, found 0x%02X", p, d[p]);
        while (p < len && d[p] == 0xFF)
            p++; /* fill bytes may precede a marker */
        if (p >= len)
            continue; /* reported as truncated above */
        uint8_t m = d[p++];
        if (m == 0xD9) {
            if (!seen_sof || scans == 0)
                return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: EOI before any image data");
            return TFREC_OK; /* bytes after EOI are ignored, as decoders do */
        }
        if ((m >= 0xD0 && m <= 0xD7) || m == 0x01)
            continue; /* parameterless markers */
        if (m == 0xD8 || m == 0x00)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "corrupt JPEG: unexpected marker 0x%02X at byte %zu", m, p - 1);
        if (p + 2 > len)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "truncated JPEG: marker 0x%02X at byte %zu has no length", m, p - 1);
        size_t seg = ((size_t)d[p] << 8) | d[p + 1];
        if (seg < 2)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "corrupt JPEG: marker 0x%02X at byte %zu has length %zu", m, p - 1,
                              seg);
        if (p + seg > len)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "truncated JPEG: marker 0x%02X segment at byte %zu runs past the end",
                              m, p - 1);
        if (is_sof(m))
            seen_sof = 1;
        p += seg;
        if (m == 0xDA) {
            if (!seen_sof)
                return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: scan before frame header");
            scans++;
            p = skip_entropy(d, p, len);
            if (p >= len)
                return tfrec_fail(NULL, TFREC_E_IMAGE,
                                  "truncated JPEG: scan %d data runs to the end of the file "
                                  "(%zu bytes) without an EOI marker",
                                  scans, len);
        }
    }
}
