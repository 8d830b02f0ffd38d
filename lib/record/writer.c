/* Writing records. Framed records collect in a staging buffer that goes to
 * the sink (or through the deflater) in large pieces; a record too big for
 * the buffer is passed through from the caller's memory without a copy. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/deflate_sink.h"
#include "record/framing.h"
#include "record/index_format.h"
#include "record/writer_internal.h"
#include "tfrec/fs.h"
#include "tfrec/record.h"
#include "util/errors.h"
#include "util/struct_size.h"

/* Uncompressed output goes to the sink one buffer per write(): 1 MiB writes
 * cost less CPU (in the kernel) than smaller ones (bench/RESULTS.md,
 * "Record buffers: 1 MiB reads and writes").
 * The deflater keeps 256 KiB: its chunks are that size anyway. */
enum {
    DEFAULT_BUFFER = 1024 * 1024,
    DEFAULT_DEFLATE_BUFFER = 256 * 1024,
    MIN_BUFFER = 64,
    DEFAULT_LEVEL = 6
};
enum writer_state { W_OPEN, W_FAILED, W_CLOSED, W_ABORTED };

struct tfrec_writer {
    tfrec_io io;
    int io_open;
    char *name;
    int compression;
    deflate_sink *deflater; /* NULL when not compressing */
    index_out *index;       /* NULL unless asked to write an index */
    uint8_t *buf;
    size_t cap, len;
    uint64_t records, bytes_out;
    int state;
    int failure; /* sticky code once W_FAILED */
    tfrec_err err;
};

static int fail_from_sink(tfrec_writer *w, int code)
{
    const char *why = w->io.errmsg ? w->io.errmsg(w->io.ctx) : NULL;
    return tfrec_fail(&w->err, code, "%s", why && *why ? why : tfrec_strerror(code));
}

/* Hand bytes to the sink, compressing on the way when asked to. */
static int emit(tfrec_writer *w, const void *data, size_t n)
{
    if (n == 0)
        return TFREC_OK;
    if (w->deflater)
        return tfrec_deflate_sink_write(w->deflater, data, n, &w->err);
    int rc = w->io.write(w->io.ctx, data, n);
    if (rc < 0)
        return fail_from_sink(w, rc);
    w->bytes_out += n;
    return TFREC_OK;
}

static int emit_staged(tfrec_writer *w)
{
    int rc = emit(w, w->buf, w->len);
    w->len = 0;
    return rc;
}

/* Once anything fails the output is unusable: remember it, report it again. */
static int failed(tfrec_writer *w, int rc)
{
    w->state = W_FAILED;
    w->failure = rc;
    return rc;
}

static int check_open(tfrec_writer *w, const char *what)
{
    if (w->state == W_OPEN)
        return TFREC_OK;
    if (w->state == W_FAILED)
        return tfrec_fail(NULL, w->failure, "%s", w->err.msg);
    return tfrec_fail(&w->err, TFREC_E_STATE, "%s: %s after the writer was %s", w->name, what,
                      w->state == W_CLOSED ? "closed" : "aborted");
}

int tfrec_writer_refuse(tfrec_writer *w, const char *fmt, ...)
{
    if (w->state == W_FAILED) /* its message is the failure's, kept for every call */
        return check_open(w, "write");
    char why[TFREC_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tfrec_fail(&w->err, TFREC_E_INVALID, "%s: %s", w->name, why);
}

int tfrec_writer_write(tfrec_writer *w, const void *data, size_t len)
{
    if (!w || (!data && len))
        return tfrec_fail(w ? &w->err : NULL, TFREC_E_INVALID, "tfrec_writer_write: NULL argument");
    int rc = check_open(w, "write");
    if (rc < 0)
        return rc;
    uint8_t header[FRAME_HEADER], footer[FRAME_FOOTER];
    tfrec_record_header(header, len);
    frame_store32(footer, tfrec_record_footer_crc(data, len));
    if (len <= SIZE_MAX - FRAME_OVERHEAD && len + FRAME_OVERHEAD <= w->cap - w->len) {
        uint8_t *p = w->buf + w->len;
        memcpy(p, header, FRAME_HEADER);
        if (len)
            memcpy(p + FRAME_HEADER, data, len);
        memcpy(p + FRAME_HEADER + len, footer, FRAME_FOOTER);
        w->len += len + FRAME_OVERHEAD;
    } else if (len <= w->cap - FRAME_OVERHEAD) {
        /* Fits in an empty buffer: send what is staged, then stage it. */
        if ((rc = emit_staged(w)) < 0)
            return failed(w, rc);
        return tfrec_writer_write(w, data, len);
    } else {
        if ((rc = emit_staged(w)) < 0 || (rc = emit(w, header, sizeof header)) < 0 ||
            (rc = emit(w, data, len)) < 0)
            return failed(w, rc);
        memcpy(w->buf, footer, FRAME_FOOTER);
        w->len = FRAME_FOOTER;
    }
    w->records++;
    if (w->index &&
        (rc = tfrec_index_out_add(w->index, (uint64_t)len + FRAME_OVERHEAD, &w->err)) < 0)
        return failed(w, rc);
    return TFREC_OK;
}

int tfrec_writer_flush(tfrec_writer *w)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_flush: NULL writer");
    int rc = check_open(w, "flush");
    if (rc < 0)
        return rc;
    if ((rc = emit_staged(w)) < 0 ||
        (w->deflater && (rc = tfrec_deflate_sink_flush(w->deflater, &w->err)) < 0))
        return failed(w, rc);
    return TFREC_OK;
}

/* Close the sink; its message, if any, is in the thread slot afterwards. */
static int close_sink(tfrec_writer *w, int commit)
{
    if (!w->io_open)
        return TFREC_OK;
    w->io_open = 0;
    /* Clear the slot so a stale message is not taken for the sink's, and
     * put it back afterwards if the sink had nothing to say. */
    char saved[TFREC_ERRMSG_MAX];
    snprintf(saved, sizeof saved, "%s", tfrec_last_errmsg());
    tfrec_fail(NULL, TFREC_OK, "%s", "");
    int rc = w->io.close(w->io.ctx, commit);
    const char *why = tfrec_last_errmsg();
    if (rc < 0)
        tfrec_fail(&w->err, rc, "%s", *why ? why : tfrec_strerror(rc));
    else if (!*why)
        tfrec_fail(NULL, TFREC_OK, "%s", saved);
    return rc;
}

int tfrec_writer_close(tfrec_writer *w)
{
    if (!w)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_close: NULL writer");
    int rc = check_open(w, "close");
    if (rc < 0) {
        if (w->state == W_FAILED)
            close_sink(w, 0);
        return rc;
    }
    if ((rc = emit_staged(w)) < 0 ||
        (w->deflater && (rc = tfrec_deflate_sink_finish(w->deflater, &w->err)) < 0)) {
        close_sink(w, 0);
        return failed(w, rc);
    }
    if ((rc = close_sink(w, 1)) < 0)
        return failed(w, rc);
    /* After the data: the index is never older than the file it indexes. */
    rc = tfrec_index_out_close(w->index, 1, &w->err);
    w->index = NULL;
    if (rc < 0)
        return failed(w, rc);
    w->state = W_CLOSED;
    return TFREC_OK;
}

void tfrec_writer_abort(tfrec_writer *w)
{
    if (!w)
        return;
    close_sink(w, 0);
    tfrec_index_out_close(w->index, 0, NULL);
    w->index = NULL;
    if (w->state == W_OPEN)
        w->state = W_ABORTED;
}

void tfrec_writer_free(tfrec_writer *w)
{
    if (!w)
        return;
    tfrec_writer_abort(w);
    tfrec_deflate_sink_free(w->deflater);
    free(w->buf);
    free(w->name);
    free(w);
}

uint64_t tfrec_writer_records(const tfrec_writer *w)
{
    return w ? w->records : 0;
}

uint64_t tfrec_writer_bytes_out(const tfrec_writer *w)
{
    if (!w)
        return 0;
    return w->deflater ? tfrec_deflate_sink_bytes_out(w->deflater) : w->bytes_out;
}

const char *tfrec_writer_errmsg(const tfrec_writer *w)
{
    return w ? w->err.msg : tfrec_last_errmsg();
}

static int setup(tfrec_writer *w, const tfrec_writer_options *o)
{
    int level = o->level ? o->level : DEFAULT_LEVEL;
    if (o->buffer_size)
        w->cap = o->buffer_size;
    else
        w->cap = w->compression == TFREC_COMPRESSION_NONE ? DEFAULT_BUFFER : DEFAULT_DEFLATE_BUFFER;
    if (w->cap < MIN_BUFFER)
        w->cap = MIN_BUFFER;
    w->buf = malloc(w->cap);
    if (!w->buf)
        return tfrec_fail(&w->err, TFREC_E_NOMEM, "%s: out of memory", w->name);
    if (w->compression == TFREC_COMPRESSION_NONE)
        return TFREC_OK;
    return tfrec_deflate_sink_new(&w->deflater, &w->io, w->compression, level, w->name, w->cap,
                                  &w->err);
}

TFREC_DEFINE_STRUCT_INIT(tfrec_writer_options)

int tfrec_writer_open_io(tfrec_writer **out, const tfrec_io *io_in, const char *name,
                         const tfrec_writer_options *opts)
{
    if (out)
        *out = NULL;
    if (!io_in)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_open_io: NULL argument");
    tfrec_io iobuf, *io = &iobuf;
    int rc = TFREC_STRUCT_IN(tfrec_io, io, io_in, NULL);
    if (rc)
        return rc;
    if (!out || !io->write || !io->close) {
        if (io->close)
            io->close(io->ctx, 0);
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_writer_open_io: NULL argument (out, io->write or io->close)");
    }
    if (!name)
        name = "<io>";
    tfrec_writer_options obuf, *o = &obuf;
    int orc = TFREC_STRUCT_IN(tfrec_writer_options, o, opts, NULL);
    rc = orc;
    if (!rc && (o->compression < TFREC_COMPRESSION_AUTO || o->compression > TFREC_COMPRESSION_GZIP))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: unknown compression", name);
    else if (!rc && (o->level < 0 || o->level > 9))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: compression level must be 1..9 (0 = default)",
                        name);
    /* The index sink is ours as soon as the options could be read: on any
     * failure from here on it is discarded, like the data sink. */
    tfrec_io ixio = TFREC_IO_INIT;
    int has_index = 0;
    if (!orc && o->index_sink) {
        int irc = TFREC_STRUCT_IN(tfrec_io, &ixio, o->index_sink, NULL);
        if (irc && !rc)
            rc = irc;
        has_index = !irc;
    }
    if (has_index && !rc && (!ixio.write || !ixio.close))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: index_sink without write or close", name);
    if (has_index && !rc && o->compression > TFREC_COMPRESSION_NONE)
        rc = tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                        "%s: an index needs an uncompressed file (its offsets are file offsets)",
                        name);
    if (has_index && rc) {
        if (ixio.close)
            ixio.close(ixio.ctx, 0);
        has_index = 0;
    }
    if (rc) {
        io->close(io->ctx, 0);
        return rc;
    }
    tfrec_writer *w = calloc(1, sizeof *w);
    char *copy = strdup(name);
    if (!w || !copy) {
        free(w);
        free(copy);
        io->close(io->ctx, 0);
        if (has_index)
            ixio.close(ixio.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    w->io = *io;
    w->io_open = 1;
    w->name = copy;
    w->compression =
        o->compression == TFREC_COMPRESSION_AUTO ? TFREC_COMPRESSION_NONE : o->compression;
    rc = setup(w, o);
    if (has_index) {
        char *iname = tfrec_idx_name(name);
        int irc = iname ? tfrec_index_out_open(&w->index, &ixio, iname, &w->err)
                        : (ixio.close(ixio.ctx, 0),
                           tfrec_fail(&w->err, TFREC_E_NOMEM, "%s: out of memory", name));
        free(iname);
        if (rc == TFREC_OK)
            rc = irc;
    }
    if (rc < 0) {
        tfrec_err e = w->err;
        tfrec_writer_free(w);
        return tfrec_fail_copy(NULL, &e);
    }
    *out = w;
    return TFREC_OK;
}

int tfrec_writer_open(tfrec_writer **out, const char *path, const tfrec_writer_options *opts)
{
    return tfrec_fs_writer_open(NULL, out, path, opts);
}

int tfrec_fs_writer_open(const tfrec_fs *fs, tfrec_writer **out, const char *path,
                         const tfrec_writer_options *opts)
{
    if (!out || !path)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_writer_open: NULL argument");
    *out = NULL;
    tfrec_writer_options o;
    int rc = TFREC_STRUCT_IN(tfrec_writer_options, &o, opts, NULL);
    if (rc)
        return rc;
    if (o.index_sink)
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s: index_sink is for tfrec_writer_open_io(); use write_index", path);
    if (!fs)
        fs = o.fs;
    tfrec_io ixio = TFREC_IO_INIT;
    if (o.write_index) {
        if (!strcmp(path, "-"))
            return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                              "write_index: standard output has no place for an index");
        if (o.compression > TFREC_COMPRESSION_NONE)
            return tfrec_fail(NULL, TFREC_E_UNSUPPORTED,
                              "%s: an index needs an uncompressed file (its offsets are file "
                              "offsets)",
                              path);
        char *iname = tfrec_idx_name(path);
        if (!iname)
            return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", path);
        rc = tfrec_fs_open_sink(fs, iname, &ixio);
        free(iname);
        if (rc < 0)
            return rc;
        o.index_sink = &ixio;
    }
    tfrec_io io = TFREC_IO_INIT;
    rc = tfrec_fs_open_sink(fs, path, &io);
    if (rc < 0) {
        if (o.index_sink)
            ixio.close(ixio.ctx, 0);
        return rc;
    }
    return tfrec_writer_open_io(out, &io, strcmp(path, "-") ? path : "<stdout>", &o);
}
