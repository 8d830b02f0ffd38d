/* Opening and closing readers, and their small getters. */
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "record/detect.h"
#include "record/reader_internal.h"
#include "tfrec/fs.h"
#include "util/struct_size.h"

/* An uncompressed file is read into the buffer one read() per fill: 1 MiB
 * reads cost less CPU than smaller ones (bench/RESULTS.md, "Record buffers:
 * 1 MiB reads and writes"). An inflater's buffers keep 256 KiB. */
enum { DEFAULT_BUFFER = 1024 * 1024, DEFAULT_INFLATE_BUFFER = 256 * 1024, MIN_BUFFER = 64 };
#define DEFAULT_MAX_RECORD (1ull << 30)

/* Read up to n bytes, retrying short reads: detection wants DETECT_BYTES
 * even from a pipe that delivers them one at a time. */
static ptrdiff_t read_fully(const tfrec_io *io, uint8_t *buf, size_t n, int *eof)
{
    size_t have = 0;
    while (have < n) {
        ptrdiff_t got = io->read(io->ctx, buf + have, n - have);
        if (got < 0)
            return got;
        if (got == 0) {
            *eof = 1;
            break;
        }
        have += (size_t)got;
    }
    return (ptrdiff_t)have;
}

static int setup(tfrec_reader *r, const tfrec_reader_options *o)
{
    r->max_record = o->max_record_size ? o->max_record_size : DEFAULT_MAX_RECORD;
    r->skip_corrupt = o->skip_corrupt;

    uint8_t head[DETECT_BYTES];
    ptrdiff_t n = read_fully(&r->io, head, sizeof head, &r->eof);
    if (n < 0) {
        const char *why = r->io.errmsg ? r->io.errmsg(r->io.ctx) : NULL;
        return tfrec_fail(&r->err, (int)n, "%s", why && *why ? why : tfrec_strerror((int)n));
    }
    r->compression = o->compression == TFREC_COMPRESSION_AUTO
                         ? tfrec_detect_compression(head, (size_t)n)
                         : o->compression;
    size_t bufsize = o->buffer_size                             ? o->buffer_size
                     : r->compression == TFREC_COMPRESSION_NONE ? DEFAULT_BUFFER
                                                                : DEFAULT_INFLATE_BUFFER;
    if (bufsize < MIN_BUFFER)
        bufsize = MIN_BUFFER;
    r->cap = bufsize;
    r->buf = malloc(bufsize);
    if (!r->buf)
        return tfrec_fail(&r->err, TFREC_E_NOMEM, "%s: out of memory", r->name);
    /* When asked to, a local file is read from a mapping of it: no copy out
     * of the page cache, and record data handed out straight from it. */
    const uint8_t *map;
    uint64_t map_len;
    int want_map = o->use_mmap ? o->use_mmap > 0 : tfrec_io_mmap_default();
    if (want_map && tfrec_io_source_map(&r->io, &map, &map_len) == 0) {
        if (r->compression != TFREC_COMPRESSION_NONE) {
            r->eof = 0; /* detection's short read said nothing about the inflated stream */
            return tfrec_inflate_source_new_mapped(&r->inflater, &r->io, r->compression, r->name,
                                                   map, map_len, &r->err);
        }
        free(r->buf);
        r->buf = (uint8_t *)map; /* only read from */
        r->cap = r->end = (size_t)map_len;
        r->start = 0;
        r->eof = 1;
        r->mapped = 1;
        return TFREC_OK;
    }
    if (r->compression == TFREC_COMPRESSION_NONE) {
        memcpy(r->buf, head, (size_t)n);
        r->end = (size_t)n;
        return TFREC_OK;
    }
    r->eof = 0; /* the inflater reads on from where detection stopped */
    return tfrec_inflate_source_new(&r->inflater, &r->io, r->compression, r->name, head, (size_t)n,
                                    bufsize, &r->err);
}

TFREC_DEFINE_STRUCT_INIT(tfrec_reader_options)
TFREC_DEFINE_STRUCT_INIT(tfrec_reader_stats)

int tfrec_reader_open_io(tfrec_reader **out, const tfrec_io *io_in, const char *name,
                         const tfrec_reader_options *opts)
{
    if (out)
        *out = NULL;
    if (!io_in)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_open_io: NULL argument");
    tfrec_io iobuf, *io = &iobuf;
    int rc = TFREC_STRUCT_IN(tfrec_io, io, io_in, NULL);
    if (rc)
        return rc;
    if (!out || !io->read || !io->close) {
        if (io->close)
            io->close(io->ctx, 0);
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "tfrec_reader_open_io: NULL argument (out, io->read or io->close)");
    }
    if (!name)
        name = "<io>";
    tfrec_reader_options obuf, *o = &obuf;
    rc = TFREC_STRUCT_IN(tfrec_reader_options, o, opts, NULL);
    if (!rc && (o->compression < TFREC_COMPRESSION_AUTO || o->compression > TFREC_COMPRESSION_GZIP))
        rc = tfrec_fail(NULL, TFREC_E_INVALID, "%s: unknown compression %d", name, o->compression);
    if (rc) {
        io->close(io->ctx, 0);
        return rc;
    }
    tfrec_reader *r = calloc(1, sizeof *r);
    char *copy = strdup(name);
    if (!r || !copy) {
        free(r);
        free(copy);
        io->close(io->ctx, 0);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    r->io = *io;
    r->name = copy;
    rc = setup(r, o);
    if (rc < 0) {
        tfrec_err e = r->err;
        tfrec_reader_free(r);
        return tfrec_fail_copy(NULL, &e);
    }
    *out = r;
    return TFREC_OK;
}

int tfrec_fs_reader_open(const tfrec_fs *fs, tfrec_reader **out, const char *path,
                         const tfrec_reader_options *opts)
{
    if (!out || !path)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_open: NULL argument");
    *out = NULL;
    tfrec_reader_options o;
    int rc = TFREC_STRUCT_IN(tfrec_reader_options, &o, opts, NULL);
    if (rc)
        return rc;
    tfrec_io io = TFREC_IO_INIT;
    rc = tfrec_fs_open_source(fs ? fs : o.fs, path, &io);
    if (rc < 0)
        return rc;
    return tfrec_reader_open_io(out, &io, strcmp(path, "-") ? path : "<stdin>", opts);
}

int tfrec_reader_open(tfrec_reader **out, const char *path, const tfrec_reader_options *opts)
{
    return tfrec_fs_reader_open(NULL, out, path, opts);
}

void tfrec_reader_free(tfrec_reader *r)
{
    if (!r)
        return;
    tfrec_inflate_source_free(r->inflater);
    r->io.close(r->io.ctx, 0); /* also unmaps */
    if (!r->mapped)
        free(r->buf);
    tfrec_span_crc_free(&r->span);
    free(r->name);
    free(r);
}

uint64_t tfrec_reader_offset(const tfrec_reader *r)
{
    return r ? r->last_offset : 0;
}

int tfrec_reader_compression(const tfrec_reader *r)
{
    return r ? r->compression : TFREC_E_INVALID;
}

int tfrec_reader_stats_get(const tfrec_reader *r, tfrec_reader_stats *stats)
{
    if (!r)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_reader_stats_get: NULL reader");
    return TFREC_STRUCT_OUT(tfrec_reader_stats, stats, &r->stats, NULL);
}

const char *tfrec_reader_errmsg(const tfrec_reader *r)
{
    return r ? r->err.msg : tfrec_last_errmsg();
}
