/* Internal: the index a writer emits as it writes (tfrec_writer_options
 * write_index / index_sink), in the DALI / `tfrecord` text format. */
#ifndef TFREC_RECORD_INDEX_OUT_H
#define TFREC_RECORD_INDEX_OUT_H

#include <stdint.h>

#include "tfrec/io.h"
#include "util/errors.h"

typedef struct index_out index_out;

/* "OFFSET LENGTH\n" at p (at most 42 bytes); returns its length. By hand:
 * snprintf would cost more than reading the record. */
static inline size_t tfrec_index_line(char *p, uint64_t offset, uint64_t length)
{
    char tmp[20];
    size_t n = 0, k;
    for (int f = 0; f < 2; f++) {
        uint64_t v = f ? length : offset;
        k = 0;
        do
            tmp[k++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (k)
            p[n++] = tmp[--k];
        p[n++] = f ? '\n' : ' ';
    }
    return n;
}

/* sink is owned from now on (also on failure). */
int tfrec_index_out_open(index_out **out, const tfrec_io *sink, const char *name, tfrec_err *err);
/* One more record of framed length bytes, right after the previous one. */
int tfrec_index_out_add(index_out *x, uint64_t framed, tfrec_err *err);
/* Finish: commit != 0 writes the rest and commits the sink, 0 discards it.
 * Frees x. */
int tfrec_index_out_close(index_out *x, int commit, tfrec_err *err);

#endif
