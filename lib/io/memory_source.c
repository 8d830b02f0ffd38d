/* A source over caller memory: reads copy out of it, seeks are free. */
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "tfrec/io.h"
#include "util/errors.h"
#include "util/struct_size.h"

typedef struct memory_source {
    const unsigned char *data;
    size_t len;
    size_t pos;
    tfrec_err err;
} memory_source;

static ptrdiff_t ms_read(void *ctx, void *buf, size_t n)
{
    memory_source *m = ctx;
    size_t left = m->len - m->pos;
    if (n > left)
        n = left;
    if (n > (size_t)PTRDIFF_MAX)
        n = (size_t)PTRDIFF_MAX;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (ptrdiff_t)n;
}

static int ms_seek(void *ctx, uint64_t offset)
{
    memory_source *m = ctx;
    if (offset > m->len)
        return tfrec_fail(&m->err, TFREC_E_INVALID,
                          "<memory>: seek to %llu beyond the end (%zu bytes)",
                          (unsigned long long)offset, m->len);
    m->pos = (size_t)offset;
    return TFREC_OK;
}

static int64_t ms_size(void *ctx)
{
    return (int64_t)((memory_source *)ctx)->len;
}

static int ms_close(void *ctx, int commit)
{
    (void)commit;
    free(ctx);
    return TFREC_OK;
}

static const char *ms_errmsg(void *ctx)
{
    return ((memory_source *)ctx)->err.msg;
}

int tfrec_io_open_memory(tfrec_io *io, const void *data, size_t len)
{
    int rc = TFREC_STRUCT_CHECK_OUT(tfrec_io, io, NULL);
    if (rc)
        return rc;
    if (!data && len)
        return tfrec_fail(NULL, TFREC_E_INVALID, "tfrec_io_open_memory: no data given");
    memory_source *m = calloc(1, sizeof *m);
    if (!m)
        return tfrec_fail(NULL, TFREC_E_NOMEM, "<memory>: out of memory");
    m->data = data;
    m->len = len;
    const tfrec_io made = {
        .struct_size = sizeof made,
        .ctx = m,
        .read = ms_read,
        .write = io_write_unsupported,
        .seek = ms_seek,
        .size = ms_size,
        .close = ms_close,
        .errmsg = ms_errmsg,
    };
    return TFREC_STRUCT_OUT(tfrec_io, io, &made, NULL);
}
