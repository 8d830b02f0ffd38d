/* Decoding MutateRowsResponse (google/bigtable/v2/bigtable.proto) without
 * allocating: entries = 1 (Entry: index = 1, status = 2), Status
 * (google/rpc/status.proto): code = 1, message = 2. */
#include "bigtable/mutate_response.h"

#include "bigtable/pb_wire.h"
#include "bigtable/retry_info.h"

/* google.protobuf.Any (Status.details): type_url = 1, value = 2, both
 * length-delimited; checked so that what protobuf-c refuses is refused. */
static int any_fields(pb_cursor c)
{
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if ((field == 1 || field == 2) && wt != WT_BYTES)
            return -1;
        if (pb_skip(&c, wt))
            return -1;
    }
    return rc;
}

/* Status fields into *code / *msg: a later occurrence of one wins. */
static int status_fields(pb_cursor c, int32_t *code, pb_cursor *msg)
{
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field == 1) {
            uint64_t v;
            if (wt != WT_VARINT || pb_varint(&c, &v))
                return -1;
            *code = (int32_t)(uint32_t)v; /* int32: the low 32 bits */
        } else if (field == 2) {
            if (wt != WT_BYTES || pb_bytes(&c, msg))
                return -1;
        } else if (field == 3) {
            pb_cursor any;
            if (wt != WT_BYTES || pb_bytes(&c, &any) || any_fields(any))
                return -1;
        } else if (pb_skip(&c, wt)) {
            return -1;
        }
    }
    return rc;
}

static int entry_fields(pb_cursor c, int64_t *index, int32_t *code, pb_cursor *msg,
                        pb_cursor *status)
{
    uint32_t field;
    unsigned wt;
    int rc;
    unsigned statuses = 0;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field == 1) {
            uint64_t v;
            if (wt != WT_VARINT || pb_varint(&c, &v))
                return -1;
            *index = (int64_t)v;
        } else if (field == 2) {
            /* No server sends two statuses for an entry, and decoders
             * disagree on what two would mean (protobuf merges them,
             * protobuf-c half does): refused, the rows are re-sent. */
            if (wt != WT_BYTES || statuses++ || pb_bytes(&c, status) ||
                status_fields(*status, code, msg))
                return -1;
        } else if (pb_skip(&c, wt)) {
            return -1;
        }
    }
    return rc;
}

/* One pass over the message; fn NULL only checks it. */
static int walk(const uint8_t *data, size_t len, bt_entry_result_fn fn, void *ctx)
{
    pb_cursor c = { data, data + len };
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field != 1) {
            if (pb_skip(&c, wt))
                return -1;
            continue;
        }
        pb_cursor e, msg = { (const uint8_t *)"", (const uint8_t *)"" }, status = { NULL, NULL };
        int64_t index = 0;
        int32_t code = 0;
        if (wt != WT_BYTES || pb_bytes(&c, &e) || entry_fields(e, &index, &code, &msg, &status))
            return -1;
        if (fn) /* details are read only for the rare failed entry */
            fn(ctx, index, code, (const char *)msg.p, (size_t)(msg.end - msg.p),
               code && status.p ? tfrec_bt_retry_info_ms(status.p, (size_t)(status.end - status.p))
                                : 0);
    }
    return rc;
}

int tfrec_bt_mutate_response_each(const uint8_t *data, size_t len, bt_entry_result_fn fn, void *ctx)
{
    if (!len)
        return 0; /* no entries */
    if (!data)
        return -1;
    if (walk(data, len, NULL, ctx))
        return -1;
    return fn ? walk(data, len, fn, ctx) : 0;
}
