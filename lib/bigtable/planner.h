/* Internal: split a row set into contiguous pieces of about equal size.
 *
 * SampleRowKeys answers with sorted keys that cut the table into pieces of
 * about equal size, each with offset_bytes, the bytes stored before it. The
 * keys need not exist, data lies before the first and after the last, and an
 * empty key stands for the end of the table. The planner picks split points
 * among the keys that fall strictly inside the row set so that the bytes
 * between them come out about equal, and cuts the set there: the pieces are
 * disjoint, in key order, and together exactly the set. A key list is split
 * by count. Always exactly `pieces` results; some are empty when there are
 * fewer usable boundaries than cuts wanted (an empty piece reads nothing). */
#ifndef TFREC_BT_PLANNER_H
#define TFREC_BT_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/rowset.h"

typedef struct bt_sample {
    bt_key key;
    int64_t offset_bytes;
} bt_sample;

typedef struct bt_samples {
    bt_sample *v;
    size_t n;
} bt_samples;

void tfrec_bt_samples_free(bt_samples *s);

/* Split points given by a caller, as samples weighted by position (free
 * *out with tfrec_bt_samples_free, on failure too). */
int tfrec_bt_samples_from_keys(const void *const *keys, const size_t *lens, size_t n,
                               bt_samples *out);

/* The split points of the plan above: at most pieces - 1 keys, strictly
 * increasing, strictly inside the (range) set, copied into cuts[] (room for
 * pieces - 1; *ncuts set). None for a key list or an empty set. */
int tfrec_bt_plan_cuts(const bt_rowset *set, const bt_samples *samples, size_t pieces, bt_key *cuts,
                       size_t *ncuts);

/* out: an array of `pieces` row sets (free each, then the array). */
int tfrec_bt_plan_pieces(const bt_rowset *set, const bt_samples *samples, size_t pieces,
                         bt_rowset **out);

#endif
