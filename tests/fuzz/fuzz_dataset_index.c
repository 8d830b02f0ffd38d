/* The index text parser (tfrec_index_load_io): whatever the text, a
 * successful load describes records that tile [0, data size) with every
 * length at least 16, and a refusal leaves nothing behind. Input: one
 * control byte choosing the data file's size (unknown, or 16 KiB times the
 * byte), then the index text. */
#include "fuzz.h"
#include "tfrec/tfrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size };
    unsigned c = fuzz_byte(&in);
    int64_t data_size = c == 0 ? -1 : (int64_t)c * 16384;
    tfrec_io io = TFREC_IO_INIT;
    FUZZ_ASSERT(tfrec_io_open_memory(&io, in.p, in.n) == TFREC_OK);
    tfrec_index *ix = NULL;
    int rc = tfrec_index_load_io(&ix, &io, "fuzz.idx", data_size);
    if (rc != TFREC_OK) {
        FUZZ_ASSERT(ix == NULL);
        return 0;
    }
    uint64_t n = tfrec_index_records(ix), end = 0, off, len;
    for (uint64_t k = 0; k < n; k++) {
        FUZZ_ASSERT(tfrec_index_entry(ix, k, &off, &len) == TFREC_OK);
        FUZZ_ASSERT(off == end && len >= 16);
        end = off + len;
    }
    FUZZ_ASSERT(tfrec_index_entry(ix, n, &off, &len) == TFREC_E_INVALID);
    FUZZ_ASSERT(end == tfrec_index_data_size(ix));
    FUZZ_ASSERT(data_size < 0 || end <= (uint64_t)data_size);
    tfrec_index_free(ix);
    return 0;
}
