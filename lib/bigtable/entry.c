/* Hand-encoding of MutateRowsRequest.Entry (google/bigtable/v2/bigtable.proto).
 * The generated protobuf-c code is used for everything else and by the unit
 * tests to decode what is built here. */
#include "bigtable/entry.h"

#include <stdlib.h>
#include <string.h>

size_t tfrec_bt_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

uint8_t *tfrec_bt_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t field_len(size_t len) /* tag (fields < 16) + length + data */
{
    return 1 + tfrec_bt_varint_len(len) + len;
}

uint8_t *tfrec_bt_put_bytes_field(uint8_t *p, unsigned field, const void *data, size_t len)
{
    *p++ = (uint8_t)(field << 3 | 2);
    p = tfrec_bt_put_varint(p, len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}

static size_t set_cell_len(size_t family_len, const tfrec_bt_cell_in *c, int64_t ts)
{
    return field_len(family_len) + field_len(c->qualifier_len) +
           (ts ? 1 + tfrec_bt_varint_len((uint64_t)ts) : 0) + field_len(c->value_len);
}

bt_entry *tfrec_bt_entry_new(const void *key, size_t key_len, const char *family,
                             const tfrec_bt_cell_in *cells, size_t ncells, int64_t ts)
{
    size_t flen = strlen(family);
    size_t body = field_len(key_len), payload = key_len;
    for (size_t i = 0; i < ncells; i++) {
        size_t sc = set_cell_len(flen, &cells[i], ts);
        body += field_len(field_len(sc)); /* Entry.mutations{Mutation.set_cell{...}} */
        payload += cells[i].value_len;
    }
    size_t total = field_len(body);
    bt_entry *e = malloc(sizeof *e + total);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    atomic_init(&e->refs, 1);
    e->enc_len = total;
    e->ncells = (unsigned)ncells;
    e->payload = payload;

    uint8_t *p = e->enc;
    *p++ = 2 << 3 | 2; /* MutateRowsRequest.entries = 2 */
    p = tfrec_bt_put_varint(p, body);
    e->key = p + 1 + tfrec_bt_varint_len(key_len);
    e->key_len = key_len;
    p = tfrec_bt_put_bytes_field(p, 1, key, key_len); /* Entry.row_key = 1 */
    for (size_t i = 0; i < ncells; i++) {
        const tfrec_bt_cell_in *c = &cells[i];
        size_t sc = set_cell_len(flen, c, ts);
        *p++ = 2 << 3 | 2; /* Entry.mutations = 2 */
        p = tfrec_bt_put_varint(p, field_len(sc));
        *p++ = 1 << 3 | 2; /* Mutation.set_cell = 1 */
        p = tfrec_bt_put_varint(p, sc);
        p = tfrec_bt_put_bytes_field(p, 1, family, flen);                   /* family_name */
        p = tfrec_bt_put_bytes_field(p, 2, c->qualifier, c->qualifier_len); /* column_qualifier */
        if (ts) {
            *p++ = 3 << 3 | 0; /* timestamp_micros */
            p = tfrec_bt_put_varint(p, (uint64_t)ts);
        }
        p = tfrec_bt_put_bytes_field(p, 4, c->value, c->value_len); /* value */
    }
    return e;
}

void tfrec_bt_entry_unref(bt_entry *e)
{
    if (e && atomic_fetch_sub(&e->refs, 1) == 1)
        free(e);
}
