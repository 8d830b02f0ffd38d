/* tfrec_storage_open_source_range: a source over part of an object or file
 * (e.g. one member of an archive). gs:// objects are asked for exactly
 * those bytes (source.c); local files are a view over an ordinary source. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "storage/storage_internal.h"
#include "storage/transfer.h"
#include "util/struct_size.h"

typedef struct file_range {
    tfrec_io in;
    uint64_t base, size, pos;
    tfrec_err err;
} file_range;

static ptrdiff_t fr_read(void *ctx, void *buf, size_t n)
{
    file_range *r = ctx;
    if (r->pos >= r->size || n == 0)
        return 0;
    if (n > r->size - r->pos)
        n = (size_t)(r->size - r->pos);
    ptrdiff_t k = r->in.read(r->in.ctx, buf, n);
    if (k < 0)
        return tfrec_fail(&r->err, (int)k, "%s", r->in.errmsg ? r->in.errmsg(r->in.ctx) : "read");
    if (k == 0)
        return tfrec_fail(&r->err, TFREC_E_IO,
                          "the file ends at offset %" PRIu64 ", inside the range read",
                          r->base + r->pos);
    r->pos += (uint64_t)k;
    return k;
}

static int fr_seek(void *ctx, uint64_t off)
{
    file_range *r = ctx;
    if (off > r->size)
        return tfrec_fail(&r->err, TFREC_E_INVALID,
                          "cannot seek to offset %" PRIu64 " of a %" PRIu64 "-byte range", off,
                          r->size);
    int rc = r->in.seek(r->in.ctx, r->base + off);
    if (rc < 0)
        return tfrec_fail(&r->err, rc, "%s", r->in.errmsg ? r->in.errmsg(r->in.ctx) : "seek");
    r->pos = off;
    return TFREC_OK;
}

static int64_t fr_size(void *ctx)
{
    return (int64_t)((file_range *)ctx)->size;
}

static int fr_close(void *ctx, int commit)
{
    file_range *r = ctx;
    int rc = r->in.close(r->in.ctx, commit);
    free(r);
    return rc;
}

static const char *fr_errmsg(void *ctx)
{
    return ((file_range *)ctx)->err.msg;
}

static int open_file_range(tfrec_io *io, const char *name, uint64_t offset, uint64_t length)
{
    file_range *r = calloc(1, sizeof *r);
    if (!r)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    r->in = (tfrec_io)TFREC_IO_INIT;
    int rc = tfrec_io_open_source(&r->in, name);
    if (rc < 0) {
        free(r);
        return rc;
    }
    int64_t size = r->in.size ? r->in.size(r->in.ctx) : -1;
    if (size < 0 || !r->in.seek) {
        r->in.close(r->in.ctx, 0);
        free(r);
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: not a file that can be read in parts",
                          name);
    }
    if (offset > (uint64_t)size || (length != UINT64_MAX && length > (uint64_t)size - offset)) {
        r->in.close(r->in.ctx, 0);
        free(r);
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s: bytes from %" PRIu64 " (%" PRIu64 " of them) are past the end of "
                          "the %" PRId64 "-byte file",
                          name, offset, length, size);
    }
    r->base = offset;
    r->size = length == UINT64_MAX ? (uint64_t)size - offset : length;
    if ((rc = r->in.seek(r->in.ctx, offset)) < 0) {
        tfrec_fail(NULL, rc, "%s: %s", name, r->in.errmsg ? r->in.errmsg(r->in.ctx) : "seek");
        r->in.close(r->in.ctx, 0);
        free(r);
        return rc;
    }
    tfrec_io t = TFREC_IO_INIT;
    t.ctx = r;
    t.read = fr_read;
    t.write = io_write_unsupported;
    t.seek = fr_seek;
    t.size = fr_size;
    t.close = fr_close;
    t.errmsg = fr_errmsg;
    return TFREC_STRUCT_OUT(tfrec_io, io, &t, NULL);
}

int tfrec_storage_open_source_range(tfrec_storage *st, tfrec_io *io, const char *name,
                                    uint64_t offset, uint64_t length)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    if (!name)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_storage_open_source_range: NULL name");
    if (!tfrec_storage_is_remote(name))
        return open_file_range(io, name, offset, length);
    if (!(st = tfrec_gcs_client(st, NULL)))
        return TFREC_E_IO;
    return tfrec_gcs_open_source_range(st, io, name, offset, length);
}
