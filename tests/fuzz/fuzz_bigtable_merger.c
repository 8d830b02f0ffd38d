/* The ReadRows chunk merger fed ReadRowsResponse messages as they come off
 * the wire: each message is decoded with protobuf-c and its chunks fed in
 * order, as lib/bigtable/reader.c does. Committed rows must have strictly
 * increasing keys and cells whose bytes are all there.
 * Input: messages, each a 2-byte little-endian length and that many bytes
 * (the last one takes what is left). */
#include <string.h>

#include "bigtable/row_merger.h"
#include "fuzz.h"

static int key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bt_merger m;
    tfrec_bt_merger_init(&m);
    tfrec_err err = { 0 };
    uint8_t *last = NULL;
    size_t last_len = 0;
    int rc = 0;
    while (size > 0 && rc >= 0) {
        size_t len = size >= 2 ? (size_t)(data[0] | data[1] << 8) : 0;
        size_t skip = size >= 2 ? 2 : size;
        data += skip;
        size -= skip;
        if (len > size)
            len = size;
        Google__Bigtable__V2__ReadRowsResponse *resp =
            google__bigtable__v2__read_rows_response__unpack(NULL, len, data);
        data += len;
        size -= len;
        if (!resp)
            break; /* the reader fails the stream here */
        for (size_t i = 0; i < resp->n_chunks && rc >= 0; i++) {
            rc = tfrec_bt_merger_feed(&m, resp->chunks[i], &err);
            if (rc != 1)
                continue;
            const tfrec_bt_row *row = &m.row;
            fuzz_touch(row->key, row->key_len);
            FUZZ_ASSERT(row->key_len > 0);
            if (last)
                FUZZ_ASSERT(key_cmp(last, last_len, row->key, row->key_len) < 0);
            uint8_t *copy = realloc(last, row->key_len);
            FUZZ_ASSERT(copy != NULL);
            memcpy(copy, row->key, row->key_len);
            last = copy;
            last_len = row->key_len;
            for (size_t c = 0; c < row->ncells; c++) {
                const tfrec_bt_cell *cell = row->cells[c];
                FUZZ_ASSERT(cell && cell->family);
                fuzz_touch(cell->family, strlen(cell->family));
                fuzz_touch(cell->qualifier, cell->qualifier_len);
                fuzz_touch(cell->value, cell->value_len);
            }
        }
        google__bigtable__v2__read_rows_response__free_unpacked(resp, NULL);
    }
    if (rc >= 0)
        (void)tfrec_bt_merger_finish(&m, &err);
    free(last);
    tfrec_bt_merger_free(&m);
    return 0;
}
