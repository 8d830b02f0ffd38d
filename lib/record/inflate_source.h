/* Internal: a source of uncompressed bytes over a ZLIB or GZIP stream.
 *
 * Reads compressed input from a tfrec_io into its own buffer and inflates
 * straight into the caller's buffer. A GZIP file may hold several members
 * one after another (as `cat a.gz b.gz` makes); they read as one stream.
 * Anything else after the end of the stream is TFREC_E_TRAILING_GARBAGE,
 * input ending inside the stream TFREC_E_TRUNCATED, and corrupt deflate
 * data or a wrong checksum TFREC_E_COMPRESSION. */
#ifndef TFREC_RECORD_INFLATE_SOURCE_H
#define TFREC_RECORD_INFLATE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/io.h"
#include "util/errors.h"

typedef struct inflate_source inflate_source;

/* io is borrowed. The first prefix_len bytes of the stream were already read
 * from io (by format detection) and are handed over here. name is used in
 * messages and must outlive the source. */
int tfrec_inflate_source_new(inflate_source **out, const tfrec_io *io, int wrapper,
                             const char *name, const void *prefix, size_t prefix_len,
                             size_t buffer_size, tfrec_err *err);

/* The same over the whole compressed file already in memory (a mapping
 * that outlives the source): no copying into an input buffer. */
int tfrec_inflate_source_new_mapped(inflate_source **out, const tfrec_io *io, int wrapper,
                                    const char *name, const uint8_t *data, uint64_t len,
                                    tfrec_err *err);

/* Up to n uncompressed bytes into buf: the count, 0 at the clean end of the
 * stream, or a negative code with the message in err. */
ptrdiff_t tfrec_inflate_source_read(inflate_source *s, void *buf, size_t n, tfrec_err *err);

/* Start again from the beginning; the io must be seekable. */
int tfrec_inflate_source_rewind(inflate_source *s, tfrec_err *err);

/* Compressed bytes consumed so far (for messages). */
uint64_t tfrec_inflate_source_compressed_offset(const inflate_source *s);

void tfrec_inflate_source_free(inflate_source *s);

#endif
