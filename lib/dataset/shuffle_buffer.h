/* Internal: the shuffle buffer a Dataset's consumer runs (plan.h,
 * ds_buffer) when the reader threads read a block-shuffled plan in block
 * order (files of another file system, where a block is one request).
 * Records are copied into slots, so blocks are released as soon as they
 * are read through, and the buffer's memory is its records'. */
#ifndef TFREC_DATASET_SHUFFLE_BUFFER_H
#define TFREC_DATASET_SHUFFLE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "dataset/plan.h"
#include "util/errors.h"

/* A record of the buffer: a copy, its own allocation reused. */
typedef struct ds_slot {
    uint8_t *p;
    size_t cap, len;
    uint64_t g; /* global record number */
} ds_slot;

typedef struct ds_shuffle_buffer {
    ds_buffer b;     /* size 0: no buffer this epoch */
    uint64_t n;      /* records of the epoch */
    ds_slot *slots;  /* min(b.size, n) in use */
    ds_slot out;     /* the record handed out last */
    size_t *drain;   /* the drain order, per slot */
    size_t nslots;   /* allocated (kept for later epochs) */
    uint64_t loaded; /* slots filled at the start */
    uint64_t handed; /* records handed out */
} ds_shuffle_buffer;

/* The next record of the read order (TFREC_OK), TFREC_END, or an error. */
typedef int (*ds_input_fn)(void *ctx, const uint8_t **data, size_t *len, uint64_t *global);

/* Room for an epoch of n records through b. TFREC_OK or TFREC_E_NOMEM
 * (then nothing changed). */
int tfrec_ds_shuffle_reserve(ds_shuffle_buffer *s, const ds_buffer *b, uint64_t n);

/* Start an epoch (after a successful reserve for the same b and n). */
void tfrec_ds_shuffle_start(ds_shuffle_buffer *s, const ds_buffer *b, uint64_t n);

/* The next record delivered, valid until the next call: TFREC_OK,
 * TFREC_END, or an error (err set unless it is the input's own). */
int tfrec_ds_shuffle_next(ds_shuffle_buffer *s, ds_input_fn input, void *ctx, ds_slot **out,
                          tfrec_err *err);

void tfrec_ds_shuffle_free(ds_shuffle_buffer *s);

#endif
