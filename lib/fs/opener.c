/* The deprecated opener callbacks of 1.0's option structs as a file
 * system: one code path inside the library whatever the caller set. */
#include <stdlib.h>

#include "fs/fs_internal.h"
#include "util/errors.h"
#include "util/struct_size.h"

static int op_open_source(void *ctx, const char *name, tfrec_io *io)
{
    tfrec_fs_opener *op = ctx;
    return op->open(op->ctx, name, io);
}

static int op_stat(void *ctx, const char *name, tfrec_fs_info *info)
{
    tfrec_fs_opener *op = ctx;
    tfrec_io io = TFREC_IO_INIT;
    int rc = op->open(op->ctx, name, &io);
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

const tfrec_fs *tfrec_fs_opener_init(tfrec_fs_opener *op,
                                     int (*open)(void *ctx, const char *name, tfrec_io *io),
                                     void *ctx)
{
    op->open = open;
    op->ctx = ctx;
    const tfrec_fs made = {
        .struct_size = sizeof made,
        .scheme = NULL,
        .ctx = op,
        .open_source = op_open_source,
        .stat = op_stat,
    };
    op->fs = made;
    return &op->fs;
}
