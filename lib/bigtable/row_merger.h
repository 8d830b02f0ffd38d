/* Internal: turns ReadRows CellChunks back into rows.
 *
 * The server streams a row as chunks. A chunk that starts a row names its
 * key, family and qualifier; a later chunk of the row starts a new cell,
 * naming family and qualifier only when they change (presence of the
 * wrapper, not emptiness, is what counts; a family comes with a qualifier).
 * A chunk with value_size > 0 announces that the value goes on in the next
 * chunks; those continuation chunks carry value bytes only. reset_row = true
 * discards the row in progress, commit_row = true completes it: the VALUE of
 * the row_status oneof decides, an explicit false is no status at all (as
 * in Google's clients). Committed rows come in strictly increasing key
 * order. Every other sequence is a protocol error.
 *
 * Memory is bounded by max_row_bytes: the row being merged, counted as
 * what it takes here (key, names, labels, values and a fixed cost per cell
 * and label), may not grow past it. value_size only announces a size: an
 * announcement past the limit is an error at once, and memory follows the
 * bytes actually received.
 *
 * A value that comes whole in one chunk is not copied: the row points
 * into the chunk's bytes, which the caller keeps valid until the row is
 * committed and handed out (until the next feed after the commit), or
 * calls tfrec_bt_merger_keep before they go. Split values are joined here. */
#ifndef TFREC_BT_ROW_MERGER_H
#define TFREC_BT_ROW_MERGER_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/read_response.h"
#include "tfrec/bigtable.h"
#include "util/errors.h"

#define TFREC_BT_DEFAULT_MAX_ROW_BYTES ((size_t)256 << 20) /* Bigtable's own row limit */

typedef struct bt_cell_rec {
    size_t family_off; /* NUL-terminated in the arena */
    size_t qualifier_off, qualifier_len;
    size_t value_off, value_len;
    const uint8_t *value_ext;    /* a whole value in the caller's bytes, else NULL */
    size_t label_first, nlabels; /* in bt_merger.label_offs */
    int64_t timestamp;
} bt_cell_rec;

typedef struct bt_merger {
    size_t max_row_bytes;
    uint8_t *key, *last_key;
    size_t key_len, key_cap, last_len, last_cap;
    int have_last; /* a row was committed: later keys must be greater */
    int in_row, in_cell;
    size_t row_bytes; /* what the row in progress takes, against max_row_bytes */
    int have_family, have_qualifier;
    size_t family_off, qualifier_off, qualifier_len;
    bt_cell_rec *cells;
    size_t ncells, cells_cap;
    size_t *label_offs; /* NUL-terminated labels in the arena */
    size_t nlabels, labels_cap;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    tfrec_bt_cell *out_cells;
    const tfrec_bt_cell **out_ptrs; /* row.cells: one pointer per out_cells entry */
    const char **out_labels;        /* the cells' labels arrays, one after another */
    size_t out_cap, ptrs_cap, out_labels_cap;
    tfrec_bt_row row; /* the last committed row */
} bt_merger;

/* max_row_bytes 0: TFREC_BT_DEFAULT_MAX_ROW_BYTES. */
void tfrec_bt_merger_init(bt_merger *m, size_t max_row_bytes);
void tfrec_bt_merger_free(bt_merger *m);
/* 1: a row was committed (bt_merger.row valid until the next feed),
 * 0: more chunks needed, negative: protocol violation (TFREC_E_PARSE), a
 * row past max_row_bytes (TFREC_E_RECORD_TOO_LARGE) or no memory; err
 * says which and names the row. */
int tfrec_bt_merger_feed(bt_merger *m, const bt_chunk *ch, tfrec_err *err);
/* Unpack one serialized ReadRowsResponse and feed its chunks in order.
 * on_row (NULL: none) sees each row committed, valid during the call; a
 * non-zero return stops the feed and is returned (made negative). Returns
 * the number of rows committed, or a negative code (err says why). For the
 * unit tests and the fuzz target: the reader feeds chunk by chunk. */
int tfrec_bt_merger_feed_response(bt_merger *m, const uint8_t *bytes, size_t len,
                                  int (*on_row)(void *ctx, const tfrec_bt_row *row), void *ctx,
                                  tfrec_err *err);
/* Copy the values of the row in progress that still point into the
 * caller's bytes, so the caller may let them go (at the end of a message
 * whose last row goes on in the next). 0 or TFREC_E_NOMEM. */
int tfrec_bt_merger_keep(bt_merger *m, tfrec_err *err);
/* The stream ended: an unfinished row is an error. */
int tfrec_bt_merger_finish(bt_merger *m, tfrec_err *err);
/* Drop a partial row (before resuming a broken stream). */
void tfrec_bt_merger_drop_partial(bt_merger *m);

#endif
