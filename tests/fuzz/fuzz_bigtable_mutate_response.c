/* The in-place MutateRowsResponse decoder (lib/bigtable/mutate_response.c)
 * against protobuf-c's generated unpacker on the same bytes. Whatever the
 * decoder accepts, protobuf-c must accept too, with the same entries in the
 * same order: index, status code and message. (The decoder may refuse
 * oddities protobuf-c lets through, such as tags above the largest field
 * number: the writer then re-sends those rows, which is safe.) */
#include <string.h>

#include "bigtable/mutate_response.h"
#include "bigtable/retry_info.h"
#include "fuzz.h"
#include "google/bigtable/v2/bigtable.pb-c.h"

typedef struct result {
    int64_t index;
    int32_t code;
    const char *msg;
    size_t msg_len;
} result;

typedef struct results {
    result *r;
    size_t n, cap;
} results;

static void collect(void *ctx, int64_t index, int32_t code, const char *msg, size_t msg_len,
                    int64_t retry_delay_ms)
{
    results *rs = ctx;
    FUZZ_ASSERT(retry_delay_ms >= 0 && retry_delay_ms <= BT_RETRY_INFO_MAX_MS);
    FUZZ_ASSERT(code || !retry_delay_ms);
    FUZZ_ASSERT(rs->n < rs->cap); /* every entry takes at least two bytes */
    fuzz_touch(msg, msg_len);
    rs->r[rs->n++] = (result){ index, code, msg, msg_len };
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    results rs = { NULL, 0, size / 2 + 1 };
    rs.r = malloc(rs.cap * sizeof *rs.r);
    FUZZ_ASSERT(rs.r != NULL);
    int ours = tfrec_bt_mutate_response_each(data, size, collect, &rs);
    Google__Bigtable__V2__MutateRowsResponse *pb =
        google__bigtable__v2__mutate_rows_response__unpack(NULL, size, data);
    if (ours == 0) {
        FUZZ_ASSERT(pb != NULL);
        FUZZ_ASSERT(rs.n == pb->n_entries);
        for (size_t k = 0; k < rs.n; k++) {
            const Google__Bigtable__V2__MutateRowsResponse__Entry *e = pb->entries[k];
            const Google__Rpc__Status *s = e->status;
            const char *m = s && s->message ? s->message : "";
            size_t ml = strlen(m); /* protobuf-c's copy ends at a NUL byte */
            FUZZ_ASSERT(rs.r[k].index == e->index);
            FUZZ_ASSERT(rs.r[k].code == (s ? s->code : 0));
            FUZZ_ASSERT(rs.r[k].msg_len >= ml && memcmp(rs.r[k].msg, m, ml) == 0);
            FUZZ_ASSERT(rs.r[k].msg_len == ml || rs.r[k].msg[ml] == '\0');
        }
    } else {
        FUZZ_ASSERT(rs.n == 0); /* a refused message yields no results */
    }
    if (pb)
        google__bigtable__v2__mutate_rows_response__free_unpacked(pb, NULL);
    free(rs.r);
    return 0;
}
