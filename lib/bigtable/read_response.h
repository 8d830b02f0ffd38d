/* Internal: the CellChunks of a ReadRowsResponse, decoded in place.
 *
 * protobuf-c would copy every chunk's row key, names and value out of the
 * received bytes, only for the merger to copy them again; decoded here,
 * a chunk's fields point into the message, so a value can stay in the
 * received buffer until its row is handed out (bench/RESULTS.md, "Bigtable
 * reads: where the CPU goes"). */
#ifndef TFREC_BT_READ_RESPONSE_H
#define TFREC_BT_READ_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

/* One CellChunk; pointers into the message, valid as long as it is.
 * Strings are not NUL-terminated (protobuf-c's copies end at the first
 * NUL: compare up to it). */
typedef struct bt_chunk {
    const uint8_t *row_key;
    size_t row_key_len;
    int has_family; /* the StringValue wrapper is present (it may be empty) */
    const char *family;
    size_t family_len;
    int has_qualifier; /* the BytesValue wrapper is present */
    const uint8_t *qualifier;
    size_t qualifier_len;
    int64_t timestamp_micros;
    size_t n_labels; /* walk them with tfrec_bt_chunk_label */
    const uint8_t *value;
    size_t value_len;
    int32_t value_size;
    /* The row_status oneof: 1 when that member is the one set and true. */
    int reset_row, commit_row;
    const uint8_t *raw, *raw_end; /* the chunk's own bytes, for its labels */
} bt_chunk;

/* Called once per chunk, in order; a non-zero return stops the walk and
 * is returned by tfrec_bt_read_response_each. */
typedef int (*bt_chunk_fn)(void *ctx, const bt_chunk *ch);

/* Check the whole message first, then call fn once per chunk, so a
 * malformed response yields no chunk at all (as protobuf-c's unpack would
 * fail). The same fields and wire types as the generated code accept:
 * unknown fields (last_scanned_row_key included) are skipped, a known
 * field with another wire type, a truncated field or a group is
 * malformed (but a bool may come in any wire type, as protobuf-c reads
 * it); a field given twice counts as protobuf-c merges it. Returns
 * 0, -1 if malformed, or fn's non-zero return. */
int tfrec_bt_read_response_each(const uint8_t *data, size_t len, bt_chunk_fn fn, void *ctx);

/* The chunk after byte *pos (0 at first) of a message the call above
 * accepted: 1 with *ch filled and *pos past it, 0 at the end. Lets a
 * reader stop after any chunk and go on later. */
int tfrec_bt_read_response_next(const uint8_t *data, size_t len, size_t *pos, bt_chunk *ch);

/* The chunk's next label after *pos (0 at first): 1 with *s, *n set, 0
 * when there are no more. */
int tfrec_bt_chunk_label(const bt_chunk *ch, size_t *pos, const char **s, size_t *n);

#endif
