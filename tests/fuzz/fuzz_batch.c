/* Batch functions: a parsed Example flattened into a batch (the layout
 * walked back and checked against the accessors), and records read many
 * per call (tfrec_reader_read_batch, tfrec_reader_skip).
 * Input: one control byte, then an Example (even) or a record stream (odd). */
#include <string.h>

#include "fuzz.h"
#include "tfrec/tfrec.h"

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void flatten(const uint8_t *data, size_t size, tfrec_record_batch *b)
{
    tfrec_example *ex;
    if (tfrec_example_parse(&ex, data, size) != TFREC_OK)
        return;
    FUZZ_ASSERT(tfrec_example_to_batch(ex, b) == TFREC_OK);
    size_t items = tfrec_record_batch_count(b);
    const uint8_t *d = tfrec_record_batch_data(b);
    const uint64_t *ends = tfrec_record_batch_ends(b);
    size_t item = 0, features = tfrec_example_feature_count(ex);
    uint64_t at = 0;
    /* key, 9-byte header, values: as batch.h describes */
    for (size_t f = 0; f < features; f++) {
        const char *key = tfrec_example_feature_key(ex, f);
        FUZZ_ASSERT(item + 2 <= items);
        FUZZ_ASSERT(ends[item] - at == strlen(key) && memcmp(d + at, key, strlen(key)) == 0);
        at = ends[item++];
        FUZZ_ASSERT(ends[item] - at == 9);
        int kind = d[at];
        uint64_t count = load64(d + at + 1);
        at = ends[item++];
        FUZZ_ASSERT(kind == tfrec_example_feature_type(ex, key));
        FUZZ_ASSERT(count == tfrec_example_value_count(ex, key));
        if (kind == TFREC_FEATURE_BYTES) {
            for (uint64_t i = 0; i < count; i++) {
                const uint8_t *v;
                size_t len;
                FUZZ_ASSERT(tfrec_example_get_bytes(ex, key, i, &v, &len) == TFREC_OK);
                FUZZ_ASSERT(item < items && ends[item] - at == len);
                FUZZ_ASSERT(len == 0 || memcmp(d + at, v, len) == 0);
                at = ends[item++];
            }
        } else if (kind != TFREC_FEATURE_NONE) {
            FUZZ_ASSERT(item < items);
            FUZZ_ASSERT(ends[item] - at == count * (kind == TFREC_FEATURE_INT64 ? 8 : 4));
            at = ends[item++];
        }
    }
    FUZZ_ASSERT(item == items);
    tfrec_example_free(ex);
}

static void read_batches(unsigned flags, const uint8_t *data, size_t size, tfrec_record_batch *b)
{
    static const uint8_t empty[1];
    tfrec_io io = TFREC_IO_INIT;
    if (tfrec_io_open_memory(&io, size ? data : empty, size))
        return;
    tfrec_reader_options o = TFREC_READER_OPTIONS_INIT;
    o.skip_corrupt = (flags >> 1) & 1;
    o.max_record_size = 64u << 20;
    o.buffer_size = 4096; /* the 256 KiB default costs a fresh mapping per run under ASan */
    tfrec_reader *r;
    if (tfrec_reader_open_io(&r, &io, "fuzz", &o))
        return;
    size_t max_records = (flags >> 2) & 7, max_bytes = (size_t)((flags >> 5) & 7) * 100;
    if (flags & 0x100) {
        uint64_t skipped;
        (void)tfrec_reader_skip(r, max_records, &skipped);
        FUZZ_ASSERT(max_records == 0 || skipped <= max_records);
    }
    int rc;
    while ((rc = tfrec_reader_read_batch(r, b, max_records, max_bytes)) == TFREC_OK) {
        size_t n = tfrec_record_batch_count(b);
        FUZZ_ASSERT(n >= 1 && (max_records == 0 || n <= max_records));
        const uint64_t *ends = tfrec_record_batch_ends(b);
        for (size_t i = 1; i < n; i++)
            FUZZ_ASSERT(ends[i] >= ends[i - 1]);
        fuzz_touch(tfrec_record_batch_data(b), (size_t)ends[n - 1]);
        fuzz_touch(tfrec_record_batch_offsets(b), n * sizeof(uint64_t));
    }
    FUZZ_ASSERT(tfrec_record_batch_count(b) == 0);
    tfrec_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned flags = fuzz_byte(&in);
    flags |= fuzz_byte(&in) << 8;
    tfrec_record_batch *b;
    FUZZ_ASSERT(tfrec_record_batch_new(&b) == TFREC_OK);
    if (flags & 1)
        read_batches(flags, in.p, in.n, b);
    else
        flatten(in.p, in.n, b);
    tfrec_record_batch_free(b);
    return 0;
}
