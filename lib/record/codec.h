/* Internal: deflate backends (zlib everywhere, ISA-L's igzip when built
 * with TFREC_HAVE_ISAL) behind one small table, so the stream layers above
 * do not care which library does the work. Both produce and accept standard
 * zlib (RFC 1950) and gzip (RFC 1952) streams. */
#ifndef TFREC_RECORD_CODEC_H
#define TFREC_RECORD_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Buffers for one step; the backend advances the pointers and counts. */
typedef struct codec_buf {
    const uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_len;
} codec_buf;

enum codec_status {
    CODEC_OK = 0,    /* progress made (or nothing to do); call again */
    CODEC_END = 1,   /* the stream (gzip: this member) ended; in points after it */
    CODEC_ERROR = -1 /* corrupt input, or (deflate) an internal failure */
};

enum codec_flush { CODEC_NO_FLUSH, CODEC_SYNC_FLUSH, CODEC_FINISH };

typedef struct codec {
    const char *name; /* "zlib" or "isal" */
    /* wrapper: TFREC_COMPRESSION_ZLIB or _GZIP. NULL when out of memory. */
    void *(*inflate_new)(int wrapper);
    /* Start over, for the next gzip member or after a rewind. */
    void (*inflate_reset)(void *st);
    /* *why is set on CODEC_ERROR to a static description. */
    int (*inflate)(void *st, codec_buf *b, const char **why);
    void (*inflate_free)(void *st);

    /* level is zlib's 1..9; each backend maps it to its own scale. */
    void *(*deflate_new)(int wrapper, int level);
    /* Consumes all input unless out fills. SYNC_FLUSH is complete when a
     * call returns with in_len == 0 and out_len > 0; FINISH when CODEC_END. */
    int (*deflate)(void *st, codec_buf *b, int flush);
    void (*deflate_free)(void *st);
} codec;

extern const codec tfrec_codec_zlib;
#ifdef TFREC_HAVE_ISAL
extern const codec tfrec_codec_isal;
/* zlib level 1..9 to the igzip level it maps to (see tfrec_codec_isal.c). */
int tfrec_codec_isal_level(int zlib_level);
/* igzip compression, chunk by chunk (tfrec_codec_isal_deflate.c). */
void *tfrec_codec_isal_deflate_new(int wrapper, int level);
int tfrec_codec_isal_deflate(void *st, codec_buf *b, int flush);
void tfrec_codec_isal_deflate_free(void *st);
#endif

/* The backend new streams use: ISA-L when built in, unless TFREC_DEFLATE
 * (read once per process) or tfrec_set_deflate_backend() chose another. */
const codec *tfrec_codec_default(void);

#endif
