/* Internal: the order of one epoch's records for one shard. */
#ifndef TFREC_DATASET_PLAN_H
#define TFREC_DATASET_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* Records are numbered globally, file after file: record r of file f is
 * cum[f] + r, with cum[0] = 0 and cum[nfiles] the total. */
typedef struct ds_plan_in {
    const uint64_t *cum;
    size_t nfiles;
    int shuffle;
    uint64_t seed, epoch;
    uint32_t shard_index, num_shards;
    uint32_t block; /* interleave block (records) */
    /* With shuffle: 0 or 1, a global shuffle; more, a block shuffle of
     * blocks of shuffle_block consecutive records of a file, then a
     * shuffle buffer of shuffle_buffer records over that sequence. */
    uint32_t shuffle_block, shuffle_buffer;
} ds_plan_in;

/* [lo, hi) of a sequence of total items for shard i of n: sizes differ by
 * at most one, shards in order tile the sequence. */
void tfrec_ds_shard_range(uint64_t total, uint32_t i, uint32_t n, uint64_t *lo, uint64_t *hi);

/* A shuffle buffer the consumer passes the read order through: size
 * records (0: none, the read order is the delivery order), driven by
 * tfrec_ds_below() from state. Each record read takes the place of a
 * random one (below(fill)), which goes out; once the input ends, the
 * buffer goes out in a random order (drawn as a Fisher-Yates shuffle of
 * the slots, last slot first). fill = min(size, records). */
typedef struct ds_buffer {
    uint64_t size, state;
} ds_buffer;

/* The shard's records for this epoch, in the order they are read, as
 * global numbers in a malloc'ed array of *n elements, and the shuffle
 * buffer they go through (block shuffle) or none. TFREC_OK or
 * TFREC_E_NOMEM. */
int tfrec_ds_plan(const ds_plan_in *in, uint64_t **items, uint64_t *n, ds_buffer *buf);

/* Pass items[0..n) through buffer b in advance: *items becomes the
 * delivery order (a new array), b->size 0. TFREC_OK or TFREC_E_NOMEM. */
int tfrec_ds_buffer_apply(uint64_t **items, uint64_t n, ds_buffer *b);

/* Uniform in [0, n) from SplitMix64 state *s, without modulo bias. */
uint64_t tfrec_ds_below(uint64_t *s, uint64_t n);

/* The file holding global record g (binary search over cum). */
size_t tfrec_ds_file_of(const uint64_t *cum, size_t nfiles, uint64_t g);

#endif
