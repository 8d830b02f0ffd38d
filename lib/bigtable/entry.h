/* Internal: one row waiting in the bulk writer, already encoded as the
 * MutateRowsRequest.entries field it will travel as. Encoding once at put()
 * means the value is copied exactly once, and a retry re-sends the same bytes
 * without re-encoding. */
#ifndef TFREC_BT_ENTRY_H
#define TFREC_BT_ENTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tfrec/bigtable.h"

typedef struct bt_entry {
    struct bt_entry *next; /* queue / backoff list link */
    uint64_t seq;          /* put order, from 0 */
    uint64_t index;        /* the caller's number for the row */
    int64_t first_fail_ms; /* monotonic time of the first failure, 0 if none */
    int64_t due_ms;        /* when a backed-off entry may be re-sent */
    unsigned attempts;     /* sends so far */
    unsigned ncells;       /* mutations in the entry */
    size_t payload;        /* key + value bytes, for throughput figures */
    const uint8_t *key;    /* inside enc */
    size_t key_len;
    atomic_int refs; /* the writer's + one per gRPC slice still alive */
    size_t enc_len;
    uint8_t enc[]; /* field 2 tag, length, Entry message */
} bt_entry;

/* Encode key + cells (each a SetCell in family with timestamp ts; ts == 0 is
 * left out). NULL on allocation failure. */
bt_entry *tfrec_bt_entry_new(const void *key, size_t key_len, const char *family,
                             const tfrec_bt_cell_in *cells, size_t ncells, int64_t ts);
void tfrec_bt_entry_unref(bt_entry *e);

/* Append a varint / a length-delimited field; return the new end. */
uint8_t *tfrec_bt_put_varint(uint8_t *p, uint64_t v);
uint8_t *tfrec_bt_put_bytes_field(uint8_t *p, unsigned field, const void *data, size_t len);
size_t tfrec_bt_varint_len(uint64_t v);

#endif
