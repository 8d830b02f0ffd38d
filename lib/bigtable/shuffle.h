/* Internal: the pieces of a shuffled scan (tfrec_bt_read_options
 * shuffle_ranges) and the order they are read in.
 *
 * The cuts must come out the same in every run, so they never come from
 * SampleRowKeys (whose answer changes, and is random on the emulator):
 * they are split_keys when the caller gives them, else keys spread evenly
 * between the share's bounds by arithmetic on the bytes after their common
 * prefix. Any cuts keep every row exactly once (the pieces partition the
 * share); even ones only make the pieces about equal when the keys fill
 * their key space evenly. */
#ifndef TFREC_BT_SHUFFLE_H
#define TFREC_BT_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "bigtable/planner.h"
#include "bigtable/rowset.h"

/* pieces - 1 keys evenly spaced in [lo, hi) (hi empty: the end of the
 * table), as samples for tfrec_bt_plan_pieces (free *out with
 * tfrec_bt_samples_free, on failure too). The digits are taken in the
 * smallest alphabet holding the bounds' bytes after their common prefix:
 * decimal digits, printable ASCII, else all bytes. */
int tfrec_bt_shuffle_cut_keys(const bt_key *lo, const bt_key *hi, size_t pieces, bt_samples *out);

/* order[0..n): a permutation of 0..n-1 that depends only on seed and epoch. */
void tfrec_bt_shuffle_order(size_t *order, size_t n, uint64_t seed, uint64_t epoch);

#endif
