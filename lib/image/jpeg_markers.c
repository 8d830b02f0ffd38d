/* The "header" verification level: walk the JPEG marker structure from SOI
 * to EOI without decoding anything. It catches what a cut-off download or a
 * zero-filled tail looks like (no EOI, a segment running past the end, the
 * entropy-coded data never reaching a marker) at memchr speed.
 *
 * The same walk bounds what a decode of the file can cost, before any
 * decoding, from what the data can hold (every verify level runs it first):
 *
 *  - width x height at most the caller's pixel limit;
 *  - at least one byte of entropy-coded data per 8 coded 8x8 blocks: with
 *    Huffman coding every block's DC difference takes at least one bit, so
 *    less data is a scan cut short (a header declaring 65500x65500 over a
 *    2-byte scan). Arithmetic coding can go below a bit per block only on
 *    near-blank content, and libjpeg fills an arithmetic scan that ends
 *    early with zeros without a warning, so the same bound applies to it;
 *  - at most IMG_JPEG_MAX_SCANS scans, and the scans together decoding every
 *    block at most IMG_JPEG_MAX_PASSES times (an AC scan costs a few bytes
 *    whatever the image size, and libjpeg walks every block of its
 *    component for each one).
 *
 * Decode work is then at most IMG_JPEG_MAX_PASSES x 8 block decodes per
 * byte of input, and the decoded pixels are bounded by the limit. */
#include "image/image_internal.h"

#include <string.h>

#include "image/jpeg_glue.h"
#include "util/errors.h"

static int is_sof(uint8_t m)
{
    /* C0..CF are SOF markers except DHT (C4), JPG (C8) and DAC (CC). */
    return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
}

/* What the walk learns from the frame and scan headers. */
typedef struct walk {
    uint64_t max_pixels;
    unsigned width, height;
    int ncomp;
    uint8_t id[4];
    uint64_t blocks[4]; /* 8x8 blocks of each component */
    uint64_t all_blocks;
    uint64_t scan_blocks;   /* blocks decoded, summed over the scans */
    uint64_t entropy_bytes; /* entropy-coded data, stuffing included */
    int arith;
} walk;

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* SOFn: P, Y, X, Nf, then Nf x (C, H/V, Tq). */
static int read_frame(walk *w, uint8_t m, const uint8_t *seg, size_t n, size_t at)
{
    if (w->ncomp)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: second frame header at byte %zu", at);
    int nf = n >= 8 ? seg[7] : 0;
    if (nf < 1 || nf > 4 || n < 8 + 3 * (size_t)nf)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: bad frame header at byte %zu", at);
    uint64_t height = ((unsigned)seg[3] << 8) | seg[4], width = ((unsigned)seg[5] << 8) | seg[6];
    if (width * height > w->max_pixels)
        return tfrec_fail(NULL, TFREC_E_IMAGE,
                          "JPEG of %llux%llu (%llu pixels) is above the pixel limit of %llu",
                          (unsigned long long)width, (unsigned long long)height,
                          (unsigned long long)(width * height), (unsigned long long)w->max_pixels);
    unsigned hmax = 1, vmax = 1;
    for (int c = 0; c < nf; c++) {
        unsigned hv = seg[8 + 3 * c + 1];
        if ((hv >> 4) < 1 || (hv >> 4) > 4 || (hv & 15) < 1 || (hv & 15) > 4)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "corrupt JPEG: bad sampling factors in the frame header at byte %zu",
                              at);
        hmax = (hv >> 4) > hmax ? (hv >> 4) : hmax;
        vmax = (hv & 15) > vmax ? (hv & 15) : vmax;
    }
    for (int c = 0; c < nf; c++) {
        unsigned hv = seg[8 + 3 * c + 1];
        w->id[c] = seg[8 + 3 * c];
        /* as libjpeg sizes a component: width_in_blocks x height_in_blocks */
        w->blocks[c] = div_up(width * (hv >> 4), 8 * hmax) * div_up(height * (hv & 15), 8 * vmax);
        w->all_blocks += w->blocks[c];
    }
    w->ncomp = nf;
    w->width = (unsigned)width;
    w->height = (unsigned)height;
    w->arith = m >= 0xC9;
    return TFREC_OK;
}

/* SOS: Ns, then Ns x (Cs, Td/Ta), Ss, Se, Ah/Al. */
static int read_scan(walk *w, const uint8_t *seg, size_t n, int scans, size_t at)
{
    if (scans > IMG_JPEG_MAX_SCANS)
        return tfrec_fail(NULL, TFREC_E_IMAGE,
                          "JPEG with more than %d scans (scan %d at byte %zu): each scan costs a "
                          "pass over its components, and encoders write about 10",
                          IMG_JPEG_MAX_SCANS, scans, at);
    int ns = n >= 3 ? seg[2] : 0;
    if (ns < 1 || ns > 4 || n < 6 + 2 * (size_t)ns)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: bad scan header at byte %zu", at);
    for (int k = 0; k < ns; k++) {
        int c = 0;
        while (c < w->ncomp && w->id[c] != seg[3 + 2 * k])
            c++;
        if (c == w->ncomp)
            return tfrec_fail(NULL, TFREC_E_IMAGE,
                              "corrupt JPEG: scan at byte %zu names component %d, not in the "
                              "frame",
                              at, seg[3 + 2 * k]);
        w->scan_blocks += w->blocks[c];
    }
    return TFREC_OK;
}

/* The checks that need every scan: data enough for the blocks, and the
 * total decode work. */
static int check_totals(const walk *w, int scans)
{
    if (w->all_blocks > 8 * w->entropy_bytes)
        return tfrec_fail(NULL, TFREC_E_IMAGE,
                          "JPEG data too short for its size: %ux%u in %llu 8x8 blocks needs at "
                          "least %llu bytes of %s-coded data (a bit per block), its %d scan%s "
                          "hold%s %llu (a scan cut short, or a header declaring more than the "
                          "file holds)",
                          w->width, w->height, (unsigned long long)w->all_blocks,
                          (unsigned long long)div_up(w->all_blocks, 8),
                          w->arith ? "arithmetic" : "Huffman", scans, scans == 1 ? "" : "s",
                          scans == 1 ? "s" : "", (unsigned long long)w->entropy_bytes);
    if (w->scan_blocks > (uint64_t)IMG_JPEG_MAX_PASSES * w->all_blocks)
        return tfrec_fail(NULL, TFREC_E_IMAGE,
                          "JPEG whose %d scans decode every block %.1f times: above the limit of "
                          "%d passes over the image",
                          scans, (double)w->scan_blocks / (double)w->all_blocks,
                          IMG_JPEG_MAX_PASSES);
    return TFREC_OK;
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

int tfrec_img_jpeg_check_structure(const uint8_t *d, size_t len, uint64_t max_pixels)
{
    if (len < 4 || d[0] != 0xFF || d[1] != 0xD8)
        return tfrec_fail(NULL, TFREC_E_IMAGE, "not a JPEG (no SOI marker)");
    walk w;
    memset(&w, 0, sizeof w);
    w.max_pixels = max_pixels ? max_pixels : TFREC_IMAGE_DEFAULT_MAX_PIXELS;
    size_t p = 2;
    int scans = 0, rc;
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
            if (!w.ncomp || scans == 0)
                return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: EOI before any image data");
            return check_totals(&w, scans); /* bytes after EOI are ignored, as decoders do */
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
        if (is_sof(m) && (rc = read_frame(&w, m, d + p, seg, p - 1)) != TFREC_OK)
            return rc;
        if (m == 0xDA) {
            if (!w.ncomp)
                return tfrec_fail(NULL, TFREC_E_IMAGE, "corrupt JPEG: scan before frame header");
            if ((rc = read_scan(&w, d + p, seg, ++scans, p - 1)) != TFREC_OK)
                return rc;
        }
        p += seg;
        if (m == 0xDA) {
            size_t start = p;
            p = skip_entropy(d, p, len);
            if (p >= len)
                return tfrec_fail(NULL, TFREC_E_IMAGE,
                                  "truncated JPEG: scan %d data runs to the end of the file "
                                  "(%zu bytes) without an EOI marker",
                                  scans, len);
            w.entropy_bytes += p - start;
        }
    }
}
