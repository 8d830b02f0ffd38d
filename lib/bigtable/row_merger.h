/* Internal: turns ReadRows CellChunks back into rows.
 *
 * The server streams a row as chunks; a chunk that starts a cell names its
 * family and qualifier only when they change (presence, not emptiness, is
 * what counts), a large value arrives in several chunks announced by
 * value_size, reset_row discards the row in progress and commit_row
 * completes it. Rows must come in increasing key order. */
#ifndef TFREC_BT_ROW_MERGER_H
#define TFREC_BT_ROW_MERGER_H

#include <stddef.h>
#include <stdint.h>

#include "google/bigtable/v2/bigtable.pb-c.h"
#include "tfrec/bigtable.h"
#include "util/errors.h"

typedef struct bt_cell_rec {
    size_t family_off; /* NUL-terminated in the arena */
    size_t qualifier_off, qualifier_len;
    size_t value_off, value_len;
    int64_t timestamp;
} bt_cell_rec;

typedef struct bt_merger {
    uint8_t *key, *last_key;
    size_t key_len, key_cap, last_len, last_cap;
    int have_last; /* a row was committed: later keys must be greater */
    int in_row, in_cell;
    int have_family, have_qualifier;
    size_t family_off, qualifier_off, qualifier_len;
    bt_cell_rec *cells;
    size_t ncells, cells_cap;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    tfrec_bt_cell *out_cells;
    const tfrec_bt_cell **out_ptrs; /* row.cells: one pointer per out_cells entry */
    size_t out_cap, ptrs_cap;
    tfrec_bt_row row; /* the last committed row */
} bt_merger;

void tfrec_bt_merger_init(bt_merger *m);
void tfrec_bt_merger_free(bt_merger *m);
/* 1: a row was committed (bt_merger.row valid until the next feed),
 * 0: more chunks needed, negative: protocol violation (err says which). */
int tfrec_bt_merger_feed(bt_merger *m, const Google__Bigtable__V2__ReadRowsResponse__CellChunk *ch,
                         tfrec_err *err);
/* The stream ended: an unfinished row is an error. */
int tfrec_bt_merger_finish(bt_merger *m, tfrec_err *err);
/* Drop a partial row (before resuming a broken stream). */
void tfrec_bt_merger_drop_partial(bt_merger *m);

#endif
