/* The ReadRows chunk merger fed serialized ReadRowsResponse messages as they
 * come off the wire, through tfrec_bt_merger_feed_response (protobuf-c
 * decoding, then the chunks in order, as lib/bigtable/reader.c does).
 * Committed rows must have strictly increasing keys and cells whose bytes,
 * names and labels are all there; memory stays within the row limit.
 * Input: messages, each a 2-byte little-endian length and that many bytes
 * (the last one takes what is left). */
#include <string.h>

#include "bigtable/row_merger.h"
#include "fuzz.h"

/* Small enough that a hostile value_size or a flood of cells hits the limit
 * long before -rss_limit_mb would. */
#define FUZZ_MAX_ROW_BYTES ((size_t)1 << 20)

typedef struct seen {
    uint8_t *last;
    size_t last_len;
} seen;

static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int on_row(void *ctx, const tfrec_bt_row *row)
{
    seen *s = ctx;
    fuzz_touch(row->key, row->key_len);
    FUZZ_ASSERT(row->key_len > 0);
    if (s->last)
        FUZZ_ASSERT(key_cmp(s->last, s->last_len, row->key, row->key_len) < 0);
    uint8_t *copy = realloc(s->last, row->key_len);
    FUZZ_ASSERT(copy != NULL);
    memcpy(copy, row->key, row->key_len);
    s->last = copy;
    s->last_len = row->key_len;
    for (size_t c = 0; c < row->ncells; c++) {
        const tfrec_bt_cell *cell = row->cells[c];
        FUZZ_ASSERT(cell && cell->family);
        fuzz_touch(cell->family, strlen(cell->family));
        fuzz_touch(cell->qualifier, cell->qualifier_len);
        fuzz_touch(cell->value, cell->value_len);
        FUZZ_ASSERT(cell->n_labels == 0 || cell->labels);
        for (size_t l = 0; l < cell->n_labels; l++)
            fuzz_touch(cell->labels[l], strlen(cell->labels[l]));
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bt_merger m;
    tfrec_bt_merger_init(&m, FUZZ_MAX_ROW_BYTES);
    tfrec_err err = { 0 };
    seen s = { NULL, 0 };
    int rc = 0;
    while (size > 0 && rc >= 0) {
        size_t len = size >= 2 ? (size_t)(data[0] | data[1] << 8) : 0;
        size_t skip = size >= 2 ? 2 : size;
        data += skip;
        size -= skip;
        if (len > size)
            len = size;
        rc = tfrec_bt_merger_feed_response(&m, data, len, on_row, &s, &err);
        data += len;
        size -= len;
    }
    if (rc >= 0)
        (void)tfrec_bt_merger_finish(&m, &err);
    free(s.last);
    tfrec_bt_merger_free(&m);
    return 0;
}
