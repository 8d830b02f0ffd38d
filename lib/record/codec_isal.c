/* ISA-L (igzip) backend: faster than zlib at both ends, and its streams are
 * ordinary zlib/gzip streams any inflater reads.
 *
 * Level mapping. igzip has levels 0..3. Level 0 is skipped: it is no faster
 * than level 1 and expands incompressible data (JPEG payloads). Level 1
 * compresses about as well as zlib level 1, much faster than zlib level 6;
 * 2 and 3 gain little size for much more time (bench/RESULTS.md, "ISA-L
 * deflate levels"). zlib's 1..9 scale is folded onto it as
 *     zlib 1-6 -> igzip 1,   7-8 -> igzip 2,   9 -> igzip 3
 * so the default (6, TensorFlow's Z_DEFAULT_COMPRESSION) gets igzip 1.
 * tfrec_set_deflate_backend("zlib") (or TFREC_DEFLATE=zlib) gets zlib and its
 * exact levels instead.
 * Compression itself is in tfrec_codec_isal_deflate.c. */
#ifdef TFREC_HAVE_ISAL

#include <isa-l/igzip_lib.h>
#include <stdlib.h>

#include "record/codec.h"
#include "tfrec/record.h"

static uint32_t clamp32(size_t n)
{
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int tfrec_codec_isal_level(int zlib_level)
{
    if (zlib_level <= 6)
        return 1;
    if (zlib_level <= 8)
        return 2;
    return 3;
}

typedef struct isal_inflater {
    struct inflate_state s;
    uint32_t crc_flag;
} isal_inflater;

static void *ii_new(int wrapper)
{
    isal_inflater *st = calloc(1, sizeof *st); /* zeros: hist_bits 0 = full window */
    if (!st)
        return NULL;
    st->crc_flag = wrapper == TFREC_COMPRESSION_GZIP ? ISAL_GZIP : ISAL_ZLIB;
    isal_inflate_init(&st->s);
    st->s.crc_flag = st->crc_flag;
    return st;
}

static void ii_reset(void *p)
{
    isal_inflater *st = p;
    isal_inflate_reset(&st->s);
    st->s.crc_flag = st->crc_flag;
}

static const char *ii_error(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid lookback distance";
    case ISAL_INVALID_WRAPPER: return "invalid gzip/zlib header";
    case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect checksum";
    case ISAL_NEED_DICT: return "needs a preset dictionary";
    }
    return "inflate failed";
}

static int ii_inflate(void *p, codec_buf *b, const char **why)
{
    isal_inflater *st = p;
    st->s.next_in = (uint8_t *)b->in;
    st->s.avail_in = clamp32(b->in_len);
    st->s.next_out = b->out;
    st->s.avail_out = clamp32(b->out_len);
    int rc = isal_inflate(&st->s);
    size_t used_in = (size_t)(st->s.next_in - b->in);
    size_t used_out = (size_t)(st->s.next_out - b->out);
    b->in += used_in;
    b->in_len -= used_in;
    b->out += used_out;
    b->out_len -= used_out;
    if (rc != ISAL_DECOMP_OK) {
        *why = ii_error(rc);
        return CODEC_ERROR;
    }
    return st->s.block_state == ISAL_BLOCK_FINISH ? CODEC_END : CODEC_OK;
}

static void ii_free(void *p)
{
    free(p);
}

const codec tfrec_codec_isal = {
    .name = "isal",
    .inflate_new = ii_new,
    .inflate_reset = ii_reset,
    .inflate = ii_inflate,
    .inflate_free = ii_free,
    .deflate_new = tfrec_codec_isal_deflate_new,
    .deflate = tfrec_codec_isal_deflate,
    .deflate_free = tfrec_codec_isal_deflate_free,
};

#else
/* Built without ISA-L: zlib alone (tfrec_codec_zlib.c). */
typedef int codec_isal_not_built;
#endif
