/* Decoding ReadRowsResponse (google/bigtable/v2/bigtable.proto) without
 * copying: chunks = 1 (CellChunk: row_key = 1, family_name = 2 (StringValue,
 * value = 1), qualifier = 3 (BytesValue, value = 1), timestamp_micros = 4,
 * labels = 5, value = 6, value_size = 7, reset_row = 8, commit_row = 9,
 * the last two a oneof), last_scanned_row_key = 2 (skipped). */
#include "bigtable/read_response.h"

#include "bigtable/pb_wire.h"

/* A StringValue / BytesValue wrapper's value into *v, *n. Given once more,
 * protobuf-c merges the two messages: a later wrapper without a value
 * keeps the earlier one, and so does a later empty BytesValue (its merge
 * looks at the bytes' length, a string's at whether it was set). */
static int wrapper(pb_cursor c, int bytes, const uint8_t **v, size_t *n)
{
    uint32_t field;
    unsigned wt;
    int rc, set = 0;
    pb_cursor val = { NULL, NULL };
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field == 1) {
            if (wt != WT_BYTES || pb_bytes(&c, &val))
                return -1;
            set = 1;
        } else if (pb_skip(&c, wt)) {
            return -1;
        }
    }
    if (rc == 0 && set && (!bytes || val.end > val.p)) {
        *v = val.p;
        *n = (size_t)(val.end - val.p);
    }
    return rc;
}

static int chunk_fields(pb_cursor c, bt_chunk *ch)
{
    uint32_t field;
    unsigned wt;
    int rc;
    *ch = (bt_chunk){ 0 };
    ch->raw = c.p;
    ch->raw_end = c.end;
    int status = 0, status_value = 0; /* the oneof member set last, and its value */
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        pb_cursor s;
        uint64_t v;
        switch (field) {
        case 1:
        case 5:
        case 6:
            if (wt != WT_BYTES || pb_bytes(&c, &s))
                return -1;
            if (field == 1) {
                ch->row_key = s.p;
                ch->row_key_len = (size_t)(s.end - s.p);
            } else if (field == 6) {
                ch->value = s.p;
                ch->value_len = (size_t)(s.end - s.p);
            } else {
                ch->n_labels++;
            }
            break;
        case 2:
            if (wt != WT_BYTES || pb_bytes(&c, &s) ||
                wrapper(s, 0, (const uint8_t **)&ch->family, &ch->family_len))
                return -1;
            ch->has_family = 1;
            break;
        case 3:
            if (wt != WT_BYTES || pb_bytes(&c, &s) ||
                wrapper(s, 1, &ch->qualifier, &ch->qualifier_len))
                return -1;
            ch->has_qualifier = 1;
            break;
        case 4:
        case 7:
            if (wt != WT_VARINT || pb_varint(&c, &v))
                return -1;
            if (field == 4)
                ch->timestamp_micros = (int64_t)v;
            else
                ch->value_size = (int32_t)(uint32_t)v; /* int32: the low 32 bits */
            break;
        case 8:
        case 9:
            if (pb_bool(&c, wt, &status_value))
                return -1;
            status = (int)field;
            break;
        default:
            if (pb_skip(&c, wt))
                return -1;
        }
    }
    /* an explicit false is no status at all (row_merger.h) */
    ch->reset_row = status == 8 && status_value;
    ch->commit_row = status == 9 && status_value;
    return rc;
}

/* One pass over the message; fn NULL only checks it. */
static int walk(const uint8_t *data, size_t len, bt_chunk_fn fn, void *ctx)
{
    pb_cursor c = { data, data + len };
    uint32_t field;
    unsigned wt;
    int rc;
    while ((rc = pb_tag(&c, &field, &wt)) == 1) {
        if (field != 1) {
            /* last_scanned_row_key = 2 is known to protobuf-c: bytes only */
            if ((field == 2 && wt != WT_BYTES) || pb_skip(&c, wt))
                return -1;
            continue;
        }
        pb_cursor e;
        bt_chunk ch;
        if (wt != WT_BYTES || pb_bytes(&c, &e) || chunk_fields(e, &ch))
            return -1;
        if (fn && (rc = fn(ctx, &ch)) != 0)
            return rc;
    }
    return rc;
}

int tfrec_bt_read_response_each(const uint8_t *data, size_t len, bt_chunk_fn fn, void *ctx)
{
    if (!len)
        return 0; /* no chunks */
    if (!data)
        return -1;
    if (walk(data, len, NULL, ctx))
        return -1;
    return fn ? walk(data, len, fn, ctx) : 0;
}

int tfrec_bt_read_response_next(const uint8_t *data, size_t len, size_t *pos, bt_chunk *ch)
{
    if (*pos >= len)
        return 0;
    pb_cursor c = { data + *pos, data + len };
    uint32_t field;
    unsigned wt;
    /* the message was checked: every field reads */
    while (*pos < len && pb_tag(&c, &field, &wt) == 1) {
        pb_cursor e;
        if (field == 1) {
            pb_bytes(&c, &e);
            chunk_fields(e, ch);
            *pos = (size_t)(c.p - data);
            return 1;
        }
        pb_skip(&c, wt);
    }
    *pos = len;
    return 0;
}

int tfrec_bt_chunk_label(const bt_chunk *ch, size_t *pos, const char **s, size_t *n)
{
    pb_cursor c = { ch->raw + *pos, ch->raw_end };
    uint32_t field;
    unsigned wt;
    /* the chunk was checked: every field reads */
    while (pb_tag(&c, &field, &wt) == 1) {
        if (field == 5) {
            pb_cursor v = { c.p, c.p };
            pb_bytes(&c, &v);
            *s = (const char *)v.p;
            *n = (size_t)(v.end - v.p);
            *pos = (size_t)(c.p - ch->raw);
            return 1;
        }
        pb_skip(&c, wt);
    }
    *pos = (size_t)(ch->raw_end - ch->raw);
    return 0;
}
