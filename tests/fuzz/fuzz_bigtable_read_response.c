/* The in-place ReadRowsResponse decoder (lib/bigtable/read_response.c)
 * against protobuf-c's generated unpacker on the same bytes. Whatever the
 * decoder accepts, protobuf-c must accept too, with the same chunks in the
 * same order, field by field: presence of the family and qualifier
 * wrappers, the row_status oneof's member and value, labels. Walking the
 * accepted message again chunk by chunk (as the reader does) must give the
 * same chunks. (The decoder may refuse oddities protobuf-c lets through,
 * such as a 5-byte length past 2^32 that protobuf-c wraps around.) */
#include <string.h>

#include "bigtable/read_response.h"
#include "fuzz.h"
#include "google/bigtable/v2/bigtable.pb-c.h"

typedef Google__Bigtable__V2__ReadRowsResponse__CellChunk pb_chunk;

/* protobuf-c's strings end at their first NUL */
static void same_string(const char *ours, size_t n, const char *theirs)
{
    const char *t = theirs ? theirs : "";
    size_t tl = strlen(t);
    FUZZ_ASSERT(n >= tl && (tl == 0 || memcmp(ours, t, tl) == 0));
    FUZZ_ASSERT(n == tl || ours[tl] == '\0');
}

static void same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    FUZZ_ASSERT(an == bn && (an == 0 || memcmp(a, b, an) == 0));
}

static void same_chunk(const bt_chunk *c, const pb_chunk *p)
{
    same_bytes(c->row_key, c->row_key_len, p->row_key.data, p->row_key.len);
    FUZZ_ASSERT(c->has_family == (p->family_name != NULL));
    if (p->family_name)
        same_string(c->family, c->family_len, p->family_name->value);
    FUZZ_ASSERT(c->has_qualifier == (p->qualifier != NULL));
    if (p->qualifier)
        same_bytes(c->qualifier, c->qualifier_len, p->qualifier->value.data,
                   p->qualifier->value.len);
    FUZZ_ASSERT(c->timestamp_micros == p->timestamp_micros);
    FUZZ_ASSERT(c->value_size == p->value_size);
    same_bytes(c->value, c->value_len, p->value.data, p->value.len);
    FUZZ_ASSERT(c->reset_row ==
                (p->row_status_case ==
                     GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_RESET_ROW &&
                 p->reset_row));
    FUZZ_ASSERT(c->commit_row ==
                (p->row_status_case ==
                     GOOGLE__BIGTABLE__V2__READ_ROWS_RESPONSE__CELL_CHUNK__ROW_STATUS_COMMIT_ROW &&
                 p->commit_row));
    FUZZ_ASSERT(c->n_labels == p->n_labels);
    size_t pos = 0, k = 0, n;
    const char *s;
    while (tfrec_bt_chunk_label(c, &pos, &s, &n)) {
        FUZZ_ASSERT(k < p->n_labels);
        same_string(s, n, p->labels[k++]);
    }
    FUZZ_ASSERT(k == p->n_labels);
}

typedef struct walk {
    const Google__Bigtable__V2__ReadRowsResponse *pb;
    size_t n;
} walk;

static int check(void *ctx, const bt_chunk *ch)
{
    walk *w = ctx;
    FUZZ_ASSERT(w->pb != NULL && w->n < w->pb->n_chunks);
    same_chunk(ch, w->pb->chunks[w->n++]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Google__Bigtable__V2__ReadRowsResponse *pb =
        google__bigtable__v2__read_rows_response__unpack(NULL, size, data);
    walk w = { pb, 0 };
    int ours = tfrec_bt_read_response_each(data, size, check, &w);
    if (ours == 0) {
        FUZZ_ASSERT(pb != NULL);
        FUZZ_ASSERT(w.n == pb->n_chunks);
        size_t pos = 0, k = 0;
        bt_chunk ch;
        while (tfrec_bt_read_response_next(data, size, &pos, &ch)) {
            FUZZ_ASSERT(k < pb->n_chunks);
            same_chunk(&ch, pb->chunks[k++]);
        }
        FUZZ_ASSERT(k == pb->n_chunks && pos == size);
    } else {
        FUZZ_ASSERT(w.n == 0); /* a refused message yields no chunks */
    }
    if (pb)
        google__bigtable__v2__read_rows_response__free_unpacked(pb, NULL);
    return 0;
}
