/* zlib backend, with TensorFlow's settings: windowBits 15 (+16 for the gzip
 * wrapper), memLevel 9, default strategy. */
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "record/codec.h"
#include "tfrec/record.h"

static int window_bits(int wrapper)
{
    return wrapper == TFREC_COMPRESSION_GZIP ? 15 + 16 : 15;
}

/* zlib counts in uInt; feed it at most that much per call. */
static uInt clamp(size_t n)
{
    return n > UINT_MAX ? UINT_MAX : (uInt)n;
}

static void load(z_stream *z, codec_buf *b)
{
    z->next_in = (Bytef *)b->in;
    z->avail_in = clamp(b->in_len);
    z->next_out = b->out;
    z->avail_out = clamp(b->out_len);
}

static void store(const z_stream *z, codec_buf *b)
{
    size_t used_in = (size_t)(z->next_in - (const Bytef *)b->in);
    size_t used_out = (size_t)(z->next_out - b->out);
    b->in += used_in;
    b->in_len -= used_in;
    b->out += used_out;
    b->out_len -= used_out;
}

static void *zi_new(int wrapper)
{
    z_stream *z = calloc(1, sizeof *z);
    if (z && inflateInit2(z, window_bits(wrapper)) != Z_OK) {
        free(z);
        z = NULL;
    }
    return z;
}

static void zi_reset(void *st)
{
    inflateReset(st);
}

static int zi_inflate(void *st, codec_buf *b, const char **why)
{
    z_stream *z = st;
    load(z, b);
    int rc = inflate(z, Z_NO_FLUSH);
    store(z, b);
    if (rc == Z_STREAM_END)
        return CODEC_END;
    if (rc == Z_OK || rc == Z_BUF_ERROR)
        return CODEC_OK;
    *why = z->msg ? z->msg : (rc == Z_NEED_DICT ? "needs a preset dictionary" : "inflate failed");
    return CODEC_ERROR;
}

static void zi_free(void *st)
{
    if (st)
        inflateEnd(st);
    free(st);
}

static void *zd_new(int wrapper, int level)
{
    z_stream *z = calloc(1, sizeof *z);
    if (z &&
        deflateInit2(z, level, Z_DEFLATED, window_bits(wrapper), 9, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        z = NULL;
    }
    return z;
}

static int zd_deflate(void *st, codec_buf *b, int flush)
{
    z_stream *z = st;
    int mode = flush == CODEC_FINISH       ? Z_FINISH
               : flush == CODEC_SYNC_FLUSH ? Z_SYNC_FLUSH
                                           : Z_NO_FLUSH;
    /* With more than UINT_MAX bytes pending, finishing must wait for the rest. */
    if (b->in_len > UINT_MAX && mode != Z_NO_FLUSH)
        mode = Z_NO_FLUSH;
    load(z, b);
    int rc = deflate(z, mode);
    store(z, b);
    if (rc == Z_STREAM_END)
        return CODEC_END;
    return rc == Z_OK || rc == Z_BUF_ERROR ? CODEC_OK : CODEC_ERROR;
}

static void zd_free(void *st)
{
    if (st)
        deflateEnd(st);
    free(st);
}

const codec tfrec_codec_zlib = {
    .name = "zlib",
    .inflate_new = zi_new,
    .inflate_reset = zi_reset,
    .inflate = zi_inflate,
    .inflate_free = zi_free,
    .deflate_new = zd_new,
    .deflate = zd_deflate,
    .deflate_free = zd_free,
};
