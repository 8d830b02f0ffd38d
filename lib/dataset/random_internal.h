/* Internal: the random reader's entry points for datasets. */
#ifndef TFREC_DATASET_RANDOM_INTERNAL_H
#define TFREC_DATASET_RANDOM_INTERNAL_H

#include <stdint.h>

#include "tfrec/dataset.h"

/* Like tfrec_random_reader_open_io, but ix is borrowed (must outlive the
 * reader) unless it is also passed as owned. src is owned from now on.
 * use_mmap as in tfrec_reader_options (0: TFREC_MMAP decides). */
int tfrec_random_reader_open_shared(tfrec_random_reader **out, const tfrec_io *src,
                                    const tfrec_index *ix, tfrec_index *owned, const char *name,
                                    int use_mmap);

/* Records k..k+count-1, one contiguous range of the file, read at once
 * and checked. With dst (room for the range's framed bytes) they are
 * copied there; without, *where points into the reader's buffer or
 * mapping. *where gets the first record's header. */
/* The reader of a name through fs (NULL: the default): local files as
 * above, names of a file system with open_range read by ranges. owned (if
 * not NULL) becomes the reader's, also on failure. */
int tfrec_random_reader_open_fs_shared(tfrec_random_reader **out, const struct tfrec_fs *fs,
                                       const char *name, const tfrec_index *ix, tfrec_index *owned,
                                       int use_mmap);

/* Read a file of another file system (gs://) as a stream (on = 1): a
 * read continuing where the previous one ended goes on over the same
 * request, any other opens one from its offset to the end of the file, so
 * reading a file's records in order makes one request. Off (the default):
 * one request of exactly each read's bytes. Local files ignore it. */
void tfrec_random_reader_stream(tfrec_random_reader *r, int on);

/* A mapped reader: record k will be read soon. Maps its pages now (one
 * system call per PREFETCH_CHUNK of the file, not a page fault per few
 * pages) and starts fetching its first bytes into the cache. No effect
 * on readers that do not map. */
void tfrec_random_reader_prefetch(tfrec_random_reader *r, uint64_t k);

int tfrec_random_reader_span(tfrec_random_reader *r, uint64_t k, uint64_t count, uint8_t *dst,
                             const uint8_t **where);

#endif
