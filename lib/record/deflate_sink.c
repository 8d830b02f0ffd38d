/* Compressing sink layer; see deflate_sink.h. */
#include "record/deflate_sink.h"

#include <stdlib.h>

#include "record/codec.h"
#include "tfrec/record.h"

struct deflate_sink {
    const tfrec_io *io;
    const codec *codec;
    void *state;
    const char *name;
    uint8_t *out;
    size_t out_cap, out_len;
    uint64_t bytes_out;
};

int tfrec_deflate_sink_new(deflate_sink **out, const tfrec_io *io, int wrapper, int level,
                           const char *name, size_t buffer_size, tfrec_err *err)
{
    *out = NULL;
    deflate_sink *s = calloc(1, sizeof *s);
    if (!s)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", name);
    s->io = io;
    s->codec = tfrec_codec_default();
    s->name = name;
    s->out_cap = buffer_size;
    s->out = malloc(buffer_size);
    s->state = s->codec->deflate_new(wrapper, level);
    if (!s->out || !s->state) {
        tfrec_deflate_sink_free(s);
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory for the deflater", name);
    }
    *out = s;
    return TFREC_OK;
}

void tfrec_deflate_sink_free(deflate_sink *s)
{
    if (!s)
        return;
    if (s->state)
        s->codec->deflate_free(s->state);
    free(s->out);
    free(s);
}

uint64_t tfrec_deflate_sink_bytes_out(const deflate_sink *s)
{
    return s->bytes_out;
}

static int drain(deflate_sink *s, tfrec_err *err)
{
    if (s->out_len == 0)
        return TFREC_OK;
    int rc = s->io->write(s->io->ctx, s->out, s->out_len);
    if (rc < 0) {
        const char *why = s->io->errmsg ? s->io->errmsg(s->io->ctx) : NULL;
        return tfrec_fail(err, rc, "%s", why && *why ? why : tfrec_strerror(rc));
    }
    s->bytes_out += s->out_len;
    s->out_len = 0;
    return TFREC_OK;
}

/* Run the deflater over data until done in the sense of `flush` (see codec.h). */
static int pump(deflate_sink *s, const void *data, size_t n, int flush, tfrec_err *err)
{
    codec_buf b = { .in = data, .in_len = n };
    for (;;) {
        b.out = s->out + s->out_len;
        b.out_len = s->out_cap - s->out_len;
        size_t room = b.out_len;
        int rc = s->codec->deflate(s->state, &b, flush);
        s->out_len += room - b.out_len;
        if (rc == CODEC_ERROR)
            return tfrec_fail(err, TFREC_E_COMPRESSION, "%s: %s deflate failed", s->name,
                              s->codec->name);
        int done = rc == CODEC_END || (flush == CODEC_NO_FLUSH && b.in_len == 0) ||
                   (flush == CODEC_SYNC_FLUSH && b.in_len == 0 && b.out_len > 0);
        if (s->out_len == s->out_cap || (done && flush != CODEC_NO_FLUSH)) {
            int wr = drain(s, err);
            if (wr < 0)
                return wr;
        }
        if (done)
            return TFREC_OK;
    }
}

int tfrec_deflate_sink_write(deflate_sink *s, const void *data, size_t n, tfrec_err *err)
{
    return n ? pump(s, data, n, CODEC_NO_FLUSH, err) : TFREC_OK;
}

int tfrec_deflate_sink_flush(deflate_sink *s, tfrec_err *err)
{
    return pump(s, NULL, 0, CODEC_SYNC_FLUSH, err);
}

int tfrec_deflate_sink_finish(deflate_sink *s, tfrec_err *err)
{
    return pump(s, NULL, 0, CODEC_FINISH, err);
}
