/* Decompressing source layer; see inflate_source.h. */
#include "record/inflate_source.h"

#include <stdlib.h>
#include <string.h>

#include "record/codec.h"
#include "tfrec/record.h"

struct inflate_source {
    const tfrec_io *io;
    const codec *codec;
    void *state;
    int wrapper;
    const char *name;
    uint8_t *in; /* compressed input buffer */
    size_t in_cap, in_pos, in_len;
    uint64_t consumed; /* compressed bytes handed to the inflater and used */
    int input_eof;     /* io said end of input */
    int member_done;   /* the inflater finished a stream/member */
    int finished;      /* clean end reached */
    int mapped;        /* in is the whole file, not ours */
};

static const char *kind(const inflate_source *s)
{
    return s->wrapper == TFREC_COMPRESSION_GZIP ? "GZIP" : "ZLIB";
}

int tfrec_inflate_source_new(inflate_source **out, const tfrec_io *io, int wrapper,
                             const char *name, const void *prefix, size_t prefix_len,
                             size_t buffer_size, tfrec_err *err)
{
    *out = NULL;
    inflate_source *s = calloc(1, sizeof *s);
    if (!s)
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory", name);
    s->io = io;
    s->codec = tfrec_codec_default();
    s->wrapper = wrapper;
    s->name = name;
    s->in_cap = buffer_size > prefix_len ? buffer_size : prefix_len;
    if (s->in_cap == 0)
        s->in_cap = 1;
    s->in = malloc(s->in_cap);
    s->state = s->codec->inflate_new(wrapper);
    if (!s->in || !s->state) {
        tfrec_inflate_source_free(s);
        return tfrec_fail(err, TFREC_E_NOMEM, "%s: out of memory for the inflater", name);
    }
    if (prefix_len)
        memcpy(s->in, prefix, prefix_len);
    s->in_len = prefix_len;
    *out = s;
    return TFREC_OK;
}

int tfrec_inflate_source_new_mapped(inflate_source **out, const tfrec_io *io, int wrapper,
                                    const char *name, const uint8_t *data, uint64_t len,
                                    tfrec_err *err)
{
    int rc = tfrec_inflate_source_new(out, io, wrapper, name, NULL, 0, 0, err);
    if (rc < 0)
        return rc;
    inflate_source *s = *out;
    free(s->in);
    s->in = (uint8_t *)data; /* only read from */
    s->in_cap = s->in_len = (size_t)len;
    s->input_eof = 1;
    s->mapped = 1;
    return TFREC_OK;
}

void tfrec_inflate_source_free(inflate_source *s)
{
    if (!s)
        return;
    if (s->state)
        s->codec->inflate_free(s->state);
    if (!s->mapped)
        free(s->in);
    free(s);
}

uint64_t tfrec_inflate_source_compressed_offset(const inflate_source *s)
{
    return s->consumed;
}

/* Read more compressed input behind what is left. 0 ok, negative code. */
static int refill(inflate_source *s, tfrec_err *err)
{
    if (s->in_pos > 0) {
        memmove(s->in, s->in + s->in_pos, s->in_len - s->in_pos);
        s->in_len -= s->in_pos;
        s->in_pos = 0;
    }
    if (s->in_len == s->in_cap)
        return TFREC_OK; /* full: a zero-byte read would look like the end */
    ptrdiff_t got = s->io->read(s->io->ctx, s->in + s->in_len, s->in_cap - s->in_len);
    if (got < 0) {
        const char *why = s->io->errmsg ? s->io->errmsg(s->io->ctx) : NULL;
        return tfrec_fail(err, (int)got, "%s", why && *why ? why : tfrec_strerror((int)got));
    }
    if (got == 0)
        s->input_eof = 1;
    s->in_len += (size_t)got;
    return TFREC_OK;
}

/* After a member ended: a GZIP file may go on with another member; anything
 * else is junk. Returns 1 to continue inflating, 0 at the clean end, or a
 * negative code. */
static int next_member(inflate_source *s, tfrec_err *err)
{
    for (;;) {
        size_t left = s->in_len - s->in_pos;
        if (left >= 2 || s->input_eof)
            break;
        int rc = refill(s, err);
        if (rc < 0)
            return rc;
    }
    size_t left = s->in_len - s->in_pos;
    if (left == 0) {
        s->finished = 1;
        return 0;
    }
    const uint8_t *p = s->in + s->in_pos;
    if (s->wrapper == TFREC_COMPRESSION_GZIP && left >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
        s->codec->inflate_reset(s->state);
        s->member_done = 0;
        return 1;
    }
    return tfrec_fail(err, TFREC_E_TRAILING_GARBAGE,
                      "%s: junk after the end of the %s stream at compressed offset %llu "
                      "(first byte 0x%02x)",
                      s->name, kind(s), (unsigned long long)s->consumed, p[0]);
}

ptrdiff_t tfrec_inflate_source_read(inflate_source *s, void *buf, size_t n, tfrec_err *err)
{
    codec_buf b = { .out = buf, .out_len = n };
    while (b.out_len == n && n > 0) {
        if (s->finished)
            return 0;
        if (s->member_done) {
            int rc = next_member(s, err);
            if (rc <= 0)
                return rc;
        }
        if (s->in_pos == s->in_len && !s->input_eof) {
            int rc = refill(s, err);
            if (rc < 0)
                return rc;
            continue;
        }
        b.in = s->in + s->in_pos;
        b.in_len = s->in_len - s->in_pos;
        size_t in_before = b.in_len, out_before = b.out_len;
        const char *why = "inflate failed";
        int rc = s->codec->inflate(s->state, &b, &why);
        size_t used = in_before - b.in_len;
        s->in_pos += used;
        s->consumed += used;
        if (rc == CODEC_ERROR)
            return tfrec_fail(err, TFREC_E_COMPRESSION,
                              "%s: corrupt %s stream near compressed offset %llu: %s", s->name,
                              kind(s), (unsigned long long)s->consumed, why);
        if (rc == CODEC_END) {
            s->member_done = 1;
            continue;
        }
        if (used == 0 && b.out_len == out_before) {
            /* The inflater keeps partial input internally, so no progress
             * (even when called with no input, to drain its own buffers)
             * means it saw all we have; more must come, or it never will. */
            if (s->input_eof) {
                if (s->consumed == 0 && s->in_len == 0) {
                    s->finished = 1; /* an empty file holds no records, whatever its name says */
                    return 0;
                }
                return tfrec_fail(err, TFREC_E_TRUNCATED,
                                  "%s: %s stream truncated: input ends at compressed offset %llu "
                                  "inside the stream",
                                  s->name, kind(s),
                                  (unsigned long long)(s->consumed + s->in_len - s->in_pos));
            }
            if (s->in_pos == 0 && s->in_len == s->in_cap)
                return tfrec_fail(err, TFREC_E_COMPRESSION,
                                  "%s: %s inflater stalled at compressed "
                                  "offset %llu",
                                  s->name, kind(s), (unsigned long long)s->consumed);
            int rc2 = refill(s, err);
            if (rc2 < 0)
                return rc2;
        }
    }
    return (ptrdiff_t)(n - b.out_len);
}

int tfrec_inflate_source_rewind(inflate_source *s, tfrec_err *err)
{
    if (s->mapped) {
        s->codec->inflate_reset(s->state);
        s->in_pos = 0;
        s->consumed = 0;
        s->member_done = s->finished = 0;
        return TFREC_OK;
    }
    if (!s->io->seek)
        return tfrec_fail(err, TFREC_E_UNSUPPORTED,
                          "%s: cannot rewind a compressed stream on an "
                          "unseekable source",
                          s->name);
    int rc = s->io->seek(s->io->ctx, 0);
    if (rc < 0) {
        const char *why = s->io->errmsg ? s->io->errmsg(s->io->ctx) : NULL;
        return tfrec_fail(err, rc, "%s", why && *why ? why : tfrec_strerror(rc));
    }
    s->codec->inflate_reset(s->state);
    s->in_pos = s->in_len = 0;
    s->consumed = 0;
    s->input_eof = s->member_done = s->finished = 0;
    return TFREC_OK;
}
