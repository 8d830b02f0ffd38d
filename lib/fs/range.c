/* A range of a source as a source: open_range's fallback for a file system
 * that has only open_source (and the local one's open_range). */
#include <stdlib.h>
#include <string.h>

#include "fs/fs_internal.h"
#include "io/io_util.h"
#include "util/errors.h"
#include "util/struct_size.h"

typedef struct range_src {
    tfrec_io in;
    uint64_t offset, length; /* length UINT64_MAX: unbounded */
    uint64_t pos;            /* relative to offset */
    tfrec_err err;
    char name[];
} range_src;

static ptrdiff_t rs_read(void *ctx, void *buf, size_t n)
{
    range_src *r = ctx;
    if (r->length != UINT64_MAX) {
        uint64_t left = r->length - r->pos;
        if (n > left)
            n = (size_t)left;
        if (n == 0)
            return 0;
    }
    ptrdiff_t got = r->in.read(r->in.ctx, buf, n);
    if (got > 0)
        r->pos += (uint64_t)got;
    else if (got == 0 && r->length != UINT64_MAX)
        return tfrec_fail(&r->err, TFREC_E_TRUNCATED,
                          "%s: ends %llu bytes into the range at %llu (expected %llu)", r->name,
                          (unsigned long long)r->pos, (unsigned long long)r->offset,
                          (unsigned long long)r->length);
    return got;
}

static int rs_seek(void *ctx, uint64_t off)
{
    range_src *r = ctx;
    if ((r->length != UINT64_MAX && off > r->length) || off > UINT64_MAX - r->offset)
        return tfrec_fail(&r->err, TFREC_E_INVALID, "%s: seek to %llu beyond the range", r->name,
                          (unsigned long long)off);
    int rc = r->in.seek(r->in.ctx, r->offset + off);
    if (rc < 0)
        return rc;
    r->pos = off;
    return TFREC_OK;
}

static int64_t rs_size(void *ctx)
{
    range_src *r = ctx;
    if (r->length != UINT64_MAX)
        return (int64_t)r->length;
    int64_t whole = r->in.size ? r->in.size(r->in.ctx) : -1;
    return whole < 0 || (uint64_t)whole < r->offset ? -1 : whole - (int64_t)r->offset;
}

static int rs_close(void *ctx, int commit)
{
    (void)commit;
    range_src *r = ctx;
    r->in.close(r->in.ctx, 0);
    free(r);
    return TFREC_OK;
}

static const char *rs_errmsg(void *ctx)
{
    range_src *r = ctx;
    if (r->err.msg[0] || !r->in.errmsg)
        return r->err.msg;
    return r->in.errmsg(r->in.ctx);
}

int tfrec_fs_range_wrap(const tfrec_io *src, const char *name, uint64_t offset, uint64_t length,
                        tfrec_io *io)
{
    tfrec_io in;
    int rc = TFREC_STRUCT_IN(tfrec_io, &in, src, NULL);
    if (rc) {
        if (src && src->close)
            src->close(src->ctx, 0);
        return rc;
    }
    int64_t size = in.size ? in.size(in.ctx) : -1;
    if (size >= 0 &&
        (offset > (uint64_t)size || (length != UINT64_MAX && length > (uint64_t)size - offset))) {
        in.close(in.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_INVALID,
                          "%s: range of %llu bytes at %llu is past the end (%lld bytes)", name,
                          (unsigned long long)(length == UINT64_MAX ? 0 : length),
                          (unsigned long long)offset, (long long)size);
    }
    if (size >= 0 && length == UINT64_MAX)
        length = (uint64_t)size - offset;
    range_src *r = calloc(1, sizeof *r + strlen(name) + 1);
    if (!r) {
        in.close(in.ctx, 0);
        return tfrec_fail(NULL, TFREC_E_NOMEM, "%s: out of memory", name);
    }
    r->in = in;
    r->offset = offset;
    r->length = length;
    strcpy(r->name, name);
    if (offset && in.seek) {
        rc = in.seek(in.ctx, offset);
    } else {
        /* Not seekable: read forward to the start. */
        char buf[16384];
        for (uint64_t left = offset; left && rc == 0;) {
            ptrdiff_t got = in.read(in.ctx, buf, left < sizeof buf ? (size_t)left : sizeof buf);
            if (got <= 0)
                rc = got < 0
                         ? (int)got
                         : tfrec_fail(NULL, TFREC_E_INVALID, "%s: range at %llu is past the end",
                                      name, (unsigned long long)offset);
            else
                left -= (uint64_t)got;
        }
    }
    if (rc < 0) {
        if (in.errmsg && in.errmsg(in.ctx) && *in.errmsg(in.ctx))
            tfrec_fail(NULL, rc, "%s", in.errmsg(in.ctx));
        rs_close(r, 0);
        return rc;
    }
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = r,
        .read = rs_read,
        .write = io_write_unsupported,
        .seek = in.seek ? rs_seek : NULL,
        .size = rs_size,
        .close = rs_close,
        .errmsg = rs_errmsg,
    };
    return TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
}
