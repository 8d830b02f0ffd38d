/* Internal: the rows a scan asks for, in one normal form.
 *
 * Bigtable row keys order as byte strings (memcmp, shorter first on a tie),
 * so every bound the API takes maps exactly onto a half-open range
 * [start, end): an open start k is the closed start k + "\0" (the smallest
 * key after k), a closed end k is the open end k + "\0". An empty end means
 * the end of the table. A row set is either such ranges, sorted, disjoint
 * and non-empty, or a sorted list of distinct keys. A set with nothing in it
 * must never be sent: an empty RowSet reads the whole table. */
#ifndef TFREC_BT_ROWSET_H
#define TFREC_BT_ROWSET_H

#include <stddef.h>
#include <stdint.h>

#include "google/bigtable/v2/bigtable.pb-c.h"
#include "tfrec/bigtable.h"
#include "util/errors.h"

typedef struct bt_key {
    uint8_t *p; /* owned; NULL when n is 0 */
    size_t n;
} bt_key;

typedef struct bt_krange {
    bt_key start; /* closed; empty: the first row */
    bt_key end;   /* open; empty: the end of the table */
} bt_krange;

typedef struct bt_rowset {
    int is_keys;
    bt_krange *ranges;
    bt_key *keys;
    size_t n; /* ranges or keys; 0: nothing to read */
} bt_rowset;

/* memcmp order, shorter first on a common prefix. */
int tfrec_bt_key_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* Whether a and b are the same set (both in normal form: the same ranges,
 * or the same keys). */
int tfrec_bt_rowset_equal(const bt_rowset *a, const bt_rowset *b);

/* The row set read options describe (prefix, start/end, ranges, keys).
 * TFREC_E_INVALID (err says why) for a contradiction, e.g. keys and ranges. */
int tfrec_bt_rowset_from_options(bt_rowset *out, const tfrec_bt_read_options *o, tfrec_err *err);

/* The part of s in [lo, hi) (lo empty: from the start, hi empty: to the end). */
int tfrec_bt_rowset_slice(bt_rowset *out, const bt_rowset *s, const bt_key *lo, const bt_key *hi);

/* Keep only the rows after key k (resuming after the last row received). */
int tfrec_bt_rowset_after(bt_rowset *s, const uint8_t *k, size_t kn);

/* Lowest start and highest end of a range set (end empty: unbounded). */
const bt_key *tfrec_bt_rowset_lo(const bt_rowset *s);
const bt_key *tfrec_bt_rowset_hi(const bt_rowset *s);

/* Point a protobuf RowSet at s (borrowing its keys). *rr and *rp receive
 * arrays to free with free() after packing. */
int tfrec_bt_rowset_to_proto(const bt_rowset *s, Google__Bigtable__V2__RowSet *set,
                             Google__Bigtable__V2__RowRange **rr,
                             Google__Bigtable__V2__RowRange ***rp, ProtobufCBinaryData **kp);

void tfrec_bt_rowset_free(bt_rowset *s);

#endif
