/* ISA-L compression as a sequence of independent 256 KiB chunks.
 *
 * Each chunk is compressed on its own with isal_deflate_stateless() and
 * ends on a byte boundary (FULL_FLUSH), so chunks simply follow one another
 * inside one standard raw-deflate stream, framed by a gzip or zlib header
 * and trailer written here. Working chunk by chunk lets us look at each
 * result and keep it only if it is worth it: a chunk that does not shrink
 * enough (JPEG payloads, already-compressed data) is written as stored
 * blocks instead, which every inflater copies at memory speed rather than
 * decoding it symbol by symbol. Levels 1-6 keep compressed output only when
 * it saves at least 1/32 of the chunk; 7-9 whenever it is smaller.
 * The loss from not sharing the 32 KiB window across chunk boundaries is
 * about 1/8 of one window per 256 KiB, well under 1% here. */
#ifdef TFREC_HAVE_ISAL

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>
#include <string.h>

#include "record/codec.h"
#include "tfrec/record.h"

enum { CHUNK = 256 * 1024, STORED_MAX = 65535 };

typedef struct chunked {
    int gzip;
    int level;      /* igzip level */
    int strict;     /* keep compressed output whenever it is smaller */
    uint32_t check; /* crc32 (gzip) or adler32 (zlib) of all input */
    uint64_t total_in;
    int started, finished;
    uint8_t *level_buf;
    size_t level_buf_size;
    size_t chunk_len;
    uint8_t *chunk; /* input waiting to be compressed */
    uint8_t *pend;  /* output waiting to be handed out */
    size_t pend_pos, pend_len, pend_cap;
} chunked;

static size_t level_buf_size(int level)
{
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    }
    return 0;
}

void *tfrec_codec_isal_deflate_new(int wrapper, int level)
{
    chunked *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->gzip = wrapper == TFREC_COMPRESSION_GZIP;
    c->level = tfrec_codec_isal_level(level);
    c->strict = level >= 7;
    c->check = c->gzip ? 0 : 1; /* adler32 starts at 1 */
    c->level_buf_size = level_buf_size(c->level);
    /* worst case: a chunk as stored blocks, plus header and trailer */
    c->pend_cap = CHUNK + (CHUNK / STORED_MAX + 2) * 5 + 64;
    c->chunk = malloc(CHUNK);
    c->pend = malloc(c->pend_cap);
    c->level_buf = c->level_buf_size ? malloc(c->level_buf_size) : NULL;
    if (!c->chunk || !c->pend || (c->level_buf_size && !c->level_buf)) {
        tfrec_codec_isal_deflate_free(c);
        return NULL;
    }
    return c;
}

void tfrec_codec_isal_deflate_free(void *p)
{
    chunked *c = p;
    if (!c)
        return;
    free(c->chunk);
    free(c->pend);
    free(c->level_buf);
    free(c);
}

static void put(chunked *c, const void *p, size_t n)
{
    memcpy(c->pend + c->pend_len, p, n);
    c->pend_len += n;
}

static void put_header(chunked *c)
{
    if (c->gzip) {
        /* magic, deflate, no flags, no mtime, no extra flags, OS unix (as zlib writes) */
        static const uint8_t h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
        put(c, h, sizeof h);
    } else {
        /* 32 KiB window, deflate; FLEVEL 1 ("fast"); 0x7801 % 31 == 0 */
        static const uint8_t h[2] = { 0x78, 0x01 };
        put(c, h, sizeof h);
    }
}

static void put_trailer(chunked *c)
{
    uint8_t t[8];
    if (c->gzip) {
        for (int i = 0; i < 4; i++) {
            t[i] = (uint8_t)(c->check >> (8 * i));
            t[4 + i] = (uint8_t)(c->total_in >> (8 * i));
        }
        put(c, t, 8);
    } else {
        for (int i = 0; i < 4; i++)
            t[i] = (uint8_t)(c->check >> (24 - 8 * i)); /* big-endian */
        put(c, t, 4);
    }
}

/* Stored blocks: a byte with BFINAL and BTYPE 00 (the rest of the byte is
 * the padding to the boundary we are already on), LEN, ~LEN, the bytes. */
static void put_stored(chunked *c, const uint8_t *data, size_t len, int final)
{
    do {
        size_t n = len > STORED_MAX ? STORED_MAX : len;
        int last = final && n == len;
        uint8_t h[5] = { (uint8_t)last, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n,
                         (uint8_t)(~n >> 8) };
        put(c, h, 5);
        put(c, data, n);
        data += n;
        len -= n;
    } while (len > 0);
}

/* Compress one chunk (final: the last one) into pend, which is empty. */
static int compress_chunk(chunked *c, const uint8_t *data, size_t len, int final)
{
    c->check = c->gzip ? crc32_gzip_refl(c->check, data, len) : isal_adler32(c->check, data, len);
    c->total_in += len;
    if (len > 0) {
        /* Output must beat the input by the required margin, or we store. */
        size_t limit = c->strict ? len - 1 : len - len / 32;
        /* stateless_init leaves some fields (hist_bits, the window size,
         * among them) as they were: stack garbage there silently shrank the
         * window and cost up to half the ratio. Start from zeros. */
        struct isal_zstream z;
        memset(&z, 0, sizeof z);
        isal_deflate_stateless_init(&z);
        z.level = (uint32_t)c->level;
        z.level_buf = c->level_buf;
        z.level_buf_size = (uint32_t)c->level_buf_size;
        z.gzip_flag = IGZIP_DEFLATE;
        z.flush = final ? NO_FLUSH : FULL_FLUSH;
        z.end_of_stream = (uint16_t) final;
        z.next_in = (uint8_t *)data;
        z.avail_in = (uint32_t)len;
        z.next_out = c->pend + c->pend_len;
        z.avail_out =
            (uint32_t)(limit < c->pend_cap - c->pend_len ? limit : c->pend_cap - c->pend_len);
        int rc = isal_deflate_stateless(&z);
        if (rc == COMP_OK) {
            c->pend_len += z.total_out;
            return CODEC_OK;
        }
        if (rc != STATELESS_OVERFLOW)
            return CODEC_ERROR;
    }
    put_stored(c, data, len, final);
    return CODEC_OK;
}

int tfrec_codec_isal_deflate(void *p, codec_buf *b, int flush)
{
    chunked *c = p;
    for (;;) {
        if (c->pend_pos < c->pend_len) {
            size_t n = c->pend_len - c->pend_pos;
            if (n > b->out_len)
                n = b->out_len;
            memcpy(b->out, c->pend + c->pend_pos, n);
            b->out += n;
            b->out_len -= n;
            c->pend_pos += n;
            if (c->pend_pos < c->pend_len)
                return CODEC_OK; /* caller's output is full */
        }
        c->pend_pos = c->pend_len = 0;
        if (c->finished)
            return CODEC_END;
        if (!c->started) {
            c->started = 1;
            put_header(c);
            continue;
        }
        int rc = CODEC_OK;
        if (b->in_len > 0) {
            if (c->chunk_len == 0 && b->in_len >= CHUNK) {
                /* a whole chunk straight from the caller, without a copy */
                rc = compress_chunk(c, b->in, CHUNK, 0);
                b->in += CHUNK;
                b->in_len -= CHUNK;
            } else {
                size_t n = CHUNK - c->chunk_len;
                if (n > b->in_len)
                    n = b->in_len;
                memcpy(c->chunk + c->chunk_len, b->in, n);
                c->chunk_len += n;
                b->in += n;
                b->in_len -= n;
                if (c->chunk_len == CHUNK) {
                    rc = compress_chunk(c, c->chunk, CHUNK, 0);
                    c->chunk_len = 0;
                }
            }
        } else if (flush == CODEC_NO_FLUSH) {
            return CODEC_OK;
        } else if (flush == CODEC_SYNC_FLUSH) {
            if (c->chunk_len == 0)
                return CODEC_OK; /* everything is out */
            rc = compress_chunk(c, c->chunk, c->chunk_len, 0);
            c->chunk_len = 0;
        } else {
            rc = compress_chunk(c, c->chunk, c->chunk_len, 1);
            c->chunk_len = 0;
            put_trailer(c);
            c->finished = 1;
        }
        if (rc != CODEC_OK)
            return rc;
    }
}

#else
typedef int codec_isal_deflate_not_built;
#endif
