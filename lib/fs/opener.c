/* The deprecated opener callbacks of 1.0's option structs as a file
 * system: one code path inside the library whatever the caller set. Two
 * shapes of 1.0 callbacks exist: the dataset's open_source (ctx, name, io)
 * and the imagenet ones (ctx, io, name) with their list_input, range and
 * remove companions; both become one tfrec_fs here. */
#include <stdlib.h>
#include <string.h>

#include "fs/fs_internal.h"
#include "util/errors.h"
#include "util/struct_size.h"

static int op_open_source(void *ctx, const char *name, tfrec_io *io)
{
    tfrec_fs_opener *op = ctx;
    if (op->open)
        return op->open(op->ctx, name, io);
    if (op->open_io)
        return op->open_io(op->ctx, io, name);
    return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: no open callback to read it through", name);
}

static int op_open_range(void *ctx, const char *name, uint64_t offset, uint64_t length,
                         tfrec_io *io)
{
    tfrec_fs_opener *op = ctx;
    return op->open_range_io(op->ctx, io, name, offset, length);
}

static int op_open_sink(void *ctx, const char *name, tfrec_io *io)
{
    tfrec_fs_opener *op = ctx;
    return op->open_sink_io(op->ctx, io, name);
}

static int op_remove(void *ctx, const char *name)
{
    tfrec_fs_opener *op = ctx;
    return op->remove(op->ctx, name);
}

typedef struct op_list_ctx {
    tfrec_fs_list_fn fn;
    void *fn_ctx;
    fs_list_buf buf;
    int rc;
} op_list_ctx;

/* 1.0's add(name, size), in any order: collected, then handed out sorted
 * as a tfrec_fs list promises. */
static int op_list_add(void *ctx, const char *name, uint64_t size)
{
    op_list_ctx *l = ctx;
    tfrec_fs_info info = TFREC_FS_INFO_INIT;
    info.size = size;
    l->rc = tfrec_fs_list_buf_add(&l->buf, name, strlen(name), &info);
    return l->rc != TFREC_OK;
}

static int op_list(void *ctx, const char *pattern, tfrec_fs_list_fn fn, void *fn_ctx)
{
    tfrec_fs_opener *op = ctx;
    op_list_ctx l = { fn, fn_ctx, { 0 }, TFREC_OK };
    int rc = op->list_add(op->ctx, pattern, op_list_add, &l);
    if (rc == TFREC_OK && l.rc != TFREC_OK)
        rc = tfrec_fail(NULL, l.rc, "%s: out of memory listing it", pattern);
    if (rc < 0) {
        tfrec_fs_list_buf_free(&l.buf);
        return rc;
    }
    if (l.buf.n == 0) {
        tfrec_fs_list_buf_free(&l.buf);
        return tfrec_fail(NULL, TFREC_E_NOT_FOUND, "%s: no match", pattern);
    }
    return tfrec_fs_list_buf_emit(&l.buf, fn, fn_ctx);
}

static int op_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    tfrec_io io = TFREC_IO_INIT;
    int rc = op_open_source(ctx, name, &io);
    if (rc < 0)
        return rc;
    int64_t size = io.size ? io.size(io.ctx) : -1;
    io.close(io.ctx, 0);
    if (size < 0)
        return tfrec_fail(NULL, TFREC_E_UNSUPPORTED, "%s: the source cannot tell its size", name);
    tfrec_fs_info o = TFREC_FS_INFO_INIT;
    o.size = (uint64_t)size;
    return TFREC_STRUCT_OUT(tfrec_fs_info, info, &o, NULL);
}

const tfrec_fs *tfrec_fs_opener_make(tfrec_fs_opener *op)
{
    const tfrec_fs made = {
        .struct_size = sizeof made,
        .scheme = NULL,
        .ctx = op,
        .open_source = op_open_source,
        .open_range = op->open_range_io ? op_open_range : NULL,
        .open_sink = op->open_sink_io ? op_open_sink : NULL,
        .stat = op_stat,
        .list = op->list_add ? op_list : NULL,
        .remove = op->remove ? op_remove : NULL,
    };
    op->fs = made;
    return &op->fs;
}

const tfrec_fs *tfrec_fs_opener_init(tfrec_fs_opener *op,
                                     int (*open)(void *ctx, const char *name, tfrec_io *io),
                                     void *ctx)
{
    memset(op, 0, sizeof *op);
    op->open = open;
    op->ctx = ctx;
    return tfrec_fs_opener_make(op);
}
