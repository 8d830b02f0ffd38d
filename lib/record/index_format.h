/* Internal: the one definition of the `.idx` record index file, used by the
 * writer that emits it while writing (write_index / index_sink), by
 * tfrec_index_file, and by the dataset that loads and checks it.
 *
 * The format is the DALI / `tfrecord` package's text index, so indexes
 * made by either work with the other: FILE.idx beside FILE, no header, one
 * line per record, "OFFSET LENGTH\n" in decimal, LENGTH being the framed
 * length (data + 16). Readers also take blank lines, tabs, extra blanks
 * and CR LF, as those tools' files may have them.
 *
 * index_format.c  the name, parsing, the freshness rule
 * index_out.c     the streamed writer (lines out as records are written) */
#ifndef TFREC_RECORD_INDEX_FORMAT_H
#define TFREC_RECORD_INDEX_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/io.h"
#include "util/errors.h"
#include "util/private_api.h"

/* The longest line a reader takes: two 20-digit numbers, separators, a CR. */
enum { TFREC_IDX_LINE_MAX = 64 };

/* The index of data file name: malloc'd "NAME.idx", NULL when out of
 * memory. */
char *tfrec_idx_name(const char *name);

/* "OFFSET LENGTH\n" at p (at most 42 bytes); returns its length. Inline
 * and by hand: snprintf would cost more than reading the record. */
static inline size_t tfrec_idx_format_line(char *p, uint64_t offset, uint64_t length)
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

/* One entry as parsed: its 1-based line number is for messages. Returning
 * a failure (with err set) stops the parse. */
typedef int (*tfrec_idx_entry_fn)(void *ctx, uint64_t offset, uint64_t length, uint64_t line,
                                  tfrec_err *err);

/* Parse the index text of src (not closed here) to its end, calling fn
 * for each entry in order. Syntax only: whether the entries tile a file is
 * the caller's check. name is for messages. */
int tfrec_idx_parse(const tfrec_io *src, const char *name, tfrec_idx_entry_fn fn, void *ctx,
                    tfrec_err *err);

/* The freshness rule of dataset.h, in two halves because the first is
 * checked before the index is read and the second after. Each returns
 * TFREC_OK or TFREC_E_STATE with a message naming index and data.
 *
 * By time: an index older than its data is stale (the data was rewritten
 * after indexing, maybe to the same size). 0 for either time means the
 * file system keeps none, and the rule does not apply. */
int tfrec_idx_fresh_by_time(const char *iname, const char *path, int64_t index_mtime_ns,
                            int64_t data_mtime_ns);
/* By extent: the records must end exactly at the data's size. */
int tfrec_idx_fresh_by_end(const char *iname, const char *path, uint64_t records_end,
                           uint64_t data_size);

/* The streamed writer: lines collect in a small buffer and go to the sink
 * in pieces, so memory stays constant whatever the file holds. */
typedef struct index_out index_out;

/* sink is owned from now on (also on failure). */
int tfrec_index_out_open(index_out **out, const tfrec_io *sink, const char *name, tfrec_err *err);
/* One more record of framed length bytes, right after the previous one. */
int tfrec_index_out_add(index_out *x, uint64_t framed, tfrec_err *err);
/* Finish: commit != 0 writes the rest and commits the sink, 0 discards it.
 * Frees x. */
int tfrec_index_out_close(index_out *x, int commit, tfrec_err *err);

#endif
