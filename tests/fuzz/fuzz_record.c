/* The record reader over a memory source: every compression setting (and
 * detection), both deflate libraries, skip-and-resync on and off, small
 * read buffers, and seeking back to a reported offset.
 * Input: one control byte, then the stream. */
#include <string.h>

#include "fuzz.h"
#include "tfrec/tfrec.h"

enum { MAX_OFFSETS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned flags = fuzz_byte(&in);
    static const int comps[4] = { TFREC_COMPRESSION_AUTO, TFREC_COMPRESSION_NONE,
                                  TFREC_COMPRESSION_ZLIB, TFREC_COMPRESSION_GZIP };
    /* small buffers: the 256 KiB default costs a fresh mapping per run under ASan */
    static const size_t buffers[4] = { 4096, 64, 100, 65536 };
    tfrec_set_deflate_backend(flags & 8 ? "zlib" : NULL);
    tfrec_io io = TFREC_IO_INIT;
    static const uint8_t empty[1];
    if (tfrec_io_open_memory(&io, in.n ? in.p : empty, in.n))
        return 0;
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.compression = comps[flags & 3];
    o.skip_corrupt = (flags >> 2) & 1;
    o.buffer_size = buffers[(flags >> 4) & 3];
    /* A limit as a service reading untrusted files would set: claims above
     * it are refused from the header (tested in test_record_hostile). */
    o.max_record_size = 64u << 20;
    tfrec_reader *r;
    if (tfrec_reader_open_io(&r, &io, "fuzz", &o))
        return 0;
    uint64_t offsets[MAX_OFFSETS], sums[MAX_OFFSETS];
    size_t lens[MAX_OFFSETS], n = 0;
    uint64_t records = 0, bytes = 0;
    const uint8_t *d;
    size_t len;
    int rc;
    while ((rc = tfrec_reader_next(r, &d, &len)) == TFREC_OK) {
        unsigned sum = fuzz_touch(d, len);
        if (n < MAX_OFFSETS) {
            offsets[n] = tfrec_reader_offset(r);
            sums[n] = sum;
            lens[n++] = len;
        }
        records++;
        bytes += len;
    }
    FUZZ_ASSERT(rc < 0 || rc == TFREC_END);
    FUZZ_ASSERT(tfrec_reader_errmsg(r) != NULL);
    if (rc < 0 && !o.skip_corrupt) {
        int again = tfrec_reader_next(r, &d, &len);
        FUZZ_ASSERT(again == rc); /* errors stick */
    }
    tfrec_reader_stats st = TFREC_READER_STATS_INIT;
    FUZZ_ASSERT(tfrec_reader_stats_get(r, &st) == TFREC_OK);
    FUZZ_ASSERT(st.records == records && st.bytes == bytes);
    if (!o.skip_corrupt)
        FUZZ_ASSERT(st.skipped_regions == 0 && st.skipped_bytes == 0);
    /* Seeking back to a record reported earlier reads it again, the same. */
    if ((flags & 64) && n) {
        size_t k = (flags >> 7) ? n - 1 : 0;
        if (tfrec_reader_seek(r, offsets[k]) == TFREC_OK &&
            tfrec_reader_next(r, &d, &len) == TFREC_OK)
            FUZZ_ASSERT(len == lens[k] && fuzz_touch(d, len) == sums[k]);
    }
    tfrec_reader_free(r);
    return 0;
}
