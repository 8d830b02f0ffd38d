/* Decoding MutateRowsResponse (google/bigtable/v2/bigtable.proto) without
 * allocating: entries = 1 (Entry: index = 1, status = 2), Status
 * (google/rpc/status.proto): code = 1, message = 2. */
#include "bigtable/mutate_response.h"

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_BYTES = 2, WT_FIXED32 = 5 };

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

/* A varint of at most max_bytes bytes: 10 for values; 5 for tags and
 * lengths, as protobuf-c reads them (a longer one, padded with 0x80 bytes,
 * is refused there and here). */
static int get_varint_max(cursor *c, uint64_t *v, unsigned max_bytes)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 7 * max_bytes; shift += 7) {
        if (c->p == c->end)
            return -1;
        uint8_t b = *c->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1; /* too long */
}

static int get_varint(cursor *c, uint64_t *v)
{
    return get_varint_max(c, v, 10);
}

/* The next field's number and wire type; 0 at the end, -1 if malformed. */
static int get_tag(cursor *c, uint32_t *field, unsigned *wt)
{
    if (c->p == c->end)
        return 0;
    uint64_t tag;
    if (get_varint_max(c, &tag, 5) || tag >> 3 == 0 || tag > UINT32_MAX)
        return -1;
    *field = (uint32_t)(tag >> 3);
    *wt = (unsigned)(tag & 7);
    return 1;
}

/* A length-delimited field's bytes as a cursor of their own. */
static int get_bytes(cursor *c, cursor *inner)
{
    uint64_t n;
    if (get_varint_max(c, &n, 5) || n > (uint64_t)(c->end - c->p))
        return -1;
    inner->p = c->p;
    inner->end = c->p + n;
    c->p += n;
    return 0;
}

static int skip(cursor *c, unsigned wt)
{
    uint64_t v;
    cursor inner;
    switch (wt) {
    case WT_VARINT: return get_varint(c, &v);
    case WT_BYTES: return get_bytes(c, &inner);
    case WT_FIXED64:
    case WT_FIXED32: {
        size_t n = wt == WT_FIXED64 ? 8 : 4;
        if ((size_t)(c->end - c->p) < n)
            return -1;
        c->p += n;
        return 0;
    }
    default: /* groups are not in these messages, and protobuf-c refuses them */ return -1;
    }
}

/* google.protobuf.Any (Status.details): type_url = 1, value = 2, both
 * length-delimited; checked so that what protobuf-c refuses is refused. */
static int any_fields(cursor c)
{
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = get_tag(&c, &field, &wt)) == 1) {
        if ((field == 1 || field == 2) && wt != WT_BYTES)
            return -1;
        if (skip(&c, wt))
            return -1;
    }
    return rc;
}

/* Status fields into *code / *msg: a later occurrence of one wins. */
static int status_fields(cursor c, int32_t *code, cursor *msg)
{
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = get_tag(&c, &field, &wt)) == 1) {
        if (field == 1) {
            uint64_t v;
            if (wt != WT_VARINT || get_varint(&c, &v))
                return -1;
            *code = (int32_t)(uint32_t)v; /* int32: the low 32 bits */
        } else if (field == 2) {
            if (wt != WT_BYTES || get_bytes(&c, msg))
                return -1;
        } else if (field == 3) {
            cursor any;
            if (wt != WT_BYTES || get_bytes(&c, &any) || any_fields(any))
                return -1;
        } else if (skip(&c, wt)) {
            return -1;
        }
    }
    return rc;
}

static int entry_fields(cursor c, int64_t *index, int32_t *code, cursor *msg)
{
    uint32_t field;
    unsigned wt;
    int rc;
    unsigned statuses = 0;
    while ((rc = get_tag(&c, &field, &wt)) == 1) {
        if (field == 1) {
            uint64_t v;
            if (wt != WT_VARINT || get_varint(&c, &v))
                return -1;
            *index = (int64_t)v;
        } else if (field == 2) {
            /* No server sends two statuses for an entry, and decoders
             * disagree on what two would mean (protobuf merges them,
             * protobuf-c half does): refused, the rows are re-sent. */
            cursor s;
            if (wt != WT_BYTES || statuses++ || get_bytes(&c, &s) || status_fields(s, code, msg))
                return -1;
        } else if (skip(&c, wt)) {
            return -1;
        }
    }
    return rc;
}

/* One pass over the message; fn NULL only checks it. */
static int walk(const uint8_t *data, size_t len, bt_entry_result_fn fn, void *ctx)
{
    cursor c = { data, data + len };
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = get_tag(&c, &field, &wt)) == 1) {
        if (field != 1) {
            if (skip(&c, wt))
                return -1;
            continue;
        }
        cursor e, msg = { (const uint8_t *)"", (const uint8_t *)"" };
        int64_t index = 0;
        int32_t code = 0;
        if (wt != WT_BYTES || get_bytes(&c, &e) || entry_fields(e, &index, &code, &msg))
            return -1;
        if (fn)
            fn(ctx, index, code, (const char *)msg.p, (size_t)(msg.end - msg.p));
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
