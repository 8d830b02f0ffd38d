/* libtfrec: many records per call.
 *
 * Language bindings pay a fixed price for every call into the library
 * (ctypes costs about a microsecond), which dominates small records. These
 * functions move a whole batch of records per call: records travel as one
 * contiguous buffer plus an array of end offsets, so record i is
 * data[ends[i-1] .. ends[i]) with ends[-1] taken as 0.
 *
 * A batch handle is not thread-safe; use one per reader.
 */
#ifndef TFREC_BATCH_H
#define TFREC_BATCH_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "example.h"
#include "record.h"

TFREC_BEGIN_DECLS

/* Write n records held back to back in data, record i ending at ends[i]
 * (so ends is non-decreasing and ends[n-1] is the total size), the same
 * bytes n calls of tfrec_writer_write() would give. n = 0 writes nothing.
 * Stops at the first failure and returns its code, the message in
 * tfrec_writer_errmsg(w): the records before it were written (the growth of
 * tfrec_writer_records(w) tells how many). A refused argument (decreasing
 * ends, NULL data) leaves the writer usable; a failure of the sink leaves
 * it failed, as tfrec_writer_write() does. */
int tfrec_writer_write_batch(tfrec_writer *w, const void *data, const uint64_t *ends, size_t n);

/* Same, with records scattered in memory: record i is ptrs[i], lens[i]
 * (ptrs[i] may be NULL when lens[i] is 0). */
int tfrec_writer_write_vec(tfrec_writer *w, const void *const *ptrs, const size_t *lens, size_t n);

typedef struct tfrec_record_batch tfrec_record_batch;

int tfrec_record_batch_new(tfrec_record_batch **out);
void tfrec_record_batch_free(tfrec_record_batch *b);

/* Replace the batch's contents with the next records of r: at least one
 * record, then more until the batch holds max_records records or at least
 * max_bytes payload bytes (0 means no limit for that one).
 * Returns TFREC_OK with tfrec_record_batch_count() >= 1, TFREC_END (count 0)
 * at a clean end of input, or a negative code with count 0 if the very first
 * record failed. When a later record fails, the records read before it are
 * returned with TFREC_OK and the failure comes from the next call (the reader
 * stays in error; the message is tfrec_reader_errmsg(r)). */
int tfrec_reader_read_batch(tfrec_reader *r, tfrec_record_batch *b, size_t max_records,
                            size_t max_bytes);

/* Contents of the last batch, valid until the next read into it or its free. */
size_t tfrec_record_batch_count(const tfrec_record_batch *b);
const uint8_t *tfrec_record_batch_data(const tfrec_record_batch *b);
const uint64_t *tfrec_record_batch_ends(const tfrec_record_batch *b);
/* Offset of each record's header in the (uncompressed) stream, like
 * tfrec_reader_offset(). */
const uint64_t *tfrec_record_batch_offsets(const tfrec_record_batch *b);

/* (since 1.1) Empty the batch (its memory is kept), and add one item of
 * len bytes with the given offset at its end: for libraries that hand out
 * batches of their own items (tfrec_bt_reader_next_values). Append returns
 * TFREC_OK, or TFREC_E_NOMEM leaving the batch as it was. */
void tfrec_record_batch_clear(tfrec_record_batch *b);
int tfrec_record_batch_append(tfrec_record_batch *b, const void *data, size_t len, uint64_t offset);

/* A parsed tf.Example as items of a batch, for bindings that want it in one
 * call: per feature in key order, the key, a 9-byte header (kind as a
 * tfrec_feature_type, then the value count as a little-endian uint64), and
 * then the values: one item per BytesList value, or one item holding the
 * whole Int64List (int64) or FloatList (float) in native byte order; a
 * feature with no kind (TFREC_FEATURE_NONE) has no value items. Item
 * offsets are 0. */
int tfrec_example_to_batch(const tfrec_example *ex, tfrec_record_batch *b);

/* (since 1.1) n serialized tf.Examples parsed into one batch, for bindings
 * that parse a batch of records in one call: per record, an item holding
 * its feature count (little-endian uint64), then its features as
 * tfrec_example_to_batch lays them out. A malformed record fails the call
 * (nothing in b) with a message naming its position. */
int tfrec_examples_to_batch(const void *const *records, const size_t *lens, size_t n,
                            tfrec_record_batch *b);

/* Read and check up to n records (0: all) without handing them out, for
 * counting and verifying. *skipped (may be NULL) gets the number read.
 * Returns TFREC_OK after n records, TFREC_END at a clean end of input, or
 * the reader's failure. */
int tfrec_reader_skip(tfrec_reader *r, uint64_t n, uint64_t *skipped);

TFREC_END_DECLS
#endif
