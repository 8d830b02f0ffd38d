/* Internal: reading protobuf wire format in place, for the responses that
 * are decoded without protobuf-c (mutate_response.c, read_response.c).
 * The limits are protobuf-c's, so that what it refuses is refused here. */
#ifndef TFREC_BT_PB_WIRE_H
#define TFREC_BT_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_BYTES = 2, WT_FIXED32 = 5 };

typedef struct pb_cursor {
    const uint8_t *p, *end;
} pb_cursor;

/* A varint of at most max_bytes bytes: 10 for values; 5 for tags and
 * lengths, as protobuf-c reads them (a longer one, padded with 0x80 bytes,
 * is refused there and here). */
static inline int pb_varint_max(pb_cursor *c, uint64_t *v, unsigned max_bytes)
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

static inline int pb_varint(pb_cursor *c, uint64_t *v)
{
    return pb_varint_max(c, v, 10);
}

/* The next field's number and wire type; 0 at the end, -1 if malformed. */
static inline int pb_tag(pb_cursor *c, uint32_t *field, unsigned *wt)
{
    if (c->p == c->end)
        return 0;
    uint64_t tag;
    if (pb_varint_max(c, &tag, 5) || tag >> 3 == 0 || tag > UINT32_MAX)
        return -1;
    *field = (uint32_t)(tag >> 3);
    *wt = (unsigned)(tag & 7);
    return 1;
}

/* A length-delimited field's bytes as a cursor of their own. */
static inline int pb_bytes(pb_cursor *c, pb_cursor *inner)
{
    uint64_t n;
    if (pb_varint_max(c, &n, 5) || n > (uint64_t)(c->end - c->p))
        return -1;
    inner->p = c->p;
    inner->end = c->p + n;
    c->p += n;
    return 0;
}

/* Skip an unknown field's value. */
static inline int pb_skip(pb_cursor *c, unsigned wt)
{
    uint64_t v;
    pb_cursor inner;
    switch (wt) {
    case WT_VARINT: return pb_varint(c, &v);
    case WT_BYTES: return pb_bytes(c, &inner);
    case WT_FIXED64:
    case WT_FIXED32: {
        size_t n = wt == WT_FIXED64 ? 8 : 4;
        if ((size_t)(c->end - c->p) < n)
            return -1;
        c->p += n;
        return 0;
    }
    default: /* groups are in none of these messages, and protobuf-c refuses them */ return -1;
    }
}

/* A bool as protobuf-c reads it: in any wire type but a group (it does
 * not check which), true if any payload bit of the field's bytes is set,
 * a length prefix's included, even one past the 64th of a varint. */
static inline int pb_bool(pb_cursor *c, unsigned wt, int *v)
{
    const uint8_t *start = c->p;
    if (pb_skip(c, wt))
        return -1;
    *v = 0;
    for (const uint8_t *q = start; q < c->p; q++)
        if (*q & 0x7f)
            *v = 1;
    return 0;
}

#endif
