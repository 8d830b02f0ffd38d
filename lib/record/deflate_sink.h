/* Internal: a compressing layer in front of a tfrec_io sink. Input is
 * deflated into an output buffer that goes to the sink whenever it fills. */
#ifndef TFREC_RECORD_DEFLATE_SINK_H
#define TFREC_RECORD_DEFLATE_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "tfrec/io.h"
#include "util/errors.h"

typedef struct deflate_sink deflate_sink;

/* io is borrowed; wrapper is TFREC_COMPRESSION_ZLIB or _GZIP; level 1..9. */
int tfrec_deflate_sink_new(deflate_sink **out, const tfrec_io *io, int wrapper, int level,
                           const char *name, size_t buffer_size, tfrec_err *err);
int tfrec_deflate_sink_write(deflate_sink *s, const void *data, size_t n, tfrec_err *err);
/* Sync flush: everything written so far becomes decodable from the sink. */
int tfrec_deflate_sink_flush(deflate_sink *s, tfrec_err *err);
/* End the stream (trailer included) and hand it all to the sink. */
int tfrec_deflate_sink_finish(deflate_sink *s, tfrec_err *err);
/* Compressed bytes handed to the sink so far. */
uint64_t tfrec_deflate_sink_bytes_out(const deflate_sink *s);
void tfrec_deflate_sink_free(deflate_sink *s);

#endif
